/*
 * The workload table: every driver schedlab knows, in the order shown by
 * --help. Checked once for required hooks by workload_check_registry().
 */
#include <string.h>

#include "workloads/workload.h"

extern const struct workload_ops cyclictest_workload;
extern const struct workload_ops hackbench_workload;
extern const struct workload_ops stressng_workload;
extern const struct workload_ops perf_messaging_workload;
extern const struct workload_ops perf_pipe_workload;
extern const struct workload_ops pgbench_workload;
extern const struct workload_ops sockperf_workload;
extern const struct workload_ops pingpong_workload;
extern const struct workload_ops jbb_workload;
extern const struct workload_ops rtapp_workload;
extern const struct workload_ops timerlat_workload;
extern const struct workload_ops osnoise_workload;
extern const struct workload_ops lockholder_workload;

static const struct workload_ops *const workloads[] = {
	&cyclictest_workload,
	&hackbench_workload,
	&stressng_workload,
	&perf_messaging_workload,
	&perf_pipe_workload,
	&pgbench_workload,
	&sockperf_workload,
	&pingpong_workload,
	&jbb_workload,
	&rtapp_workload,
	&timerlat_workload,
	&osnoise_workload,
	&lockholder_workload,
	NULL,
};

const struct workload_ops *workload_find(const char *name)
{
	for (const struct workload_ops *const *w = workloads; *w; w++)
		if (!strcmp((*w)->name, name))
			return *w;
	return NULL;
}

int workload_runs_on(const struct workload_ops *ops, const char *type)
{
	if (!ops->targets)
		return 1;
	for (const char *const *v = ops->targets; *v; v++)
		if (type && !strcmp(*v, type))
			return 1;
	return 0;
}

const struct workload_ops *const *workload_all(void)
{
	return workloads;
}

const char *workload_names(void)
{
	static char buf[256];
	if (!buf[0]) {
		for (const struct workload_ops *const *w = workloads; *w; w++) {
			if (w != workloads)
				strncat(buf, ", ", sizeof(buf) - strlen(buf) - 1);
			strncat(buf, (*w)->name, sizeof(buf) - strlen(buf) - 1);
		}
	}
	return buf;
}

int workload_check_registry(struct strbuf *err)
{
	for (const struct workload_ops *const *w = workloads; *w; w++) {
		const struct workload_ops *o = *w;
		if (!o->name || !o->params || !o->build || !o->parse || !o->estimate_s ||
		    !o->tool || (o->can_be_load && !o->build_load)) {
			strbuf_addf(err, "workload %s: missing a required hook",
				    o->name ? o->name : "(unnamed)");
			return -1;
		}
	}
	return 0;
}

const char *workload_range_param(const char *name)
{
	const struct workload_ops *w = workload_find(name);
	return w ? w->range_param : NULL;
}

/* the metrics any workload's runs may have: schedstat deltas (session.c)
 * and the summary of a traced run (evidence) */
static const char *const common_metrics[] = { "ttwu_count", "ttwu_local_pct", "run_delay_ms",
					      "sched_count", "trace_*", NULL };

/* glob with '*' only (any text, also none) */
static int glob_match(const char *pat, const char *s)
{
	if (!*pat)
		return !*s;
	if (*pat == '*') {
		for (const char *t = s;; t++) {
			if (glob_match(pat + 1, t))
				return 1;
			if (!*t)
				return 0;
		}
	}
	return *s == *pat && glob_match(pat + 1, s + 1);
}

int workload_metric_known(const struct workload_ops *ops, const char *name)
{
	if (!name || !*name)
		return 0;
	for (const char *const *m = common_metrics; *m; m++)
		if (glob_match(*m, name))
			return 1;
	if (!ops->metrics)
		return 1; /* a driver that does not list them: not checked */
	for (const char *const *m = ops->metrics; *m; m++)
		if (glob_match(*m, name))
			return 1;
	return 0;
}

void workload_metric_names(const struct workload_ops *ops, struct strbuf *sb)
{
	size_t start = sb->len;
	for (const char *const *m = ops->metrics; m && *m; m++)
		strbuf_addf(sb, "%s%s", sb->len > start ? ", " : "", *m);
	for (const char *const *m = common_metrics; *m; m++)
		strbuf_addf(sb, "%s%s", sb->len > start ? ", " : "", *m);
}
