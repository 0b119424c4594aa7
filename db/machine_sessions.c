/*
 * The sessions of named machines (machine_sessions.h): one statement, the
 * names bound as a JSON array.
 */
#include "db/machine_sessions.h"
#include "db/db_internal.h"

#include <jansson.h>
#include <stdlib.h>

int db_machine_sessions(struct db *db, const char *const *names, size_t n, int64_t **ids,
			size_t *nids)
{
	static const char sql[] =
		"SELECT DISTINCT b.session_id FROM boot b JOIN machine m ON m.id = b.machine_id"
		" WHERE m.name IN (SELECT value FROM json_each(?1)) ORDER BY b.session_id";
	*ids = NULL;
	*nids = 0;
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(names[i]));
	char *text = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	sqlite3 *h = db_sqlite(db);
	sqlite3_stmt *st = NULL;
	if (!text || sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
		db_seterr(db, "sessions of a machine: %s", text ? sqlite3_errmsg(h) : "out of memory");
		sqlite3_finalize(st);
		free(text);
		return -1;
	}
	sqlite3_bind_text(st, 1, text, -1, free);
	size_t cap = 64, k = 0;
	int64_t *v = malloc(cap * sizeof(*v));
	int rc;
	while (v && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (k == cap) {
			int64_t *nv = realloc(v, 2 * cap * sizeof(*v));
			if (!nv) {
				free(v);
				v = NULL;
				break;
			}
			v = nv;
			cap *= 2;
		}
		v[k++] = sqlite3_column_int64(st, 0);
	}
	if (!v || rc != SQLITE_DONE) {
		db_seterr(db, "sessions of a machine: %s", v ? sqlite3_errmsg(h) : "out of memory");
		free(v);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	*ids = v;
	*nids = k;
	return 0;
}
