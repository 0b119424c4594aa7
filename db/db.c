/*
 * The data layer over SQLite; see db.h. The write side's and session
 * bookkeeping's statements live in one enum-indexed table (as in
 * freebsd/pkg) and are prepared on first use; the reads are in results.c,
 * the alerts' and bisections' statements in alert_store.c and
 * bisect_store.c, each prepared where it is used. ERROR_SQLITE
 * records the failing statement, file:line and sqlite3_errmsg.
 */
#include "db/db.h"
#include "db/db_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "db/schema.h"

enum stmt_id {
	STMT_MACHINE_FIND,
	STMT_MACHINE_INSERT,
	STMT_KERNEL_FIND,
	STMT_KERNEL_INSERT,
	STMT_SESSION_INSERT,
	STMT_SESSION_STATUS,
	STMT_SESSION_LAST,
	STMT_SESSION_EXISTS,
	STMT_BOOT_INSERT,
	STMT_BOOT_FINISH,
	STMT_BOOT_REPLAN,
	STMT_RUN_INSERT,
	STMT_RUN_SET_BOOT,
	STMT_RUN_START,
	STMT_RUN_UNSTART,
	STMT_RUN_FINISH,
	STMT_METRIC_INSERT,
	STMT_METRIC_INSERT_2,
	STMT_METRIC_INSERT_4,
	STMT_METRIC_INSERT_8,
	STMT_METRIC_INSERT_16,
	STMT_HIST_INSERT,
	STMT_SCHEDSTAT_INSERT,
	STMT_RESET_RUNNING,
	STMT_PENDING,
	STMT_BOOT_LOAD,
	STMT_SESSION_LOAD,
	STMT_SESSION_COUNTS,
	STMT_SESSION_FIRST_RESUMABLE,
	STMT_LAB_LAST,
	STMT_LAB_OF_SESSION,
	STMT_LAB_SESSIONS,
	STMT_OWNER_GET,
	STMT_OWNER_SET,
	STMT_OWNER_CLEAR,
	STMT_BOOT_SET_GIT,
	STMT_KERNEL_SET_GIT,
	STMT_RUN_EVIDENCE,
	STMT_BEGIN,
	STMT_COMMIT,
	STMT_BOOT_SET_JOB,
	STMT_COUNT
};

static const char *const stmt_sql[STMT_COUNT] = {
	[STMT_RUN_EVIDENCE] = "UPDATE run SET evidence_of = ?2, evidence_why = ?3 WHERE id = ?1",
	/* prepared once like the others: sqlite3_exec would parse them at
	   every run's store */
	[STMT_BEGIN] = "BEGIN IMMEDIATE",
	[STMT_COMMIT] = "COMMIT",
	[STMT_BOOT_SET_JOB] = "UPDATE boot SET lava_job_id = ?2, lava_job_url = ?3 WHERE id = ?1",
	[STMT_BOOT_SET_GIT] = "UPDATE boot SET kernel_commit = ?2, kernel_describe = ?3 WHERE id = ?1",
	[STMT_KERNEL_SET_GIT] = "UPDATE kernel SET git_commit = ?2, git_describe = ?3"
				" WHERE id = ?1 AND git_commit IS NULL",
	[STMT_OWNER_GET] = "SELECT owner_pid, owner_start, owner_host, owner_boot, owner_since"
			   " FROM session WHERE id = ?1",
	[STMT_OWNER_SET] = "UPDATE session SET owner_pid = ?2, owner_start = ?3, owner_host = ?4,"
			   " owner_boot = ?5,"
			   " owner_since = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1",
	[STMT_OWNER_CLEAR] = "UPDATE session SET owner_pid = NULL, owner_start = NULL,"
			     " owner_host = NULL, owner_boot = NULL, owner_since = NULL"
			     " WHERE id = ?1 AND owner_pid = ?2 AND owner_start = ?3"
			     " AND owner_host = ?4",
	[STMT_MACHINE_FIND] = "SELECT id FROM machine WHERE fingerprint = ?1",
	[STMT_MACHINE_INSERT] = "INSERT INTO machine (name, cpu_model, ncpus, llc_groups, fingerprint)"
				" VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (fingerprint) DO NOTHING",
	[STMT_KERNEL_FIND] = "SELECT id FROM kernel WHERE release = ?1 AND version = ?2 AND config_hash = ?3",
	[STMT_KERNEL_INSERT] = "INSERT INTO kernel (release, version, config_hash, hz, sched_mc,"
			       " preempt_build, preempt_dynamic) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
			       " ON CONFLICT (release, version, config_hash) DO NOTHING",
	[STMT_SESSION_INSERT] = "INSERT INTO session (name, plan_path, plan_json, tag, target,"
				" harness_version, seed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[STMT_SESSION_STATUS] = "UPDATE session SET status = ?2, finished_at = CASE WHEN ?2 = 'running'"
				" THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%fZ','now') END WHERE id = ?1",
	[STMT_SESSION_LAST] = "SELECT max(id) FROM session",
	[STMT_SESSION_EXISTS] = "SELECT id FROM session WHERE id = ?1",
	[STMT_BOOT_INSERT] = "INSERT INTO boot (session_id, seq, cfg, req_kernel, req_preempt, req_cmdline)"
			     " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[STMT_BOOT_FINISH] = "UPDATE boot SET status = ?2, machine_id = ?3, kernel_id = ?4, preempt = ?5,"
			     " cmdline = ?6, boot_uuid = ?7, method = ?8, switch_s = ?9, accel = ?10,"
			     " sysinfo = ?11, console = ?12, error = ?13, lava_job_id = ?14,"
			     " lava_job_url = ?15, clock = ?16, clock_shift = ?17, qemu_version = ?18, booted_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1",
	[STMT_BOOT_REPLAN] = "INSERT INTO boot (session_id, seq, cfg, req_kernel, req_preempt, req_cmdline,"
			     " kernel_commit, kernel_describe)"
			     " SELECT session_id, seq, cfg, req_kernel, req_preempt, req_cmdline,"
			     " kernel_commit, kernel_describe"
			     " FROM boot WHERE id = ?1",
	[STMT_RUN_INSERT] = "INSERT INTO run (session_id, boot_id, seq, round, workload, params, knobs, rep,"
			    " seed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[STMT_RUN_SET_BOOT] = "UPDATE run SET boot_id = ?2 WHERE id = ?1",
	[STMT_RUN_START] = "UPDATE run SET status = 'running',"
			   " started_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1",
	[STMT_RUN_UNSTART] = "UPDATE run SET status = 'planned', started_at = NULL"
			     " WHERE id = ?1 AND status = 'running'",
	/* STMT_RUN_FINISH, STMT_RESET_RUNNING, STMT_PENDING, STMT_SESSION_COUNTS,
	   STMT_SESSION_FIRST_RESUMABLE: state_sql(), their states from
	   db/runstate.c */
	/* STMT_METRIC_INSERT_2 .. _16: metric_batch_sql(), that many rows at once */
	[STMT_METRIC_INSERT] = "INSERT OR REPLACE INTO metric (run_id, workload, name, value, unit, better,"
			       " note, censored) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[STMT_HIST_INSERT] = "INSERT OR REPLACE INTO histogram (run_id, name, unit, data) VALUES (?1, ?2, ?3, ?4)",
	[STMT_SCHEDSTAT_INSERT] = "INSERT OR REPLACE INTO schedstat (run_id, before, after) VALUES (?1, ?2, ?3)",
	[STMT_BOOT_LOAD] = "SELECT id, seq, cfg, req_kernel, req_preempt, req_cmdline, status,"
			   " coalesce(lava_job_id, 0), lava_job_url FROM boot WHERE id = ?1",
	[STMT_SESSION_LOAD] = "SELECT plan_json, plan_path, tag, status FROM session WHERE id = ?1",
	[STMT_LAB_LAST] = "SELECT json_extract(plan_json, '$.lab.id') FROM session"
			  " WHERE json_extract(plan_json, '$.lab.id') IS NOT NULL ORDER BY id DESC LIMIT 1",
	[STMT_LAB_OF_SESSION] = "SELECT json_extract(plan_json, '$.lab.id') FROM session WHERE id = ?1",
	[STMT_LAB_SESSIONS] = "SELECT id, plan_json, plan_path, json_extract(plan_json, '$.lab.label')"
			      " FROM session WHERE json_extract(plan_json, '$.lab.id') = ?1"
			      " ORDER BY json_extract(plan_json, '$.lab.target'), id",
};

