/*
 * The alerts' store (alert_store.h): groups found by their range, alerts
 * and their events, every status change checked against the life cycle
 * (alertstate.c) inside the transaction that writes it. Statements are
 * prepared per call and finalized before returning, every value bound.
 */
#include "db/alert_store.h"
#include "db/db_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *dup_col(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? strdup((const char *)t) : NULL;
}

static double real_col(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

static void bind_real(sqlite3_stmt *s, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

static void bind_id(sqlite3_stmt *s, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

static sqlite3_stmt *prep(struct db *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &s, NULL) != SQLITE_OK) {
		db_seterr(db, "alert store: preparing \"%.80s\": %s", sql,
			  sqlite3_errmsg(db_sqlite(db)));
		sqlite3_finalize(s);
		return NULL;
	}
	return s;
}

/* step a statement that returns no row, finalize it: 0 or -1 */
static int run(struct db *db, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		db_seterr(db, "alert store: %s", sqlite3_errmsg(db_sqlite(db)));
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* step s to its end collecting column 0 as ids, finalize it: 0, or -1 with
 * the message (and nothing in *ids) */
static int collect_ids(struct db *db, sqlite3_stmt *s, int64_t **ids, size_t *n)
{
	size_t alloc = 0;
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
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_seterr(db, "alert store: %s", sqlite3_errmsg(db_sqlite(db)));
		free(*ids);
		*ids = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void db_alert_group_free(struct db_alert_group *g)
{
	if (!g)
		return;
	char **f[] = { &g->plan, &g->range_key, &g->git_dir, &g->good_commit, &g->bad_commit,
		       &g->bisect_plan, &g->culprit, &g->why, &g->created_at, &g->updated_at };
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		free(*f[i]);
		*f[i] = NULL;
	}
}

void db_alert_free(struct db_alert *a)
{
	if (!a)
		return;
	char **f[] = { &a->kind, &a->series_key, &a->series_label, &a->series_where,
		       &a->workload, &a->metric, &a->unit, &a->detector, &a->baseline,
		       &a->created_at, &a->updated_at };
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		free(*f[i]);
		*f[i] = NULL;
	}
}

void db_alerts_free(struct db_alert *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		db_alert_free(&a[i]);
	free(a);
}

#define GROUP_COLS                                                                         \
	"id, plan, coalesce(machine_id, 0), range_key, good_session, bad_session, git_dir," \
	" good_commit, bad_commit, coalesce(ncommits, -1), coalesce(bisect_id, 0),"         \
	" bisect_plan, culprit, why, created_at, updated_at"

static void read_group(sqlite3_stmt *s, struct db_alert_group *g)
{
	memset(g, 0, sizeof(*g));
	g->id = sqlite3_column_int64(s, 0);
	g->plan = dup_col(s, 1);
	g->machine_id = sqlite3_column_int64(s, 2);
	g->range_key = dup_col(s, 3);
	g->good_session = sqlite3_column_int64(s, 4);
	g->bad_session = sqlite3_column_int64(s, 5);
	g->git_dir = dup_col(s, 6);
	g->good_commit = dup_col(s, 7);
	g->bad_commit = dup_col(s, 8);
	g->ncommits = sqlite3_column_int(s, 9);
	g->bisect_id = sqlite3_column_int64(s, 10);
	g->bisect_plan = dup_col(s, 11);
	g->culprit = dup_col(s, 12);
	g->why = dup_col(s, 13);
	g->created_at = dup_col(s, 14);
	g->updated_at = dup_col(s, 15);
}

int64_t db_alert_group_find_or_add(struct db *db, const struct db_alert_group *g, int *existed)
{
	*existed = 0;
	sqlite3_stmt *s = prep(db, "SELECT id FROM alert_group WHERE plan = ?1 AND"
				   " coalesce(machine_id, 0) = ?2 AND range_key = ?3");
	if (!s)
		return -1;
	bind_text(s, 1, g->plan);
	sqlite3_bind_int64(s, 2, g->machine_id);
	bind_text(s, 3, g->range_key);
	int rc = sqlite3_step(s);
	int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_seterr(db, "alert store: %s", sqlite3_errmsg(db_sqlite(db)));
		return -1;
	}
	if (id) {
		*existed = 1;
		return id;
	}
	s = prep(db, "INSERT INTO alert_group (plan, machine_id, range_key, good_session,"
		     " bad_session, git_dir, good_commit, bad_commit, ncommits)"
		     " VALUES (?,?,?,?,?,?,?,?,?)");
	if (!s)
		return -1;
	bind_text(s, 1, g->plan);
	bind_id(s, 2, g->machine_id);
	bind_text(s, 3, g->range_key);
	sqlite3_bind_int64(s, 4, g->good_session);
	sqlite3_bind_int64(s, 5, g->bad_session);
	bind_text(s, 6, g->git_dir);
	bind_text(s, 7, g->good_commit);
	bind_text(s, 8, g->bad_commit);
	if (g->ncommits >= 0)
		sqlite3_bind_int(s, 9, g->ncommits);
	else
		sqlite3_bind_null(s, 9);
	if (run(db, s))
		return -1;
	return sqlite3_last_insert_rowid(db_sqlite(db));
}

