/*
 * Wakeup-placement evidence of the native workloads (pingpong, jbb): their
 * programs write every task's /proc/<tid>/sched at the start and the end of
 * the measurement window into PLACEMENT_FILE (libnative's nat_sched_dump,
 * asked for with --sched-out), the agent brings the file back with the run
 * (kept as raw output), and placement_parse() turns it into the task_*
 * metrics of docs/metrics.md: the window's deltas summed over the tasks.
 *
 * No evidence (no file, no schedstat fields because kernel.sched_schedstats
 * was off or the kernel lacks CONFIG_SCHEDSTATS, a rejected file) adds no
 * metric at all, never zeros, and a sentence to the run's note saying why;
 * the run itself stays ok.
 */
#ifndef SL_PLACEMENT_H
#define SL_PLACEMENT_H

#include "workloads/workload.h"

#define PLACEMENT_FILE "task-sched.txt"

/* the plan parameter that turns it on, for a driver's params table */
#define PLACEMENT_PARAM                                                               \
	{ "placement", PT_BOOL, "true", 0, 0, NULL,                                   \
	  .help = "record wakeup-placement evidence (each task's /proc/<pid>/sched at the "   \
	  "window's start and end; needs schedstats, see the plan's \"schedstat\")" }

/* with "placement" on: the program's option and the file to bring back */
void placement_build(const json_t *params, struct wl_exec *ex);
/* the metrics from out->files[PLACEMENT_FILE], or the note why there are
 * none (only when the params asked for it); never fails the run */
void placement_parse(const json_t *params, const struct wl_output *out, struct metric_set *ms);

#endif
