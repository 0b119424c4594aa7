/*
 * `schedlab bisect` (docs/bisect.md): find the commit behind a change of one
 * metric between a good and a bad commit of a kernel from git, with
 * statistics rather than one noisy run. The plan names the kernel
 * ({"git": DIR, ...} in matrix.kernel, its "ref" replaced by each commit
 * measured), the target and the workloads; each measurement of a commit is
 * an ordinary session (tagged "bisect-<id>", built and booted like any
 * `schedlab run`), and the decisions are analysis/bisect_rule.c's. Everything is
 * derived again from the database on every invocation, so `--resume` after
 * Ctrl-C or a crash, and the same command again, reuse every stored
 * measurement and (through the kernel cache) every build.
 */
#ifndef SL_ORCHESTRATE_BISECT_H
#define SL_ORCHESTRATE_BISECT_H

#include <signal.h>

#include <stddef.h>
#include <stdint.h>

#include "analysis/verdict.h"
#include "db/db.h"
#include "harness/util/strbuf.h"

/* the metric's values in a set of sessions, as the command layer reads them
 * (selectors are harness/results/' business, which orchestrate/ does not
 * include) */
struct bisect_values {
	double *v;              /* malloc'd, n of them (one group) */
	size_t n;
	size_t ngroups;         /* series x metric groups the rows fell into */
	enum verdict_better better; /* 0: the metric has no direction */
	char unit[32];
};
struct bisect_loader {
	/* is WHERE a valid selector of the results view? 0, or -1 with why */
	int (*check)(void *ctx, struct db *db, const char *where, struct strbuf *err);
	/* the values of WL.METRIC in sessions sid[0..n) matching WHERE: 0 or -1 */
	int (*load)(void *ctx, struct db *db, const char *where, const char *wl,
		    const char *metric, const int64_t *sid, size_t n, struct bisect_values *out,
		    struct strbuf *err);
	void *ctx;
};

struct bisect_args {
	struct db *db;                /* the database, opened by the caller */
	const char *dbpath;           /* its path (the lock file beside it) */
	const char *plan_path;        /* a new bisection: the plan file */
	const char *good, *bad;       /* commit-ish */
	const char *metric;           /* WORKLOAD.METRIC */
	const char *where;            /* a selector of the results view, or NULL */
	int unit_run;                 /* 1: each run is a value; 0: each session's centre */
	int session_runs;             /* runs of a session, unit session (0: default) */
	int repetitions;              /* values a round (0: default) */
	int max_repetitions;          /* values a commit (0: 3 rounds) */
	int max_steps;                /* commits measured between the ends (0: default) */
	double alpha;                 /* whole bisection (0: 0.05) */
	double threshold_pct;         /* compare's noise threshold (0: 2) */
	int drift_guard;              /* measure the ends again beside midpoints (docs/bisect.md) */
	/* DETERMINISTIC: the caller's word that the target repeats its values
	 * exactly (a guest on a virtual clock): a value a round by default, and
	 * one value a side decides (analysis/verdict.h, exact data); the same
	 * word again on --resume. Default UNKNOWN. */
	enum verdict_source source;
	const char *resume;           /* "last" or an id: continue a stored bisection */
	int quiet;
	volatile sig_atomic_t *abort_flag;
	struct bisect_loader values;
};

/*
 * Run (or resume) a bisection; the git-bisect-style log goes to stdout,
 * progress to stderr. Exit code: 0 the first bad commit found, 1 it ended
 * without one commit (the ends do not differ, skipped or unclear commits
 * leave several candidates, --max-steps reached), 2 bad input or a setup
 * error (message in err), 130 interrupted (resumable).
 */
int bisect_main(const struct bisect_args *a, struct strbuf *err);

#endif
