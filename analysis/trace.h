/*
 * Scheduler traces: a summary of the text a tracefs instance's `trace`
 * file holds after sched_switch, sched_waking, sched_wakeup and
 * sched_migrate_task were enabled (the evidence a traced run keeps,
 * docs/metrics.md "Evidence traces").
 *
 * A line is "COMM-PID [CPU] FLAGS TIMESTAMP: EVENT: FIELDS" (the kernel's
 * default output; comm may hold spaces and dashes, so a line is split at
 * the first " [NNN] "). Lines starting with '#' and blank lines are
 * skipped; "CPU:N [LOST M EVENTS]" lines are counted in `lost`; events
 * other than the four are counted in `other`. Anything else, or one of the
 * four whose fields cannot be read, is an error naming the line number.
 * The text is untrusted: at most TRACE_MAX_TEXT bytes, TRACE_MAX_TASKS tasks.
 *
 * Definitions (computed over the last `window_s` seconds before the last
 * event; older events only set the state a task is in):
 *   wakeup latency  from sched_waking (sched_wakeup when the trace has no
 *                   waking for that wakeup) of a sleeping task to the
 *                   sched_switch that puts it on a CPU; a task that was
 *                   preempted (still runnable) has no wakeup latency
 *   preemption      a sched_switch whose prev_state is R or R+ (the task
 *                   left the CPU while runnable)
 *   switch          a sched_switch, counted for the task switched in
 *   migration       a sched_migrate_task of the task
 * Percentiles are nearest-rank over the exact samples (no histogram).
 */
#ifndef SL_TRACE_H
#define SL_TRACE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_MAX_TEXT (64u << 20)
#define TRACE_MAX_TASKS 65536

struct trace_task {
	int pid;
	char comm[17];
	uint64_t switches, preemptions, migrations, wakeups;
	double lat_p50_us, lat_p99_us, lat_max_us;  /* of this task's wakeups */
	/* parser state */
	double *lat_us;
	size_t nlat, alat;
	double waking_ts, wakeup_ts;  /* pending wakeup, < 0: none */
	int sleeping;                 /* 1 asleep, 0 running/runnable, -1 unknown */
};

struct trace_summary {
	size_t lines, events, other, lost;
	double first_ts, last_ts, window_s, span_s; /* span_s: what the window covers */
	uint64_t switches, preemptions, migrations, wakeups;
	double lat_p50_us, lat_p99_us, lat_max_us;  /* over every task's wakeups */
	struct trace_task *tasks;                   /* ntasks, busiest first after parse */
	size_t ntasks, atasks;
};

/*
 * Parse text (len bytes, need not be NUL-terminated) and summarise the last
 * window_s seconds (<= 0: all of it). 0, or -1 with "line N: ..." in err.
 */
int trace_parse(const char *text, size_t len, double window_s, struct trace_summary *s,
		char *err, size_t errlen);
void trace_summary_release(struct trace_summary *s);
/* {"window_s", "span_s", ..., "tasks": [{pid, comm, ...}] (the `max_tasks`
 * with most wakeups)} */
json_t *trace_summary_json(const struct trace_summary *s, size_t max_tasks);

#endif
