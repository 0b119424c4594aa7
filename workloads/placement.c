/*
 * The task_* metrics from a native workload's task-sched dump; what and why
 * in placement.h, the definitions in docs/metrics.md.
 */
#include "workloads/placement.h"

#include <string.h>

#include "analysis/tasksched.h"

void placement_build(const json_t *params, struct wl_exec *ex)
{
	if (!param_bool(params, "placement"))
		return;
	strvec_push(&ex->argv, "--sched-out=" PLACEMENT_FILE);
	strvec_push(&ex->files, PLACEMENT_FILE);
}

struct pcount {
	enum ts_field f;
	const char *name;
};

static const struct pcount counts[] = {
	{ TS_WAKEUPS, "task_wakeups" },
	{ TS_WAKEUPS_LOCAL, "task_wakeups_local" },
	{ TS_WAKEUPS_REMOTE, "task_wakeups_remote" },
	{ TS_WAKEUPS_SYNC, "task_wakeups_sync" },
	{ TS_WAKEUPS_MIGRATE, "task_wakeups_migrate" },
	{ TS_WAKEUPS_AFFINE, "task_wakeups_affine" },
	{ TS_WAKEUPS_AFFINE_ATTEMPTS, "task_wakeups_affine_attempts" },
	{ TS_NR_MIGRATIONS, "task_migrations" },
	{ TS_WAIT_COUNT, "task_wait_count" },
	{ TS_IOWAIT_COUNT, "task_iowait_count" },
};

static int has(const struct task_sched_sum *s, enum ts_field f)
{
	return (s->present >> f) & 1;
}

/* 100 * a / b as a metric when both fields are there and b > 0 */
static void pct(struct metric_set *ms, const char *name, uint64_t a, uint64_t b, int ok)
{
	if (ok && b > 0)
		metric_add(ms, name, 100.0 * (double)a / (double)b, "%", BETTER_NONE);
}

void placement_parse(const json_t *params, const struct wl_output *out, struct metric_set *ms)
{
	const json_t *f = json_object_get(out->files, PLACEMENT_FILE);
	if (!f) {
		if (param_bool(params, "placement"))
			metric_set_note(ms, "no wakeup-placement evidence: the program wrote no %s",
					PLACEMENT_FILE);
		return;
	}
	struct task_sched_sum s;
	char why[256];
	enum ts_dump_status st = task_sched_dump_sum(json_string_value(f), json_string_length(f),
						     &s, why, sizeof(why));
	if (st == TS_DUMP_BAD) {
		metric_set_note(ms, "no wakeup-placement evidence: %s rejected: %s", PLACEMENT_FILE,
				why);
		return;
	}
	if (st == TS_DUMP_ABSENT) {
		metric_set_note(ms, "no wakeup-placement evidence: %s", why);
		return;
	}
	if (!has(&s, TS_WAKEUPS)) {
		metric_set_note(ms, "no wakeup-placement evidence: the tasks' /proc/<pid>/sched "
				"have no schedstat fields (kernel.sched_schedstats was off, or the "
				"kernel lacks CONFIG_SCHEDSTATS)");
		return;
	}
	/* like every count from a tool: exact as a double, or not stored */
	for (int f = 0; f < TS_NFIELDS; f++)
		if (has(&s, f) && s.v[f] > (1ull << 53)) {
			metric_set_note(ms, "no wakeup-placement evidence: %s rejected: the sum of "
					"%s is beyond 2^53", PLACEMENT_FILE,
					task_sched_field_name(f));
			return;
		}
	metric_add(ms, "task_files", (double)s.ntasks, "count", BETTER_NONE);
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (has(&s, counts[i].f))
			metric_add(ms, counts[i].name, (double)s.v[counts[i].f], "count", BETTER_NONE);
	/* sums grow with the work done (more requests, more waits): no
	 * direction; the mean wait has one */
	if (has(&s, TS_WAIT_SUM))
		metric_add(ms, "task_wait_sum_ms", (double)s.v[TS_WAIT_SUM] / 1e6, "ms",
			   BETTER_NONE);
	if (has(&s, TS_WAIT_SUM) && has(&s, TS_WAIT_COUNT) && s.v[TS_WAIT_COUNT] > 0)
		metric_add(ms, "task_wait_mean_us",
			   (double)s.v[TS_WAIT_SUM] / 1e3 / (double)s.v[TS_WAIT_COUNT], "us",
			   BETTER_LOWER);
	if (has(&s, TS_IOWAIT_SUM))
		metric_add(ms, "task_iowait_sum_ms", (double)s.v[TS_IOWAIT_SUM] / 1e6, "ms",
			   BETTER_NONE);
	/* shares of the wakeups by where they landed: local + remote counts
	 * each wakeup once (ttwu_stat() increments exactly one of them) */
	int lr = has(&s, TS_WAKEUPS_LOCAL) && has(&s, TS_WAKEUPS_REMOTE);
	uint64_t landed = lr ? s.v[TS_WAKEUPS_LOCAL] + s.v[TS_WAKEUPS_REMOTE] : 0;
	pct(ms, "task_local_wakeup_pct", s.v[TS_WAKEUPS_LOCAL], landed, lr);
	pct(ms, "task_remote_wakeup_pct", s.v[TS_WAKEUPS_REMOTE], landed, lr);
	pct(ms, "task_migrate_wakeup_pct", s.v[TS_WAKEUPS_MIGRATE], landed,
	    lr && has(&s, TS_WAKEUPS_MIGRATE) && s.v[TS_WAKEUPS_MIGRATE] <= landed);
	pct(ms, "task_affine_wakeup_pct", s.v[TS_WAKEUPS_AFFINE],
	    s.v[TS_WAKEUPS_AFFINE_ATTEMPTS],
	    has(&s, TS_WAKEUPS_AFFINE) && has(&s, TS_WAKEUPS_AFFINE_ATTEMPTS) &&
	    s.v[TS_WAKEUPS_AFFINE] <= s.v[TS_WAKEUPS_AFFINE_ATTEMPTS]);
}
