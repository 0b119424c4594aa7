/*
 * The regression robot's actions (docs/alerts.md, docs/architecture.md
 * "The robot's room"): what `schedlab nightly` and `schedlab alerts` do,
 * behind one small API, so that the commands only parse and print. Judge
 * a night (the run as a child `schedlab run`, the judgement of
 * harness/results/robot.c, the HTML report as a child `schedlab report`,
 * the bisection queue within the night's budget), bisect an alert group
 * (a child `schedlab bisect` under a wall-time budget, its outcome written
 * back), name a one-commit culprit, and run the site's hook. Every status
 * change goes through the store (db/alert_store.h), which asks the life
 * cycle (db/alertstate.h); the culprit is written with db/culprit.h.
 * Children are started through harness/util/proc.h from argv arrays; the
 * hook is the site's own command line (its option, never a value from a
 * plan or a tool), run by /bin/sh.
 */
#ifndef SL_ORCHESTRATE_ROBOT_ACT_H
#define SL_ORCHESTRATE_ROBOT_ACT_H

#include <signal.h>
#include <stdint.h>

#include "db/db.h"
#include "harness/results/robot.h"
#include "harness/util/strbuf.h"

/* ---- bisecting a group ----------------------------------------------------- */

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
 * goes to `said`. The bisection's stdout and stderr go to its log
 * (DIR/alert-group-N.log), every call appended.
 */
int robot_bisect_group(struct db *db, int64_t gid, const struct robot_bisect_opts *o,
		       int *more, struct strbuf *said, struct strbuf *err);

/*
 * `schedlab alerts bisect N`: a person starts or continues the bisection
 * of alert `id`'s group. Every refusal (the life cycle, a group that is
 * not a kernel from git, an unusable out dir) comes before any write: -1
 * with why in err and the store as it was. Otherwise as
 * robot_bisect_group; when that cannot start the bisection, the alert
 * is moved back (unresolved, with the reason).
 */
int robot_bisect_alert(struct db *db, int64_t id, const struct robot_bisect_opts *o,
		       int *more, struct strbuf *said, struct strbuf *err);

/*
 * The refusals of robot_bisect_alert alone, in its order and with its
 * messages, nothing written to the store (dir made when missing, as
 * robot_out_dir): 0 when alert `id`'s group may be bisected by a person
 * now, -1 with why in err. *gid: the alert's group (when it exists). For a
 * start that runs robot_bisect_alert elsewhere (serve's page, robot_bg.h)
 * and must refuse first.
 */
int robot_bisect_alert_check(struct db *db, int64_t id, const char *dir, int64_t *gid,
			     struct strbuf *err);

/* commits in good..bad of git_dir (-1 unknown): for robot_options */
int robot_count_commits(void *ctx, const char *git_dir, const char *good, const char *bad);

/* ---- a night --------------------------------------------------------------- */

/* dir as a folder the night may write in and later trust what it wrote
 * there (made when missing, 0755): 0, with its canonical path in *canon
 * when canon is not NULL (malloc'd), or -1 with why in err (a regular
 * file, a dangling link, not writable; owned by another user, writable by
 * others, or below a folder that another user could replace:
 * privdir_path_safe) */
int robot_out_dir(const char *dir, char **canon, struct strbuf *err);

/*
 * Run this program's command `argv` (argv[0] is robot_self()) as a child
 * with the target lock `lock_key` (NULL: none) handed to it. Its exit code;
 * 130 when *abort_flag was set (the child got SIGINT, and 120 s to store
 * its state); -1 with why in err when it could not start. Its stderr is
 * kept in errout when that is non-NULL (then its stdout is dropped), else
 * both are inherited.
 */
int robot_child(const char *const *argv, const char *lock_key, volatile int *abort_flag,
		struct strbuf *errout, struct strbuf *err);

/*
 * One night (docs/alerts.md "One night"): the sessions of plan `plan`
 * tagged `tag` on one of the targets `targets` (session.target labels,
 * NULL-terminated: the plan's target, or a lab's members). A night is one
 * session a target: a nightly whose night has a session already does not
 * run another beside it.
 */
