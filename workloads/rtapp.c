/*
 * rt-app (Debian's rt-app 1.0): periodic task sets under SCHED_OTHER, FIFO,
 * RR or DEADLINE, and utilisation sweeps, with deadline misses, slack,
 * response time and timer wakeup latency per period.
 *
 * The plan gives either "tasks" (named periodic tasks: run_us every
 * period_us, each with its policy) or "sweep" (N equal tasks whose total
 * utilisation goes from_pct..to_pct of one CPU in step_pct steps, each step
 * duration_s long: one rt-app phase per step, so the whole sweep is one
 * run). The driver writes rt-app's JSON task description with jansson
 * (rtapp_build_taskset), has the agent put it into the run directory as
 * taskset.json (wl_exec.inputs), runs `rt-app taskset.json` and collects
 * the per-thread logs rt-app writes there (rt-app-NAME-IDX.log, one row per
 * period: idx perf run period start end rel_st slack c_duration c_period
 * wu_lat, times in us). rtapp_parse_logs turns the rows into metrics:
 * slack is the time from the end of a period's work to the next release,
 * so the response time (release to end of work) is c_period - slack and a
 * deadline miss is a response time beyond the deadline (slack < 0 for the
 * implicit deadline = period). A SCHED_DEADLINE set that admission control
 * refuses (sched_setattr: EBUSY) becomes a run error that says so (explain).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "workloads/parsers.h"
#include "workloads/workload.h"

#define RT_MAX_THREADS 256
#define RT_MAX_STEPS 100
#define RT_CALIBRATION_S 15.0   /* rt-app's own calibration on CPU0, measured: 12-15 s */

static const char *const policies[] = { "other", "fifo", "rr", "deadline", NULL };
static const char *const sched_names[] = { "SCHED_OTHER", "SCHED_FIFO", "SCHED_RR",
					   "SCHED_DEADLINE" };
enum { POL_OTHER, POL_FIFO, POL_RR, POL_DEADLINE };

static const struct param_spec rtapp_params[] = {
	{ "tasks", PT_JSON, NULL, 0, 0, NULL,
	  .help = "periodic task set: [{\"name\", \"policy\", \"priority\", \"run_us\", \"period_us\", "
	  "\"deadline_us\", \"runtime_us\", \"instances\"}] (or \"sweep\")" },
	{ "sweep", PT_JSON, NULL, 0, 0, NULL,
	  .help = "utilisation sweep: {\"tasks\": N, \"from_pct\", \"to_pct\", \"step_pct\", \"period_us\", "
	  "\"policy\", \"priority\"} (or \"tasks\")" },
	{ "duration_s", PT_INT, "10", 1, 3600, NULL,
	  .help = "measurement time; in a sweep, the time of each step" },
	{ "calibration_ns", PT_INT, "0", 0, 1000000, NULL,
	  .help = "rt-app's ns per busy loop; 0 = measured by rt-app on CPU0 (about 15 s)" },
	PARAM_LOAD("background load while measuring"),
	PARAM_END,
};

/* ---- the task set, resolved from the plan ------------------------------- */

struct rt_task {
	char name[17];
	int policy;
	long long priority;
	long long run_us, period_us, deadline_us, runtime_us, instances;
};

struct rt_set {
	struct rt_task t[RT_MAX_THREADS];
	int n;                       /* tasks */
	int sweep;
	int nsteps;
	long long pct[RT_MAX_STEPS];      /* total utilisation of each step, % of one CPU */
	long long step_run[RT_MAX_STEPS]; /* each task's run_us in that step */
	long long step_loops;             /* periods per step */
};

/* an integer member: absent -> def (or an error when required) */
static int get_int(const json_t *o, const char *key, const char *path, long long min,
		   long long max, long long def, int required, long long *out, struct strbuf *err)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		if (required) {
			strbuf_addf(err, "%s.%s: missing (an integer in [%lld, %lld])", path, key,
				    min, max);
			return -1;
		}
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
		strbuf_addf(err, "%s.%s: must be an integer in [%lld, %lld]", path, key, min, max);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

