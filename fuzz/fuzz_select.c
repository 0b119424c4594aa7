/*
 * libFuzzer target: selectors ("key=value,key=value") as compare, trend,
 * check, report and export parse them, against the results view's columns.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/results/select.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const cols[] = { "session", "tag", "run_id", "preempt", "cmdline",
					    "knobs", "workload", "metric", "value", "hz" };
	struct strvec cv = STRVEC_INIT;
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		strvec_push(&cv, cols[i]);
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct selector sel;
	struct strbuf err = STRBUF_INIT;
	if (select_parse(text, &cv, &sel, &err) == 0)
		select_free(&sel);
	strbuf_release(&err);
	strvec_clear(&cv);
	free(text);
	return 0;
}
