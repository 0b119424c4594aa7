/*
 * lockholder: the driver of bin/sl-lockholder, schedlab's native
 * lock-holder-preemption workload (workloads/native/sl-lockholder.c,
 * docs/workloads-native.md): threads, more than CPUs, take one userspace
 * spinlock and enter the kernel inside the critical section.
 *
 * build() maps the plan parameters one to one onto the program's options;
 * parse() reads its one JSON object from stdout into metrics (acquisitions
 * per second, hold and wait percentiles, the time waiters spun, holder
 * preemptions) and the two histograms (ns, log-linear), so that repetitions
 * merge losslessly. Whether the kernel offers the rseq time-slice extension
 * goes into the run's note ("unavailable" on 6.1). Metrics the program left
 * null (no holds) are left out rather than stored as zero.
 */
#include <stdio.h>
#include <string.h>

#include "workloads/workload.h"

static const char *const locks[] = { "tts-yield", "spin", NULL };
static const char *const enters[] = { "fault", "syscall", "none", NULL };
static const char *const detects[] = { "getrusage", "rseq", NULL };

static const struct param_spec lockholder_params[] = {
	{ "duration_s", PT_REAL, "5", 0.05, 86400, NULL, .help = "measurement window in seconds" },
	{ "threads", PT_INT, "0", 0, 4096, NULL,
	  .help = "threads taking the lock; 0 = twice the target's online CPUs" },
	{ "lock", PT_ENUM, "\"tts-yield\"", 0, 0, locks,
	  .help = "tts-yield: spin with pause up to \"spins\" tries, then block (PostgreSQL's "
	  "s_lock); spin: never block" },
	{ "spins", PT_INT, "100", 1, 100000000, NULL,
	  .help = "tts-yield: pause-spins before each block (s_lock starts at 100)" },
	{ "delay_us", PT_INT, "0", 0, 1000000, NULL,
	  .help = "tts-yield: 0 = block with sched_yield; else sleep, from this many us growing "
	  "as s_lock's (1x..2x, up to 1 s)" },
	{ "enter", PT_ENUM, "\"fault\"", 0, 0, enters,
	  .help = "kernel entry inside the critical section: page faults on fresh memory, a "
	  "getppid system call, or none" },
	{ "entries", PT_INT, "4", 1, 1024, NULL,
	  .help = "pages faulted (fault) or system calls made (syscall) per hold" },
	{ "cs_us", PT_REAL, "2", 0, 1000000, NULL, .help = "CPU work inside the critical section, us" },
	{ "think_us", PT_REAL, "0", 0, 1000000, NULL, .help = "CPU work between holds, us" },
	{ "detect", PT_ENUM, "\"getrusage\"", 0, 0, detects,
	  .help = "how a holder's switch-out is seen: getrusage (ru_nivcsw around each hold, a "
	  "system call in it) or rseq (a sentinel in the rseq area, no system call; not "
	  "with CONFIG_DEBUG_RSEQ)" },
	PARAM_END,
};

static int check(const json_t *p, const char *path, struct strbuf *err)
{
	const char *lock = param_str(p, "lock"), *enter = param_str(p, "enter");
	if (!strcmp(lock, "spin") && param_int(p, "delay_us")) {
		strbuf_addf(err, "%s.delay_us: only used with lock \"tts-yield\" (lock is \"spin\", "
			    "which never blocks)", path);
		return -1;
	}
	if (!strcmp(enter, "none") && param_num(p, "cs_us") <= 0) {
		strbuf_addf(err, "%s.cs_us: an empty critical section (enter \"none\" and cs_us 0); "
			    "give it cs_us > 0 or a kernel entry (enter \"fault\" or \"syscall\")",
			    path);
		return -1;
	}
	if (param_int(p, "threads") == 1) {
		strbuf_addf(err, "%s.threads: one thread never waits for the lock; use 0 (twice "
			    "the CPUs) or at least 2", path);
		return -1;
	}
	return 0;
}

static double estimate(const json_t *p)
{
	return param_num(p, "duration_s") + 0.5;
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	strvec_push(&ex->argv, "sl-lockholder");
	strvec_pushf(&ex->argv, "--duration=%.17g", param_num(p, "duration_s"));
	strvec_pushf(&ex->argv, "--threads=%lld", param_int(p, "threads"));
	strvec_pushf(&ex->argv, "--lock=%s", param_str(p, "lock"));
	strvec_pushf(&ex->argv, "--spins=%lld", param_int(p, "spins"));
	if (param_int(p, "delay_us"))
		strvec_pushf(&ex->argv, "--delay-us=%lld", param_int(p, "delay_us"));
	strvec_pushf(&ex->argv, "--enter=%s", param_str(p, "enter"));
	strvec_pushf(&ex->argv, "--entries=%lld", param_int(p, "entries"));
	strvec_pushf(&ex->argv, "--cs-us=%.17g", param_num(p, "cs_us"));
	if (param_num(p, "think_us") > 0)
		strvec_pushf(&ex->argv, "--think-us=%.17g", param_num(p, "think_us"));
	strvec_pushf(&ex->argv, "--detect=%s", param_str(p, "detect"));
	ex->package = "schedlab";
	ex->timeout_s = estimate(p) * 2 + 30;
	return 0;
}