static int get_policy(const json_t *o, const char *path, int *out, struct strbuf *err,
		      int def)
{
	json_t *v = json_object_get(o, "policy");
	*out = def;
	if (!v)
		return 0;
	for (int i = 0; policies[i]; i++)
		if (json_is_string(v) && !strcmp(json_string_value(v), policies[i])) {
			*out = i;
			return 0;
		}
	strbuf_addf(err, "%s.policy: must be one of \"other\", \"fifo\", \"rr\", \"deadline\"",
		    path);
	return -1;
}

static int only_keys(const json_t *o, const char *path, const char *const *keys,
		     struct strbuf *err)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		int ok = 0;
		for (const char *const *q = keys; *q; q++)
			ok |= !strcmp(*q, k);
		if (!ok) {
			strbuf_addf(err, "%s.%s: unknown key (valid: ", path, k);
			for (const char *const *q = keys; *q; q++)
				strbuf_addf(err, "%s%s", q == keys ? "" : ", ", *q);
			strbuf_addch(err, ')');
			return -1;
		}
	}
	return 0;
}

/* priority for fifo/rr; runtime and deadline for deadline */
static int policy_params(const json_t *o, const char *path, struct rt_task *t,
			 struct strbuf *err)
{
	int rt = t->policy == POL_FIFO || t->policy == POL_RR;
	if (!rt && json_object_get(o, "priority")) {
		strbuf_addf(err, "%s.priority: only for policy \"fifo\" or \"rr\" (this is \"%s\")",
			    path, policies[t->policy]);
		return -1;
	}
	if (get_int(o, "priority", path, 1, 99, rt ? 10 : 0, 0, &t->priority, err))
		return -1;
	int dl = t->policy == POL_DEADLINE;
	for (const char *const *k = (const char *const[]){ "deadline_us", "runtime_us", NULL }; *k;
	     k++)
		if (!dl && json_object_get(o, *k)) {
			strbuf_addf(err, "%s.%s: only for policy \"deadline\" (this is \"%s\")", path,
				    *k, policies[t->policy]);
			return -1;
		}
	t->deadline_us = t->period_us;
	t->runtime_us = 0;
	if (dl) {
		if (get_int(o, "deadline_us", path, 1, t->period_us, t->period_us, 0,
			    &t->deadline_us, err))
			return -1;
		/* default budget: a quarter above the work, within the deadline */
		long long def = t->run_us + (t->run_us + 3) / 4;
		if (def > t->deadline_us)
			def = t->deadline_us;
		if (get_int(o, "runtime_us", path, 1, t->deadline_us, def, 0, &t->runtime_us, err))
			return -1;
		if (t->run_us > t->deadline_us) {
			strbuf_addf(err, "%s.run_us: %lld is beyond deadline_us %lld", path,
				    t->run_us, t->deadline_us);
			return -1;
		}
	}
	return 0;
}

