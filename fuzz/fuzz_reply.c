/*
 * libFuzzer target: an agent's reply as the controller reads it. The first
 * byte picks the op; the rest is the JSON result, type-checked by
 * agent_reply_check and, when accepted, read the way the controller reads
 * it (sysinfo fields, exec output and files).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/agent/protocol.h"
#include "harness/agent/sysinfo.h"

static const char *const ops[] = { "sysinfo", "exec", "knob_set", "knob_get", "schedstat" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *op = ops[data[0] % (sizeof(ops) / sizeof(ops[0]))];
	json_t *j = json_loadb((const char *)data + 1, size - 1, JSON_DECODE_ANY | JSON_ALLOW_NUL,
			       NULL);
	if (!j)
		return 0;
	struct strbuf err = STRBUF_INIT;
	if (agent_reply_check(op, j, &err) == 0 && !strcmp(op, "sysinfo")) {
		static const char *const fields[] = { "preempt", "cmdline", "kernel_release",
						      "hz", "ncpus", "preempt_modes",
						      "sched_domains" };
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			const char *s = sysinfo_str(j, fields[i]);
			if (s)
				(void)strlen(s);
			(void)sysinfo_int(j, fields[i], 0);
			json_t *v = sysinfo_value(j, fields[i]);
			size_t k;
			json_t *e;
			if (json_is_array(v))
				json_array_foreach(v, k, e) (void)strlen(json_string_value(e));
		}
	}
	strbuf_release(&err);
	json_decref(j);
	return 0;
}
