/*
 * The workload interface. A workload driver is a `const struct workload_ops`
 * registered in workloads/registry.c (like fio's ioengine_ops): it declares
 * its parameters as data (one struct param_spec per plan key, which drives
 * plan validation, `--help` text and docs), builds the argv the agent runs on
 * the target, and parses what came back into metrics and histograms.
 *
 * Drivers are pure: they never fork, read /proc or touch the database. The
 * agent (harness/agent/agent.c) executes the argv; the controller calls parse().
 *
 * Checklist for adding a workload:
 *   1. workloads/<name>.c with `const struct workload_ops <name>_workload`
 *      (.name, .params, .build and .parse are required);
 *   2. add it to the table in workloads/registry.c;
 *   3. define its metrics in docs/metrics.md; add a parser unit test.
 */
#ifndef SL_WORKLOAD_H
#define SL_WORKLOAD_H

#include <jansson.h>
#include <stddef.h>

#include "analysis/hist.h"
#include "harness/util/opts.h"
#include "harness/util/strbuf.h"

/* ---- parameters as data ------------------------------------------------ */

/* struct param_spec, params_resolve, the typed getters and params_describe
 * are the options as data of harness/util/opts.h, shared with the plan and
 * the targets. A workload's "load": another workload object, resolved with
 * its own table (wl_load_value, its spec's .value) */
json_t *wl_load_value(json_t *v, const char *path, struct strbuf *err);
#define PARAM_LOAD(help)                                                         \
	{ "load", PT_OBJECT, NULL, 0, 0, NULL, help, NULL, "load", 0, wl_load_value }
/* an estimate_s for a tool that runs for its integer duration_s and exits
 * within half a second after (cyclictest, stress-ng, sl-jbb) */
double wl_estimate_duration(const json_t *p);

/* ---- what the agent runs and what comes back --------------------------- */

struct wl_exec {
	struct strvec argv;      /* argv[0] is the tool name, looked up in PATH on the target */
	double timeout_s;        /* hard limit; the agent kills the process group after it */
	struct strvec files;     /* files (relative to the run's private directory) to return */
	json_t *inputs;          /* NULL or {name: content}: files the agent writes into the
				  * run directory before starting argv (owned) */
	const char *package;     /* Debian package that provides argv[0], for error messages */
	int respawn;             /* as background load: restart when it exits */
	int stop_sigint;         /* stopped early (timeout, Ctrl-C), the tool gets SIGINT
				  * first, not SIGTERM: rtla undoes its tracefs instance
				  * and osnoise settings only in its SIGINT handler */
};

struct wl_output {
	int exit_code;           /* -1 when killed by a signal */
	int term_signal;
	int timed_out;
	double wall_s;
	const char *out;         /* stdout (possibly only its tail) */
	const char *err;         /* stderr tail */
	const json_t *files;     /* object: relative name -> content string */
};

/* ---- what parse() produces --------------------------------------------- */

enum better { BETTER_NONE = 0, BETTER_LOWER = -1, BETTER_HIGHER = 1 };

struct metric {
	char name[48];           /* snake_case, unit suffix: lat_p99_us, time_s, rps */
	double value;
	const char *unit;        /* "us", "s", "ops/s", "%", "count", ... */
	enum better better;
	const char *note;        /* e.g. "in histogram overflow: value is a lower bound" */
	int censored;            /* 1: a lower bound, the true value is >= value (a
				  * percentile in a histogram's overflow, a ramp that
				  * ran out of time); stored as metric.censored */
};

/* the note of a percentile that fell into a histogram's overflow */
#define METRIC_NOTE_OVERFLOW "in histogram overflow: the value is a lower bound"


struct named_hist {
	char name[32];           /* e.g. "latency_us", "wakeup_ns" */
	const char *unit;
	struct hist h;
};

struct metric_set {
	struct metric *m;
	size_t nr, alloc;
	struct named_hist *hist;
	size_t nhist, ahist;
	json_t *extra;           /* structured results worth storing (a jbb step curve), or NULL */
	struct strbuf note;      /* about the run as a whole (evidence that is absent and
				  * why); stored with an ok run as "note: ..." */
};

void metric_set_init(struct metric_set *ms);
void metric_set_release(struct metric_set *ms);
void metric_add(struct metric_set *ms, const char *name, double value, const char *unit,
		enum better better);
void metric_add_note(struct metric_set *ms, const char *name, double value, const char *unit,
		     enum better better, const char *note);
/* a lower bound (censored = 1); note (a constant string) says why */
void metric_add_bound(struct metric_set *ms, const char *name, double value, const char *unit,
		      enum better better, const char *note);
/*
 * Percentile p of h, times scale (e.g. 1e-3 for a ns histogram stored in
 * us), as a lower-is-better metric: a percentile in the overflow is stored
 * as the histogram's range end, censored, with METRIC_NOTE_OVERFLOW; an
 * empty histogram adds nothing. Every histogram source makes its
 * percentiles here, so that none is ever stored as a plain number when it
 * is only a bound. Returns what hist_percentile() said.
 */
enum hist_pct metric_add_hist_pct(struct metric_set *ms, const char *name, const struct hist *h,
				  double p, double scale, const char *unit);
