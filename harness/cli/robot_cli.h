/*
 * What `schedlab nightly` and `schedlab alerts` share (docs/alerts.md): the
 * bisection of an alert group as a child `schedlab bisect` with a wall-time
 * budget, its result written back to the group and its alerts, the commit
 * count of a range, and the site's hook. Children are started through
 * harness/util/proc.h from argv arrays; the hook is the site's own command
 * line (its option, never a value from a plan or a tool), run by /bin/sh.
 */
#ifndef SL_CLI_ROBOT_H
#define SL_CLI_ROBOT_H

#include <signal.h>
#include <stdint.h>

#include "db/db.h"
#include "harness/util/strbuf.h"

struct robot_bisect_opts {
	const char *dbpath;
	const char *dir;            /* where the narrowed plans and logs go */
	double budget_s;            /* wall time for this call (0: none) */
	int max_steps;              /* bisect --max-steps (0: bisect's default) */
	double threshold_pct;       /* bisect --threshold (0: bisect's default) */
	int session_runs;           /* bisect --session-runs (0: default) */
	int repetitions;            /* bisect --repetitions (0: default) */
	volatile int *abort_flag;   /* set by a signal handler: stop (resumable) */
	const char *lock_key;       /* the target lock this process holds for the
				       child (tlock.h), or NULL */
	int quiet;
};

/*
 * Bisect alert group `gid` (started, or continued where an earlier call
 * left it): 0 with the group's alerts moved (culprit found or unresolved)
 * or still bisecting when the budget ran out (*more = 1); -1 with the
 * message in err when it could not be started. One line of what happened
 * goes to `said`.
 */
int robot_bisect_group(struct db *db, int64_t gid, const struct robot_bisect_opts *o,
		       int *more, struct strbuf *said, struct strbuf *err);

/* commits in good..bad of git_dir (-1 unknown): for robot_options */
int robot_count_commits(void *ctx, const char *git_dir, const char *good, const char *bad);

/* how the site's hook ended */
enum robot_hook_end {
	ROBOT_HOOK_OK,
	ROBOT_HOOK_FAILED,   /* it exited non-zero, or could not start */
	ROBOT_HOOK_KILLED,   /* still running at its time limit: stopped */
	ROBOT_HOOK_STOPPED,  /* abort_flag set while it ran: stopped */
};

/*
 * Run the site's hook `cmd` (by /bin/sh) with `text` on its stdin and
 * SCHEDLAB_ALERT_GROUP, SCHEDLAB_ALERT_EVENT in its environment, in a
 * process group of its own that does not outlive this process (not even
 * its SIGKILL: proc.h group_guard). Past timeout_s, or when *abort_flag
 * becomes non-zero, the group gets SIGTERM and 2 s later SIGKILL. How it
 * ended; all but ROBOT_HOOK_OK with why in err; its time in *wall_s. The
 * caller holds no target lock meanwhile (the hook may take its time).
 */
enum robot_hook_end robot_hook(const char *cmd, int64_t gid, const char *event,
			       const char *text, double timeout_s, volatile int *abort_flag,
			       double *wall_s, struct strbuf *err);

/* this program, for the children (/proc/self/exe) */
const char *robot_self(void);

#endif