int db_alert_group_get(struct db *db, int64_t id, struct db_alert_group *out)
{
	sqlite3_stmt *s = prep(db, "SELECT " GROUP_COLS " FROM alert_group WHERE id = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		read_group(s, out);
	else
		db_seterr(db, "no alert group %lld", (long long)id);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int db_alert_group_set_bisect(struct db *db, int64_t id, int64_t bisect_id, const char *plan)
{
	sqlite3_stmt *s = prep(db, "UPDATE alert_group SET bisect_id = ?2,"
				   " bisect_plan = coalesce(?3, bisect_plan),"
				   " updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	bind_id(s, 2, bisect_id);
	bind_text(s, 3, plan);
	return run(db, s);
}

int db_alert_group_set_result(struct db *db, int64_t id, const char *culprit, const char *why)
{
	sqlite3_stmt *s = prep(db, "UPDATE alert_group SET culprit = coalesce(?2, culprit),"
				   " why = coalesce(?3, why),"
				   " updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	bind_text(s, 2, culprit);
	bind_text(s, 3, why);
	return run(db, s);
}

static int add_event(struct db *db, int64_t alert, const char *from, const char *to,
		     enum alert_actor by, const char *note, int64_t session)
{
	sqlite3_stmt *s = prep(db, "INSERT INTO alert_event (alert_id, from_status, to_status,"
				   " actor, session, note) VALUES (?,?,?,?,?,?)");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, alert);
	bind_text(s, 2, from);
	bind_text(s, 3, to);
	bind_text(s, 4, by == ALERT_BY_PERSON ? "person" : "nightly");
	bind_id(s, 5, session);
	bind_text(s, 6, note);
	return run(db, s);
}

int64_t db_alert_add(struct db *db, const struct db_alert *a, const char *note)
{
	if (db_begin(db))
		return -1;
	sqlite3_stmt *s = prep(db,
		"INSERT INTO alert (group_id, kind, series_key, series_label, series_where,"
		" workload, metric, unit, detector, good_session, bad_session, baseline,"
		" base_value, value, change_pct, ci_lo, ci_hi, p, last_seen_session)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!s) {
		db_rollback(db);
		return -1;
	}
	sqlite3_bind_int64(s, 1, a->group_id);
	bind_text(s, 2, a->kind);
	bind_text(s, 3, a->series_key);
	bind_text(s, 4, a->series_label ? a->series_label : "");
	bind_text(s, 5, a->series_where ? a->series_where : "");
	bind_text(s, 6, a->workload);
	bind_text(s, 7, a->metric);
	bind_text(s, 8, a->unit);
	bind_text(s, 9, a->detector);
	sqlite3_bind_int64(s, 10, a->good_session);
	sqlite3_bind_int64(s, 11, a->bad_session);
	bind_text(s, 12, a->baseline ? a->baseline : "[]");
	bind_real(s, 13, a->base_value);
	bind_real(s, 14, a->value);
	bind_real(s, 15, a->change_pct);
	bind_real(s, 16, a->ci_lo);
	bind_real(s, 17, a->ci_hi);
	bind_real(s, 18, a->p);
	sqlite3_bind_int64(s, 19, a->bad_session);
	if (run(db, s)) {
		db_rollback(db);
		return -1;
	}
	int64_t id = sqlite3_last_insert_rowid(db_sqlite(db));
	if (add_event(db, id, NULL, "new", ALERT_BY_ROBOT, note, a->bad_session) || db_commit(db)) {
		db_rollback(db);
		return -1;
	}
	return id;
}

#define ALERT_COLS                                                                           \
	"id, group_id, kind, status, series_key, series_label, series_where, workload, metric," \
	" unit, detector, good_session, bad_session, baseline, base_value, value, change_pct,"  \
	" ci_lo, ci_hi, p, coalesce(last_seen_session, 0), coalesce(fixed_session, 0),"        \
	" created_at, updated_at"

static void read_alert(sqlite3_stmt *s, struct db_alert *a)
{
	memset(a, 0, sizeof(*a));
	a->id = sqlite3_column_int64(s, 0);
	a->group_id = sqlite3_column_int64(s, 1);
	a->kind = dup_col(s, 2);
	const char *st = (const char *)sqlite3_column_text(s, 3);
	int k = st ? alert_state_parse(st) : -1;
	a->status = k < 0 ? ALERT_NEW : (enum alert_state)k;
	a->series_key = dup_col(s, 4);
	a->series_label = dup_col(s, 5);
	a->series_where = dup_col(s, 6);
	a->workload = dup_col(s, 7);
	a->metric = dup_col(s, 8);
	a->unit = dup_col(s, 9);
	a->detector = dup_col(s, 10);
	a->good_session = sqlite3_column_int64(s, 11);
	a->bad_session = sqlite3_column_int64(s, 12);
	a->baseline = dup_col(s, 13);
	a->base_value = real_col(s, 14);
	a->value = real_col(s, 15);
	a->change_pct = real_col(s, 16);
	a->ci_lo = real_col(s, 17);
	a->ci_hi = real_col(s, 18);
	a->p = real_col(s, 19);
	a->last_seen_session = sqlite3_column_int64(s, 20);
	a->fixed_session = sqlite3_column_int64(s, 21);
	a->created_at = dup_col(s, 22);
	a->updated_at = dup_col(s, 23);
}

int db_alert_get(struct db *db, int64_t id, struct db_alert *out)
{
	sqlite3_stmt *s = prep(db, "SELECT " ALERT_COLS " FROM alert WHERE id = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		read_alert(s, out);
	else
		db_seterr(db, "no alert %lld (schedlab alerts lists them)", (long long)id);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int db_alert_move(struct db *db, int64_t id, enum alert_state to, enum alert_actor by,
		  const char *note, int64_t session)
{
	if (db_begin(db))
		return -1;
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		db_rollback(db);
		return -1;
	}
	char why[400];
	if (!alert_transition_ok(a.status, to, by, why, sizeof(why))) {
		db_rollback(db);
		db_seterr(db, "alert %lld: %s", (long long)id, why);
		db_alert_free(&a);
		return -1;
	}
	enum alert_state dest = to;
	if (to == ALERT_NEW) {
		/* reopening: back to what the robot knew of it */
		struct db_alert_group g;
		if (db_alert_group_get(db, a.group_id, &g)) {
			db_rollback(db);
			db_alert_free(&a);
			return -1;
		}
		if (g.culprit)
			dest = ALERT_CULPRIT;
		db_alert_group_free(&g);
	}
	sqlite3_stmt *s = prep(db, "UPDATE alert SET status = ?2, fixed_session = ?3,"
				   " updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1");
	int rc = -1;
	if (s) {
		sqlite3_bind_int64(s, 1, id);
		bind_text(s, 2, alert_state_word(dest));
		bind_id(s, 3, dest == ALERT_FIXED ? session : 0);
		rc = run(db, s);
	}
	if (!rc)
		rc = add_event(db, id, alert_state_word(a.status), alert_state_word(dest), by, note,
			       session);
	if (!rc)
		rc = db_commit(db);
	if (rc)
		db_rollback(db);
	db_alert_free(&a);
	return rc;
}

int db_alert_seen(struct db *db, int64_t id, int64_t session)
{
	sqlite3_stmt *s = prep(db, "UPDATE alert SET last_seen_session = max(coalesce("
				   "last_seen_session, 0), ?2) WHERE id = ?1");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, session);
	return run(db, s);
}

int db_alerts_list(struct db *db, const struct db_alert_filter *f, struct db_alert **out,
		   size_t *n)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s = prep(db,
		"SELECT " ALERT_COLS " FROM alert a WHERE"
		" (?1 = -1 OR (?1 = ?10 AND status IN ('new', 'bisecting', 'culprit', 'unresolved',"
		"   'acknowledged')) OR status = ?2)"
		" AND (?3 IS NULL OR EXISTS (SELECT 1 FROM alert_group g JOIN machine m"
		"   ON m.id = g.machine_id WHERE g.id = a.group_id AND m.name = ?3))"
		" AND (?4 IS NULL OR metric = ?4 OR workload || '.' || metric = ?4)"
		" AND (?5 IS NULL OR created_at >= ?5)"
		" AND (?6 IS NULL OR EXISTS (SELECT 1 FROM alert_group g WHERE g.id = a.group_id"
		"   AND g.plan = ?6))"
		" AND (?7 = 0 OR EXISTS (SELECT 1 FROM alert_group g WHERE g.id = a.group_id"
		"   AND g.machine_id = ?7))"
		" AND (?8 = 0 OR group_id = ?8)"
		" AND (?9 IS NULL OR series_key = ?9)"
		" ORDER BY id");
	if (!s)
		return -1;
	sqlite3_bind_int(s, 1, f->status < 0 ? -1 : f->status);
	bind_text(s, 2, f->status >= 0 && f->status < ALERT_NSTATES ? alert_state_word(f->status)
								     : NULL);
	bind_text(s, 3, f->machine);
	bind_text(s, 4, f->metric);
	bind_text(s, 5, f->since);
	bind_text(s, 6, f->plan);
	sqlite3_bind_int64(s, 7, f->machine_id);
	sqlite3_bind_int64(s, 8, f->group_id);
	bind_text(s, 9, f->series_key);
	sqlite3_bind_int(s, 10, ALERT_NSTATES);
	size_t alloc = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			struct db_alert *t = realloc(*out, alloc * sizeof(**out));
			if (!t) {
				rc = SQLITE_NOMEM;
				break;
			}
			*out = t;
		}
		read_alert(s, &(*out)[(*n)++]);
	}
	if (rc != SQLITE_DONE) {
		db_seterr(db, "alert store: %s", sqlite3_errmsg(db_sqlite(db)));
		sqlite3_finalize(s);
		db_alerts_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	sqlite3_finalize(s);
	return 0;
}

int db_alert_events(struct db *db, int64_t alert_id, struct db_alert_event **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s = prep(db, "SELECT at, from_status, to_status, actor, note,"
				   " coalesce(session, 0) FROM alert_event WHERE alert_id = ?"
				   " ORDER BY id");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, alert_id);
	size_t alloc = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			struct db_alert_event *t = realloc(*out, alloc * sizeof(**out));
			if (!t) {
				rc = SQLITE_NOMEM;
				break;
			}
			*out = t;
		}
		struct db_alert_event *e = &(*out)[(*n)++];
		e->at = dup_col(s, 0);
		e->from_status = dup_col(s, 1);
		e->to_status = dup_col(s, 2);
		e->actor = dup_col(s, 3);
		e->note = dup_col(s, 4);
		e->session = sqlite3_column_int64(s, 5);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_seterr(db, "alert store: %s", sqlite3_errmsg(db_sqlite(db)));
		db_alert_events_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void db_alert_events_free(struct db_alert_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].at);
		free(e[i].from_status);
		free(e[i].to_status);
		free(e[i].actor);
		free(e[i].note);
	}
	free(e);
}

