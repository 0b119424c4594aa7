/*
 * The store of `schedlab bisect` (see bisect_store.h): the bisect and bisect_step
 * tables and the lookup of the sessions that measured a commit. Statements
 * are prepared per call and finalized before returning, every value bound.
 */
#include "db/bisect_store.h"
#include "db/db_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void db_bisect_free(struct db_bisect *b)
{
	if (!b)
		return;
	char **f[] = { &b->inputs, &b->plan_path, &b->plan_json, &b->git_dir, &b->good,
		       &b->bad, &b->good_ref, &b->bad_ref, &b->workload, &b->metric,
		       &b->where_sel, &b->status, &b->result, &b->created_at, &b->finished_at };
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		free(*f[i]);
		*f[i] = NULL;
	}
}

static int64_t find_inputs(struct db *db, const char *inputs)
{
	sqlite3_stmt *s = db_prep(db, "SELECT id FROM bisect WHERE inputs = ?");
	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, inputs, -1, SQLITE_TRANSIENT);
	int64_t id = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	return id;
}

int64_t db_bisect_create(struct db *db, const struct db_bisect *b, int *existed)
{
	*existed = 0;
	int64_t id = find_inputs(db, b->inputs);
	if (id) {
		*existed = id > 0;
		return id;
	}
	sqlite3_stmt *s = db_prep(db,
		"INSERT INTO bisect (inputs, plan_path, plan_json, git_dir, good, bad, good_ref,"
		" bad_ref, workload, metric, where_sel, repetitions, max_repetitions, max_steps,"
		" alpha, threshold_pct, session_runs, threshold_rule, drift_guard, looks_rule)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!s)
		return -1;
	const char *t[] = { b->inputs, b->plan_path, b->plan_json, b->git_dir, b->good, b->bad,
			    b->good_ref, b->bad_ref, b->workload, b->metric,
			    b->where_sel ? b->where_sel : "" };
	for (int i = 0; i < 11; i++)
		db_bind_text(s, i + 1, t[i]);
	sqlite3_bind_int(s, 12, b->repetitions);
	sqlite3_bind_int(s, 13, b->max_repetitions);
	sqlite3_bind_int(s, 14, b->max_steps);
	sqlite3_bind_double(s, 15, b->alpha);
	sqlite3_bind_double(s, 16, b->threshold_pct);
	sqlite3_bind_int(s, 17, b->session_runs);
	sqlite3_bind_text(s, 18, b->threshold_percent ? "percent" : "ratio", -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 19, b->drift_guard != 0);
	sqlite3_bind_text(s, 20, b->looks_exact ? "exact" : "bonferroni", -1, SQLITE_STATIC);
	id = -1;
	if (sqlite3_step(s) == SQLITE_DONE)
		id = sqlite3_last_insert_rowid(db_sqlite(db));
	else
		db_seterr(db, "storing the bisection: %s", sqlite3_errmsg(db_sqlite(db)));
	sqlite3_finalize(s);
	return id;
}

int db_bisect_load(struct db *db, const char *spec, struct db_bisect *out)
{
	memset(out, 0, sizeof(*out));
	const char *cols = "SELECT id, inputs, plan_path, plan_json, git_dir, good, bad, good_ref,"
			   " bad_ref, workload, metric, where_sel, repetitions, max_repetitions,"
			   " max_steps, alpha, threshold_pct, status, result, created_at,"
			   " finished_at, session_runs, threshold_rule = 'percent', drift_guard,"
			   " looks_rule = 'exact' FROM bisect";
	char sql[512];
	long long want = 0;
	if (!strcmp(spec, "last")) {
		snprintf(sql, sizeof(sql), "%s ORDER BY id DESC LIMIT 1", cols);
	} else {
		char *end;
		want = strtoll(spec, &end, 10);
		if (*end || want <= 0 || !*spec) {
			db_seterr(db, "bisection \"%s\": expected a bisection number or \"last\"",
				  spec);
			return -1;
		}
		snprintf(sql, sizeof(sql), "%s WHERE id = ?", cols);
	}
	sqlite3_stmt *s = db_prep(db, sql);
	if (!s)
		return -1;
	if (want)
		sqlite3_bind_int64(s, 1, want);
	int rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		if (rc == SQLITE_DONE && want)
			db_seterr(db, "bisection %lld does not exist", want);
		else if (rc == SQLITE_DONE)
			db_seterr(db, "there is no bisection in this database");
		else
			db_seterr(db, "reading bisections: %s", sqlite3_errmsg(db_sqlite(db)));
		sqlite3_finalize(s);
		return -1;
	}
	out->id = sqlite3_column_int64(s, 0);
	char **f[] = { &out->inputs, &out->plan_path, &out->plan_json, &out->git_dir, &out->good,
		       &out->bad, &out->good_ref, &out->bad_ref, &out->workload, &out->metric,
		       &out->where_sel };
	for (int i = 0; i < 11; i++)
		*f[i] = db_dup_col(s, i + 1);
	out->repetitions = sqlite3_column_int(s, 12);
	out->max_repetitions = sqlite3_column_int(s, 13);
	out->max_steps = sqlite3_column_int(s, 14);
	out->alpha = sqlite3_column_double(s, 15);
	out->threshold_pct = sqlite3_column_double(s, 16);
	out->status = db_dup_col(s, 17);
	out->result = db_dup_col(s, 18);
	out->created_at = db_dup_col(s, 19);
	out->finished_at = db_dup_col(s, 20);
	out->session_runs = sqlite3_column_int(s, 21);
	out->threshold_percent = sqlite3_column_int(s, 22);
	out->drift_guard = sqlite3_column_int(s, 23);
	out->looks_exact = sqlite3_column_int(s, 24);
	sqlite3_finalize(s);
	return 0;
}

