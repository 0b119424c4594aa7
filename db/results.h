/*
 * The read side of the results store, for the analysis commands (compare,
 * trend, check, export, report): the rows of the `results` view that a
 * selection matches, the view's column list, the histograms of runs, the
 * tags of sessions, and the session and boot rows a report shows.
 *
 * A selection (struct db_where) is neutral: the caller has parsed and
 * checked it (harness/results/select.c checks every column name against
 * db_results_columns()); the SQL is built and bound here. Every value is
 * bound as an SQL parameter; the only identifiers placed into SQL text are
 * the terms' column names, double-quoted (a '"' in one doubled).
 *
 * Rows come to a callback; a callback returning non-zero stops the walk and
 * the function returns that value (make it positive to tell it from -1).
 * The texts a callback sees live until it returns. Every function prepares
 * its statements and finalizes them before it returns, so no statement is
 * left at a row and no read snapshot stays open (see end_reads in db.c).
 * On a database error the function returns -1 with the message, naming the
 * query, in db_errmsg(). No sqlite3 type in this header.
 */
#ifndef SL_DB_RESULTS_H
#define SL_DB_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

/* the columns of the results view, in order ("cannot read the results view: ...") */
typedef int (*db_name_fn)(void *ctx, const char *name);
int db_results_columns(struct db *db, db_name_fn fn, void *ctx);

/* column = value; the value is compared with the column's text form (NULL
 * reads as the empty string) */
struct db_where_term {
	const char *column;    /* a column of the results view, checked by the caller */
	const char *value;
};
struct db_where {
	const struct db_where_term *terms;   /* terms of one column match any of their values */
	size_t nterms;
	const char *workload;  /* results.workload = (the metric's workload); NULL: any */
	const char *metric;    /* results.metric =; NULL: any */
	const char *since;     /* results.started_at >= (text comparison); NULL: any */
	const int64_t *sessions;  /* results.session among sessions[0..nsessions) (none
				   * when nsessions is 0); NULL: any. Looked up by index */
	size_t nsessions;
};

/* the columns of a results row that series and groups are made of; texts
 * are "" for NULL */
struct db_result_row {
	int64_t session, run_id;
	const char *started_at, *machine_id, *machine, *kernel_release, *config_hash, *preempt,
		*hz, *sched_mc, *cmdline, *knobs, *run_workload, *params, *workload, *metric,
		*unit, *better;
	double value;
	int censored;            /* 1: value is a lower bound (results.censored) */
	const char *kernel_commit, *kernel_describe; /* kernels from git, else "" */
	const char *clock;       /* "real" or "virtual" (docs/virtual-time.md) */
	int clock_shift;         /* "virtual": the icount shift; -1 otherwise */
	const char *qemu_version; /* a qemu boot's emulator ("10.0.13"), else "" */
	const char *scheduler;   /* the run's matrix.scheduler ("eevdf", "scx_simple"),
				    else "" (docs/sched_ext.md) */
	int64_t seed;            /* run.seed, the run's perturbation; -1: none */
};
typedef int (*db_result_fn)(void *ctx, const struct db_result_row *row);
/* the rows of results matching w, ordered by session, started_at, run_id,
 * workload, metric ("query of results failed: ...") */
int db_results_select(struct db *db, const struct db_where *w, db_result_fn fn, void *ctx);

/* every column of the rows matching w, in the order above: fn is called once
 * with values NULL (the column names, also when no row matches), then once
 * per row (a NULL value is SQL NULL) ("query of results failed: ...") */
int db_results_export(struct db *db, const struct db_where *w, db_row_fn fn, void *ctx);

/* kernels from git: per session sid[i], the "DESCRIBE (COMMIT)" of its
 * results whose kernel_release is release[i], in label[i] (malloc'd), or
 * NULL when there is none or more than one (two kernels built into one
 * release: plain and patched). -1 on a database error */
int db_results_git_kernels(struct db *db, const int64_t *sid, const char *const *release,
			   size_t n, char **label);

/* one row per session, by id: session, plan, tag, target, status,
 * started_at and its runs counted as ok, failed (failed or timeout),
 * skipped and todo (planned, running or interrupted); fn is called as for
 * db_results_export, the header first ("query of sessions failed: ...") */
int db_sessions_summary(struct db *db, db_row_fn fn, void *ctx);

/* the values a session stored so far, for sequential repetitions: one call
 * per metric of an ok run in an ok boot (its own workload's metrics, not
 * schedstat), ordered by round and run id ("query of session values
 * failed: ...") */
