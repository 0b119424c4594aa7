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

static double real_col(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
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
	g->plan = db_dup_col(s, 1);
	g->machine_id = sqlite3_column_int64(s, 2);
	g->range_key = db_dup_col(s, 3);
	g->good_session = sqlite3_column_int64(s, 4);
	g->bad_session = sqlite3_column_int64(s, 5);
	g->git_dir = db_dup_col(s, 6);
	g->good_commit = db_dup_col(s, 7);
	g->bad_commit = db_dup_col(s, 8);
	g->ncommits = sqlite3_column_int(s, 9);
	g->bisect_id = sqlite3_column_int64(s, 10);
	g->bisect_plan = db_dup_col(s, 11);
	g->culprit = db_dup_col(s, 12);
	g->why = db_dup_col(s, 13);
	g->created_at = db_dup_col(s, 14);
	g->updated_at = db_dup_col(s, 15);
}

int64_t db_alert_group_find_or_add(struct db *db, const struct db_alert_group *g, int *existed)
{
	*existed = 0;
	sqlite3_stmt *s = db_prep(db, "SELECT id FROM alert_group WHERE plan = ?1 AND"
				   " coalesce(machine_id, 0) = ?2 AND range_key = ?3");
	if (!s)
		return -1;
	db_bind_text(s, 1, g->plan);
	sqlite3_bind_int64(s, 2, g->machine_id);
	db_bind_text(s, 3, g->range_key);
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
	s = db_prep(db, "INSERT INTO alert_group (plan, machine_id, range_key, good_session,"
		     " bad_session, git_dir, good_commit, bad_commit, ncommits)"
		     " VALUES (?,?,?,?,?,?,?,?,?)");
	if (!s)
		return -1;
	db_bind_text(s, 1, g->plan);
	bind_id(s, 2, g->machine_id);
	db_bind_text(s, 3, g->range_key);
	sqlite3_bind_int64(s, 4, g->good_session);
	sqlite3_bind_int64(s, 5, g->bad_session);
	db_bind_text(s, 6, g->git_dir);
	db_bind_text(s, 7, g->good_commit);
	db_bind_text(s, 8, g->bad_commit);
	if (g->ncommits >= 0)
		sqlite3_bind_int(s, 9, g->ncommits);
	else
		sqlite3_bind_null(s, 9);
	if (db_run(db, s))
		return -1;
	return sqlite3_last_insert_rowid(db_sqlite(db));
}