static int valid_name(const char *s)
{
	if (!s || !islower((unsigned char)s[0]) || strlen(s) > 16)
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int resolve_tasks(const json_t *arr, const char *path, struct rt_set *set,
			 struct strbuf *err)
{
	static const char *const keys[] = { "name", "policy", "priority", "run_us", "period_us",
					    "deadline_us", "runtime_us", "instances", NULL };
	if (!json_is_array(arr) || !json_array_size(arr)) {
		strbuf_addf(err, "%s.tasks: must be a non-empty array of task objects like "
			    "{\"name\": \"t0\", \"run_us\": 1000, \"period_us\": 10000}", path);
		return -1;
	}
	long long threads = 0;
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		char tp[256];
		snprintf(tp, sizeof(tp), "%s.tasks[%zu]", path, i);
		if (i >= RT_MAX_THREADS) {
			strbuf_addf(err, "%s: at most %d tasks", tp, RT_MAX_THREADS);
			return -1;
		}
		if (!json_is_object(o)) {
			strbuf_addf(err, "%s: must be an object", tp);
			return -1;
		}
		if (only_keys(o, tp, keys, err))
			return -1;
		struct rt_task *t = &set->t[i];
		memset(t, 0, sizeof(*t));
		const char *name = json_string_value(json_object_get(o, "name"));
		if (!valid_name(name)) {
			strbuf_addf(err, "%s.name: %s (1-16 characters: a-z first, then a-z, 0-9, _)",
				    tp, name ? "not a valid task name" : "missing");
			return -1;
		}
		for (size_t k = 0; k < i; k++)
			if (!strcmp(set->t[k].name, name)) {
				strbuf_addf(err, "%s.name: \"%s\" is also the name of tasks[%zu]", tp,
					    name, k);
				return -1;
			}
		snprintf(t->name, sizeof(t->name), "%s", name);
		if (get_policy(o, tp, &t->policy, err, POL_OTHER) ||
		    get_int(o, "period_us", tp, 100, 10000000, 0, 1, &t->period_us, err) ||
		    get_int(o, "run_us", tp, 1, t->period_us, 0, 1, &t->run_us, err) ||
		    get_int(o, "instances", tp, 1, 64, 1, 0, &t->instances, err) ||
		    policy_params(o, tp, t, err))
			return -1;
		threads += t->instances;
		set->n = (int)i + 1;
	}
	if (threads > RT_MAX_THREADS) {
		strbuf_addf(err, "%s.tasks: %lld threads in all (instances summed); at most %d", path,
			    threads, RT_MAX_THREADS);
		return -1;
	}
	return 0;
}

static int resolve_sweep(const json_t *o, const char *path, long long duration_s,
			 struct rt_set *set, struct strbuf *err)
{
	static const char *const keys[] = { "tasks", "from_pct", "to_pct", "step_pct",
					    "period_us", "policy", "priority", NULL };
	char sp[256];
	snprintf(sp, sizeof(sp), "%s.sweep", path);
	if (!json_is_object(o)) {
		strbuf_addf(err, "%s: must be an object like {\"tasks\": 2, \"from_pct\": 20, "
			    "\"to_pct\": 100, \"step_pct\": 20}", sp);
		return -1;
	}
	if (only_keys(o, sp, keys, err))
		return -1;
	long long n, from, to, step, period;
	if (get_int(o, "tasks", sp, 1, 64, 0, 1, &n, err) ||
	    get_int(o, "period_us", sp, 100, 10000000, 10000, 0, &period, err) ||
	    get_int(o, "from_pct", sp, 1, 100 * n, 0, 1, &from, err) ||
	    get_int(o, "to_pct", sp, from, 100 * n, 0, 1, &to, err) ||
	    get_int(o, "step_pct", sp, 1, 100 * n, 10, 0, &step, err))
		return -1;
	struct rt_task proto;
	memset(&proto, 0, sizeof(proto));
	proto.period_us = period;
	proto.instances = 1;
	if (get_policy(o, sp, &proto.policy, err, POL_FIFO))
		return -1;
	long long steps = (to - from) / step + 1;
	if (steps > RT_MAX_STEPS) {
		strbuf_addf(err, "%s.step_pct: %lld steps from %lld%% to %lld%%; at most %d", sp,
			    steps, from, to, RT_MAX_STEPS);
		return -1;
	}
	set->sweep = 1;
	set->nsteps = (int)steps;
	set->step_loops = duration_s * 1000000 / period;
	if (set->step_loops < 1)
		set->step_loops = 1;
	for (int k = 0; k < set->nsteps; k++) {
		set->pct[k] = from + k * step;
		set->step_run[k] = llround((double)set->pct[k] * (double)period / (100.0 * (double)n));
		if (set->step_run[k] < 1 || (k && set->step_run[k] == set->step_run[k - 1])) {
			strbuf_addf(err, "%s.period_us: %lld us is too short to tell %lld%% from the "
				    "step before over %lld tasks (each task's run would be %lld us); "
				    "raise period_us or step_pct", sp, period, set->pct[k], n,
				    set->step_run[k]);
			return -1;
		}
	}
	/* the largest step decides the policy's parameters (the deadline budget) */
	proto.run_us = set->step_run[set->nsteps - 1];
	if (policy_params(o, sp, &proto, err))
		return -1;
	for (int i = 0; i < n; i++) {
		set->t[i] = proto;
		snprintf(set->t[i].name, sizeof(set->t[i].name), "s%d", i);
	}
	set->n = (int)n;
	return 0;
}

