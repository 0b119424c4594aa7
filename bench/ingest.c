/*
 * Benchmark (not a test): metric rows per second through the real store
 * path. A fresh database (db_open: the real schema, WAL, synchronous
 * NORMAL), one session and boot, RUNS planned runs, then each stored with
 * db_run_finish() exactly as a session stores a finished run: one
 * transaction with the run row, METRICS metric rows, one histogram and a
 * schedstat pair. Prints the rate of metric rows (and of runs) per second
 * of wall time, median of ROUNDS repetitions on fresh files.
 *
 *   build/bench/ingest [RUNS=20000] [METRICS=25] [ROUNDS=3] [DIR=/tmp]
 *
 * Built by `make bench-ingest`; bench/analysis-scale.sh runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "db/db.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* one round on a fresh file: seconds spent in db_run_finish, -1 on error */
static double one_round(const char *path, int runs, int nmetrics)
{
	char *msg = NULL;
	struct db *db;
	unlink(path);
	if (db_open(path, DB_READWRITE, &db, &msg)) {
		fprintf(stderr, "ingest: %s\n", msg ? msg : path);
		free(msg);
		return -1;
	}
	struct db_session s = { "ingest", "bench/ingest.c", "{}", "bench", "local", "bench", 1 };
	int64_t sid = db_session_create(db, &s);
	int64_t bid = sid > 0 ? db_boot_plan(db, sid, 0, 0, NULL, "full", "") : -1;
	int64_t *ids = calloc((size_t)runs, sizeof(int64_t));
	if (bid <= 0 || !ids || db_begin(db)) {
		fprintf(stderr, "ingest: cannot plan: %s\n", db_errmsg(db));
		db_close(db);
		free(ids);
		return -1;
	}
	for (int i = 0; i < runs; i++)
		ids[i] = db_run_plan(db, sid, bid, i, i, "hackbench", "{\"groups\":2}", "{}", i);
	if (db_commit(db)) {
		fprintf(stderr, "ingest: cannot plan: %s\n", db_errmsg(db));
		db_close(db);
		free(ids);
		return -1;
	}
	struct db_metric *m = calloc((size_t)nmetrics, sizeof(*m));
	char (*names)[24] = calloc((size_t)nmetrics, sizeof(*names));
	for (int k = 0; k < nmetrics; k++) {
		snprintf(names[k], sizeof(names[k]), "metric_%02d", k);
		m[k] = (struct db_metric){ "hackbench", names[k], "s", "lower", NULL, 1.0 + k, 0 };
	}
	static const char hist[] = "{\"scheme\":\"linear\",\"nbuckets\":100,\"buckets\":[[10,50],"
				   "[19,50]],\"overflow\":0,\"total\":100}";
	json_t *hj = json_loads(hist, 0, NULL);
	struct db_hist h = { "latency_us", "us", hj };
	double t0 = now();
	for (int i = 0; i < runs; i++) {
		for (int k = 0; k < nmetrics; k++)
			m[k].value = 1.0 + k + 1e-6 * i;
		struct db_run_result r = {
			.status = "ok", .wall_s = 0.1, .argv_json = "[\"hackbench\"]",
			.out = "Time: 1.0\n", .err = "", .files_json = "{}",
			.knobs_applied_json = "[]", .schedstat_before = "version 15\n",
			.schedstat_after = "version 15\n", .metrics = m, .nmetrics = (size_t)nmetrics,
			.hists = &h, .nhists = 1,
		};
		if (db_run_start(db, ids[i]) || db_run_finish(db, ids[i], &r)) {
			fprintf(stderr, "ingest: run %d: %s\n", i, db_errmsg(db));
			t0 = -1;
			break;
		}
	}
	double dt = t0 < 0 ? -1 : now() - t0;
	json_decref(hj);
	free(m);
	free(names);
	free(ids);
	db_close(db);
	return dt;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 20000;
	int nmetrics = argc > 2 ? atoi(argv[2]) : 25;
	int rounds = argc > 3 ? atoi(argv[3]) : 3;
	const char *dir = argc > 4 ? argv[4] : "/tmp";
	if (runs < 1 || nmetrics < 1 || rounds < 1) {
		fprintf(stderr, "usage: ingest [RUNS>0] [METRICS>0] [ROUNDS>0] [DIR]\n");
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/schedlab-ingest-%d.db", dir, (int)getpid());
	double *t = calloc((size_t)rounds, sizeof(double));
	for (int i = 0; i < rounds; i++) {
		t[i] = one_round(path, runs, nmetrics);
		if (t[i] < 0)
			return 1;
		printf("round %d: %d runs x %d metrics in %.3f s: %.0f metric rows/s, %.0f runs/s\n",
		       i + 1, runs, nmetrics, t[i], runs * (double)nmetrics / t[i], runs / t[i]);
	}
	qsort(t, (size_t)rounds, sizeof(double), cmp_double);
	double med = t[rounds / 2];
	printf("ingest: median %.0f metric rows/s (%.0f runs/s of %d metrics, one transaction "
	       "per run, WAL, synchronous=NORMAL); target >= 200000\n",
	       runs * (double)nmetrics / med, runs / med, nmetrics);
	char wal[4200], shm[4200];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	unlink(path);
	unlink(wal);
	unlink(shm);
	free(t);
	return 0;
}