int db_alert_group_get(struct db *db, int64_t id, struct db_alert_group *out)
{
	sqlite3_stmt *s = db_prep(db, "SELECT " GROUP_COLS " FROM alert_group WHERE id = ?");
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
	sqlite3_stmt *s = db_prep(db, "UPDATE alert_group SET bisect_id = ?2,"
				   " bisect_plan = coalesce(?3, bisect_plan),"
				   " updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	bind_id(s, 2, bisect_id);
	db_bind_text(s, 3, plan);
	return db_run(db, s);
}

int db_alert_group_set_result(struct db *db, int64_t id, const char *culprit, const char *why)
{
	sqlite3_stmt *s = db_prep(db, "UPDATE alert_group SET culprit = coalesce(?2, culprit),"
				   " why = coalesce(?3, why),"
				   " updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	db_bind_text(s, 2, culprit);
	db_bind_text(s, 3, why);
	return db_run(db, s);
}

static int add_event(struct db *db, int64_t alert, const char *from, const char *to,
		     enum alert_actor by, const char *note, int64_t session)
{
	sqlite3_stmt *s = db_prep(db, "INSERT INTO alert_event (alert_id, from_status, to_status,"
				   " actor, session, note) VALUES (?,?,?,?,?,?)");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, alert);
	db_bind_text(s, 2, from);
	db_bind_text(s, 3, to);
	db_bind_text(s, 4, by == ALERT_BY_PERSON ? "person" : "nightly");
	bind_id(s, 5, session);
	db_bind_text(s, 6, note);
	return db_run(db, s);
}

int64_t db_alert_add(struct db *db, const struct db_alert *a, const char *note)
{
	if (db_begin(db))
		return -1;
	sqlite3_stmt *s = db_prep(db,
		"INSERT INTO alert (group_id, kind, series_key, series_label, series_where,"
		" workload, metric, unit, detector, good_session, bad_session, baseline,"
		" base_value, value, change_pct, ci_lo, ci_hi, p, last_seen_session)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!s) {
		db_rollback(db);
		return -1;
	}
	sqlite3_bind_int64(s, 1, a->group_id);
	db_bind_text(s, 2, a->kind);
	db_bind_text(s, 3, a->series_key);
	db_bind_text(s, 4, a->series_label ? a->series_label : "");
	db_bind_text(s, 5, a->series_where ? a->series_where : "");
	db_bind_text(s, 6, a->workload);
	db_bind_text(s, 7, a->metric);
	db_bind_text(s, 8, a->unit);
	db_bind_text(s, 9, a->detector);
	sqlite3_bind_int64(s, 10, a->good_session);
	sqlite3_bind_int64(s, 11, a->bad_session);
	db_bind_text(s, 12, a->baseline ? a->baseline : "[]");
	bind_real(s, 13, a->base_value);
	bind_real(s, 14, a->value);
	bind_real(s, 15, a->change_pct);
	bind_real(s, 16, a->ci_lo);
	bind_real(s, 17, a->ci_hi);
	bind_real(s, 18, a->p);
	sqlite3_bind_int64(s, 19, a->bad_session);
	if (db_run(db, s)) {
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
	a->kind = db_dup_col(s, 2);
	const char *st = (const char *)sqlite3_column_text(s, 3);
	int k = st ? alert_state_parse(st) : -1;
	a->status = k < 0 ? ALERT_NEW : (enum alert_state)k;
	a->series_key = db_dup_col(s, 4);
	a->series_label = db_dup_col(s, 5);
	a->series_where = db_dup_col(s, 6);
	a->workload = db_dup_col(s, 7);
	a->metric = db_dup_col(s, 8);
	a->unit = db_dup_col(s, 9);
	a->detector = db_dup_col(s, 10);
	a->good_session = sqlite3_column_int64(s, 11);
	a->bad_session = sqlite3_column_int64(s, 12);
	a->baseline = db_dup_col(s, 13);
	a->base_value = real_col(s, 14);
	a->value = real_col(s, 15);
	a->change_pct = real_col(s, 16);
	a->ci_lo = real_col(s, 17);
	a->ci_hi = real_col(s, 18);
	a->p = real_col(s, 19);
	a->last_seen_session = sqlite3_column_int64(s, 20);
	a->fixed_session = sqlite3_column_int64(s, 21);
	a->created_at = db_dup_col(s, 22);
	a->updated_at = db_dup_col(s, 23);
}

int db_alert_get(struct db *db, int64_t id, struct db_alert *out)
{
	sqlite3_stmt *s = db_prep(db, "SELECT " ALERT_COLS " FROM alert WHERE id = ?");
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
	int culprit = 0;
	if (to == ALERT_NEW) {
		/* reopening: back to what the robot knew of it */
		struct db_alert_group g;
		if (db_alert_group_get(db, a.group_id, &g)) {
			db_rollback(db);
			db_alert_free(&a);
			return -1;
		}
		culprit = g.culprit != NULL;
		db_alert_group_free(&g);
	}
	char why[400];
	enum alert_state dest;
	if (alert_move_decide(a.status, to, by, note, culprit, &dest, why, sizeof(why)) !=
	    ALERT_MOVE_DO) {
		db_rollback(db);
		db_seterr(db, "alert %lld: %s", (long long)id, why);
		db_alert_free(&a);
		return -1;
	}
	sqlite3_stmt *s = db_prep(db, "UPDATE alert SET status = ?2, fixed_session = ?3,"
				      " updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1");
	int rc = -1;
	if (s) {
		sqlite3_bind_int64(s, 1, id);
		db_bind_text(s, 2, alert_state_word(dest));
		bind_id(s, 3, dest == ALERT_FIXED ? session : 0);
		rc = db_run(db, s);
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

int db_alert_group_move(struct db *db, int64_t gid, int from, enum alert_state to,
			enum alert_actor by, const char *note, int64_t session, size_t *moved)
{
	struct db_alert *al;
	size_t n;
	if (moved)
		*moved = 0;
	struct db_alert_filter f = { .status = from, .group_id = gid };
	if (db_alerts_list(db, &f, &al, &n))
		return -1;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		char why[400];
		enum alert_state dest;
		if (alert_move_decide(al[i].status, to, by, note, 0, &dest, why, sizeof(why)) !=
		    ALERT_MOVE_DO)
			continue;
		rc = db_alert_move(db, al[i].id, to, by, note, session);
		if (!rc && moved)
			(*moved)++;
	}
	db_alerts_free(al, n);
	return rc;
}

int db_alert_seen(struct db *db, int64_t id, int64_t session)
{
	sqlite3_stmt *s = db_prep(db, "UPDATE alert SET last_seen_session = max(coalesce("
				   "last_seen_session, 0), ?2) WHERE id = ?1");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, session);
	return db_run(db, s);
}

int db_alerts_list(struct db *db, const struct db_alert_filter *f, struct db_alert **out,
		   size_t *n)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s = db_prep(db,
		"SELECT " ALERT_COLS " FROM alert a WHERE"
		" (?1 = -1 OR (?1 = ?10 AND instr(?11, ',' || status || ',') > 0) OR status = ?2)"
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
	db_bind_text(s, 2, f->status >= 0 && f->status < ALERT_NSTATES ? alert_state_word(f->status)
								     : NULL);
	db_bind_text(s, 3, f->machine);
	db_bind_text(s, 4, f->metric);
	db_bind_text(s, 5, f->since);
	db_bind_text(s, 6, f->plan);
	sqlite3_bind_int64(s, 7, f->machine_id);
	sqlite3_bind_int64(s, 8, f->group_id);
	db_bind_text(s, 9, f->series_key);
	sqlite3_bind_int(s, 10, ALERT_NSTATES);
	db_bind_text(s, 11, alert_open_words());
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

int db_alerts_open_of(struct db *db, const char *plan, int64_t machine_id, struct db_alert **out,
		      size_t *n)
{
	struct db_alert_filter f = { .status = ALERT_NSTATES, .plan = plan,
				     .machine_id = machine_id };
	return db_alerts_list(db, &f, out, n);
}

int db_alert_events(struct db *db, int64_t alert_id, struct db_alert_event **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s = db_prep(db, "SELECT at, from_status, to_status, actor, note,"
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
		e->at = db_dup_col(s, 0);
		e->from_status = db_dup_col(s, 1);
		e->to_status = db_dup_col(s, 2);
		e->actor = db_dup_col(s, 3);
		e->note = db_dup_col(s, 4);
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
	sqlite3_stmt *s = db_prep(db, "SELECT DISTINCT group_id FROM alert WHERE status = ?"
				   " ORDER BY group_id");
	if (!s)
		return -1;
	db_bind_text(s, 1, alert_state_word(st));
	return db_collect_ids(db, s, ids, n);
}

int64_t db_alert_expected_since(struct db *db, const char *plan, int64_t machine_id)
{
	sqlite3_stmt *s = db_prep(db, "SELECT coalesce(max(a.bad_session), 0) FROM alert a JOIN"
				   " alert_group g ON g.id = a.group_id WHERE a.status = 'expected'"
				   " AND g.plan = ? AND coalesce(g.machine_id, 0) = ?");
	if (!s)
		return -1;
	db_bind_text(s, 1, plan);
	sqlite3_bind_int64(s, 2, machine_id);
	return db_scalar(db, s);
}

void db_alert_hooks_free(struct db_alert_hook *h, size_t n)
{
	for (size_t i = 0; h && i < n; i++)
		free(h[i].event);
	free(h);
}

int db_alert_hook_add(struct db *db, int64_t gid, int64_t sid, const char *event)
{
	sqlite3_stmt *s = db_prep(db,
		"INSERT INTO alert_hook (group_id, session_id, event) VALUES (?1, ?2, ?3)"
		" ON CONFLICT (group_id, session_id) DO UPDATE SET event ="
		"   CASE WHEN event = 'bisected' THEN event ELSE excluded.event END"
		" WHERE delivered_at IS NULL");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, gid);
	sqlite3_bind_int64(s, 2, sid);
	db_bind_text(s, 3, event);
	return db_run(db, s);
}

int db_alert_hooks_pending(struct db *db, const char *plan, int64_t machine_id,
			   struct db_alert_hook **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s = db_prep(db,
		"SELECT h.id, h.group_id, h.session_id, h.event, coalesce(h.claim_pid, 0),"
		" coalesce(h.claim_start, 0) FROM alert_hook h JOIN alert_group g ON g.id = h.group_id"
		" WHERE h.delivered_at IS NULL AND g.plan = ?1 AND g.machine_id = ?2 ORDER BY h.id");
	if (!s)
		return -1;
	db_bind_text(s, 1, plan);
	sqlite3_bind_int64(s, 2, machine_id);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_alert_hook *t = realloc(*out, (*n + 1) * sizeof(**out));
		if (!t) {
			rc = SQLITE_NOMEM;
			break;
		}
		*out = t;
		struct db_alert_hook *h = &(*out)[(*n)++];
		h->id = sqlite3_column_int64(s, 0);
		h->group_id = sqlite3_column_int64(s, 1);
		h->session_id = sqlite3_column_int64(s, 2);
		h->event = db_dup_col(s, 3);
		h->claim_pid = sqlite3_column_int64(s, 4);
		h->claim_start = (unsigned long long)sqlite3_column_int64(s, 5);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_seterr(db, "the hook's calls: %s", sqlite3_errmsg(db_sqlite(db)));
		db_alert_hooks_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int db_alert_hook_claim(struct db *db, int64_t id, int64_t old_pid,
			unsigned long long old_start, int64_t pid, unsigned long long start)
{
	sqlite3_stmt *s = db_prep(db,
		"UPDATE alert_hook SET claim_pid = ?2, claim_start = ?3 WHERE id = ?1"
		" AND delivered_at IS NULL AND coalesce(claim_pid, 0) = ?4"
		" AND coalesce(claim_start, 0) = ?5");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, pid);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)start);
	sqlite3_bind_int64(s, 4, old_pid);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)old_start);
	if (db_run(db, s))
		return -1;
	return sqlite3_changes(db_sqlite(db)) > 0;
}

int db_alert_hook_delivered(struct db *db, int64_t id)
{
	sqlite3_stmt *s = db_prep(db,
		"UPDATE alert_hook SET delivered_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')"
		" WHERE id = ?1 AND delivered_at IS NULL");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return db_run(db, s);
}