static int resolve_set(const json_t *p, const char *path, struct rt_set *set,
		       struct strbuf *err)
{
	json_t *tasks = json_object_get(p, "tasks"), *sweep = json_object_get(p, "sweep");
	memset(set, 0, sizeof(*set));
	if (!tasks == !sweep) {
		strbuf_addf(err, "%s: needs exactly one of \"tasks\" (a task set) and \"sweep\" "
			    "(a utilisation sweep)%s", path, tasks ? ", not both" : "");
		return -1;
	}
	if (tasks)
		return resolve_tasks(tasks, path, set, err);
	return resolve_sweep(sweep, path, param_int(p, "duration_s"), set, err);
}

static int check(const json_t *p, const char *path, struct strbuf *err)
{
	struct rt_set *set = xmalloc(sizeof(*set));
	int r = resolve_set(p, path, set, err);
	free(set);
	return r;
}

/* ---- rt-app's JSON ------------------------------------------------------ */

static void task_policy(json_t *to, const struct rt_task *t)
{
	json_object_set_new(to, "policy", json_string(sched_names[t->policy]));
	if (t->policy == POL_FIFO || t->policy == POL_RR)
		json_object_set_new(to, "priority", json_integer(t->priority));
	if (t->policy == POL_DEADLINE) {
		json_object_set_new(to, "dl-runtime", json_integer(t->runtime_us));
		json_object_set_new(to, "dl-period", json_integer(t->period_us));
		json_object_set_new(to, "dl-deadline", json_integer(t->deadline_us));
	}
}

static json_t *taskset_of(const json_t *p, const struct rt_set *set)
{
	long long cal = param_int(p, "calibration_ns");
	json_t *g = json_pack("{s:I,s:s,s:s,s:s,s:b,s:b}", "duration",
			      (json_int_t)(set->sweep ? -1 : param_int(p, "duration_s")),
			      "default_policy", "SCHED_OTHER", "logdir", "./", "log_basename",
			      "rt-app", "ftrace", 0, "gnuplot", 0);
	json_object_set_new(g, "calibration", cal ? json_integer(cal) : json_string("CPU0"));
	json_t *tasks = json_object();
	for (int i = 0; i < set->n; i++) {
		const struct rt_task *t = &set->t[i];
		json_t *to = json_object();
		json_object_set_new(to, "instance", json_integer(t->instances));
		task_policy(to, t);
		if (!set->sweep) {
			json_object_set_new(to, "loop", json_integer(-1));
			json_object_set_new(to, "run", json_integer(t->run_us));
			/* "unique": one timer per thread, also with several instances */
			json_object_set_new(to, "timer", json_pack("{s:s,s:I}", "ref", "unique",
								  "period", (json_int_t)t->period_us));
		} else {
			json_t *ph = json_object();
			json_object_set_new(to, "loop", json_integer(1));
			for (int k = 0; k < set->nsteps; k++) {
				char pn[16];
				snprintf(pn, sizeof(pn), "u%03lld", set->pct[k]);
				json_object_set_new(ph, pn, json_pack("{s:I,s:I,s:{s:s,s:I}}", "loop",
					(json_int_t)set->step_loops, "run",
					(json_int_t)set->step_run[k], "timer", "ref", t->name,
					"period", (json_int_t)t->period_us));
			}
			json_object_set_new(to, "phases", ph);
		}
		json_object_set_new(tasks, t->name, to);
	}
	return json_pack("{s:o,s:o}", "global", g, "tasks", tasks);
}

