/*
 * The results store: one SQLite file (schedlab.db by default). Schema version
 * in PRAGMA user_version, forward-only migrations (db/schema.c), WAL,
 * busy_timeout, prepared statements from an enum-indexed table, and one
 * transaction per finished run so that a crash loses at most the run in
 * progress. The `results` view (docs/schema.md) is the stable interface.
 *
 * Stands on libc, SQLite and jansson only. Every function returns 0 (or a row
 * id > 0) on success and -1 on failure, with the message in db_errmsg().
 */
#ifndef SL_DB_H
#define SL_DB_H

#include <jansson.h>
#include <stdint.h>
#include "db/runstate.h"

struct db;

/* DB_READWRITE creates the file when absent; DB_READWRITE_EXISTING (what
 * continues stored work) and DB_READONLY never create anything */
enum db_mode { DB_READWRITE = 0, DB_READONLY = 1, DB_READWRITE_EXISTING = 2 };

/* open (creating when the mode says so) and migrate to the newest schema;
 * on failure *db is NULL and *errmsg a malloc'd message that starts with
 * the path. A path that exists but is not a regular file (/dev/null, a
 * folder), a file that is not a database, a database of another program
 * (tables but no schedlab schema version) or of a newer schedlab is
 * refused before anything is written to it or beside it */
int db_open(const char *path, enum db_mode mode, struct db **db, char **errmsg);
/* open without migrating (tests of migrations) */
int db_open_raw(const char *path, struct db **db, char **errmsg);
void db_close(struct db *db);
const char *db_errmsg(const struct db *db);
/* how long a write waits for another process's write lock (SQLite's busy
 * timeout) unless set otherwise; a step that waited longer fails, and
 * db_failed_busy says that was the reason (1: the last failure was the lock
 * held by another process, nothing written) */
#define DB_BUSY_TIMEOUT_MS 10000
void db_set_busy_timeout(struct db *db, int ms);
int db_failed_busy(const struct db *db);

int db_user_version(struct db *db);
int db_latest_version(void);
/* apply migrations up to `version` (db_latest_version() for all) */
int db_migrate_to(struct db *db, int version);

/* a write transaction (BEGIN IMMEDIATE: the write lock at once, waiting up
 * to the busy timeout for another process's); inside one already, a
 * savepoint of it, which db_commit releases and db_rollback undoes alone */
int db_begin(struct db *db);
int db_commit(struct db *db);
void db_rollback(struct db *db);
/* execute a script of SQL statements, returning no rows: fixtures in tests
 * and tests of migrations; -1 with the failing text in db_errmsg() */
int db_exec(struct db *db, const char *sql);

/* ---- entities ---- */
int64_t db_machine_get(struct db *db, const json_t *sysinfo);
int64_t db_kernel_get(struct db *db, const json_t *sysinfo);

struct db_session {
	const char *name, *plan_path, *plan_json, *tag, *target, *version;
	long long seed;
};
int64_t db_session_create(struct db *db, const struct db_session *s);
int db_session_set_status(struct db *db, int64_t sid, enum session_state st);

/*
 * One owner per session: the controller that drives it, named by its pid,
 * the pid's start time (so that a reused pid is not taken for it), its host
 * and the host's boot id. db_session_claim makes me the owner in one
 * write transaction (or within the caller's) unless a different owner is
 * recorded and alive(owner) says it still runs (force: take it all the
 * same); the previous owner, if any, in *holder. 0 claimed, 1 held by a
 * live owner (nothing written), -1 on a database error. db_session_release
 * clears the owner if it is still me.
 */
struct db_owner {
	long long pid, start;
	char host[256], boot[64], since[32];
};
int db_session_claim(struct db *db, int64_t sid, const struct db_owner *me,
		     int (*alive)(const struct db_owner *o), int force, struct db_owner *holder);
int db_session_release(struct db *db, int64_t sid, const struct db_owner *me);
/* "last" or a number -> session id; -1 with message when none */
int64_t db_session_resolve(struct db *db, const char *spec);

int64_t db_boot_plan(struct db *db, int64_t sid, int seq, int cfg, const char *kernel,
		     const char *preempt, const char *cmdline);
/* a boot of a kernel from git: the commit id and the short description
 * (`git describe`, patch count) the kernel was built from (migration 6) */
int db_boot_set_git(struct db *db, int64_t boot_id, const char *commit, const char *describe);
/* the same on a kernel row, once the running kernel has shown (its release
 * names the commit) that it is that build; a row that has one keeps it */