struct db {
	sqlite3 *h;
	sqlite3_stmt *st[STMT_COUNT];
	char err[1024];
	int readonly;
	int nested;            /* db_begin's savepoints inside a transaction */
	int busy;              /* the last failure: another process's lock */
};

#define ERROR_SQLITE(db, what) sqlite_failed(db, what, __FILE__, __LINE__)

void db_seterr(struct db *db, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(db->err, sizeof(db->err), fmt, ap);
	va_end(ap);
	db->busy = 0;
}

const char *db_errmsg(const struct db *db)
{
	return db->err;
}

int db_failed_busy(const struct db *db)
{
	return db->busy;
}

void db_set_busy_timeout(struct db *db, int ms)
{
	sqlite3_busy_timeout(db->h, ms);
}

sqlite3 *db_sqlite(struct db *db)
{
	return db->h;
}

/*
 * Metrics go in batches of 16, 8, 4, 2 and 1 rows per statement (25 rows:
 * 16 + 8 + 1, three statements instead of ten): one run of a statement
 * opens the table's cursor once for all of its rows, which is most of the
 * cost of a row (bench/ingest.c: 8 us a row one at a time).
 */
#define METRIC_BATCH 16
#define METRIC_COLS 8

static const struct {
	enum stmt_id id;
	int rows;
} metric_stmts[] = {
	{ STMT_METRIC_INSERT_16, 16 },
	{ STMT_METRIC_INSERT_8, 8 },
	{ STMT_METRIC_INSERT_4, 4 },
	{ STMT_METRIC_INSERT_2, 2 },
	{ STMT_METRIC_INSERT, 1 },
};

/* the INSERT of `rows` metric rows (2..METRIC_BATCH) */
/* the texts below are made once, on first use, under this lock: serve's
 * pages are built by several threads, each on its own connection */
static pthread_mutex_t made_sql_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *metric_batch_sql(enum stmt_id id)
{
	static char sql[METRIC_BATCH + 1][128 + METRIC_BATCH * 48];
	int rows = 0;
	for (size_t i = 0; i < sizeof(metric_stmts) / sizeof(metric_stmts[0]); i++)
		if (metric_stmts[i].id == id)
			rows = metric_stmts[i].rows;
	char *q = sql[rows];
	if (!q[0]) {
		size_t n = (size_t)snprintf(q, sizeof(sql[0]),
					    "INSERT OR REPLACE INTO metric (run_id, workload, name, value,"
					    " unit, better, note, censored) VALUES ");
		for (int r = 0; r < rows; r++) {
			int b = r * METRIC_COLS;
			n += (size_t)snprintf(q + n, sizeof(sql[0]) - n,
					      "%s(?%d,?%d,?%d,?%d,?%d,?%d,?%d,?%d)", r ? "," : "",
					      b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8);
		}
	}
	return q;
}

/*
 * The statements that name run states: their conditions are the fragments
 * of db/runstate.c (the class of runs still to do, the states a run may be
 * finished from), so that --resume, the counts and the stores decide alike.
 */
static const char *state_sql(enum stmt_id id)
{
	static char sql[STMT_COUNT][1536];
	char *q = sql[id];
	if (q[0])
		return q;
	size_t len = sizeof(sql[0]), n;
	switch (id) {
	case STMT_RUN_FINISH:
		/* a finished run comes from a state its table allows (planned or
		   running): a run stored twice changes nothing (db_run_finish
		   then says why) */
		n = (size_t)snprintf(q, len,
			"UPDATE run SET status = ?2, error = ?3, wall_s = ?4, exit_code = ?5,"
			" argv = ?6, stdout = ?7, stderr = ?8, files = ?9, knobs_applied = ?10,"
			" load = ?11, skip_reason = ?12, notes = ?13,"
			" started_at = coalesce(started_at, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ','now')),"
			" finished_at = strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ','now')"
			" WHERE id = ?1 AND CASE ?2");
		for (int t = 0; t < RUN_ST_N; t++)
			if (t != RUN_ST_PLANNED && t != RUN_ST_RUNNING)
				n += (size_t)snprintf(q + n, len - n, " WHEN '%s' THEN %s",
						      run_state_word((enum run_state)t),
						      run_from_sql((enum run_state)t, ""));
		snprintf(q + n, len - n, " ELSE 0 END");
		break;
	case STMT_RESET_RUNNING:
		snprintf(q, len, "UPDATE run SET status = 'planned', skip_reason = NULL,"
			 " started_at = NULL WHERE session_id = ?1 AND %s",
			 run_from_sql(RUN_ST_PLANNED, ""));
		break;
	case STMT_PENDING:
		snprintf(q, len, "SELECT r.id, r.boot_id, r.seq, r.round, r.rep, r.workload, r.params,"
			 " r.knobs, b.cfg, coalesce(r.seed, -1) FROM run r JOIN boot b ON b.id = r.boot_id"
			 " WHERE r.session_id = ?1 AND %s ORDER BY r.seq",
			 run_class_sql(RUN_TODO, "r"));
		break;
	case STMT_SESSION_COUNTS:
		snprintf(q, len, "SELECT sum(%s), sum(%s), sum(%s), sum(%s) FROM run"
			 " WHERE session_id = ?1", run_class_sql(RUN_TODO, ""),
			 run_class_sql(RUN_DONE_OK, ""), run_class_sql(RUN_DONE_FAILED, ""),
			 run_class_sql(RUN_DONE_SKIPPED, ""));
		break;
	case STMT_SESSION_FIRST_RESUMABLE:
		/* a run still to do that has a reason stored (interrupted, or
		   skipped because its boot failed) */
		snprintf(q, len, "SELECT error FROM run WHERE session_id = ?1 AND error IS NOT NULL"
			 " AND %s ORDER BY seq LIMIT 1", run_class_sql(RUN_TODO, ""));
		break;
	default:
		return metric_batch_sql(id);
	}
	return q;
}

/* the statement, reset; its parameters all NULL again unless `keep` (a
 * caller that binds every one of them at each use) */
static sqlite3_stmt *stmt_bind(struct db *db, enum stmt_id id, int keep)
{
	if (!db->st[id]) {
		const char *sql = stmt_sql[id];
		if (!sql) {
			pthread_mutex_lock(&made_sql_mu);
			sql = state_sql(id);
			pthread_mutex_unlock(&made_sql_mu);
		}
		if (sqlite3_prepare_v2(db->h, sql, -1, &db->st[id], NULL) != SQLITE_OK) {
			db_seterr(db, "preparing \"%.200s\": %s (%s:%d)", sql,
				  sqlite3_errmsg(db->h), __FILE__, __LINE__);
			return NULL;
		}
	} else {
		sqlite3_reset(db->st[id]);
		if (!keep)
			sqlite3_clear_bindings(db->st[id]);
	}
	return db->st[id];
}

static sqlite3_stmt *stmt(struct db *db, enum stmt_id id)
{
	return stmt_bind(db, id, 0);
}

/* a statement whose parameters the caller binds all, each time: clearing
 * them first is work for nothing (128 of them in a batch of 16 metric rows) */
static sqlite3_stmt *stmt_all(struct db *db, enum stmt_id id)
{
	return stmt_bind(db, id, 1);
}

/*
 * A statement stepped to a row and left there keeps this connection's read
 * snapshot open; once another process commits, this connection's next write
 * fails at once with SQLITE_BUSY_SNAPSHOT instead of waiting for the busy
 * timeout. Every function that reads single rows ends with end_reads().
 */