char *rtapp_build_taskset(const json_t *params, struct strbuf *err)
{
	struct rt_set *set = xmalloc(sizeof(*set));
	char *s = NULL;
	if (!resolve_set(params, "rtapp", set, err)) {
		json_t *j = taskset_of(params, set);
		s = json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		json_decref(j);
	}
	free(set);
	return s;
}

static double total_s(const json_t *p, const struct rt_set *set)
{
	double d = (double)param_int(p, "duration_s");
	return set->sweep ? d * set->nsteps : d;
}

static double estimate(const json_t *p)
{
	struct rt_set *set = xmalloc(sizeof(*set));
	struct strbuf e = STRBUF_INIT;
	double t = resolve_set(p, "rtapp", set, &e) ? (double)param_int(p, "duration_s")
						     : total_s(p, set);
	strbuf_release(&e);
	free(set);
	return t + (param_int(p, "calibration_ns") ? 0.2 : RT_CALIBRATION_S);
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	struct rt_set *set = xmalloc(sizeof(*set));
	if (resolve_set(p, "rtapp", set, err)) {
		free(set);
		return -1;
	}
	json_t *j = taskset_of(p, set);
	char *s = json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(j);
	ex->inputs = json_pack("{s:s}", "taskset.json", s);
	free(s);
	strvec_push(&ex->argv, "rt-app");
	strvec_push(&ex->argv, "taskset.json");
	/* rt-app numbers its threads in task order, instances one after another */
	int idx = 0;
	for (int i = 0; i < set->n; i++)
		for (long long k = 0; k < set->t[i].instances; k++)
			strvec_pushf(&ex->files, "rt-app-%s-%d.log", set->t[i].name, idx++);
	/* an overloaded sweep's steps take longer than planned */
	ex->timeout_s = total_s(p, set) * (set->sweep ? 3 : 1.5) + 2 * RT_CALIBRATION_S + 30;
	ex->package = "rt-app";
	free(set);
	return 0;
}

/* ---- the logs ----------------------------------------------------------- */

struct dvec {
	double *v;
	size_t n, alloc;
};

static void dv_push(struct dvec *d, double x)
{
	if (d->n == d->alloc) {
		d->alloc = d->alloc ? d->alloc * 2 : 256;
		d->v = xrealloc(d->v, d->alloc * sizeof(*d->v));
	}
	d->v[d->n++] = x;
}

struct rt_stats {
	struct dvec resp, slack, wu;
	long long misses;
};

static void rs_free(struct rt_stats *s)
{
	free(s->resp.v);
	free(s->slack.v);
	free(s->wu.v);
}

static void pct_metric(struct metric_set *ms, const char *prefix, const char *name,
		       struct dvec *d, double p, enum better b)
{
	char mn[64];
	snprintf(mn, sizeof(mn), "%s%s", prefix, name);
	if (d->n)
		metric_add(ms, mn, stats_percentile_sorted(d->v, d->n, p), "us", b);
}

/* rows "# Policy : SCHED_FIFO priority : 10" then "#idx perf run ..."; one
 * file of task t. Returns rows read, -1 on a policy other than requested */