int db_kernel_set_git(struct db *db, int64_t kernel_id, const char *commit, const char *describe);
struct db_boot_result {
	const char *status;          /* ok | mismatch | failed */
	int64_t machine_id, kernel_id; /* 0 = unknown */
	const char *preempt, *cmdline, *boot_uuid, *method, *accel, *error;
	const char *clock;           /* "real", "virtual" or NULL (not recorded) */
	int clock_shift;             /* "virtual": the icount shift, else -1 */
	const char *qemu_version;    /* qemu: its version ("10.0.13"), NULL otherwise */
	double switch_s;
	const json_t *sysinfo;
	const char *console;
	int64_t lava_job_id;         /* the LAVA job that ran the boot, 0 = none */
	const char *lava_job_url;
};
int db_boot_finish(struct db *db, int64_t boot_id, const struct db_boot_result *r);
/* the job a lab scheduler runs the boot as, recorded when it is submitted
 * (before the boot is finished): a controller that dies with the job in
 * flight leaves the id for --resume to find (docs/lab.md) */
int db_boot_set_job(struct db *db, int64_t boot_id, int64_t job_id, const char *url);
/* copy a planned boot into a fresh planned row (resume); returns new id */
int64_t db_boot_replan(struct db *db, int64_t boot_id);

int64_t db_run_plan(struct db *db, int64_t sid, int64_t boot_id, int seq, int round,
		    const char *workload, const char *params_json, const char *knobs_json,
		    int rep);
/* the same with the run's seed (run.seed: the perturbation the agent applies,
 * docs/virtual-time.md "Seeds"; -1: none, NULL) */
int64_t db_run_plan_seeded(struct db *db, int64_t sid, int64_t boot_id, int seq, int round,
			   const char *workload, const char *params_json, const char *knobs_json,
			   int rep, int64_t seed);
int db_run_set_boot(struct db *db, int64_t run_id, int64_t boot_id);
/* mark a run running (status, started_at) in a commit of its own, before it
 * is measured: a controller that dies mid-run leaves it for --resume */
int db_run_start(struct db *db, int64_t run_id);
/* a traced run's evidence decision (run.evidence_of, run.evidence_why;
 * of_run <= 0 and why NULL store NULL): set before it runs or when it is
 * skipped, set again on resume (the decision is recomputed) */
int db_run_set_evidence(struct db *db, int64_t run_id, int64_t of_run, const char *why);
/* a run marked running that was not started after all (Ctrl-C came between
 * the commit that marked it and its start) back to planned, as it was; a
 * run that is no longer running is left alone */
int db_run_unstart(struct db *db, int64_t run_id);

struct db_metric {
	const char *workload, *name, *unit, *better, *note;
	double value;
	int censored;                /* 1: value is a lower bound (metric.censored) */
};
struct db_hist {
	const char *name, *unit;
	const json_t *data;
};
struct db_run_result {
	const char *status;          /* ok | failed | timeout | skipped | interrupted
				      * (db/runstate.h: a move from planned or running) */
	const char *error;
	enum skip_reason skip;       /* skipped: why (run.skip_reason, schema 18), which
				      * decides whether --resume redoes it; else SKIP_NONE */
	const char *notes;           /* what the run could not give, and why: one note a
				      * line (run.notes, schema 18), NULL for none */
	double wall_s;
	int exit_code;
	const char *argv_json, *out, *err, *files_json, *knobs_applied_json, *load_json;
	const char *schedstat_before, *schedstat_after;
	const struct db_metric *metrics;
	size_t nmetrics;
	const struct db_hist *hists;
	size_t nhists;
};
/* one transaction: run row, metrics, histograms, schedstat; called inside
 * a transaction of the caller (db_begin: a bulk path storing several runs
 * at once) a savepoint in it, undone alone when the run fails. A live
 * session calls it outside any transaction: one commit per run
 * (docs/reliability.md). */
int db_run_finish(struct db *db, int64_t run_id, const struct db_run_result *r);
/* the same, and in the same transaction the next run `next_run_id` marked
 * running as db_run_start does (none when 0): a session stores a run and
 * marks the one it starts next in one commit instead of two, and the mark
 * is durable before that run starts, as with db_run_start. All or nothing:
 * when the store fails, the next run is not marked either */
int db_run_finish_start(struct db *db, int64_t run_id, const struct db_run_result *r,
			int64_t next_run_id);
/* resume: the runs still to do (db/runstate.h: left running or
 * interrupted, or skipped because their boot failed) go back to planned */
int db_session_reset_running(struct db *db, int64_t sid);

