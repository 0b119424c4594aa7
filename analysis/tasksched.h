/*
 * Per-task scheduler statistics from /proc/<pid>/sched (and
 * /proc/<pid>/task/<tid>/sched): the wakeup-placement evidence of a run.
 *
 * The kernel (kernel/sched/debug.c, proc_sched_show_task; needs
 * CONFIG_SCHED_DEBUG) prints a header "comm (pid, #threads: N)", a line of
 * dashes, then one "name : value" line per field. The schedstat fields
 * (nr_wakeups*, wait_*, iowait_*) are printed only while schedstats are on
 * (CONFIG_SCHEDSTATS=y and kernel.sched_schedstats=1). Their names carry a
 * prefix on older kernels ("se.statistics.nr_wakeups" before 5.15ish,
 * "stats." on some) and none on newer ones ("nr_wakeups", Debian's 6.1);
 * both are accepted. Counts are integers; times are printed in ms with six
 * decimals ("wait_sum : 123.456789") and are kept here in ns, exactly.
 *
 * The text is untrusted: a file is at most TASK_SCHED_MAX_TEXT bytes and a
 * line at most TASK_SCHED_MAX_LINE; a field that is not in the text is
 * *missing* (its bit in `present` is clear), never 0; a line that is neither
 * a field, the header, the dashes, blank, nor one of the kernel's
 * "key=value" NUMA lines is rejected with its line number, and so is a
 * known field with a negative, fractional (for counts) or out-of-range value
 * or a second occurrence. Unknown fields are skipped (new kernels add some).
 *
 * A *dump* is what the native workloads write (workloads/native/libnative.c,
 * nat_sched_dump): every task's file at the start and at the end of the
 * measurement window, each after a line "@@ start TID" or "@@ end TID"
 * ("@@ end TID error MESSAGE" when it could not be read), below a first
 * line "schedlab-task-sched 1"; "@@ truncated" when the size limit cut it.
 * task_sched_dump_sum() turns it into the window's deltas summed over the
 * tasks.
 */
#ifndef SL_TASKSCHED_H
#define SL_TASKSCHED_H

#include <stddef.h>
#include <stdint.h>

#define TASK_SCHED_MAX_TEXT (64 * 1024)
#define TASK_SCHED_MAX_LINE 512
#define TASK_SCHED_MAX_TASKS 65536

enum ts_field {
	TS_NR_MIGRATIONS,            /* se.nr_migrations (not a schedstat: always there) */
	TS_NR_SWITCHES,              /* nr_switches */
	TS_NR_VOLUNTARY,             /* nr_voluntary_switches */
	TS_NR_INVOLUNTARY,           /* nr_involuntary_switches */
	TS_SUM_EXEC,                 /* se.sum_exec_runtime, ns */
	TS_WAKEUPS,                  /* nr_wakeups: times the task was woken */
	TS_WAKEUPS_SYNC,             /* ... with WF_SYNC (the waker says it will sleep) */
	TS_WAKEUPS_MIGRATE,          /* ... onto another CPU than it last ran on */
	TS_WAKEUPS_LOCAL,            /* ... onto the waking CPU */
	TS_WAKEUPS_REMOTE,           /* ... onto another CPU than the waking one */
	TS_WAKEUPS_AFFINE,           /* wake_affine() chose the waker's CPU */
	TS_WAKEUPS_AFFINE_ATTEMPTS,  /* wake_affine() was asked */
	TS_WAKEUPS_PASSIVE,          /* never counted by current kernels */
	TS_WAKEUPS_IDLE,             /* never counted by current kernels */
	TS_WAIT_SUM,                 /* time runnable but waiting for a CPU, ns */
	TS_WAIT_COUNT,               /* waits counted in wait_sum */
	TS_WAIT_MAX,                 /* longest wait, ns (not summable; kept per task) */
	TS_IOWAIT_SUM,               /* time blocked on I/O, ns */
	TS_IOWAIT_COUNT,
	TS_NFIELDS
};

/* the field's name as the newest kernels print it ("nr_wakeups_local") */
const char *task_sched_field_name(enum ts_field f);
/* 1 when the field is a time (printed in ms, kept in ns) */
int task_sched_field_is_time(enum ts_field f);

struct task_sched {
	uint64_t v[TS_NFIELDS];      /* counts, or ns for times */
	uint32_t present;            /* bit f set: field f was in the text */
	int pid, threads;            /* from the header; -1 when absent */
	char comm[64];               /* from the header, truncated */
};

static inline int task_sched_has(const struct task_sched *t, enum ts_field f)
{
	return (t->present >> f) & 1;
}

/*
 * Parse one /proc/<pid>/sched text of `len` bytes. 0 on success; -1 with a
 * message in err ("line 12: nr_wakeups: negative value") otherwise.
 */
int task_sched_parse(const char *text, size_t len, struct task_sched *out, char *err,
		     size_t errlen);

/* the window's evidence: per-field sums of the tasks' end - start deltas */
struct task_sched_sum {
	uint64_t v[TS_NFIELDS];      /* TS_WAIT_MAX: the largest of the ends (since
				      * the task started, not the window) */
	uint32_t present;            /* field present in every snapshot of every task */
	int ntasks;                  /* tasks summed */
	int nborn;                   /* of those, tasks with no start snapshot (delta from 0) */
};

enum ts_dump_status {
	TS_DUMP_OK = 0,              /* sums filled (look at `present` for what is there) */
	TS_DUMP_ABSENT = 1,          /* no evidence, for a reason in err (file unreadable,
				      * dump cut at its limit, a task exited early) */
	TS_DUMP_BAD = -1,            /* garbage: err names the line */
};

/*
 * Sum a dump (see above): for every task in the "end" snapshot, end - start
 * (end alone for a task started inside the window), summed. A counter that
 * went backwards is BAD; a task with a start but no end snapshot is ABSENT.
 */
enum ts_dump_status task_sched_dump_sum(const char *text, size_t len, struct task_sched_sum *sum,
					char *err, size_t errlen);

#endif
