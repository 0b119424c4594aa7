/*
 * The store of `schedlab bisect` (harness/orchestrate/bisect.c,
 * docs/bisect.md): a bisection row keyed by a hash of its inputs (the same
 * command again finds the same bisection and so reuses its measurements),
 * its steps (the commit, the role, the verdict and a JSON detail with the
 * numbers behind it), and the sessions that measured a commit: ordinary
 * sessions tagged "bisect-<id>" whose stored plan names the commit in
 * matrix.kernel. Tables: migration 9 in db/schema.c. Each function
 * prepares and finalizes its own statements; -1 with db_errmsg() on error.
 */
#ifndef SL_DB_BISECT_STORE_H
#define SL_DB_BISECT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

struct db_bisect {
	int64_t id;
	char *inputs, *plan_path, *plan_json, *git_dir;
	char *good, *bad, *good_ref, *bad_ref;
	char *workload, *metric, *where_sel;
	/* the unit of a comparison: session_runs > 0, a session (one boot)
	 * of that many runs, its centre one value, and repetitions /
	 * max_repetitions count sessions; 0, a run, and they count runs (one
	 * session of `repetitions` runs a round) */
	int repetitions, max_repetitions, max_steps, session_runs;
	double alpha, threshold_pct;
	/* 1: threshold_pct is +-T% of the change, the rule of bisections
	 * stored before schema 12 (threshold_rule 'percent'); 0: symmetric
	 * on the ratio ('ratio'), every new bisection */
	int threshold_percent;
	/* 1: the drift guard (schema 13): the end a midpoint is called like
	 * is measured again beside it, both ends once drift is seen */
	int drift_guard;
	/* 1: the looks of a step at exact group-sequential levels
	 * (looks_rule 'exact', schema 13, every new bisection); 0: at
	 * alpha / (max_steps x looks) ('bonferroni', the rows before) */
	int looks_exact;
	char *status, *result, *created_at, *finished_at;
};
void db_bisect_free(struct db_bisect *b);

/* insert a new bisection (b->id ignored, status running); its id, or -1.
 * An existing row with the same inputs: its id, *existed = 1 */
int64_t db_bisect_create(struct db *db, const struct db_bisect *b, int *existed);
/* "last" or a number; the row in *out. -1 with "no bisection ..." */
int db_bisect_load(struct db *db, const char *spec, struct db_bisect *out);
int db_bisect_finish(struct db *db, int64_t id, const char *status, const char *result_json);

struct db_bisect_step {
	int seq;
	char *commit, *role, *verdict, *detail; /* verdict NULL: pending */
};
/* write step seq (insert or replace) */
int db_bisect_step_put(struct db *db, int64_t id, const struct db_bisect_step *s);
int db_bisect_steps(struct db *db, int64_t id, struct db_bisect_step **out, size_t *n);
void db_bisect_steps_free(struct db_bisect_step *s, size_t n);

/* the sessions tagged `tag` whose plan's (first) kernel is `commit`, oldest
 * first, with the number of runs each has still to do (planned, running,
 * interrupted) */
struct db_bisect_session {
	int64_t id;
	int todo;
	char *status;
};
int db_bisect_sessions(struct db *db, const char *tag, const char *commit,
		       struct db_bisect_session **out, size_t *n);
void db_bisect_sessions_free(struct db_bisect_session *s, size_t n);

/* the id of the newest bisection made from the plan file `plan_path` (0) */
int64_t db_bisect_by_plan_path(struct db *db, const char *plan_path);

#endif