struct robot_tonight {
	int64_t unfinished;   /* the newest left running or interrupted (an earlier
				 nightly was killed): resumed; 0 none */
	int64_t stored;       /* the newest complete one: not run again; 0 none */
	int judged;           /* `stored` was judged already (session.nightly) */
};
/* 1 when session target label `target` is one of `targets` */
int robot_night_target(const char *const *targets, const char *target);
/* tonight's night in the store at dbpath: 0 with *t filled (all 0 when
 * there is no store it can read yet: none, an empty file, an older
 * schema; the run's child makes or migrates it, or says what is wrong),
 * or -1 with why in err */
int robot_tonight(const char *dbpath, const char *plan, const char *const *targets,
		  const char *tag, struct robot_tonight *t, struct strbuf *err);

/* 1 when the session is complete (neither running nor interrupted): the
 * night judges only those */
int robot_session_complete(const struct db_session_brief *sb);

struct robot_night_opts {
	const char *dbpath, *tag, *dir;
	double threshold, bisect_threshold;
	size_t bisect_minutes, max_steps, session_runs, repetitions;
	int no_bisect;
	int hooks;                  /* collect the hook's calls (--on-alert) */
	const char *lock_key;       /* the target lock held for the night, or NULL */
	volatile int *abort_flag;
};

/* a call of the site's hook, made once the target is let go */
struct robot_hook_call {
	int64_t gid;
	const char *event;          /* raised, fixed, bisected */
	char *text;                 /* the group's culprit report */
	int64_t hook_id;            /* the store's row (db_alert_hook), 0: none */
	int64_t session;            /* the night that made it */
};
/*
 * The hook's calls the store holds for the groups of `plan` on
 * `machine_id` and not yet delivered (this night's, and those a nightly
 * killed before its hook left: schema 17, docs/alerts.md "The hook"),
 * each claimed for this process (one claimed by a nightly that still runs
 * is left to it), appended to *calls with the group's report as it is now.
 * 0, or -1 when the store could not be read; what went wrong in `said`.
 */
int robot_hook_calls(struct db *db, const char *plan, int64_t machine_id,
		     struct robot_hook_call **calls, size_t *ncalls, struct strbuf *said);
/* the call was made (the hook ran, whatever its end): marked delivered,
 * not called again. 0, or -1 with why in err */
int robot_hook_delivered(struct db *db, const struct robot_hook_call *call, struct strbuf *err);

/* one judged session of the night: what the summary prints */
struct robot_night {
	struct db_session_brief sb;
	char *runs;                 /* "12 ok, 1 failed" */
	int judged;                 /* 0: no results stored (every run failed) */
	struct robot_result r;
	char *html;                 /* the report's path */
	int report_rc;              /* schedlab report's exit code (0: written) */
	struct strbuf report_err;   /* why it was not */
	struct strbuf said;         /* the bisections, one line each */
	struct robot_hook_call *calls;
	size_t ncalls;
	int rc;                     /* the night's exit code for this session */
};
void robot_night_free(struct robot_night *n);

/*
 * Judge session `sid` as tonight's (robot_judge with `ro`), write its HTML
 * report (`several`: one of a lab's sessions, named by session), bisect
 * what needs it within the budget, and gather the hook's calls: 0 with
 * *n filled (n->rc the night's exit code for it: 0, 1 new regression, 3
 * runs failed (runs_failed or no results), 130 interrupted); -1 with the
 * message in err (the night's exit code 2).
 */
int robot_night_session(struct db *db, int64_t sid, const struct robot_night_opts *o,
			const struct robot_options *ro, int several, int runs_failed,
			struct robot_night *n, struct strbuf *err);

/* ---- the site's hook -------------------------------------------------------- */

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
 * becomes non-zero, the group gets SIGTERM and 2 s later SIGKILL. What it
 * started outside its group (setsid) is adopted meanwhile (proc.h
 * proc_orphans_begin) and ended once the hook is, however it ended. How it
 * ended; all but ROBOT_HOOK_OK with why in err (KILLED: ending in "it and
 * what it started were ended", or naming what could not be; a hook that
 * exited but left a process that could not be ended is FAILED); its time
 * in *wall_s. The caller holds no target lock meanwhile (the hook may take
 * its time).
 */
enum robot_hook_end robot_hook(const char *cmd, int64_t gid, const char *event,
			       const char *text, double timeout_s, volatile int *abort_flag,
			       double *wall_s, struct strbuf *err);

/* this program, for the children: the path of /proc/self/exe, or
 * "/proc/self/exe" itself once that file was replaced or removed (a serve
 * or nightly that outlives an upgrade still runs its own code) */
const char *robot_self(void);

#endif
