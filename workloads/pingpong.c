/*
 * pingpong: the driver of bin/sl-pingpong, schedlab's native microservice
 * wakeup chain (workloads/native/sl-pingpong.c, docs/workloads-native.md).
 *
 * build() maps the plan parameters one to one onto the program's options;
 * parse() reads its one JSON object from stdout into metrics (rps, request
 * and wakeup latency percentiles, wakeup placement, migrations and context
 * switches per request) and the two latency histograms (ns, log-linear), so
 * that repetitions can be merged losslessly; with "placement", the tasks'
 * schedstat wakeup-placement sums too (workloads/placement.h). Metrics the target cannot
 * provide (null in the JSON) are left out rather than stored as zero.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "workloads/placement.h"
#include "workloads/workload.h"

static const char *const mechanisms[] = { "futex", "pipe", "eventfd", "unix", NULL };
static const char *const tasks[] = { "threads", "procs", NULL };
static const char *const policies[] = { "other", "batch", "idle", "fifo", "rr", NULL };

static const struct param_spec pingpong_params[] = {
	{ "duration_s", PT_INT, "10", 1, 86400, NULL, .help = "measurement window in seconds" },
	{ "warmup_s", PT_REAL, "1", 0, 3600, NULL, .help = "unmeasured time before the window" },
	{ "stages", PT_INT, "1", 1, 32, NULL, .help = "stages in the call chain" },
	{ "fanout", PT_INT, "1", 1, 16, NULL,
	  .help = "replicas of the last stage, called in parallel by its caller" },
	{ "concurrency", PT_INT, "1", 1, 256, NULL,
	  .help = "independent lanes (client + chain); closed loop: requests in flight" },
	{ "mechanism", PT_ENUM, "\"pipe\"", 0, 0, mechanisms, .help = "how each hop wakes the next" },
	{ "tasks", PT_ENUM, "\"threads\"", 0, 0, tasks, .help = "stages are threads or processes" },
	{ "rate", PT_REAL, "0", 0, 1e7, NULL,
	  .help = "open loop: requests/s in total with Poisson arrivals; 0 = closed loop" },
	{ "work_us", PT_INT, "10", 0, 1000000, NULL, .help = "CPU work per request in each stage, us" },
	{ "wss_kb", PT_INT, "64", 0, 1048576, NULL,
	  .help = "working set each stage touches per request, KiB" },
	{ "policy", PT_ENUM, "\"other\"", 0, 0, policies, .help = "scheduling policy of all tasks" },
	{ "priority", PT_INT, "0", 0, 99, NULL, .help = "real-time priority (1..99 with fifo/rr)" },
	{ "nice", PT_INT, "0", -20, 19, NULL, .help = "nice value of all tasks (other/batch/idle)" },
	{ "seed", PT_INT, "1", 0, 2147483647, NULL, .help = "seed of arrivals and working-set order" },
	PLACEMENT_PARAM,
	PARAM_END,
};

static int check(const json_t *p, const char *path, struct strbuf *err)
{
	const char *pol = param_str(p, "policy");
	int rt = !strcmp(pol, "fifo") || !strcmp(pol, "rr");
	long long prio = param_int(p, "priority");
	if (rt && prio < 1) {
		strbuf_addf(err, "%s.priority: must be in 1..99 with policy \"%s\"", path, pol);
		return -1;
	}
	if (!rt && prio != 0) {
		strbuf_addf(err, "%s.priority: only valid with policy \"fifo\" or \"rr\" (policy is \"%s\")",
			    path, pol);
		return -1;
	}
	if (rt && param_int(p, "nice") != 0) {
		strbuf_addf(err, "%s.nice: has no effect with policy \"%s\"; leave it at 0", path, pol);
		return -1;
	}
	return 0;
}

static double estimate(const json_t *p)
{
	return (double)param_int(p, "duration_s") + param_num(p, "warmup_s") + 0.5;
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	strvec_push(&ex->argv, "sl-pingpong");
	strvec_pushf(&ex->argv, "--duration=%lld", param_int(p, "duration_s"));
	strvec_pushf(&ex->argv, "--warmup=%g", param_num(p, "warmup_s"));
	strvec_pushf(&ex->argv, "--stages=%lld", param_int(p, "stages"));
	strvec_pushf(&ex->argv, "--fanout=%lld", param_int(p, "fanout"));
	strvec_pushf(&ex->argv, "--concurrency=%lld", param_int(p, "concurrency"));
	strvec_pushf(&ex->argv, "--mechanism=%s", param_str(p, "mechanism"));
	if (!strcmp(param_str(p, "tasks"), "procs"))
		strvec_push(&ex->argv, "--procs");
	if (param_num(p, "rate") > 0)
		strvec_pushf(&ex->argv, "--rate=%.17g", param_num(p, "rate"));
	strvec_pushf(&ex->argv, "--work-us=%lld", param_int(p, "work_us"));
	strvec_pushf(&ex->argv, "--wss-kb=%lld", param_int(p, "wss_kb"));
	strvec_pushf(&ex->argv, "--policy=%s", param_str(p, "policy"));
	if (param_int(p, "priority"))
		strvec_pushf(&ex->argv, "--priority=%lld", param_int(p, "priority"));
	if (param_int(p, "nice"))
		strvec_pushf(&ex->argv, "--nice=%lld", param_int(p, "nice"));
	strvec_pushf(&ex->argv, "--seed=%lld", param_int(p, "seed"));
	placement_build(p, ex);
	ex->package = "schedlab";
	ex->timeout_s = estimate(p) * 2 + 30;
	return 0;
}

static const struct native_metric pingpong_metrics[] = {
	{ "rps", "req/s", BETTER_HIGHER, NULL, 0 },
	{ "req_p50_us", "us", BETTER_LOWER, "request_ns", 50 },
	{ "req_p99_us", "us", BETTER_LOWER, "request_ns", 99 },
	{ "req_p999_us", "us", BETTER_LOWER, "request_ns", 99.9 },
	{ "wakeup_p50_us", "us", BETTER_LOWER, "wakeup_ns", 50 },
	{ "wakeup_p99_us", "us", BETTER_LOWER, "wakeup_ns", 99 },
	{ "same_cpu_wakeup_pct", "%", BETTER_NONE, NULL, 0 },
	{ "cross_llc_wakeup_pct", "%", BETTER_NONE, NULL, 0 },
	{ "migrations_per_kreq", "count", BETTER_LOWER, NULL, 0 },
	{ "csw_per_req", "count", BETTER_LOWER, NULL, 0 },
	{ "vcsw_per_req", "count", BETTER_LOWER, NULL, 0 },
	{ "ivcsw_per_req", "count", BETTER_LOWER, NULL, 0 },
	{ NULL, NULL, 0, NULL, 0 },
};

static int add_hist(struct metric_set *ms, const json_t *hists, const char *key,
		    struct strbuf *err)
{
	struct hist h;
	const json_t *j = json_object_get(hists, key);
	if (!j)
		return 0;
	if (hist_from_json(&h, j)) {
		strbuf_addf(err, "sl-pingpong: histogram \"%s\" is malformed", key);
		return -1;
	}
	metric_add_hist(ms, key, "ns", &h);
	return 0;
}

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	json_t *o = native_output("sl-pingpong", out, err);
	if (!o)
		return -1;
	const char *tool = json_string_value(json_object_get(o, "tool"));
	json_int_t completed = json_integer_value(json_object_get(o, "requests_completed"));
	if (!tool || strcmp(tool, "sl-pingpong") || !json_is_integer(json_object_get(o, "requests_completed"))) {
		strbuf_addstr(err, "sl-pingpong output lacks \"tool\" or \"requests_completed\"");
		json_decref(o);
		return -1;
	}
	/* the histograms first: they tell which percentiles are only bounds */
	const json_t *hists = json_object_get(o, "hist");
	if (add_hist(ms, hists, "request_ns", err) || add_hist(ms, hists, "wakeup_ns", err)) {
		json_decref(o);
		return -1;
	}
	json_int_t backlog = json_integer_value(json_object_get(o, "requests_backlog"));
	/* notes are stored by pointer: a constant string */
	static const char note[] = "open loop fell behind: some scheduled requests were never "
				   "sent (requests_backlog); latency percentiles are lower bounds";
	/* null: not measurable on this target or no samples */
	native_add_metrics(ms, o, pingpong_metrics, backlog > 0 ? "req_" : NULL, note);
	metric_add(ms, "requests", (double)completed, "count", BETTER_NONE);
	if (json_is_integer(json_object_get(o, "requests_backlog")))
		metric_add(ms, "requests_backlog", (double)backlog, "count", BETTER_LOWER);
	json_decref(o);
	placement_parse(p, out, ms);
	return 0;
}

/* the metrics parse() can store ("*": any text; docs/metrics.md) */
static const char *const pingpong_metric_names[] = {
	"requests_sent", "requests_completed", "requests", "requests_in_flight",
	"requests_scheduled", "requests_backlog", "rps", "req_p50_us", "req_p99_us",
	"req_p999_us", "req_max_us", "wakeups", "wakeups_nowait", "wakeup_p50_us",
	"wakeup_p99_us", "same_cpu_wakeup_pct", "cross_llc_wakeup_pct", "migrations_per_kreq",
	"migrations_source", "csw_per_req", "vcsw_per_req", "ivcsw_per_req", "task_*", NULL,
};

const struct workload_ops pingpong_workload = {
	.name = "pingpong",
	.summary = "native microservice wakeup chain (sl-pingpong): rps, request and wakeup "
		   "latency, wakeup placement",
	.tool = "sl-pingpong",
	.package = "schedlab",
	.primary = "rps",
	.metrics = pingpong_metric_names,
	.params = pingpong_params,
	.check = check,
	.estimate_s = estimate,
	.build = build,
	.parse = parse,
};