struct db_session_value {
	int cfg, round;
	const char *knobs, *workload, *params, *metric, *better;
	double value;
	int censored;
};
typedef int (*db_session_value_fn)(void *ctx, const struct db_session_value *v);
int db_session_values(struct db *db, int64_t sid, db_session_value_fn fn, void *ctx);

/* the histogram rows (name, unit, data as stored; "" for NULL) of the runs
 * run_id[0..n), run by run in that order ("query of histograms failed: ...") */
typedef int (*db_hist_fn)(void *ctx, int64_t run_id, const char *name, const char *unit,
			  const char *data);
int db_results_hists(struct db *db, const int64_t *run_id, size_t n, db_hist_fn fn, void *ctx);

/* tag[i] = the tag of session sid[i], malloc'd, or NULL when it has none or
 * its row cannot be read (tag[] set to NULL first) */
int db_results_tags(struct db *db, const int64_t *sid, size_t n, char **tag);

/*
 * The history a report's trends draw from: every session with an ok run in
 * an ok boot on one of the machines that the ok boots of sessions
 * scope[0..n) ran on (a trend never crosses machines), with the started_at
 * of its first ok run, ordered by that, then by id ("cannot read the
 * session history: ...")
 */
typedef int (*db_session_start_fn)(void *ctx, int64_t id, const char *started_at);
int db_results_session_history(struct db *db, const int64_t *scope, size_t n,
			       db_session_start_fn fn, void *ctx);
/* summary[i] = the schedlab-trace.json file of run run_id[i] (a traced
 * run's trace summary, docs/metrics.md), malloc'd, or NULL when it has none */
int db_results_trace_summaries(struct db *db, const int64_t *run_id, size_t n, char **summary);

/* the session rows of id[0..n), in that order; an id without a row is
 * skipped ("cannot read sessions: ...") */
struct db_session_info {
	int64_t id;
	const char *name, *tag, *target, *version, *status, *started_at, *finished_at, *plan_path;
};
typedef int (*db_session_fn)(void *ctx, const struct db_session_info *s);
int db_results_sessions(struct db *db, const int64_t *id, size_t n, db_session_fn fn, void *ctx);

/* the boots the runs run_id[0..n) ran on, each once, in id order: *boot_id
 * malloc'd (free it), a run without a row left out ("cannot read boots: ...") */
int db_results_run_boots(struct db *db, const int64_t *run_id, size_t n, int64_t **boot_id,
			 size_t *nboots);

/* the boot rows of id[0..n), in that order, with their machine's name; an
 * id without a row is skipped ("cannot read boots: ...") */
struct db_boot_info {
	int64_t id, session_id;
	const char *sysinfo, *method, *accel, *status, *booted_at;   /* NULL for SQL NULL */
	const char *machine;   /* NULL when the boot has no machine */
	const char *clock;     /* "real", "virtual" or NULL (not recorded: real) */
	int clock_shift;       /* "virtual": the icount shift, else -1 */
	const char *qemu_version; /* a qemu boot's emulator, NULL otherwise */
};
typedef int (*db_boot_fn)(void *ctx, const struct db_boot_info *b);
int db_results_boots(struct db *db, const int64_t *id, size_t n, db_boot_fn fn, void *ctx);

/*
 * Every run of session sid with workload `workload` in a boot of
 * configuration cfg (boot.cfg), in execution order
 * (run.seq), for the evidence triggers (harness/orchestrate/evidence.c),
 * which pick a configuration's runs among them: the boot's configuration
 * and status, the run's knobs, params, status and error, and the value of
 * metric `metric` of the run's own workload (has_value 0 when it has none:
 * not ok, or the metric is missing) ("query of the configuration's runs
 * failed: ...")
 */
struct db_evidence_row {
	int64_t run_id;
	int cfg, rep;
	const char *knobs, *params, *status, *error, *boot_status;  /* "" for NULL */
	int has_value;
	double value;
	const char *unit, *better;                                  /* "" for NULL */
	int censored;
	int skip;              /* enum skip_reason (run.skip_reason); -1 unknown */
};
typedef int (*db_evidence_fn)(void *ctx, const struct db_evidence_row *r);
int db_evidence_runs(struct db *db, int64_t sid, int cfg, const char *workload,
		     const char *metric, db_evidence_fn fn, void *ctx);

#endif