int db_bisect_finish(struct db *db, int64_t id, const char *status, const char *result_json)
{
	sqlite3_stmt *s = db_prep(db, "UPDATE bisect SET status = ?2, result = ?3, finished_at ="
				   " CASE WHEN ?2 = 'running' THEN NULL"
				   " ELSE strftime('%Y-%m-%dT%H:%M:%SZ','now') END WHERE id = ?1");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, status, -1, SQLITE_TRANSIENT);
	db_bind_text(s, 3, result_json);
	int ok = sqlite3_step(s) == SQLITE_DONE;
	if (!ok)
		db_seterr(db, "updating bisection %lld: %s", (long long)id,
			  sqlite3_errmsg(db_sqlite(db)));
	sqlite3_finalize(s);
	return ok ? 0 : -1;
}

int db_bisect_step_put(struct db *db, int64_t id, const struct db_bisect_step *st)
{
	sqlite3_stmt *s = db_prep(db, "INSERT OR REPLACE INTO bisect_step (bisect_id, seq, commit_id,"
				   " role, verdict, detail) VALUES (?,?,?,?,?,?)");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, st->seq);
	db_bind_text(s, 3, st->commit);
	db_bind_text(s, 4, st->role);
	db_bind_text(s, 5, st->verdict);
	db_bind_text(s, 6, st->detail);
	int ok = sqlite3_step(s) == SQLITE_DONE;
	if (!ok)
		db_seterr(db, "storing step %d of bisection %lld: %s", st->seq, (long long)id,
			  sqlite3_errmsg(db_sqlite(db)));
	sqlite3_finalize(s);
	return ok ? 0 : -1;
}

int db_bisect_steps(struct db *db, int64_t id, struct db_bisect_step **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s = db_prep(db, "SELECT seq, commit_id, role, verdict, detail FROM bisect_step"
				   " WHERE bisect_id = ? ORDER BY seq");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	size_t alloc = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			struct db_bisect_step *nv = realloc(*out, alloc * sizeof(**out));
			if (!nv)
				break;
			*out = nv;
		}
		struct db_bisect_step *st = &(*out)[(*n)++];
		st->seq = sqlite3_column_int(s, 0);
		st->commit = db_dup_col(s, 1);
		st->role = db_dup_col(s, 2);
		st->verdict = db_dup_col(s, 3);
		st->detail = db_dup_col(s, 4);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_seterr(db, "reading the steps of bisection %lld: %s", (long long)id,
			  rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(db_sqlite(db)));
		db_bisect_steps_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void db_bisect_steps_free(struct db_bisect_step *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].commit);
		free(s[i].role);
		free(s[i].verdict);
		free(s[i].detail);
	}
	free(s);
}

int db_bisect_sessions(struct db *db, const char *tag, const char *commit,
		       struct db_bisect_session **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	/* matrix.kernel is one object or an array of one; the runs to do are
	   db/runstate.c's (also those whose boot failed: docs/bisect.md, a
	   --resume tries that boot once more) */
	static char sql[1024];
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	if (!sql[0])
		snprintf(sql, sizeof(sql),
			 "SELECT s.id, s.status, (SELECT count(*) FROM run r WHERE r.session_id = s.id"
			 "   AND %s)"
			 " FROM session s WHERE s.tag = ?1 AND json_valid(s.plan_json)"
			 " AND COALESCE(json_extract(s.plan_json, '$.matrix.kernel.commit'),"
			 "              json_extract(s.plan_json, '$.matrix.kernel[0].commit')) = ?2"
			 " ORDER BY s.id", run_class_sql(RUN_TODO, "r"));
	pthread_mutex_unlock(&mu);
	sqlite3_stmt *s = db_prep(db, sql);
	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, tag, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, commit, -1, SQLITE_TRANSIENT);
	size_t alloc = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			struct db_bisect_session *nv = realloc(*out, alloc * sizeof(**out));
			if (!nv)
				break;
			*out = nv;
		}
		struct db_bisect_session *e = &(*out)[(*n)++];
		e->id = sqlite3_column_int64(s, 0);
		e->status = db_dup_col(s, 1);
		e->todo = sqlite3_column_int(s, 2);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_seterr(db, "reading the sessions of a bisection: %s",
			  rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(db_sqlite(db)));
		db_bisect_sessions_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void db_bisect_sessions_free(struct db_bisect_session *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].status);
	free(s);
}

int64_t db_bisect_by_plan_path(struct db *db, const char *plan_path)
{
	sqlite3_stmt *s = db_prep(db, "SELECT coalesce(max(id), 0) FROM bisect WHERE plan_path = ?");
	if (!s)
		return -1;
	db_bind_text(s, 1, plan_path);
	return db_scalar(db, s);
}
