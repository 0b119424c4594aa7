/*
 * schedlab sysinfo: ask a target's agent what the machine is and what is in
 * force (kernel, command line, preempt mode and the modes offered, HZ,
 * SCHED_MC, schedstats, sched features, topology, cpufreq and cpuidle), each
 * field with its source, and what the target can switch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/results/format.h"
#include "harness/orchestrate/session.h"
#include "harness/targets/target.h"

static const char usage_text[] =
	"usage: schedlab sysinfo [--target SPEC] [--format table|json]\n"
	"\n"
	"Connects to the target (default: local), and prints what the machine is and\n"
	"what is in force, each field with the file or call it was read from, or\n"
	"\"unknown\" with the reason.\n"
	"  --target SPEC   local (default), qemu:KERNEL, ssh://[user@]host[:port], or a\n"
	"                  plan's target object, e.g. '{\"type\":\"qemu\",\"clock\":\"virtual\"}'\n"
	"  --format F      table (default) or json\n";

int cmd_sysinfo(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *spec = "local";
	enum out_format fmt = FMT_TABLE;
	const struct cli_opt opts[] = { CLI_STR("target", &spec), CLI_FORMAT(&fmt, 0), CLI_END };
	int first, prc = cli_parse("sysinfo", usage_text, opts, argc, argv, &first);
	if (prc != CLI_OK)
		return cli_parse_exit(prc);
	if (cli_no_args("sysinfo", argc, argv, first))
		return 2;
	struct strbuf err = STRBUF_INIT;
	json_t *tobj = target_spec_parse(spec, &err);
	const struct target_ops *ops = tobj ? target_find(json_string_value(json_object_get(tobj, "type"))) : NULL;
	json_t *conf = NULL;
	if (!tobj || !ops || !(conf = ops->check(tobj, "target", &err))) {
		cmd_error("sysinfo", "--target %s: %s", spec, err.len ? err.buf : "unknown target type");
		json_decref(tobj);
		strbuf_release(&err);
		return 2;
	}
	json_decref(tobj);
	session_install_signals();
	struct target t;
	memset(&t, 0, sizeof(t));
	t.ops = ops;
	t.conf = conf;
	t.abort_flag = &session_abort;
	struct boot_info bi;
	struct boot_spec none = { -1, NULL, NULL, "" };
	boot_info_init(&bi);
	int rc = 0;
	if (ops->open(&t, &err) || ops->boot(&t, &none, &bi, &err)) {
		cmd_error("sysinfo", "%s", err.buf);
		rc = 1;
	} else {
		json_t *si = bi.sysinfo;
		if (fmt == FMT_JSON) {
			json_t *doc = json_pack("{s:i,s:s,s:O,s:s,s:f}", "schedlab_format", 1, "target",
						spec, "sysinfo", si, "boot_method", bi.method,
						"switch_s", bi.switch_s);
			json_t *caps = json_array();
			if (ops->caps & TCAP_PREEMPT_RUNTIME)
				json_array_append_new(caps, json_string("preempt-runtime"));
			if (ops->caps & TCAP_PREEMPT_BOOT)
				json_array_append_new(caps, json_string("preempt-boot"));
			if (ops->caps & TCAP_CMDLINE)
				json_array_append_new(caps, json_string("cmdline"));
			if (ops->caps & TCAP_KERNEL)
				json_array_append_new(caps, json_string("kernel"));
			if (ops->caps & TCAP_KEXEC)
				json_array_append_new(caps, json_string("kexec"));
			if (ops->caps & TCAP_REBOOT)
				json_array_append_new(caps, json_string("reboot"));
			json_object_set_new(doc, "can_switch", caps);
			if (bi.clock[0])
				json_object_set_new(doc, "clock",
						    bi.clock_shift >= 0
							    ? json_pack("{s:s,s:i}", "type", bi.clock,
									"icount_shift", bi.clock_shift)
							    : json_pack("{s:s}", "type", bi.clock));
			if (bi.qemu_version[0])
				json_object_set_new(doc, "qemu_version",
						    json_string(bi.qemu_version));
			json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			putchar('\n');
			json_decref(doc);
		} else {
			static const char *const cols[] = { "field", "value", "source" };
			struct rowset rs;
			rowset_init(&rs, 3, cols);
			const char *key;
			json_t *f;
			json_object_foreach(si, key, f) {
				json_t *v = json_object_get(f, "value");
				char *val = json_is_string(v) ? xstrdup(json_string_value(v))
					  : json_is_null(v) || !v ? xstrdup("unknown")
					  : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
				const char *src = json_string_value(json_object_get(f, "source"));
				const char *why = json_string_value(json_object_get(f, "error"));
				char *s = why ? xstrfmt("unknown: %s", why) : xstrdup(src ? src : "");
				const char *cells[] = { key, val, s };
				rowset_add(&rs, cells);
				free(val);
				free(s);
			}
			rowset_print(&rs, FMT_TABLE, stdout);
			rowset_release(&rs);
			if (bi.clock_shift >= 0)
				printf("\nclock: %s (icount shift %d: every instruction %d ns of the "
				       "guest's time; docs/virtual-time.md)\n",
				       bi.clock, bi.clock_shift, 1 << bi.clock_shift);
			else if (bi.clock[0])
				printf("\nclock: %s\n", bi.clock);
			if (bi.qemu_version[0]) {
				/* which qemu, and why when it is not the one asked for */
				json_t *q = json_object_get(si, "qemu");
				const char *bin = json_string_value(json_object_get(q, "binary"));
				const char *note = json_string_value(json_object_get(q, "note"));
				printf("qemu: %s%s%s%s%s%s\n", bi.qemu_version, bin ? " (" : "",
				       bin ? bin : "", bin ? ")" : "", note ? "; " : "",
				       note ? note : "");
			}
			struct boot_spec probe = { 0, NULL, "full", "" };
			struct strbuf why = STRBUF_INIT;
			if (ops->feasible && !ops->feasible(&t, &probe, si, &why))
				printf("\npreempt switching: no (%s)\n", why.buf);
			else
				printf("\npreempt switching: yes (%s)\n",
				       ops->caps & TCAP_PREEMPT_RUNTIME ? "at run time" : "by boot");
			strbuf_release(&why);
		}
	}
	boot_info_release(&bi);
	if (t.priv)
		ops->close(&t);
	json_decref(conf);
	strbuf_release(&err);
	return cmd_finish(rc);
}