static const struct native_metric lockholder_metrics[] = {
	{ "acq_per_s", "acq/s", BETTER_HIGHER, NULL, 0 },
	{ "hold_p50_us", "us", BETTER_LOWER, "hold_ns", 50 },
	{ "hold_p99_us", "us", BETTER_LOWER, "hold_ns", 99 },
	{ "hold_max_us", "us", BETTER_LOWER, NULL, 0 },
	{ "wait_p50_us", "us", BETTER_LOWER, "wait_ns", 50 },
	{ "wait_p99_us", "us", BETTER_LOWER, "wait_ns", 99 },
	{ "wait_max_us", "us", BETTER_LOWER, NULL, 0 },
	{ "spin_s", "s", BETTER_LOWER, NULL, 0 },
	{ "spin_cpu_pct", "%", BETTER_LOWER, NULL, 0 },
	{ "holder_preemptions", "count", BETTER_LOWER, NULL, 0 },
	{ "holder_preempt_pct", "%", BETTER_LOWER, NULL, 0 },
	{ "holds", "count", BETTER_NONE, NULL, 0 },
	{ "backoffs", "count", BETTER_NONE, NULL, 0 },
	{ "ivcsw", "count", BETTER_NONE, NULL, 0 },
	{ "faults_per_hold", "count", BETTER_NONE, NULL, 0 },
	{ "minflt_per_hold", "count", BETTER_NONE, NULL, 0 },
	{ "majflt_per_hold", "count", BETTER_NONE, NULL, 0 },
	{ NULL, NULL, 0, NULL, 0 },
};

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	json_t *o = native_output("sl-lockholder", out, err);
	if (!o)
		return -1;
	const char *tool = json_string_value(json_object_get(o, "tool"));
	const json_t *holds = json_object_get(o, "holds");
	const json_t *pre = json_object_get(o, "holder_preemptions");
	if (!tool || strcmp(tool, "sl-lockholder") || !json_is_integer(holds) ||
	    !json_is_integer(pre)) {
		strbuf_addstr(err, "sl-lockholder output lacks \"tool\", \"holds\" or "
				   "\"holder_preemptions\"");
		json_decref(o);
		return -1;
	}
	if (json_integer_value(holds) < 0 || json_integer_value(pre) < 0 ||
	    json_integer_value(pre) > json_integer_value(holds)) {
		strbuf_addf(err, "sl-lockholder output is inconsistent: %lld holder preemptions in "
			    "%lld holds", (long long)json_integer_value(pre),
			    (long long)json_integer_value(holds));
		json_decref(o);
		return -1;
	}
	/* the histograms first: they tell which percentiles are only bounds */
	const json_t *hists = json_object_get(o, "hist");
	static const char *const hnames[] = { "hold_ns", "wait_ns", NULL };
	for (const char *const *k = hnames; *k; k++) {
		const json_t *j = json_object_get(hists, *k);
		struct hist h;
		if (!j)
			continue;
		if (hist_from_json(&h, j)) {
			strbuf_addf(err, "sl-lockholder: histogram \"%s\" is malformed", *k);
			json_decref(o);
			return -1;
		}
		metric_add_hist(ms, *k, "ns", &h);
	}
	native_add_metrics(ms, o, lockholder_metrics, NULL, NULL);   /* null: no holds */
	const char *ext = json_string_value(json_object_get(o, "rseq_slice_ext"));
	const char *detail = json_string_value(json_object_get(o, "rseq_slice_ext_detail"));
	if (ext)
		metric_set_note(ms, "rseq time-slice extension: %s%s%s%s", ext,
				detail ? " (" : "", detail ? detail : "", detail ? ")" : "");
	json_decref(o);
	return 0;
}

/* the metrics parse() can store (docs/metrics.md) */
static const char *const lockholder_metric_names[] = {
	"acq_per_s", "hold_p50_us", "hold_p99_us", "hold_max_us", "wait_p50_us", "wait_p99_us",
	"wait_max_us", "spin_s", "spin_cpu_pct", "holder_preemptions", "holder_preempt_pct",
	"holds", "backoffs", "ivcsw", "faults_per_hold", "minflt_per_hold", "majflt_per_hold", NULL,
};

const struct workload_ops lockholder_workload = {
	.name = "lockholder",
	.summary = "native lock-holder preemption (sl-lockholder): threads > CPUs on one "
		   "userspace spinlock entering the kernel inside it; acquisitions/s, hold and "
		   "wait times, spin time, holder preemptions",
	.tool = "sl-lockholder",
	.package = "schedlab",
	.primary = "acq_per_s",
	.metrics = lockholder_metric_names,
	.params = lockholder_params,
	.check = check,
	.estimate_s = estimate,
	.build = build,
	.parse = parse,
};