static void end_reads(struct db *db)
{
	for (int i = 0; i < STMT_COUNT; i++)
		if (db->st[i] && sqlite3_stmt_busy(db->st[i]))
			sqlite3_reset(db->st[i]);
}

/* SQLite's message, what a person can do about it for the failures that
 * come from outside (another writer, a full disk, a damaged file), and
 * where in db/ it happened */
static void sqlite_failed(struct db *db, const char *what, const char *file, int line)
{
	const char *hint = "";
	switch (sqlite3_errcode(db->h)) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		hint = "; another process held the database for longer than the 10 s busy "
		       "timeout: nothing of this step was stored, resume when it is free";
		break;
	case SQLITE_FULL:
		hint = "; the disk holding the database is full: nothing of this step was "
		       "stored, free space and resume";
		break;
	case SQLITE_IOERR:
	case SQLITE_READONLY:
		hint = "; the database file cannot be written: nothing of this step was stored";
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		hint = "; the database file is damaged";
		break;
	}
	int code = sqlite3_errcode(db->h) & 0xff;
	db_seterr(db, "%s: %s%s (%s:%d)", what, sqlite3_errmsg(db->h), hint, file, line);
	db->busy = code == SQLITE_BUSY || code == SQLITE_LOCKED;
}

static int exec_sql(struct db *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		char what[220];
		snprintf(what, sizeof(what), "%.200s", sql);
		sqlite3_free(msg);
		ERROR_SQLITE(db, what);
		return -1;
	}
	return 0;
}

