/*
 * /proc/schedstat parsing and per-run deltas (versions 15-17: the per-CPU
 * line is the same in all three). Fields of a "cpuN" line, in order:
 *   yld_count, legacy (0), sched_count, sched_goidle, ttwu_count, ttwu_local,
 *   rq_cpu_time (ns), run_delay (ns), pcount
 * Deltas are summed over CPUs. Derived metrics:
 *   ttwu_count       wakeups (try_to_wake_up calls) during the run
 *   ttwu_local_pct   share of those that woke the task on the waking CPU
 *   run_delay_ms     total time tasks spent runnable but waiting for a CPU
 *   sched_count      schedule() calls
 */
#ifndef SL_SCHEDSTAT_H
#define SL_SCHEDSTAT_H

#include <stdint.h>

struct schedstat_cpu {
	uint64_t yld_count, sched_count, sched_goidle, ttwu_count, ttwu_local;
	uint64_t rq_cpu_time, run_delay, pcount;
};

struct schedstat {
	int version;
	int ncpus;
	struct schedstat_cpu total;   /* summed over CPUs */
};

/* -1 when the text is not a schedstat of a known version */
int schedstat_parse(const char *text, struct schedstat *out);

struct schedstat_delta {
	double ttwu_count, ttwu_local_pct, run_delay_ms, sched_count;
};
/* -1 when versions differ or a counter went backwards */
int schedstat_delta(const struct schedstat *before, const struct schedstat *after,
		    struct schedstat_delta *d);

#endif
