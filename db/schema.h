/*
 * The migration table (db/schema.c).
 */
#ifndef SL_SCHEMA_H
#define SL_SCHEMA_H

struct migration {
	int version;
	const char *sql;
};

extern const struct migration db_migrations[];

#endif