/* a statement without rows or bindings, prepared once */
static int exec_stmt(struct db *db, enum stmt_id id)
{
	sqlite3_stmt *s = stmt(db, id);
	if (!s)
		return -1;
	int rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		ERROR_SQLITE(db, stmt_sql[id]);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int db_begin(struct db *db)
{
	/* inside a transaction already (a caller that makes several writes
	   one, such as the nightly's judgement): a savepoint of it */
	if (!sqlite3_get_autocommit(db->h)) {
		if (exec_sql(db, "SAVEPOINT db_nested"))
			return -1;
		db->nested++;
		return 0;
	}
	return exec_stmt(db, STMT_BEGIN);
}

int db_commit(struct db *db)
{
	if (db->nested) {
		if (exec_sql(db, "RELEASE db_nested"))
			return -1;
		db->nested--;
		return 0;
	}
	return exec_stmt(db, STMT_COMMIT);
}

void db_rollback(struct db *db)
{
	if (db->nested) {
		sqlite3_exec(db->h, "ROLLBACK TO db_nested; RELEASE db_nested", NULL, NULL, NULL);
		db->nested--;
		return;
	}
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

int db_exec(struct db *db, const char *sql)
{
	return exec_sql(db, sql);
}

int db_user_version(struct db *db)
{
	sqlite3_stmt *s;
	int v = -1;
	if (sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
	}
	return v;
}

int db_latest_version(void)
{
	int v = 0;
	for (const struct migration *m = db_migrations; m->sql; m++)
		v = m->version;
	return v;
}

int db_migrate_to(struct db *db, int version)
{
	int cur = db_user_version(db);
	if (cur < 0) {
		ERROR_SQLITE(db, "reading user_version");
		return -1;
	}
	if (cur > db_latest_version()) {
		db_seterr(db, "database schema version %d is newer than this schedlab (%d): "
			  "upgrade schedlab", cur, db_latest_version());
		return -1;
	}
	for (const struct migration *m = db_migrations; m->sql; m++) {
		if (m->version <= cur || m->version > version)
			continue;
		if (db_begin(db))
			return -1;
		char pragma[64];
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", m->version);
		if (exec_sql(db, m->sql) || exec_sql(db, pragma)) {
			char saved[1024];
			snprintf(saved, sizeof(saved), "%s", db->err);
			db_rollback(db);
			db_seterr(db, "migration to schema version %d failed: %s", m->version, saved);
			return -1;
		}
		if (db_commit(db))
			return -1;
	}
	return 0;
}

/* before anything is written (even the WAL switch changes the file's
 * header): a file that is not a database, a database of some other program
 * (schema version 0 but tables in it) or one of a newer schedlab is left
 * exactly as it was */
static int refuse_foreign(struct db *db, const char *path)
{
	sqlite3_stmt *s;
	int v = db_user_version(db), objects = -1;
	if (v < 0) {
		db_seterr(db, "%s", sqlite3_errmsg(db->h));
		return -1;
	}
	if (sqlite3_prepare_v2(db->h, "SELECT count(*) FROM sqlite_master", -1, &s, NULL) ==
	    SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			objects = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
	}
	if (objects < 0) {
		db_seterr(db, "%s", sqlite3_errmsg(db->h));
		return -1;
	}
	if (v == 0 && objects > 0) {
		db_seterr(db, "not a schedlab database (%d tables, views or indexes and no "
			  "schedlab schema version); give another --db file", objects);
		return -1;
	}
	if (v > db_latest_version()) {
		db_seterr(db, "schema version %d is newer than this schedlab (%d): upgrade "
			  "schedlab", v, db_latest_version());
		return -1;
	}
	return 0;
}

static int open_common(const char *path, int flags, struct db **out, char **errmsg)
{
	struct db *db = calloc(1, sizeof(*db));
	*out = NULL;
	if (!db)
		return -1;
	db->readonly = !(flags & SQLITE_OPEN_READWRITE);
	if (sqlite3_open_v2(path, &db->h, flags, NULL) != SQLITE_OK) {
		if (errmsg)
			*errmsg = strdup(db->h ? sqlite3_errmsg(db->h) : "out of memory");
		sqlite3_close(db->h);
		free(db);
		return -1;
	}
	sqlite3_busy_timeout(db->h, DB_BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(db->h, 1);
	/* asked for writing but opened read-only (an immutable or read-only
	   file: SQLite falls back quietly): refused now, not when a write
	   fails unseen later */
	if (!db->readonly && sqlite3_db_readonly(db->h, "main") == 1) {
		if (errmsg) {
			char buf[512];
			snprintf(buf, sizeof(buf), "%s: cannot be written (a read-only or immutable "
				 "file, or its folder)", path);
			*errmsg = strdup(buf);
		}
		db_close(db);
		return -1;
	}
	if (!db->readonly && refuse_foreign(db, path)) {
		if (errmsg)
			*errmsg = strdup(db->err);
		db_close(db);
		return -1;
	}
	if (!db->readonly &&
	    (exec_sql(db, "PRAGMA journal_mode = WAL") || exec_sql(db, "PRAGMA foreign_keys = ON") ||
	     exec_sql(db, "PRAGMA synchronous = NORMAL"))) {
		if (errmsg)
			*errmsg = strdup(db->err);
		db_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

int db_open_raw(const char *path, struct db **out, char **errmsg)
{
	return open_common(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, out, errmsg);
}

/* db_open's messages start with the file's name, whoever made them */
static void name_file(const char *path, char **errmsg)
{
	if (!errmsg)
		return;
	const char *m = *errmsg ? *errmsg : "cannot open";
	size_t n = strlen(path);
	if (!strncmp(m, path, n) && m[n] == ':')
		return;
	char *named = NULL;
	if (asprintf(&named, "%s: %s", path, m) < 0)
		return;
	free(*errmsg);
	*errmsg = named;
}

static int open_checked(const char *path, enum db_mode mode, struct db **out, char **errmsg)
{
	if (mode == DB_READONLY) {
		if (open_common(path, SQLITE_OPEN_READONLY, out, errmsg))
			return -1;
		int v = db_user_version(*out);
		if (v < 0) {
			if (errmsg)
				*errmsg = strdup(sqlite3_errmsg((*out)->h));
			db_close(*out);
			*out = NULL;
			return -1;
		}
		if (v < 1 || v > db_latest_version()) {
			if (errmsg) {
				char buf[256];
				snprintf(buf, sizeof(buf), v < 1 ? "%s: not a schedlab database (schema version %d)"
							      : "%s: schema version %d is newer than this schedlab",
					 path, v);
				*errmsg = strdup(buf);
			}
			db_close(*out);
			*out = NULL;
			return -1;
		}
		return 0;
	}
	int flags = SQLITE_OPEN_READWRITE | (mode == DB_READWRITE ? SQLITE_OPEN_CREATE : 0);
	if (open_common(path, flags, out, errmsg))
		return -1;
	if (db_migrate_to(*out, db_latest_version())) {
		if (errmsg)
			*errmsg = strdup((*out)->err);
		db_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* what the path is before SQLite touches it: a regular file or nothing
 * (then only DB_READWRITE may create it); 0, or -1 with the message. SQLite
 * would open /dev/null and write /dev/null-journal beside it */
static int check_path(const char *path, enum db_mode mode, char **errmsg)
{
	struct stat st;
	const char *why = NULL;
	if (!strcmp(path, ":memory:") || !strncmp(path, "file:", 5))
		return 0;
	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			why = "not a regular file (a database is a file of its own)";
	} else if (errno == ENOENT && mode == DB_READWRITE_EXISTING) {
		why = "no such file (nothing stored to continue)";
	}
	if (!why)
		return 0;
	if (errmsg && asprintf(errmsg, "%s: %s", path, why) < 0)
		*errmsg = NULL;
	return -1;
}

int db_open(const char *path, enum db_mode mode, struct db **out, char **errmsg)
{
	if (errmsg)
		*errmsg = NULL;
	*out = NULL;
	if (check_path(path, mode, errmsg))
		return -1;
	if (!open_checked(path, mode, out, errmsg))
		return 0;
	name_file(path, errmsg);
	return -1;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	for (int i = 0; i < STMT_COUNT; i++)
		sqlite3_finalize(db->st[i]);
	sqlite3_close(db->h);
	free(db);
}

/* ---- the statement helpers of db/ (db_internal.h) ---------------------- */

void db_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

char *db_dup_col(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? strdup((const char *)t) : NULL;
}

sqlite3_stmt *db_prep(struct db *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK) {
		db_seterr(db, "preparing \"%.80s\": %s", sql, sqlite3_errmsg(db->h));
		sqlite3_finalize(s);
		return NULL;
	}
	return s;
}

int db_run(struct db *db, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		db_seterr(db, "%s", sqlite3_errmsg(db->h));
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int64_t db_scalar(struct db *db, sqlite3_stmt *s)
{
	int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	if (v < 0)
		db_seterr(db, "%s", sqlite3_errmsg(db->h));
	sqlite3_finalize(s);
	return v;
}

int db_collect_ids(struct db *db, sqlite3_stmt *s, int64_t **ids, size_t *n)
{
	size_t alloc = *n;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			int64_t *t = realloc(*ids, alloc * sizeof(**ids));
			if (!t) {
				rc = SQLITE_NOMEM;
				break;
			}
			*ids = t;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(s, 0);
	}
	if (rc != SQLITE_DONE) {
		db_seterr(db, "%s", rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db->h));
		sqlite3_finalize(s);
		free(*ids);
		*ids = NULL;
		*n = 0;
		return -1;
	}
	sqlite3_finalize(s);
	return 0;
}


/* for strings that stay valid until the statement is stepped and reset */
static void bind_static(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

static char *json_text(const json_t *j)
{
	return j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
}

static int64_t step_insert(struct db *db, sqlite3_stmt *s, const char *what)
{
	if (sqlite3_step(s) != SQLITE_DONE) {
		ERROR_SQLITE(db, what);
		return -1;
	}
	return sqlite3_last_insert_rowid(db->h);
}

static int step_done(struct db *db, sqlite3_stmt *s, const char *what)
{
	if (sqlite3_step(s) != SQLITE_DONE) {
		ERROR_SQLITE(db, what);
		return -1;
	}
	return 0;
}

static const char *si_str(const json_t *si, const char *f)
{
	return json_string_value(json_object_get(json_object_get(si, f), "value"));
}

static json_t *si_val(const json_t *si, const char *f)
{
	return json_object_get(json_object_get(si, f), "value");
}

int64_t db_machine_get(struct db *db, const json_t *si)
{
	const char *host = si_str(si, "hostname");
	const char *model = si_str(si, "cpu_model");
	json_t *ncpus = si_val(si, "ncpus");
	char *llc = json_text(si_val(si, "llc_groups"));
	char fp[512];
	snprintf(fp, sizeof(fp), "%s|%s|%lld|%s", host ? host : "?", model ? model : "?",
		 (long long)json_integer_value(ncpus), llc ? llc : "");
	int64_t id = -1;
	/* find, or insert; when another writer inserted it first the insert
	 * does nothing and the second find sees its row */
	for (int attempt = 0; attempt < 2 && id < 0; attempt++) {
		sqlite3_stmt *s = stmt(db, STMT_MACHINE_FIND);
		if (!s)
			break;
		db_bind_text(s, 1, fp);
		if (sqlite3_step(s) == SQLITE_ROW)
			id = sqlite3_column_int64(s, 0);
		end_reads(db);
		if (id > 0 || attempt)
			break;
		s = stmt(db, STMT_MACHINE_INSERT);
		if (!s)
			break;
		db_bind_text(s, 1, host ? host : "unknown");
		db_bind_text(s, 2, model);
		if (json_is_integer(ncpus))
			sqlite3_bind_int64(s, 3, json_integer_value(ncpus));
		db_bind_text(s, 4, llc);
		db_bind_text(s, 5, fp);
		int64_t r = step_insert(db, s, "inserting machine");
		if (r < 0)
			break;
		if (sqlite3_changes(db->h))
			id = r;
	}
	if (id < 0 && !db->err[0])
		db_seterr(db, "machine row not found after insert");
	free(llc);
	return id;
}

int64_t db_kernel_get(struct db *db, const json_t *si)
{
	const char *rel = si_str(si, "kernel_release");
	const char *ver = si_str(si, "kernel_version");
	const char *hash = si_str(si, "config_hash");
	json_t *hz = si_val(si, "hz"), *mc = si_val(si, "sched_mc"), *dyn = si_val(si, "preempt_dynamic");
	int64_t id = -1;
	for (int attempt = 0; attempt < 2 && id < 0; attempt++) {
		sqlite3_stmt *s = stmt(db, STMT_KERNEL_FIND);
		if (!s)
			break;
		db_bind_text(s, 1, rel ? rel : "unknown");
		db_bind_text(s, 2, ver ? ver : "");
		db_bind_text(s, 3, hash ? hash : "");
		if (sqlite3_step(s) == SQLITE_ROW)
			id = sqlite3_column_int64(s, 0);
		end_reads(db);
		if (id > 0 || attempt)
			break;
		s = stmt(db, STMT_KERNEL_INSERT);
		if (!s)
			break;
		db_bind_text(s, 1, rel ? rel : "unknown");
		db_bind_text(s, 2, ver ? ver : "");
		db_bind_text(s, 3, hash ? hash : "");
		if (json_is_integer(hz))
			sqlite3_bind_int64(s, 4, json_integer_value(hz));
		if (json_is_integer(mc))
			sqlite3_bind_int64(s, 5, json_integer_value(mc));
		db_bind_text(s, 6, si_str(si, "preempt_build"));
		if (json_is_boolean(dyn))
			sqlite3_bind_int(s, 7, json_is_true(dyn));
		int64_t r = step_insert(db, s, "inserting kernel");
		if (r < 0)
			break;
		if (sqlite3_changes(db->h))
			id = r;
	}
	if (id < 0 && !db->err[0])
		db_seterr(db, "kernel row not found after insert");
	return id;
}

int64_t db_session_create(struct db *db, const struct db_session *ses)
{
	sqlite3_stmt *s = stmt(db, STMT_SESSION_INSERT);
	if (!s)
		return -1;
	db_bind_text(s, 1, ses->name);
	db_bind_text(s, 2, ses->plan_path);
	db_bind_text(s, 3, ses->plan_json);
	db_bind_text(s, 4, ses->tag);
	db_bind_text(s, 5, ses->target);
	db_bind_text(s, 6, ses->version);
	sqlite3_bind_int64(s, 7, ses->seed);
	return step_insert(db, s, "inserting session");
}

static void copy_col(char *dst, size_t n, sqlite3_stmt *s, int i)
{
	const char *v = (const char *)sqlite3_column_text(s, i);
	snprintf(dst, n, "%s", v ? v : "");
}

/* the owner row of sid into *o (pid 0 when none); -1 on error */
static int owner_get(struct db *db, int64_t sid, struct db_owner *o)
{
	sqlite3_stmt *s = stmt(db, STMT_OWNER_GET);
	memset(o, 0, sizeof(*o));
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		o->pid = sqlite3_column_int64(s, 0);
		o->start = sqlite3_column_int64(s, 1);
		copy_col(o->host, sizeof(o->host), s, 2);
		copy_col(o->boot, sizeof(o->boot), s, 3);
		copy_col(o->since, sizeof(o->since), s, 4);
	}
	sqlite3_reset(s); /* end the read: the update follows */
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		db_seterr(db, "session %lld does not exist", (long long)sid);
	else
		ERROR_SQLITE(db, "reading the session's owner");
	return -1;
}

int db_session_claim(struct db *db, int64_t sid, const struct db_owner *me,
		     int (*alive)(const struct db_owner *o), int force, struct db_owner *holder)
{
	int own_tx = sqlite3_get_autocommit(db->h);
	if (own_tx && db_begin(db))
		return -1;
	struct db_owner cur;
	int ret = owner_get(db, sid, &cur);
	if (!ret && cur.pid) {
		*holder = cur;
		int mine = cur.pid == me->pid && cur.start == me->start && !strcmp(cur.host, me->host);
		if (!mine && !force && alive(&cur))
			ret = 1;
	} else if (!ret) {
		memset(holder, 0, sizeof(*holder));
	}
	if (!ret) {
		sqlite3_stmt *s = stmt(db, STMT_OWNER_SET);
		if (!s)
			ret = -1;
		else {
			sqlite3_bind_int64(s, 1, sid);
			sqlite3_bind_int64(s, 2, me->pid);
			sqlite3_bind_int64(s, 3, me->start);
			db_bind_text(s, 4, me->host);
			db_bind_text(s, 5, me->boot);
			ret = step_done(db, s, "claiming the session");
		}
	}
	if (own_tx) {
		if (ret < 0)
			db_rollback(db);
		else if (db_commit(db)) {
			db_rollback(db);
			ret = -1;
		}
	}
	return ret;
}

int db_session_release(struct db *db, int64_t sid, const struct db_owner *me)
{
	sqlite3_stmt *s = stmt(db, STMT_OWNER_CLEAR);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	sqlite3_bind_int64(s, 2, me->pid);
	sqlite3_bind_int64(s, 3, me->start);
	db_bind_text(s, 4, me->host);
	return step_done(db, s, "releasing the session");
}

int db_session_set_status(struct db *db, int64_t sid, enum session_state st)
{
	if (!session_state_word(st)) {
		db_seterr(db, "session %lld: no session state %d", (long long)sid, (int)st);
		return -1;
	}
	sqlite3_stmt *s = stmt(db, STMT_SESSION_STATUS);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	db_bind_text(s, 2, session_state_word(st));
	return step_done(db, s, "updating session status");
}

static int64_t db_session_resolve_rows(struct db *db, const char *spec)
{
	sqlite3_stmt *s;
	if (!strcmp(spec, "last")) {
		s = stmt(db, STMT_SESSION_LAST);
		if (!s)
			return -1;
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
			return sqlite3_column_int64(s, 0);
		db_seterr(db, "there is no session in this database");
		return -1;
	}
	char *end;
	errno = 0;
	long long id = strtoll(spec, &end, 10);
	if (errno == ERANGE) {
		db_seterr(db, "session \"%s\": not a session number (out of range)", spec);
		return -1;
	}
	if (*end || end == spec || id <= 0) {
		db_seterr(db, "session \"%s\": expected a session number or \"last\"", spec);
		return -1;
	}
	s = stmt(db, STMT_SESSION_EXISTS);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW)
		return id;
	db_seterr(db, "session %lld does not exist", id);
	return -1;
}

int64_t db_session_resolve(struct db *db, const char *spec)
{
	int64_t r = db_session_resolve_rows(db, spec);
	end_reads(db);
	return r;
}

int64_t db_boot_plan(struct db *db, int64_t sid, int seq, int cfg, const char *kernel,
		     const char *preempt, const char *cmdline)
{
	sqlite3_stmt *s = stmt(db, STMT_BOOT_INSERT);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	sqlite3_bind_int(s, 2, seq);
	sqlite3_bind_int(s, 3, cfg);
	db_bind_text(s, 4, kernel);
	db_bind_text(s, 5, preempt);
	db_bind_text(s, 6, cmdline ? cmdline : "");
	return step_insert(db, s, "inserting boot");
}

int db_boot_finish(struct db *db, int64_t boot_id, const struct db_boot_result *r)
{
	sqlite3_stmt *s = stmt(db, STMT_BOOT_FINISH);
	if (!s)
		return -1;
	char *si = json_text(r->sysinfo);
	sqlite3_bind_int64(s, 1, boot_id);
	db_bind_text(s, 2, r->status);
	if (r->machine_id > 0)
		sqlite3_bind_int64(s, 3, r->machine_id);
	if (r->kernel_id > 0)
		sqlite3_bind_int64(s, 4, r->kernel_id);
	db_bind_text(s, 5, r->preempt);
	db_bind_text(s, 6, r->cmdline);
	db_bind_text(s, 7, r->boot_uuid);
	db_bind_text(s, 8, r->method);
	sqlite3_bind_double(s, 9, r->switch_s);
	db_bind_text(s, 10, r->accel);
	db_bind_text(s, 11, si);
	db_bind_text(s, 12, r->console);
	db_bind_text(s, 13, r->error);
	if (r->lava_job_id > 0)
		sqlite3_bind_int64(s, 14, r->lava_job_id);
	db_bind_text(s, 15, r->lava_job_url);
	db_bind_text(s, 16, r->clock);
	if (r->clock && r->clock_shift >= 0)
		sqlite3_bind_int(s, 17, r->clock_shift);
	db_bind_text(s, 18, r->qemu_version);
	int ret = step_done(db, s, "updating boot");
	free(si);
	return ret;
}

int db_boot_set_git(struct db *db, int64_t boot_id, const char *commit, const char *describe)
{
	sqlite3_stmt *s = stmt(db, STMT_BOOT_SET_GIT);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, boot_id);
	db_bind_text(s, 2, commit);
	db_bind_text(s, 3, describe);
	return step_done(db, s, "recording the boot's commit");
}

int db_boot_set_job(struct db *db, int64_t boot_id, int64_t job_id, const char *url)
{
	sqlite3_stmt *s = stmt(db, STMT_BOOT_SET_JOB);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, boot_id);
	sqlite3_bind_int64(s, 2, job_id);
	db_bind_text(s, 3, url);
	return step_done(db, s, "recording the boot's job");
}

int db_kernel_set_git(struct db *db, int64_t kernel_id, const char *commit, const char *describe)
{
	sqlite3_stmt *s = stmt(db, STMT_KERNEL_SET_GIT);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, kernel_id);
	db_bind_text(s, 2, commit);
	db_bind_text(s, 3, describe);
	return step_done(db, s, "recording the kernel's commit");
}