static long long parse_log(const char *text, const char *fname, const struct rt_set *set,
			   const struct rt_task *t, struct rt_stats *all, struct rt_stats *task,
			   struct rt_stats *steps, struct hist *hresp, struct hist *hwu,
			   struct strbuf *err)
{
	long long rows = 0;
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char line[512];
		int complete = nl != NULL;
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, l, len);
		line[len] = 0;
		l = nl ? nl + 1 : l + strlen(l);
		if (!strncmp(line, "# Policy : ", 11)) {
			const char *want = sched_names[t->policy];
			size_t wl = strlen(want);
			if (strncmp(line + 11, want, wl) || (line[11 + wl] && line[11 + wl] != ' ')) {
				strbuf_addf(err, "rt-app log %s: task %s ran with \"%s\", not %s",
					    fname, t->name, line + 11, want);
				return -1;
			}
			continue;
		}
		if (line[0] == '#')
			continue;
		long long f[11];
		int used = 0;
		/* a last line without its newline may be cut short: not a row */
		if (!complete ||
		    sscanf(line, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %n", &f[0],
			   &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10],
			   &used) != 11 || line[used])
			continue;
		long long slack = f[7], c_run = f[8], c_period = f[9], wu = f[10];
		if (c_period <= 0 || c_period > 1000000000LL || slack < -1000000000000LL ||
		    slack > c_period || wu < 0)
			continue;
		double resp = (double)(c_period - slack);
		int miss = resp > (double)t->deadline_us;
		struct rt_stats *step = NULL;
		if (set->sweep) {
			for (int k = 0; k < set->nsteps; k++)
				if (set->step_run[k] == c_run)
					step = &steps[k];
			if (!step)
				continue;
		}
		struct rt_stats *to[] = { all, task, step };
		for (size_t k = 0; k < 3; k++) {
			if (!to[k])
				continue;
			dv_push(&to[k]->resp, resp);
			dv_push(&to[k]->slack, (double)slack);
			if (slack > 0)
				dv_push(&to[k]->wu, (double)wu);
			to[k]->misses += miss;
		}
		hist_record(hresp, (uint64_t)resp);
		if (slack > 0)
			hist_record(hwu, (uint64_t)wu);
		rows++;
	}
	return rows;
}

/* the task of a log "rt-app-NAME-IDX.log" */
static const struct rt_task *task_of(const char *fname, const struct rt_set *set)
{
	size_t n = strlen(fname);
	if (strncmp(fname, "rt-app-", 7) || n < 12 || strcmp(fname + n - 4, ".log"))
		return NULL;
	const char *dash = fname + n - 4;
	while (dash > fname + 7 && isdigit((unsigned char)dash[-1]))
		dash--;
	if (dash == fname + n - 4 || dash[-1] != '-')
		return NULL;
	size_t nl = (size_t)(dash - 1 - (fname + 7));
	for (int i = 0; i < set->n; i++)
		if (strlen(set->t[i].name) == nl && !strncmp(set->t[i].name, fname + 7, nl))
			return &set->t[i];
	return NULL;
}

static void add_stats(struct metric_set *ms, const char *prefix, struct rt_stats *s, int full)
{
	char mn[64];
	stats_sort(s->resp.v, s->resp.n);
	stats_sort(s->slack.v, s->slack.n);
	stats_sort(s->wu.v, s->wu.n);
	snprintf(mn, sizeof(mn), "%smisses", prefix);
	metric_add(ms, mn, (double)s->misses, "count", BETTER_LOWER);
	if (full) {
		snprintf(mn, sizeof(mn), "%speriods", prefix);
		metric_add(ms, mn, (double)s->resp.n, "count", BETTER_NONE);
		snprintf(mn, sizeof(mn), "%smiss_pct", prefix);
		metric_add(ms, mn, 100.0 * (double)s->misses / (double)s->resp.n, "%", BETTER_LOWER);
	}
	pct_metric(ms, prefix, "response_p50_us", &s->resp, 50, BETTER_LOWER);
	pct_metric(ms, prefix, "response_p99_us", &s->resp, 99, BETTER_LOWER);
	pct_metric(ms, prefix, "response_max_us", &s->resp, 100, BETTER_LOWER);
	if (!full)
		return;
	pct_metric(ms, prefix, "slack_min_us", &s->slack, 0, BETTER_HIGHER);
	pct_metric(ms, prefix, "slack_p1_us", &s->slack, 1, BETTER_HIGHER);
	pct_metric(ms, prefix, "slack_p50_us", &s->slack, 50, BETTER_HIGHER);
	pct_metric(ms, prefix, "wu_lat_p50_us", &s->wu, 50, BETTER_LOWER);
	pct_metric(ms, prefix, "wu_lat_p99_us", &s->wu, 99, BETTER_LOWER);
	pct_metric(ms, prefix, "wu_lat_max_us", &s->wu, 100, BETTER_LOWER);
}