/* what is left to do in a session, in execution order */
struct db_pending_run {
	int64_t run_id, boot_id;
	int seq, round, rep;
	int cfg;                 /* the boot configuration (boot.cfg) */
	char *workload, *params, *knobs;
	int64_t seed;            /* run.seed, the run's perturbation; -1: none */
};
struct db_boot_row {
	int64_t id;
	int seq, cfg;
	char *kernel, *preempt, *cmdline, *status;
	int64_t lava_job_id;     /* the job submitted for it (0 = none) */
	char *lava_job_url;
};
int db_pending_runs(struct db *db, int64_t sid, struct db_pending_run **runs, size_t *n);
void db_pending_runs_free(struct db_pending_run *runs, size_t n);
int db_boot_load(struct db *db, int64_t boot_id, struct db_boot_row *out);
void db_boot_row_free(struct db_boot_row *b);
/* session row fields needed by resume (malloc'd strings) */
int db_session_load(struct db *db, int64_t sid, char **plan_json, char **plan_path,
		    char **tag, char **status);
/* runs of a session by class (db/runstate.h: planned = still to do, what
 * --resume redoes; skipped = skipped for good) */
int db_session_counts(struct db *db, int64_t sid, int *planned, int *ok, int *failed,
		      int *skipped);
/* the stored error of the session's first run (in plan order) left for
 * --resume (interrupted, or skipped because its boot failed); *why NULL when
 * there is none, else the caller frees it */
int db_session_first_resumable(struct db *db, int64_t sid, char **why);

/*
 * Labs (harness/orchestrate/lab.h): the member sessions of a lab share the
 * "lab" marker of their stored plans, {"id": ID, "target": N, "label": ...}.
 */
/* the lab id named by `spec` of `run --resume lab:SPEC`: "last" (the lab of
 * the newest session that belongs to one), a member session's number, or
 * otherwise the id itself; *id malloc'd. -1 with a message when no session
 * is part of a lab, or the numbered one does not exist or is not a member */
int db_lab_resolve(struct db *db, const char *spec, char **id);
struct db_lab_session {
	int64_t sid;
	char *plan_json, *plan_path;
	char *label;            /* the marker's label ("ssh:lab3"), NULL when absent */
};
/* the sessions of lab `id` in member order (marker's target, then session
 * id), malloc'd; *n = 0 when there are none */
int db_lab_sessions(struct db *db, const char *id, struct db_lab_session **out, size_t *n);
void db_lab_sessions_free(struct db_lab_session *s, size_t n);

/* run SQL (one or more statements); for each statement that returns
 * columns, fn is called once with values NULL (its column names: a new
 * result set, also when it has no rows), then once per row. A non-zero
 * return from fn stops the query */
typedef int (*db_row_fn)(void *ctx, int ncols, const char *const *names,
			 const char *const *values);
int db_query(struct db *db, const char *sql, db_row_fn fn, void *ctx);

/* ---- the nightly's reads of sessions ------------------------------------ */

/* what the robot needs of a session: its plan name, tag, the machine its
 * first good boot ran on (0: none), the kernel commit of that boot (NULL:
 * not from git) and the repository of the plan's git kernel (NULL) */
struct db_session_brief {
	int64_t id;
	char *plan, *tag, *commit, *git_dir, *status;
	int64_t machine_id;
	char *machine;
	int has_results;
};
int db_session_brief(struct db *db, int64_t id, struct db_session_brief *out);
void db_session_brief_free(struct db_session_brief *b);
/* "12 ok, 1 failed": the runs of a session by status (malloc'd, NULL on
 * error) */
char *db_session_runs_text(struct db *db, int64_t id);
/* the newest session tagged `tag` (0: none) */
int64_t db_session_by_tag(struct db *db, const char *tag);
/* 1 when session sid stored metric `metric` ("name" or "workload.name"),
 * 0 when not, -1 on error */
int db_session_has_metric(struct db *db, int64_t sid, const char *metric);
/* every session tagged `tag` (a lab's members share it), oldest first */
int db_sessions_by_tag(struct db *db, const char *tag, int64_t **ids, size_t *n);

/* the nightly's complete sessions (session.nightly, schema 15: whatever
 * their tag; not running, not interrupted: a night cut short is no
 * baseline) with results (but not `but_tag`: the other members of tonight's lab) of `plan` on machine `machine_id`, with
 * from <= id < before (from 0: any), newest first, at most max of them;
 * one a night: of sessions that share a tag, the newest */
int db_nightly_sessions(struct db *db, const char *plan, int64_t machine_id, int64_t from,
			int64_t before, size_t max, const char *but_tag, int64_t **ids,
			size_t *n);

#endif