int64_t db_boot_replan(struct db *db, int64_t boot_id)
{
	sqlite3_stmt *s = stmt(db, STMT_BOOT_REPLAN);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, boot_id);
	return step_insert(db, s, "re-planning boot");
}

int64_t db_run_plan(struct db *db, int64_t sid, int64_t boot_id, int seq, int round,
		    const char *workload, const char *params_json, const char *knobs_json, int rep)
{
	return db_run_plan_seeded(db, sid, boot_id, seq, round, workload, params_json, knobs_json,
				  rep, -1);
}

int64_t db_run_plan_seeded(struct db *db, int64_t sid, int64_t boot_id, int seq, int round,
			   const char *workload, const char *params_json, const char *knobs_json,
			   int rep, int64_t seed)
{
	sqlite3_stmt *s = stmt(db, STMT_RUN_INSERT);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	sqlite3_bind_int64(s, 2, boot_id);
	sqlite3_bind_int(s, 3, seq);
	sqlite3_bind_int(s, 4, round);
	db_bind_text(s, 5, workload);
	db_bind_text(s, 6, params_json);
	db_bind_text(s, 7, knobs_json ? knobs_json : "{}");
	sqlite3_bind_int(s, 8, rep);
	if (seed >= 0)
		sqlite3_bind_int64(s, 9, seed);
	else
		sqlite3_bind_null(s, 9);
	return step_insert(db, s, "inserting run");
}

