/*
 * jbb: the driver of bin/sl-jbb, schedlab's SPECjbb2015-like workload
 * (workloads/native/sl-jbb.c, docs/workloads-native.md).
 *
 * build() maps the plan parameters onto the program's options; parse() reads
 * its JSON into max_jops, critical_jops and the five per-SLA values, and
 * keeps the whole RT curve (one object per step: injection rate, achieved
 * rate, response-time percentiles, pass/fail) in ms->extra so that it is
 * stored with the run, not only printed. When the ramp ran out of time
 * before a step failed, max_jops is stored as a lower bound (censored, with
 * a note), and so are the SLA values still met at the last step and
 * critical_jops when one of them is. With "placement", the threads'
 * schedstat wakeup-placement sums over the whole run too
 * (workloads/placement.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/placement.h"
#include "workloads/workload.h"

static const struct param_spec jbb_params[] = {
	{ "duration_s", PT_INT, "60", 5, 86400, NULL,
	  .help = "time budget of the whole run (HBIR search and RT curve), s" },
	{ "groups", PT_INT, "2", 1, 64, NULL, .help = "groups (like MultiJVM's JVMs)" },
	{ "workers", PT_INT, "0", 0, 1024, NULL,
	  .help = "backend workers per group and tier; 0 = scale x 2 x CPUs / groups" },
	{ "injectors", PT_INT, "1", 1, 64, NULL, .help = "open-loop injector threads per group" },
	{ "tiers", PT_INT, "1", 1, 4, NULL, .help = "backend tiers each transaction passes through" },
	{ "data_mb", PT_INT, "0", 0, 65536, NULL,
	  .help = "data set per group, MiB; 0 = 4 x one CPU's LLC share (8..256)" },
	{ "mix", PT_STR, "\"60,30,10\"", 0, 0, NULL,
	  .help = "percent of lookups,updates,scans (three integers adding up to 100)" },
	{ "scale", PT_REAL, "1", 0.1, 64, NULL, .help = "workers per CPU relative to the default" },
	{ "start_pct", PT_REAL, "50", 1, 100, NULL, .help = "first RT-curve step, percent of HBIR" },
	{ "step_pct", PT_REAL, "1", 0.1, 10, NULL, .help = "RT-curve step, percent of HBIR" },
	{ "tolerance_pct", PT_REAL, "5", 0, 50, NULL,
	  .help = "a step fails when the achieved rate is this much below the injected rate" },
	{ "nice", PT_STR, "\"0\"", 0, 0, NULL,
	  .help = "nice of the workers: one value, or one per group (\"-20,19\")" },
	{ "rr_group", PT_INT, "-1", -1, 63, NULL, .help = "group whose workers run SCHED_RR; -1 = none" },
	{ "priority", PT_INT, "10", 1, 99, NULL, .help = "SCHED_RR priority of rr_group" },
	{ "seed", PT_INT, "1", 0, 2147483647, NULL, .help = "seed of arrivals and transaction choice" },
	PLACEMENT_PARAM,
	PARAM_END,
};

/* a comma-separated integer list; the count, or -1 when malformed */
static int int_list(const char *s, long min, long max, long *out, int maxn)
{
	int n = 0;
	const char *p = s;
	for (;;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < min || v > max || (*end && *end != ',') || n == maxn)
			return -1;
		out[n++] = v;
		if (!*end)
			return n;
		p = end + 1;
	}
}

static int check(const json_t *p, const char *path, struct strbuf *err)
{
	long v[64];
	long long groups = param_int(p, "groups");
	int n = int_list(param_str(p, "mix"), 0, 100, v, 3);
	if (n != 3 || v[0] + v[1] + v[2] != 100) {
		strbuf_addf(err, "%s.mix: \"%s\" must be three integer percentages "
			    "(lookups,updates,scans) adding up to 100", path, param_str(p, "mix"));
		return -1;
	}
	n = int_list(param_str(p, "nice"), -20, 19, v, 64);
	if (n < 0) {
		strbuf_addf(err, "%s.nice: \"%s\" must be integers in -20..19, comma-separated",
			    path, param_str(p, "nice"));
		return -1;
	}
	if (n > 1 && n != groups) {
		strbuf_addf(err, "%s.nice: %d values for %lld groups (give one, or one per group)",
			    path, n, groups);
		return -1;
	}
	if (param_int(p, "rr_group") >= groups) {
		strbuf_addf(err, "%s.rr_group: %lld is not a group (groups are 0..%lld)", path,
			    param_int(p, "rr_group"), groups - 1);
		return -1;
	}
	return 0;
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	strvec_push(&ex->argv, "sl-jbb");
	strvec_pushf(&ex->argv, "--duration=%lld", param_int(p, "duration_s"));
	strvec_pushf(&ex->argv, "--groups=%lld", param_int(p, "groups"));
	if (param_int(p, "workers"))
		strvec_pushf(&ex->argv, "--workers=%lld", param_int(p, "workers"));
	strvec_pushf(&ex->argv, "--injectors=%lld", param_int(p, "injectors"));
	strvec_pushf(&ex->argv, "--tiers=%lld", param_int(p, "tiers"));
	if (param_int(p, "data_mb"))
		strvec_pushf(&ex->argv, "--data-mb=%lld", param_int(p, "data_mb"));
	strvec_pushf(&ex->argv, "--mix=%s", param_str(p, "mix"));
	strvec_pushf(&ex->argv, "--scale=%g", param_num(p, "scale"));
	strvec_pushf(&ex->argv, "--start-pct=%g", param_num(p, "start_pct"));
	strvec_pushf(&ex->argv, "--step-pct=%g", param_num(p, "step_pct"));
	strvec_pushf(&ex->argv, "--tolerance-pct=%g", param_num(p, "tolerance_pct"));
	strvec_pushf(&ex->argv, "--nice=%s", param_str(p, "nice"));
	if (param_int(p, "rr_group") >= 0) {
		strvec_pushf(&ex->argv, "--rr-group=%lld", param_int(p, "rr_group"));
		strvec_pushf(&ex->argv, "--rr-priority=%lld", param_int(p, "priority"));
	}
	strvec_pushf(&ex->argv, "--seed=%lld", param_int(p, "seed"));
	placement_build(p, ex);
	ex->package = "schedlab";
	ex->timeout_s = wl_estimate_duration(p) * 1.5 + 30;
	return 0;
}