int db_alert_groups_with(struct db *db, enum alert_state st, int64_t **ids, size_t *n)
{
	*ids = NULL;
	*n = 0;
	sqlite3_stmt *s = prep(db, "SELECT DISTINCT group_id FROM alert WHERE status = ?"
				   " ORDER BY group_id");
	if (!s)
		return -1;
	bind_text(s, 1, alert_state_word(st));
	return collect_ids(db, s, ids, n);
}

/* ---- the nightly's reads ------------------------------------------------ */

void db_session_brief_free(struct db_session_brief *b)
{
	if (!b)
		return;
	free(b->plan);
	free(b->tag);
	free(b->commit);
	free(b->git_dir);
	free(b->status);
	free(b->machine);
	memset(b, 0, sizeof(*b));
}

int db_session_brief(struct db *db, int64_t id, struct db_session_brief *out)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *s = prep(db,
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
		out->plan = dup_col(s, 0);
		out->tag = dup_col(s, 1);
		out->status = dup_col(s, 2);
		out->machine_id = sqlite3_column_int64(s, 3);
		out->commit = dup_col(s, 4);
		out->git_dir = dup_col(s, 5);
		out->machine = dup_col(s, 6);
		out->has_results = sqlite3_column_int(s, 7);
	} else {
		db_seterr(db, "no session %lld", (long long)id);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int64_t db_session_by_tag(struct db *db, const char *tag)
{
	sqlite3_stmt *s = prep(db, "SELECT coalesce(max(id), 0) FROM session WHERE tag = ?");
	if (!s)
		return -1;
	bind_text(s, 1, tag);
	int64_t id = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	if (id < 0)
		db_seterr(db, "alert store: %s", sqlite3_errmsg(db_sqlite(db)));
	sqlite3_finalize(s);
	return id;
}

int db_nightly_sessions(struct db *db, const char *plan, int64_t machine_id, int64_t from,
			int64_t before, size_t max, const char *but_tag, int64_t **ids,
			size_t *n)
{
	*ids = NULL;
	*n = 0;
	sqlite3_stmt *s = prep(db,
		"SELECT s.id FROM session s WHERE s.name = ?1 AND s.nightly = 1"
		" AND s.id < ?3 AND s.id >= ?2 AND (?6 IS NULL OR s.tag != ?6)"
		" AND EXISTS (SELECT 1 FROM boot b WHERE b.session_id = s.id AND b.status = 'ok'"
		"   AND b.machine_id = ?4)"
		" AND EXISTS (SELECT 1 FROM run r JOIN metric mv ON mv.run_id = r.id"
		"   WHERE r.session_id = s.id)"
		" ORDER BY s.id DESC LIMIT ?5");
	if (!s)
		return -1;
	bind_text(s, 1, plan);
	sqlite3_bind_int64(s, 2, from);
	sqlite3_bind_int64(s, 3, before);
	sqlite3_bind_int64(s, 4, machine_id);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)max);
	bind_text(s, 6, but_tag);
	return collect_ids(db, s, ids, n);
}