int db_run_set_boot(struct db *db, int64_t run_id, int64_t boot_id)
{
	sqlite3_stmt *s = stmt(db, STMT_RUN_SET_BOOT);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_int64(s, 2, boot_id);
	return step_done(db, s, "moving run to boot");
}

int db_run_set_evidence(struct db *db, int64_t run_id, int64_t of_run, const char *why)
{
	sqlite3_stmt *s = stmt(db, STMT_RUN_EVIDENCE);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	if (of_run > 0)
		sqlite3_bind_int64(s, 2, of_run);
	else
		sqlite3_bind_null(s, 2);
	if (why)
		sqlite3_bind_text(s, 3, why, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, 3);
	return step_done(db, s, "storing the evidence decision of a run");
}

int db_run_start(struct db *db, int64_t run_id)
{
	sqlite3_stmt *s = stmt(db, STMT_RUN_START);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	return step_done(db, s, "starting run");
}

int db_run_unstart(struct db *db, int64_t run_id)
{
	sqlite3_stmt *s = stmt(db, STMT_RUN_UNSTART);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	return step_done(db, s, "un-marking a run that did not start");
}

/* a result the state table refuses before anything is written: an unknown
 * status, a skip reason on a run that is not skipped */
static int bad_finish(struct db *db, int64_t run_id, const struct db_run_result *r)
{
	int st = run_state_parse(r->status);
	if (st < 0 || st == RUN_ST_PLANNED || st == RUN_ST_RUNNING)
		db_seterr(db, "finishing run %lld: \"%s\" is no finished state", (long long)run_id,
			  r->status ? r->status : "(none)");
	else if ((unsigned)r->skip >= SKIP_N || (r->skip != SKIP_NONE && st != RUN_ST_SKIPPED))
		db_seterr(db, "finishing run %lld: a skip reason on a run that is %s", (long long)run_id,
			  r->status);
	else
		return 0;
	return -1;
}

/* the finish changed no row: the run is not there, or its state may not
 * become r->status (the table's message) */
static int finished_none(struct db *db, int64_t run_id, const struct db_run_result *r)
{
	if (sqlite3_changes(db->h) == 1)
		return 0;
	sqlite3_stmt *s = db_prep(db, "SELECT status, skip_reason FROM run WHERE id = ?1");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	char why[256] = "it does not exist";
	if (sqlite3_step(s) == SQLITE_ROW) {
		int from = run_state_parse((const char *)sqlite3_column_text(s, 0));
		int sk = skip_reason_parse((const char *)sqlite3_column_text(s, 1));
		run_move_ok((enum run_state)from, (enum skip_reason)(sk < 0 ? SKIP_NONE : sk),
			    (enum run_state)run_state_parse(r->status), why, sizeof(why));
	}
	sqlite3_finalize(s);
	db_seterr(db, "finishing run %lld as %s: %s", (long long)run_id, r->status, why);
	return -1;
}

int db_run_finish(struct db *db, int64_t run_id, const struct db_run_result *r)
{
	return db_run_finish_start(db, run_id, r, 0);
}

/*
 * One transaction per run; inside a caller's transaction (a bulk path:
 * several runs committed together) a savepoint instead, so that a run that
 * fails leaves nothing of itself and the caller's transaction goes on. The
 * next run's mark is the last statement of it: the run's commit is the
 * mark's (bench/ingest.c: the second commit a run was 40% of the wall time
 * of storing it).
 */
int db_run_finish_start(struct db *db, int64_t run_id, const struct db_run_result *r,
			int64_t next_run_id)
{
	int nested = !sqlite3_get_autocommit(db->h);
	if (nested ? exec_sql(db, "SAVEPOINT run_finish") : db_begin(db))
		return -1;
	sqlite3_stmt *s = stmt_all(db, STMT_RUN_FINISH);
	if (!s)
		goto fail;
	/* the texts outlive the step: no copies (stdout and stderr can be
	 * long) */
	sqlite3_bind_int64(s, 1, run_id);
	bind_static(s, 2, r->status);
	bind_static(s, 3, r->error);
	sqlite3_bind_double(s, 4, r->wall_s);
	sqlite3_bind_int(s, 5, r->exit_code);
	bind_static(s, 6, r->argv_json);
	bind_static(s, 7, r->out);
	bind_static(s, 8, r->err);
	bind_static(s, 9, r->files_json);
	bind_static(s, 10, r->knobs_applied_json);
	bind_static(s, 11, r->load_json);
	bind_static(s, 12, skip_reason_word(r->skip));
	bind_static(s, 13, r->notes && *r->notes ? r->notes : NULL);
	if (bad_finish(db, run_id, r) || step_done(db, s, "finishing run") ||
	    finished_none(db, run_id, r))
		goto fail;
	for (size_t i = 0, b = 0; i < r->nmetrics;) {
		while (r->nmetrics - i < (size_t)metric_stmts[b].rows)
			b++;
		size_t k = (size_t)metric_stmts[b].rows;
		s = stmt_all(db, metric_stmts[b].id);
		if (!s)
			goto fail;
		for (size_t j = 0; j < k; j++, i++) {
			const struct db_metric *m = &r->metrics[i];
			int c = (int)j * METRIC_COLS;
			sqlite3_bind_int64(s, c + 1, run_id);
			bind_static(s, c + 2, m->workload);
			bind_static(s, c + 3, m->name);
			sqlite3_bind_double(s, c + 4, m->value);
			bind_static(s, c + 5, m->unit);
			bind_static(s, c + 6, m->better ? m->better : "none");
			bind_static(s, c + 7, m->note);
			sqlite3_bind_int(s, c + 8, m->censored ? 1 : 0);
		}
		if (step_done(db, s, "inserting metric"))
			goto fail;
	}
	for (size_t i = 0; i < r->nhists; i++) {
		char *data = json_text(r->hists[i].data);
		s = stmt(db, STMT_HIST_INSERT);
		if (!s) {
			free(data);
			goto fail;
		}
		sqlite3_bind_int64(s, 1, run_id);
		db_bind_text(s, 2, r->hists[i].name);
		db_bind_text(s, 3, r->hists[i].unit);
		db_bind_text(s, 4, data);
		int rc = step_done(db, s, "inserting histogram");
		free(data);
		if (rc)
			goto fail;
	}
	if (r->schedstat_before && r->schedstat_after) {
		s = stmt(db, STMT_SCHEDSTAT_INSERT);
		if (!s)
			goto fail;
		sqlite3_bind_int64(s, 1, run_id);
		bind_static(s, 2, r->schedstat_before);
		bind_static(s, 3, r->schedstat_after);
		if (step_done(db, s, "inserting schedstat"))
			goto fail;
	}
	if (next_run_id > 0) {
		s = stmt(db, STMT_RUN_START);
		if (!s)
			goto fail;
		sqlite3_bind_int64(s, 1, next_run_id);
		if (step_done(db, s, "marking the next run running"))
			goto fail;
		if (sqlite3_changes(db->h) != 1) {
			db_seterr(db, "marking the next run running: run %lld does not exist",
				  (long long)next_run_id);
			goto fail;
		}
	}
	if (nested ? exec_sql(db, "RELEASE run_finish") : db_commit(db))
		goto fail;
	return 0;
fail:
	{
		char saved[1024];
		snprintf(saved, sizeof(saved), "%s", db->err);
		if (nested)
			sqlite3_exec(db->h, "ROLLBACK TO run_finish; RELEASE run_finish", NULL, NULL,
				     NULL);
		else
			db_rollback(db);
		snprintf(db->err, sizeof(db->err), "%s", saved);
	}
	return -1;
}