int rtapp_parse_logs(const json_t *params, const json_t *files, struct metric_set *ms,
		     struct strbuf *err)
{
	struct rt_set *set = xmalloc(sizeof(*set));
	if (resolve_set(params, "rtapp", set, err)) {
		free(set);
		return -1;
	}
	struct rt_stats all, *task = xcalloc((size_t)set->n, sizeof(*task)),
			     *steps = xcalloc(RT_MAX_STEPS, sizeof(*steps));
	memset(&all, 0, sizeof(all));
	struct hist hresp, hwu;
	hist_init_loglin(&hresp, 7, 34);
	hist_init_loglin(&hwu, 7, 34);
	int ret = -1, nfiles = 0;
	const char *fname;
	json_t *fv;
	json_object_foreach((json_t *)files, fname, fv) {
		const struct rt_task *t = task_of(fname, set);
		if (!t || !json_is_string(fv))
			continue;
		nfiles++;
		if (parse_log(json_string_value(fv), fname, set, t, &all, &task[t - set->t], steps,
			      &hresp, &hwu, err) < 0)
			goto out;
	}
	if (!nfiles || !all.resp.n) {
		strbuf_addf(err, "rt-app wrote %s", nfiles ? "logs without a complete period row"
							    : "no per-thread log (rt-app-NAME-IDX.log)");
		/* seen in a guest under hackbench in preempt=none: rt-app's
		   start-up (page locking, thread creation) outlasted the task
		   set's window, and each thread ended as it started */
		if (nfiles && !set->sweep)
			strbuf_addf(err, ": no thread completed a period in the %lld s window "
				    "(under a heavy load rt-app's start-up can take the whole "
				    "window; a longer duration_s leaves the threads time)",
				    (long long)param_int(params, "duration_s"));
		goto out;
	}
	for (int i = 0; i < set->n; i++)
		if (!task[i].resp.n) {
			strbuf_addf(err, "rt-app's log of task %s has no complete period row",
				    set->t[i].name);
			goto out;
		}
	add_stats(ms, "", &all, 1);
	if (!set->sweep)
		for (int i = 0; i < set->n; i++) {
			char pre[32];
			snprintf(pre, sizeof(pre), "%s_", set->t[i].name);
			add_stats(ms, pre, &task[i], 0);
		}
	if (set->sweep) {
		json_t *curve = json_array();
		int onset = -1;
		for (int k = 0; k < set->nsteps; k++) {
			char pre[32];
			if (!steps[k].resp.n)
				continue;
			snprintf(pre, sizeof(pre), "u%03lld_", set->pct[k]);
			add_stats(ms, pre, &steps[k], 0);
			if (onset < 0 && steps[k].misses)
				onset = k;
			json_array_append_new(curve, json_pack("{s:I,s:I,s:I,s:f}", "util_pct",
				(json_int_t)set->pct[k], "periods", (json_int_t)steps[k].resp.n,
				"misses", (json_int_t)steps[k].misses, "response_p99_us",
				stats_percentile_sorted(steps[k].resp.v, steps[k].resp.n, 99)));
		}
		if (onset >= 0)
			metric_add(ms, "miss_onset_pct", (double)set->pct[onset], "%", BETTER_HIGHER);
		else
			metric_add_bound(ms, "miss_onset_pct", (double)set->pct[set->nsteps - 1], "%",
					 BETTER_HIGHER, "no misses up to the sweep's last step: "
					 "misses begin beyond it (a lower bound)");
		json_decref(ms->extra);
		ms->extra = json_pack("{s:s,s:o}", "kind", "rtapp_sweep", "steps", curve);
	}
	metric_add_hist(ms, "response_us", "us", &hresp);
	if (hwu.total)
		metric_add_hist(ms, "wu_lat_us", "us", &hwu);
	ret = 0;
out:
	rs_free(&all);
	for (int i = 0; i < set->n; i++)
		rs_free(&task[i]);
	for (int k = 0; k < RT_MAX_STEPS; k++)
		rs_free(&steps[k]);
	free(task);
	free(steps);
	hist_free(&hresp);
	hist_free(&hwu);
	free(set);
	return ret;
}

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	return rtapp_parse_logs(p, out->files, ms, err);
}

