/*
 * The regression robot's judgement of one nightly session (docs/alerts.md):
 * the rolling baseline (the previous N nightly sessions of the plan on the
 * machine, starting after the newest expected change), the comparison of
 * `schedlab check` against it, and what becomes of every series that moved:
 *
 *  - no open alert on the series and metric: a new alert, in the group of
 *    its range (the commit range good..bad of a kernel from git, else the
 *    two sessions), one group per change so that it is bisected once;
 *  - an open alert (new, bisecting, culprit found, unresolved,
 *    acknowledged): measured against the level before its change (its own
 *    baseline, which the rolling one never absorbs): still moved, "known:
 *    alert N"; moved again beyond the level after the change, a new alert;
 *    back at the level before and away from the level after (the same
 *    rules, the opposite direction), fixed.
 *
 * A series whose effective preemption model changed (its kernel's default
 * mode moved, voluntary -> lazy) is the same series to the robot with a
 * break: the night of the change is not judged against the old model's
 * baseline (a new baseline starts there, said in `breaks`), later nights
 * only against the sessions from the change on.
 *
 * Everything is read from and written to the database; nothing here runs
 * a program or prints: the lines of the summary come back in the result.
 */
#ifndef SL_RESULTS_ROBOT_H
#define SL_RESULTS_ROBOT_H

#include <stddef.h>
#include <stdint.h>

#include "db/alert_store.h"
#include "db/db.h"
#include "harness/results/compare.h"
#include "harness/util/strbuf.h"

struct robot_options {
	size_t baseline_n;          /* nightly sessions in the rolling baseline (7) */
	struct cmp_options cmp;     /* threshold and the rest, as `check` */
	/* judge only these metrics ("workload.metric" or "metric"); NULL or
	   empty: every metric with a direction */
	const char *const *metrics;
	/* the commits in good..bad of a repository (-1: unknown); NULL: not
	   counted (results/ runs no program: the command layer asks git) */
	int (*count_commits)(void *ctx, const char *git_dir, const char *good, const char *bad);
	void *ctx;
};
void robot_options_default(struct robot_options *o);

/* what became of an alert tonight (the night's report), in order */
struct robot_event {
	int64_t alert;
	const char *what;   /* static: "raised", "late", "known", "known, moved again",
			       "known, not measured", "known, undecided", "fixed" */
};

/* a metric judged tonight, as the robot judged it (the night's report) */
struct robot_verdict {
	char *workload, *metric, *unit, *series;   /* series: its label */
	const char *verdict;   /* static: worse, better, no change, inconclusive,
				  "too few values", "followed by an open alert" */
	double a, b, change_pct, ci_lo, ci_hi, p;  /* NAN: none */
	size_t na, nb;
	int64_t from;          /* judged against the baseline's sessions from this
				  one on (a change inside it), 0: all of it */
	int64_t alert;         /* the alert raised for it tonight, 0: none */
};

struct robot_result {
	struct db_session_brief s;  /* tonight's session */
	int64_t *baseline;          /* the rolling baseline's sessions, newest first */
	size_t nbaseline;
	int64_t expected_since;     /* the baseline starts here (0: no expected change) */
	/* the plan-wide check against the rolling baseline */
	size_t nmetrics, nworse, nbetter, nsame, ninconclusive;
	size_t nknown_metrics;      /* of nmetrics: owned by an open alert */
	struct strvec lines;        /* the summary, in order (no newline) */
	int64_t *groups;            /* groups that got an alert tonight */
	size_t ngroups;
	size_t new_regressions, new_improvements, known, fixed;
	/* of new_regressions + new_improvements: late alerts, a metric that
	 * moved at a change already in an open group, raised into that group
	 * (docs/alerts.md "Late alerts") */
	size_t late;
	int too_few;                /* 1: a side had fewer than 3 repetitions */
	/* the metrics left inconclusive (of ninconclusive, not followed by an
	 * open alert), one entry each: "WORKLOAD.METRIC (SERIES) ~N" with N
	 * the repetitions a side that would decide it, "... (too few values)"
	 * or "... (values beyond the measurable range)" */
	struct strvec undecided;
	/* a change of a series' effective preemption model (a new default
	 * mode, docs/alerts.md "A change of the preemption model"), one line
	 * per change: "effective preemption model changed: voluntary -> lazy
	 * at session N (SERIES, ...): ..." tonight (those series start a new
	 * baseline and are not judged) or within the rolling baseline (judged
	 * against the sessions from the change on only) */
	struct strvec breaks;
	size_t nrestarted;          /* metrics not judged tonight: a new baseline */
	/* nbaseline 0: why, one line for the summary ("no baseline yet: this
	 * is the first nightly session of P on M", or the sessions of the plan
	 * passed over and why: not the nightly's, no results, another machine) */
	char *no_baseline;
	struct robot_event *events;
	size_t nevents;
	struct robot_verdict *verdicts;
	size_t nverdicts;
};
void robot_result_free(struct robot_result *r);

/*
 * Judge session `sid` (see above). 0 with the result; -1 with the message
 * in err (a bad session, the database). A session without a baseline is
 * a result with nbaseline 0 and no alert.
 */
int robot_judge(struct db *db, int64_t sid, const struct robot_options *o,
		struct robot_result *r, struct strbuf *err);

/* the plain-text report of an alert group, ready to mail (docs/alerts.md,
 * "The culprit report"): 0, or -1 with the message */
int robot_group_report(struct db *db, int64_t group_id, struct strbuf *out,
		       struct strbuf *err);

/* what the summary, `alerts show` and the reports say of an alert group
 * whose good and bad sessions ran the same kernel (robot_group_same_kernel) */
#define ROBOT_NO_KERNEL_CHANGE "no kernel change between its sessions"

/* 1 when the good and bad sessions of alert group gid ran the same kernel
 * (the same commit of a kernel from git; a kernel not from git: the
 * series pins its release and config), and so, the alert's series being
 * one, the same configuration and knobs: nothing to bisect. 0 when the
 * group names a commit range, -1 on error */
int robot_group_same_kernel(struct db *db, int64_t gid);

/* the night's HTML report (docs/alerts.md "The night's report"): what the
 * night decided (its alerts as they stand now: call it after the night's
 * bisections), the bisections, the open alerts, then the comparison as the
 * robot made it; a configuration label once per series, not per row */
struct robot_night_page {
	const char *title;          /* the night's tag */
	const char *runs;           /* "12 ok" (NULL: not said) */
	const char *bisections;     /* what the bisections said tonight (NULL) */
	const char *detail_href;    /* the session's own report, relative (NULL) */
	double threshold_pct;
};
int robot_night_html(struct db *db, const struct robot_result *r,
		     const struct robot_night_page *p, struct strbuf *out, struct strbuf *err);

/* "regression" alert kinds etc. as verdict directions: 1 worse, -1 better */
int robot_kind_sign(const char *kind);

#endif