int db_session_reset_running(struct db *db, int64_t sid)
{
	sqlite3_stmt *s = stmt(db, STMT_RESET_RUNNING);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	return step_done(db, s, "resetting interrupted runs");
}

static int db_pending_runs_rows(struct db *db, int64_t sid, struct db_pending_run **runs, size_t *n)
{
	sqlite3_stmt *s = stmt(db, STMT_PENDING);
	size_t alloc = 0;
	*runs = NULL;
	*n = 0;
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			*runs = realloc(*runs, alloc * sizeof(**runs));
		}
		struct db_pending_run *r = &(*runs)[(*n)++];
		r->run_id = sqlite3_column_int64(s, 0);
		r->boot_id = sqlite3_column_int64(s, 1);
		r->seq = sqlite3_column_int(s, 2);
		r->round = sqlite3_column_int(s, 3);
		r->rep = sqlite3_column_int(s, 4);
		r->workload = db_dup_col(s, 5);
		r->params = db_dup_col(s, 6);
		r->knobs = db_dup_col(s, 7);
		r->cfg = sqlite3_column_int(s, 8);
		r->seed = sqlite3_column_int64(s, 9);
	}
	if (rc != SQLITE_DONE) {
		ERROR_SQLITE(db, "listing pending runs");
		return -1;
	}
	return 0;
}

int db_pending_runs(struct db *db, int64_t sid, struct db_pending_run **runs, size_t *n)
{
	int r = db_pending_runs_rows(db, sid, runs, n);
	end_reads(db);
	return r;
}

void db_pending_runs_free(struct db_pending_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(runs[i].workload);
		free(runs[i].params);
		free(runs[i].knobs);
	}
	free(runs);
}

static int db_boot_load_rows(struct db *db, int64_t boot_id, struct db_boot_row *b)
{
	sqlite3_stmt *s = stmt(db, STMT_BOOT_LOAD);
	memset(b, 0, sizeof(*b));
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, boot_id);
	if (sqlite3_step(s) != SQLITE_ROW) {
		db_seterr(db, "boot %lld not found", (long long)boot_id);
		return -1;
	}
	b->id = sqlite3_column_int64(s, 0);
	b->seq = sqlite3_column_int(s, 1);
	b->cfg = sqlite3_column_int(s, 2);
	b->kernel = db_dup_col(s, 3);
	b->preempt = db_dup_col(s, 4);
	b->cmdline = db_dup_col(s, 5);
	b->status = db_dup_col(s, 6);
	b->lava_job_id = sqlite3_column_int64(s, 7);
	b->lava_job_url = db_dup_col(s, 8);
	return 0;
}

int db_boot_load(struct db *db, int64_t boot_id, struct db_boot_row *b)
{
	int r = db_boot_load_rows(db, boot_id, b);
	end_reads(db);
	return r;
}

void db_boot_row_free(struct db_boot_row *b)
{
	free(b->kernel);
	free(b->preempt);
	free(b->cmdline);
	free(b->status);
	free(b->lava_job_url);
	memset(b, 0, sizeof(*b));
}

static int db_session_load_rows(struct db *db, int64_t sid, char **plan_json, char **plan_path, char **tag,
		    char **status)
{
	sqlite3_stmt *s = stmt(db, STMT_SESSION_LOAD);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	if (sqlite3_step(s) != SQLITE_ROW) {
		db_seterr(db, "session %lld does not exist", (long long)sid);
		return -1;
	}
	*plan_json = db_dup_col(s, 0);
	*plan_path = db_dup_col(s, 1);
	*tag = db_dup_col(s, 2);
	*status = db_dup_col(s, 3);
	return 0;
}

int db_session_load(struct db *db, int64_t sid, char **plan_json, char **plan_path, char **tag,
		    char **status)
{
	int r = db_session_load_rows(db, sid, plan_json, plan_path, tag, status);
	end_reads(db);
	return r;
}

static int db_session_counts_rows(struct db *db, int64_t sid, int *planned, int *ok, int *failed,
		      int *skipped)
{
	sqlite3_stmt *s = stmt(db, STMT_SESSION_COUNTS);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	if (sqlite3_step(s) != SQLITE_ROW) {
		ERROR_SQLITE(db, "counting runs");
		return -1;
	}
	*planned = sqlite3_column_int(s, 0);
	*ok = sqlite3_column_int(s, 1);
	*failed = sqlite3_column_int(s, 2);
	*skipped = sqlite3_column_int(s, 3);
	return 0;
}

int db_session_counts(struct db *db, int64_t sid, int *planned, int *ok, int *failed,
		      int *skipped)
{
	int r = db_session_counts_rows(db, sid, planned, ok, failed, skipped);
	end_reads(db);
	return r;
}

static int db_session_first_resumable_rows(struct db *db, int64_t sid, char **why)
{
	sqlite3_stmt *s = stmt(db, STMT_SESSION_FIRST_RESUMABLE);
	int rc;
	*why = NULL;
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*why = db_dup_col(s, 0);
		return 0;
	}
	if (rc != SQLITE_DONE) {
		ERROR_SQLITE(db, "reading the runs left for --resume");
		return -1;
	}
	return 0;
}

int db_session_first_resumable(struct db *db, int64_t sid, char **why)
{
	int r = db_session_first_resumable_rows(db, sid, why);
	end_reads(db);
	return r;
}

static int db_lab_resolve_rows(struct db *db, const char *spec, char **id)
{
	int last = !strcmp(spec, "last");
	size_t digits = strspn(spec, "0123456789");
	if (!last && !(digits && !spec[digits])) {
		*id = strdup(spec);     /* the lab id itself */
		return 0;
	}
	sqlite3_stmt *s = stmt(db, last ? STMT_LAB_LAST : STMT_LAB_OF_SESSION);
	if (!s)
		return -1;
	if (!last)
		sqlite3_bind_int64(s, 1, strtoll(spec, NULL, 10));
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
		*id = db_dup_col(s, 0);
		return 0;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		ERROR_SQLITE(db, "finding the lab");
		return -1;
	}
	db_seterr(db, "%s", last ? "no session in this database is part of a lab"
				 : "no such session, or it is not part of a lab");
	return -1;
}

int db_lab_resolve(struct db *db, const char *spec, char **id)
{
	*id = NULL;
	int r = db_lab_resolve_rows(db, spec, id);
	end_reads(db);
	return r;
}

static int db_lab_sessions_rows(struct db *db, const char *id, struct db_lab_session **out,
				size_t *n)
{
	sqlite3_stmt *s = stmt(db, STMT_LAB_SESSIONS);
	size_t alloc = 0;
	if (!s)
		return -1;
	db_bind_text(s, 1, id);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			struct db_lab_session *grown = realloc(*out, alloc * sizeof(**out));
			if (!grown) {
				db_seterr(db, "listing the sessions of a lab: out of memory");
				return -1;
			}
			*out = grown;
		}
		struct db_lab_session *m = &(*out)[(*n)++];
		m->sid = sqlite3_column_int64(s, 0);
		m->plan_json = db_dup_col(s, 1);
		m->plan_path = db_dup_col(s, 2);
		m->label = db_dup_col(s, 3);
	}
	if (rc != SQLITE_DONE) {
		ERROR_SQLITE(db, "listing the sessions of a lab");
		return -1;
	}
	return 0;
}

