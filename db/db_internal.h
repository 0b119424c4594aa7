/*
 * For the files of db/ only (db.c, results.c, alert_store.c, bisect_store.c,
 * and any other db/ file that queries): the SQLite connection under a struct
 * db and the one error setter. Nothing outside db/ includes this; the
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

#endif