const struct metric *metric_find(const struct metric_set *ms, const char *name);
/* add a sentence to ms->note ("; " between sentences) */
void metric_set_note(struct metric_set *ms, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* takes ownership of h */
void metric_add_hist(struct metric_set *ms, const char *name, const char *unit, struct hist *h);
/* the histogram of ms named `name` (NULL: none), or NULL */
const struct hist *metric_find_hist(const struct metric_set *ms, const char *name);
/* a native program's (sl-*) one JSON object from its stdout: NULL with err
 * naming `tool` when it exited non-zero (its stderr) or printed no object */
json_t *native_output(const char *tool, const struct wl_output *out, struct strbuf *err);
/* a metric a native program prints as a number under `key` */
struct native_metric {
	const char *key;     /* in the JSON and as the metric name */
	const char *unit;
	enum better better;
	const char *hist;    /* a percentile of this histogram (ns) of ms, or NULL */
	double pct;
};
/* every number of defs (ended by a NULL key) that o holds (null: not
 * measurable, left out), as a lower bound when its percentile fell into the
 * histogram's overflow, or when its key starts with bound_prefix (non-NULL)
 * with the note bound_note (a constant string) */
void native_add_metrics(struct metric_set *ms, const json_t *o, const struct native_metric *defs,
			const char *bound_prefix, const char *bound_note);

/* ---- the driver ---------------------------------------------------------- */

struct workload_ops {
	const char *name;          /* plan "type" */
	const char *summary;       /* one line for --help and docs */
	const char *tool;          /* binary on the target (cyclictest, hackbench, sl-pingpong) */
	const char *package;       /* Debian package or "schedlab" for native tools */
	/* further programs build()'s argv starts through .tool (sl-netpair's
	 * server and client), NULL-terminated or NULL: carried to the targets
	 * (a qemu guest's initramfs, the ssh bundle) like .tool */
	const char *const *also_tools;
	const struct param_spec *params;
	int can_be_load;           /* may appear as another workload's "load" */
	/* the parameter that sets the histogram's range ("histogram_us"), named
	 * in the advice when samples fall beyond it; NULL: the range is fixed */
	const char *range_param;
	/* the metric a comparison of this workload is about first (sequential
	 * repetitions look at it when the plan names none) */
	const char *primary;
	/* the names of the metrics parse() can store, NULL-terminated; "*"
	 * stands for any text (a task's name, a CPU number): what a plan's or
	 * bisect's metric names are checked against (workload_metric_known) */
	const char *const *metrics;
	/* the kernel tracer the tool needs (tracefs available_tracers), or
	 * NULL: a booted kernel without it skips the run with the reason */
	const char *tracer;

	/* the target types (plan "type": local, qemu, ssh, lava) it can run on,
	 * NULL-terminated; NULL: every target. A plan that puts it on another
	 * target is refused with targets_why (what that target lacks) */
	const char *const *targets;
	const char *targets_why;

	/* extra cross-parameter checks after params_resolve (optional) */
	int (*check)(const json_t *params, const char *path, struct strbuf *err);
	/* expected wall time in seconds, for plan estimates (required) */
	double (*estimate_s)(const json_t *params);
	/* fill ex->argv/timeout/files for a measured run (required) */
	int (*build)(const json_t *params, struct wl_exec *ex, struct strbuf *err);
	/* fill ex for running as background load until killed (when can_be_load) */
	int (*build_load)(const json_t *params, struct wl_exec *ex, struct strbuf *err);
	/* parse the output into metrics (required); -1 with err when it is unusable */
	int (*parse)(const json_t *params, const struct wl_output *out, struct metric_set *ms,
		     struct strbuf *err);
	/* optional: the tool exited non-zero; write the reason into msg when the
	 * output tells it (an admission control refusal) and return 1 (the run
	 * failed) or 2 (skipped: the kernel lacks what the tool needs, msg
	 * starts "unsupported by this kernel: "), else 0 (the run error is then
	 * the exit status and the output's tail) */
	int (*explain)(const json_t *params, const struct wl_output *out, struct strbuf *msg);
};

void wl_exec_init(struct wl_exec *ex);
void wl_exec_release(struct wl_exec *ex);

/* registry (workloads/registry.c) */
const struct workload_ops *workload_find(const char *name);
const struct workload_ops *const *workload_all(void);
/* 1 when the workload runs on targets of type `type` (its .targets list it,
 * or it has none), else 0 */
int workload_runs_on(const struct workload_ops *ops, const char *type);
/* the range_param of a workload by name (NULL: unknown or none) */
const char *workload_range_param(const char *name);
/* the comma-separated list of names, for error messages */
const char *workload_names(void);
/* can `name` be a metric of the workload: one of ops->metrics, or one that
 * every workload may have (schedstat's, a traced run's trace_*) */
int workload_metric_known(const struct workload_ops *ops, const char *name);
/* the metric names of ops, comma-separated, for error messages (into sb) */
void workload_metric_names(const struct workload_ops *ops, struct strbuf *sb);
/* every registered driver has its required hooks; -1 and a message if not */
int workload_check_registry(struct strbuf *err);

#endif