int db_lab_sessions(struct db *db, const char *id, struct db_lab_session **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	int r = db_lab_sessions_rows(db, id, out, n);
	end_reads(db);
	if (r) {
		db_lab_sessions_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return r;
}

void db_lab_sessions_free(struct db_lab_session *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].plan_json);
		free(s[i].plan_path);
		free(s[i].label);
	}
	free(s);
}

int db_query(struct db *db, const char *sql, db_row_fn fn, void *ctx)
{
	sqlite3_stmt *s;
	const char *tail = sql;
	while (tail && *tail) {
		const char *stmt = tail;
		if (sqlite3_prepare_v2(db->h, stmt, -1, &s, &tail) != SQLITE_OK) {
			/* the user's SQL: where in it, not where in ours */
			int off = sqlite3_error_offset(db->h);
			if (off >= 0)
				db_seterr(db, "%s (at character %d of the statement: \"%.30s\")",
					  sqlite3_errmsg(db->h), off + 1, stmt + off);
			else
				db_seterr(db, "%s", sqlite3_errmsg(db->h));
			return -1;
		}
		if (!s)
			break;
		int n = sqlite3_column_count(s);
		const char **names = calloc((size_t)n + 1, sizeof(char *));
		const char **vals = calloc((size_t)n + 1, sizeof(char *));
		for (int i = 0; i < n; i++)
			names[i] = sqlite3_column_name(s, i);
		int rc, ret = 0;
		if (n > 0 && fn && fn(ctx, n, names, NULL))
			ret = 1;
		while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
			for (int i = 0; i < n; i++)
				vals[i] = (const char *)sqlite3_column_text(s, i);
			if (fn && fn(ctx, n, names, vals)) {
				ret = 1;
				break;
			}
		}
		if (!ret && rc != SQLITE_ROW && rc != SQLITE_DONE) {
			ERROR_SQLITE(db, "query");
			ret = -1;
		}
		free(names);
		free(vals);
		sqlite3_finalize(s);
		if (ret < 0)
			return -1;
		if (ret > 0)
			break;
	}
	return 0;
}

/* ---- the nightly's reads of sessions (db.h) --------------------------- */

void db_session_brief_free(struct db_session_brief *b)
{
	char **f[] = { &b->plan, &b->tag, &b->commit, &b->git_dir, &b->status, &b->machine };
	for (size_t i = 0; b && i < sizeof(f) / sizeof(f[0]); i++)
		free(*f[i]);
	if (b)
		memset(b, 0, sizeof(*b));
}

int db_session_brief(struct db *db, int64_t id, struct db_session_brief *out)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *s = db_prep(db,
		"SELECT s.name, s.tag, s.status,"
		" (SELECT b.machine_id FROM boot b WHERE b.session_id = s.id AND b.status = 'ok'"
		"   ORDER BY b.seq LIMIT 1),"
		" (SELECT coalesce(b.kernel_commit, k.git_commit) FROM boot b LEFT JOIN kernel k"
		"   ON k.id = b.kernel_id WHERE b.session_id = s.id AND b.status = 'ok'"
		"   ORDER BY b.seq LIMIT 1),"
		" coalesce(json_extract(s.plan_json, '$.matrix.kernel.git'),"
		"   json_extract(s.plan_json, '$.matrix.kernel[0].git')),"
		" (SELECT m.name FROM boot b JOIN machine m ON m.id = b.machine_id"
		"   WHERE b.session_id = s.id AND b.status = 'ok' ORDER BY b.seq LIMIT 1),"
		" EXISTS (SELECT 1 FROM run r JOIN metric mv ON mv.run_id = r.id"
		"   WHERE r.session_id = s.id)"
		" FROM session s WHERE s.id = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		out->id = id;
		out->plan = db_dup_col(s, 0);
		out->tag = db_dup_col(s, 1);
		out->status = db_dup_col(s, 2);
		out->machine_id = sqlite3_column_int64(s, 3);
		out->commit = db_dup_col(s, 4);
		out->git_dir = db_dup_col(s, 5);
		out->machine = db_dup_col(s, 6);
		out->has_results = sqlite3_column_int(s, 7);
	} else {
		db_seterr(db, "no session %lld", (long long)id);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int64_t db_session_by_tag(struct db *db, const char *tag)
{
	sqlite3_stmt *s = db_prep(db, "SELECT coalesce(max(id), 0) FROM session WHERE tag = ?");
	if (!s)
		return -1;
	db_bind_text(s, 1, tag);
	return db_scalar(db, s);
}

int db_nightly_sessions(struct db *db, const char *plan, int64_t machine_id, int64_t from,
			int64_t before, size_t max, const char *but_tag, int64_t **ids,
			size_t *n)
{
	*ids = NULL;
	*n = 0;
	static char sql[1024];
	pthread_mutex_lock(&made_sql_mu);
	if (!sql[0])
		snprintf(sql, sizeof(sql),
		/* one session a night: a tag that two sessions of the plan on
		   the machine carry (a night run twice before the nightly
		   refused it) counts once, by its newest session */
		"SELECT max(s.id) FROM session s WHERE s.name = ?1 AND s.nightly = 1"
		" AND s.id < ?3 AND s.id >= ?2 AND (?6 IS NULL OR s.tag != ?6)"
		" AND %s"
		" AND EXISTS (SELECT 1 FROM boot b WHERE b.session_id = s.id AND b.status = 'ok'"
		"   AND b.machine_id = ?4)"
		" AND EXISTS (SELECT 1 FROM run r JOIN metric mv ON mv.run_id = r.id"
		"   WHERE r.session_id = s.id)"
		" GROUP BY coalesce(s.tag, '#' || s.id) ORDER BY 1 DESC LIMIT ?5",
		session_ended_sql("s"));
	pthread_mutex_unlock(&made_sql_mu);
	sqlite3_stmt *s = db_prep(db, sql);
	if (!s)
		return -1;
	db_bind_text(s, 1, plan);
	sqlite3_bind_int64(s, 2, from);
	sqlite3_bind_int64(s, 3, before);
	sqlite3_bind_int64(s, 4, machine_id);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)max);
	db_bind_text(s, 6, but_tag);
	return db_collect_ids(db, s, ids, n);
}

char *db_session_runs_text(struct db *db, int64_t id)
{
	sqlite3_stmt *s = db_prep(db, "SELECT group_concat(n || ' ' || status, ', ') FROM (SELECT"
				   " status, count(*) AS n FROM run WHERE session_id = ?"
				   " GROUP BY status ORDER BY status)");
	if (!s)
		return NULL;
	sqlite3_bind_int64(s, 1, id);
	char *t = NULL;
	if (sqlite3_step(s) == SQLITE_ROW)
		t = db_dup_col(s, 0);
	if (!t)
		t = strdup("no runs");
	sqlite3_finalize(s);
	return t;
}

int db_sessions_by_tag(struct db *db, const char *tag, int64_t **ids, size_t *n)
{
	*ids = NULL;
	*n = 0;
	sqlite3_stmt *s = db_prep(db, "SELECT id FROM session WHERE tag = ? ORDER BY id");
	if (!s)
		return -1;
	db_bind_text(s, 1, tag);
	return db_collect_ids(db, s, ids, n);
}

int db_session_has_metric(struct db *db, int64_t sid, const char *metric)
{
	sqlite3_stmt *s = db_prep(db, "SELECT EXISTS (SELECT 1 FROM metric m JOIN run r"
				      " ON r.id = m.run_id WHERE r.session_id = ?1 AND"
				      " (m.name = ?2 OR m.workload || '.' || m.name = ?2))");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, sid);
	db_bind_text(s, 2, metric);
	return db_scalar(db, s);
}
