/*
 * The sessions that ran on machines named so: a narrowing the trend takes
 * before it reads the results view when its selector names the machine
 * (harness/results/trend_job.c). The view can only filter the machine row
 * by row after the metric's index, so a trend on one machine of a lab of
 * 50 read the metric's rows of all 50; the sessions of the machine, looked
 * up by key, read its own (bench/serve-scale.sh, docs/serve.md).
 */
#ifndef SL_DB_MACHINE_SESSIONS_H
#define SL_DB_MACHINE_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

/* the ids of the sessions with a boot on a machine named names[0..n),
 * ascending, into *ids (malloc'd, never NULL on success) and *nids; -1 with
 * db_errmsg() on error */
int db_machine_sessions(struct db *db, const char *const *names, size_t n, int64_t **ids,
			size_t *nids);

#endif
