/*
 * Evidence triggers: whether a configuration's traced run ("evidence",
 * docs/plan-format.md) is made, and which untraced run it stands for.
 *
 * Every traced run is planned up front, like any run (session_start), at
 * the end of its configuration's last visit, so that it comes after every
 * untraced run of its configuration in execution order. What it does there
 * depends on the workload's evidence "when":
 *   always   it runs (the behaviour before the triggers; no decision);
 *   worst    it runs, and names the configuration's worst untraced run by
 *            the workload's primary metric (the one sequential repetitions
 *            and `plan` call primary), with its value;
 *   flagged  it runs only when a check flags one of the configuration's
 *            untraced runs: an outlier on the worse side by the MAD rule
 *            (analysis/outlier.h), a failed run or one that timed out;
 *            otherwise it is stored as skipped with the reason.
 * The decision is taken from what the database holds when the traced run's
 * turn comes (evidence_for_run), so a session resumed later decides the
 * same way; while an untraced run of the configuration is still to do
 * (planned, interrupted, or skipped because its boot failed) the traced run
 * waits (stored interrupted, done by --resume after them). The decision is
 * stored with the traced run (run.evidence_of, run.evidence_why).
 *
 * evidence_decide() is the pure part (tests/unit/test_evidence.c).
 */
#ifndef SL_EVIDENCE_H
#define SL_EVIDENCE_H

#include <stdint.h>

#include "db/db.h"
#include "harness/orchestrate/plan.h"
#include "harness/util/strbuf.h"

/* an untraced run of the configuration, as far as a trigger cares */
enum evidence_state {
	EVR_OK,          /* ok (its value, when it has the metric) */
	EVR_FAILED,      /* failed */
	EVR_TIMEOUT,     /* timed out */
	EVR_PENDING,     /* still to do: planned, running, interrupted, boot failed */
	EVR_OTHER,       /* skipped for good (unsupported, boot mismatch, decided) */
};

struct evidence_run {
	int64_t id;
	enum evidence_state state;
	int has_value;   /* an ok run with the metric */
	double value;
	int censored;    /* the value is a bound (metric.censored) */
};

struct evidence_metric {
	const char *name;        /* the workload's primary metric, "time_s" */
	const char *unit;        /* "s", "" when unknown */
	int lower_better;
};

enum evidence_verdict {
	EVIDENCE_TRACE,  /* make the traced run */
	EVIDENCE_SKIP,   /* not needed: store it skipped with `why` (final) */
	EVIDENCE_WAIT,   /* untraced runs of the configuration are still to do */
};

struct evidence_decision {
	enum evidence_verdict verdict;
	enum evidence_when when;
	int64_t of;              /* the untraced run it stands for, 0 for none */
	size_t flagged;          /* "flagged": runs flagged */
	struct strbuf why;       /* empty for "always" */
};

void evidence_decision_init(struct evidence_decision *d);
void evidence_decision_release(struct evidence_decision *d);

/*
 * The decision of trigger `when` over the configuration's untraced runs
 * runs[0..n) (in execution order) by metric m; k is the outlier rule's k
 * ("flagged"). Pure. -1 only when the outlier rule cannot allocate.
 */
int evidence_decide(enum evidence_when when, double k, const struct evidence_metric *m,
		    const struct evidence_run *runs, size_t n, struct evidence_decision *d);

/* the decision for pending run pr of session sid, a traced run (its params
 * carry "evidence"), from the configuration's runs stored so far (same
 * boot configuration, knobs, workload and parameters, untraced); -1 with
 * a message on a database error */
int evidence_for_run(struct db *db, int64_t sid, const struct plan *p,
		     const struct db_pending_run *pr, struct evidence_decision *d,
		     struct strbuf *err);

#endif
