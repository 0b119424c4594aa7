/*
 * For the files of db/ only (db.c, results.c, alert_store.c, bisect_store.c,
 * and any other db/ file that queries): the SQLite connection under a struct
 * db, the one error setter, and the statement helpers every file of db/
 * uses for its statements prepared per call (one copy: db.c). Nothing
 * outside db/ includes this; the
 * rest of the program sees struct db through db.h and db/results.h, which
 * hold no sqlite3 type.
 */
#ifndef SL_DB_INTERNAL_H
#define SL_DB_INTERNAL_H

#include <sqlite3.h>

#include "db/db.h"

/* the connection (db.c owns it; prepare, step, finalize within one call) */
sqlite3 *db_sqlite(struct db *db);
/* set the message db_errmsg() returns */
void db_seterr(struct db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* prepare `sql` on the connection: the statement, or NULL with "preparing
 * \"SQL...\": why" in db_errmsg() */
sqlite3_stmt *db_prep(struct db *db, const char *sql);
/* step a statement that returns no row and finalize it: 0, or -1 with the
 * message */
int db_run(struct db *db, sqlite3_stmt *s);
/* step s to its end collecting column 0 as ids (appended to *ids, *n) and
 * finalize it: 0, or -1 with the message and nothing in *ids */
int db_collect_ids(struct db *db, sqlite3_stmt *s, int64_t **ids, size_t *n);
/* step s for its one row and finalize it: column 0 as an integer (>= 0
 * for the counts and ids it is used for), or -1 with the message */
int64_t db_scalar(struct db *db, sqlite3_stmt *s);
/* column i as a malloc'd string, NULL for SQL NULL */
char *db_dup_col(sqlite3_stmt *s, int i);
/* bind a string, NULL as SQL NULL (the value is copied) */
void db_bind_text(sqlite3_stmt *s, int i, const char *v);

#endif