int64_t db_alert_expected_since(struct db *db, const char *plan, int64_t machine_id)
{
	sqlite3_stmt *s = prep(db, "SELECT coalesce(max(a.bad_session), 0) FROM alert a JOIN"
				   " alert_group g ON g.id = a.group_id WHERE a.status = 'expected'"
				   " AND g.plan = ? AND coalesce(g.machine_id, 0) = ?");
	if (!s)
		return -1;
	bind_text(s, 1, plan);
	sqlite3_bind_int64(s, 2, machine_id);
	int64_t id = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	if (id < 0)
		db_seterr(db, "alert store: %s", sqlite3_errmsg(db_sqlite(db)));
	sqlite3_finalize(s);
	return id;
}

int64_t db_bisect_by_plan_path(struct db *db, const char *plan_path)
{
	sqlite3_stmt *s = prep(db, "SELECT coalesce(max(id), 0) FROM bisect WHERE plan_path = ?");
	if (!s)
		return -1;
	bind_text(s, 1, plan_path);
	int64_t id = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	if (id < 0)
		db_seterr(db, "alert store: %s", sqlite3_errmsg(db_sqlite(db)));
	sqlite3_finalize(s);
	return id;
}

char *db_session_runs_text(struct db *db, int64_t id)
{
	sqlite3_stmt *s = prep(db, "SELECT group_concat(n || ' ' || status, ', ') FROM (SELECT"
				   " status, count(*) AS n FROM run WHERE session_id = ?"
				   " GROUP BY status ORDER BY status)");
	if (!s)
		return NULL;
	sqlite3_bind_int64(s, 1, id);
	char *t = NULL;
	if (sqlite3_step(s) == SQLITE_ROW)
		t = dup_col(s, 0);
	if (!t)
		t = strdup("no runs");
	sqlite3_finalize(s);
	return t;
}

int db_sessions_by_tag(struct db *db, const char *tag, int64_t **ids, size_t *n)
{
	*ids = NULL;
	*n = 0;
	sqlite3_stmt *s = prep(db, "SELECT id FROM session WHERE tag = ? ORDER BY id");
	if (!s)
		return -1;
	bind_text(s, 1, tag);
	return collect_ids(db, s, ids, n);
}
