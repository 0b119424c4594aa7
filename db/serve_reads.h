/*
 * The reads of `schedlab serve`'s pages (docs/serve.md) that no command
 * needed before: the plans and machines with their latest night, the
 * running and recent sessions, one session with its boots, runs and
 * metrics. Each is one fixed statement, its argument bound, its rows
 * handed to a db_row_fn (header first, as db_query). The alerts, trends
 * and comparisons come from the functions the commands use.
 */
#ifndef SL_DB_SERVE_READS_H
#define SL_DB_SERVE_READS_H

#include <stdatomic.h>
#include <stdint.h>

#include "db/db.h"

enum db_serve_query {
	DB_SERVE_OVERVIEW,   /* plan x machine: sessions, the latest (its run counts, its
				alerts new, known, fixed), open alerts */
	DB_SERVE_PICK_TAGS,  /* the newest arg tags, kernels, configurations (preempt, */
	DB_SERVE_PICK_KERNELS,  /* hz, sched_mc as a selector), machines, each with */
	DB_SERVE_PICK_CONFIGS,  /* its count of sessions: the compare page's lists */
	DB_SERVE_PICK_MACHINES,
	DB_SERVE_RUNNING,    /* sessions still running, with their run counts */
	DB_SERVE_RECENT,     /* the newest arg sessions, with their run counts */
	DB_SERVE_SESSION,    /* session arg */
	DB_SERVE_BOOTS,      /* its boots: configuration as verified, sysinfo */
	DB_SERVE_RUNS,       /* its runs */
	DB_SERVE_METRICS,    /* its metrics per (run workload, params, metric) */
	DB_SERVE_MACHINE,    /* machine arg: its name */
	DB_SERVE_RUN,        /* run arg: what it ran and its raw output */
	DB_SERVE_RUN_METRICS,  /* its metrics */
	DB_SERVE_NQUERIES
};

/* the rows of query q with argument arg; -1 with db_errmsg() on error (a
 * store without the alert tables reads as no open alerts only through the
 * caller: the error says "no such table") */
int db_serve_rows(struct db *db, enum db_serve_query q, int64_t arg, db_row_fn fn, void *ctx);

/* the front page's small trends: for each plan and machine (npairs of them:
 * the overview's rows), its latest `nights` sessions' means of its headline
 * metrics (those of its open alerts, and the first by name of its latest
 * session) over its ok runs on that machine: rows plan, machine, session,
 * tag, started_at, metric (W.M), unit, better, value, n; ordered by plan,
 * machine, metric, session */
int db_serve_spark(struct db *db, int nights, size_t npairs, db_row_fn fn, void *ctx);

/*
 * A page's budget on a connection of its own: while watched, every
 * DB_WATCH_STEPS virtual-machine steps of its statements count one in
 * w->steps, and once w->stop is set (by another thread: the page's time is
 * up) the statement running fails ("interrupted") and so does every later
 * one, until db_serve_watch(db, NULL) ends the watch.
 */
#define DB_WATCH_STEPS 1000
struct db_watch {
	atomic_int stop;
	atomic_ulong steps;
};
void db_serve_watch(struct db *db, struct db_watch *w);

/* what a page over the sessions started since a date (YYYY-MM-DD...) would
 * read, counted by key before it is built: its sessions, their runs, and
 * their metric rows (estimated from the first 200 runs'); fit_since the day
 * the newest sessions within max_rows metric rows start on ("" when all
 * fit or max_rows is 0). -1 with db_errmsg() on error */
struct db_serve_range {
	int64_t sessions, runs, metric_rows;
	char fit_since[16];
};
int db_serve_range(struct db *db, const char *since, int64_t max_rows, struct db_serve_range *r);

#endif