static const char *const jops_keys[] = {
	"max_jops", "critical_jops", "sla_10ms_jops", "sla_25ms_jops", "sla_50ms_jops",
	"sla_75ms_jops", "sla_100ms_jops", NULL,
};

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	static const char lower_bound[] =
		"the ramp ran out of time before a step failed: a lower bound";
	static const char sla_lower_bound[] =
		"the ramp ran out of time while this SLA was still met: a lower bound";
	json_t *o = native_output("sl-jbb", out, err);
	if (!o)
		return -1;
	const char *tool = json_string_value(json_object_get(o, "tool"));
	json_t *steps = json_object_get(o, "steps");
	if (!tool || strcmp(tool, "sl-jbb") || !json_is_array(steps) ||
	    !json_is_number(json_object_get(o, "max_jops"))) {
		strbuf_addstr(err, "sl-jbb output lacks \"tool\", \"max_jops\" or \"steps\"");
		json_decref(o);
		return -1;
	}
	int complete = json_is_true(json_object_get(o, "ramp_complete"));
	/* an incomplete ramp leaves bounds: max_jops, every SLA value still met
	 * at the last passing step (a further step might have met it too), and
	 * critical_jops when one of its SLA values is such a bound */
	double max = json_number_value(json_object_get(o, "max_jops"));
	int sla_bound = 0;
	for (const char *const *k = jops_keys + 2; *k; k++) {
		const json_t *v = json_object_get(o, *k);
		if (!complete && json_is_number(v) && json_number_value(v) >= max)
			sla_bound = 1;
	}
	for (const char *const *k = jops_keys; *k; k++) {
		const json_t *v = json_object_get(o, *k);
		if (!json_is_number(v))
			continue;
		double x = json_number_value(v);
		int bound = !complete && (k == jops_keys ? 1
					  : k == jops_keys + 1 ? sla_bound && x > 0
							       : x >= max);
		if (bound)
			metric_add_bound(ms, *k, x, "jOPS", BETTER_HIGHER,
					 k == jops_keys ? lower_bound : sla_lower_bound);
		else
			metric_add(ms, *k, x, "jOPS", BETTER_HIGHER);
	}
	const json_t *v = json_object_get(o, "hbir_jops");
	if (json_is_number(v))
		metric_add(ms, "hbir_jops", json_number_value(v), "jOPS", BETTER_NONE);
	v = json_object_get(o, "steps_passed");
	if (json_is_integer(v))
		metric_add(ms, "steps_passed", (double)json_integer_value(v), "count", BETTER_NONE);
	json_decref(ms->extra);
	ms->extra = json_pack("{s:s,s:O,s:O,s:b,s:O}", "kind", "jbb_rt_curve", "hbir_jops",
			      json_object_get(o, "hbir_jops") ? json_object_get(o, "hbir_jops")
							      : json_null(),
			      "steps", steps, "ramp_complete", complete,
			      "config", json_object_get(o, "config") ? json_object_get(o, "config")
								     : json_null());
	json_decref(o);
	placement_parse(p, out, ms);
	return 0;
}

/* the metrics parse() can store ("*": any text; docs/metrics.md) */
static const char *const jbb_metric_names[] = {
	"hbir_jops", "max_jops", "critical_jops", "sla_*_jops", "steps_passed", "ramp_complete",
	"requests_injected", "requests_completed", "requests_in_flight", "requests_dropped",
	"task_*", NULL,
};

const struct workload_ops jbb_workload = {
	.name = "jbb",
	.summary = "native SPECjbb2015-like run (sl-jbb): max-jOPS and critical-jOPS from an "
		   "RT curve",
	.tool = "sl-jbb",
	.package = "schedlab",
	.primary = "max_jops",
	.metrics = jbb_metric_names,
	.params = jbb_params,
	.check = check,
	.estimate_s = wl_estimate_duration, /* it ends at the first failing step, at the latest after duration_s */
	.build = build,
	.parse = parse,
};
