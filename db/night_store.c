/*
 * The nightly's own sessions (night_store.h). Statements are prepared per
 * call and finalized before returning, every value bound.
 */
#include "db/night_store.h"
#include "db/db_internal.h"

#include <stdlib.h>
#include <string.h>

static sqlite3_stmt *prep(struct db *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &s, NULL) != SQLITE_OK) {
		db_seterr(db, "night store: preparing \"%.80s\": %s", sql,
			  sqlite3_errmsg(db_sqlite(db)));
		sqlite3_finalize(s);
		return NULL;
	}
	return s;
}

int db_session_mark_nightly(struct db *db, int64_t id)
{
	sqlite3_stmt *s = prep(db, "UPDATE session SET nightly = 1 WHERE id = ? AND nightly = 0");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		db_seterr(db, "night store: marking session %lld: %s", (long long)id,
			  sqlite3_errmsg(db_sqlite(db)));
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

void db_passed_over_free(struct db_passed_over *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++)
		free(p[i].tag);
	free(p);
}

int db_nightly_passed_over(struct db *db, const char *plan, int64_t machine_id, int64_t before,
			   const char *but_tag, size_t max, struct db_passed_over **out,
			   size_t *n, size_t *total)
{
	*out = NULL;
	*n = 0;
	*total = 0;
	sqlite3_stmt *s = prep(db,
		"SELECT s.id, s.tag, s.nightly,"
		" EXISTS (SELECT 1 FROM run r JOIN metric mv ON mv.run_id = r.id"
		"   WHERE r.session_id = s.id),"
		" EXISTS (SELECT 1 FROM boot b WHERE b.session_id = s.id AND b.status = 'ok'"
		"   AND b.machine_id = ?3)"
		" FROM session s WHERE s.name = ?1 AND s.id < ?2 AND (?4 IS NULL OR s.tag IS NULL"
		"   OR s.tag != ?4)"
		" ORDER BY s.id DESC");
	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, plan ? plan : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, before);
	sqlite3_bind_int64(s, 3, machine_id);
	if (but_tag)
		sqlite3_bind_text(s, 4, but_tag, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, 4);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		(*total)++;
		if (*n >= max)
			continue;
		struct db_passed_over *t = realloc(*out, (*n + 1) * sizeof(**out));
		if (!t) {
			rc = SQLITE_NOMEM;
			break;
		}
		*out = t;
		struct db_passed_over *p = &(*out)[(*n)++];
		const unsigned char *tag = sqlite3_column_text(s, 1);
		p->id = sqlite3_column_int64(s, 0);
		p->tag = tag ? strdup((const char *)tag) : NULL;
		p->nightly = sqlite3_column_int(s, 2);
		p->has_results = sqlite3_column_int(s, 3);
		p->on_machine = sqlite3_column_int(s, 4);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_seterr(db, "night store: %s", sqlite3_errmsg(db_sqlite(db)));
		db_passed_over_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void db_night_sessions_free(struct db_night_session *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].target);
		free(s[i].status);
	}
	free(s);
}

int db_night_sessions(struct db *db, const char *plan, const char *tag,
		      struct db_night_session **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s = prep(db, "SELECT id, target, status, nightly FROM session"
				   " WHERE name = ?1 AND tag = ?2 ORDER BY id");
	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, plan ? plan : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, tag ? tag : "", -1, SQLITE_TRANSIENT);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_night_session *t = realloc(*out, (*n + 1) * sizeof(**out));
		if (!t) {
			rc = SQLITE_NOMEM;
			break;
		}
		*out = t;
		struct db_night_session *p = &(*out)[(*n)++];
		p->id = sqlite3_column_int64(s, 0);
		p->target = db_dup_col(s, 1);
		p->status = db_dup_col(s, 2);
		p->nightly = sqlite3_column_int(s, 3);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_seterr(db, "night store: %s", sqlite3_errmsg(db_sqlite(db)));
		db_night_sessions_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}