/* the bandwidth the set asks of SCHED_DEADLINE, in CPUs */
static double dl_bandwidth(const json_t *p)
{
	struct rt_set *set = xmalloc(sizeof(*set));
	struct strbuf e = STRBUF_INIT;
	double bw = 0;
	if (!resolve_set(p, "rtapp", set, &e))
		for (int i = 0; i < set->n; i++)
			if (set->t[i].policy == POL_DEADLINE)
				bw += (double)set->t[i].instances * (double)set->t[i].runtime_us /
				      (double)set->t[i].period_us;
	strbuf_release(&e);
	free(set);
	return bw;
}

int rtapp_explain(const json_t *p, const char *stderr_text, struct strbuf *msg)
{
	const char *s = stderr_text ? stderr_text : "";
	if (strstr(s, "sched_setattr: Device or resource busy")) {
		strbuf_addf(msg, "SCHED_DEADLINE admission control refused the task set "
			    "(sched_setattr: EBUSY): it asks for %.2f CPUs of runtime/period, more "
			    "than the kernel admits (per CPU kernel.sched_rt_runtime_us / "
			    "kernel.sched_rt_period_us, 95%% by default, minus what other deadline "
			    "tasks hold)", dl_bandwidth(p));
		return 1;
	}
	if (strstr(s, "sched_setattr: Operation not permitted") ||
	    strstr(s, "sched_setscheduler: Operation not permitted")) {
		strbuf_addstr(msg, "rt-app may not set the real-time policy (EPERM): SCHED_FIFO, "
			      "SCHED_RR and SCHED_DEADLINE need root or CAP_SYS_NICE");
		return 1;
	}
	if (strstr(s, "sched_setattr: Invalid argument")) {
		strbuf_addstr(msg, "the kernel refused the SCHED_DEADLINE parameters (sched_setattr: "
			      "EINVAL): runtime_us <= deadline_us <= period_us, and runtime of at "
			      "least 1 us");
		return 1;
	}
	return 0;
}

static int explain(const json_t *p, const struct wl_output *out, struct strbuf *msg)
{
	return rtapp_explain(p, out->err, msg);
}

/* the metrics parse() can store ("*": any text; docs/metrics.md) */
static const char *const rtapp_metric_names[] = {
	"*periods", "*misses", "*miss_pct", "*response_p50_us", "*response_p99_us",
	"*response_max_us", "slack_min_us", "slack_p1_us", "slack_p50_us", "wu_lat_p50_us",
	"wu_lat_p99_us", "wu_lat_max_us", "miss_onset_pct", NULL,
};

const struct workload_ops rtapp_workload = {
	.name = "rtapp",
	.summary = "rt-app: periodic task sets (OTHER/FIFO/RR/DEADLINE) and utilisation sweeps: "
		   "deadline misses, slack, response time",
	.tool = "rt-app",
	.package = "rt-app",
	.primary = "response_p99_us",
	.metrics = rtapp_metric_names,
	.params = rtapp_params,
	.check = check,
	.estimate_s = estimate,
	.build = build,
	.parse = parse,
	.explain = explain,
};
