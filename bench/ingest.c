/*
 * Benchmark (not a test): metric rows per second through the real store
 * path. A fresh database (db_open: the real schema, WAL, synchronous
 * NORMAL), one session and boot, RUNS planned runs, then each stored
 * exactly as a session stores the runs of a boot (run_boot_runs in
 * harness/orchestrate/session.c): the first run marked running in a commit
 * of its own (db_run_start), then each run stored by db_run_finish_start()
 * in one transaction with the run row, METRICS metric rows, one histogram,
 * a schedstat pair and the next run's mark. INGEST_MODE=two measures the
 * path before that (main until issue 16): db_run_start and
 * db_run_finish, two commits a run. Prints the rate of metric rows (and of
 * runs) per second of wall time and per second of CPU time (user + system:
 * steadier on a shared machine), median of ROUNDS repetitions on fresh
 * files. And the time spent waiting for a CPU (the run queue delay of
 * /proc/self/schedstat): on a machine shared with other jobs most of the
 * gap between wall and CPU time; the rate of the wall time less that wait
 * is what the path gives where it has a CPU to itself (the rest of the gap
 * is the time blocked: the checkpoints' fdatasync).
 *
 * BATCH > 1 measures the bulk path instead (an import, a generator): BATCH
 * runs stored by db_run_finish() inside one caller's transaction
 * (db_begin ... db_commit; each run a savepoint in it), no db_run_start.
 * That is not how a live session stores runs; its figure is printed as
 * such. INGEST_SQL (environment) is executed after opening, for
 * experiments (e.g. INGEST_SQL='PRAGMA cache_size = -16000'); INGEST_KEEP=1
 * keeps the last round's database (to look at it with sqlite3's dbstat).
 * INGEST_FRAMES=1 turns the automatic checkpoint off and prints how many
 * pages the runs appended to the WAL (a checkpoint comes every 1000), per
 * run: the write volume of a run, apart from the timing.
 *
 *   build/bench/ingest [RUNS=20000] [METRICS=25] [ROUNDS=3] [DIR=/tmp] [BATCH=1]
 *
 * Built by `make bench-ingest`; bench/analysis-scale.sh runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* CPU seconds (user + system) of this process so far */
static double cpu_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* seconds this thread waited on a run queue so far (/proc/self/schedstat:
 * CPU time, run delay, timeslices, in ns); -1 when the kernel does not say */
static double runq_wait(void)
{
	unsigned long long cpu_ns, wait_ns;
	FILE *f = fopen("/proc/self/schedstat", "r");
	int n = f ? fscanf(f, "%llu %llu", &cpu_ns, &wait_ns) : 0;
	if (f)
		fclose(f);
	return n == 2 ? (double)wait_ns * 1e-9 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* INGEST_MODE=two: the two-commit path (a mark, then the store) */
static int mode_two(void)
{
	const char *m = getenv("INGEST_MODE");
	return m && !strcmp(m, "two");
}

/* PRAGMA wal_checkpoint's second column: the WAL's frames */
static int wal_frames(void *ctx, int ncols, const char *const *names, const char *const *vals)
{
	(void)names;
	if (vals && ncols > 1 && vals[1])
		snprintf(ctx, 32, "%s", vals[1]);
	return 0;
}

struct timing {
	double wall, cpu;   /* seconds storing the runs */
	double wait;        /* of the wall time, waiting for a CPU; -1 unknown */
};

/* one round on a fresh file: the time spent storing the runs; -1 on error */
static int one_round(const char *path, int runs, int nmetrics, int batch, struct timing *tm)
{
	char *msg = NULL;
	struct db *db;
	unlink(path);
	if (db_open(path, DB_READWRITE, &db, &msg)) {
		fprintf(stderr, "ingest: %s\n", msg ? msg : path);
		free(msg);
		return -1;
	}
	if (getenv("INGEST_FRAMES") && db_exec(db, "PRAGMA wal_autocheckpoint = 0")) {
		fprintf(stderr, "ingest: %s\n", db_errmsg(db));
		db_close(db);
		return -1;
	}
	const char *extra = getenv("INGEST_SQL");
	if (extra && db_exec(db, extra)) {
		fprintf(stderr, "ingest: INGEST_SQL: %s\n", db_errmsg(db));
		db_close(db);
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
	int rc = 0, two = mode_two();
	double t0 = now(), c0 = cpu_now(), w0 = runq_wait();
	if (batch == 1 && !two && db_run_start(db, ids[0])) {
		fprintf(stderr, "ingest: run 0: %s\n", db_errmsg(db));
		rc = -1;
	}
	for (int i = 0; i < runs && !rc; i++) {
		for (int k = 0; k < nmetrics; k++)
			m[k].value = 1.0 + k + 1e-6 * i;
		struct db_run_result r = {
			.status = "ok", .wall_s = 0.1, .argv_json = "[\"hackbench\"]",
			.out = "Time: 1.0\n", .err = "", .files_json = "{}",
			.knobs_applied_json = "[]", .schedstat_before = "version 15\n",
			.schedstat_after = "version 15\n", .metrics = m, .nmetrics = (size_t)nmetrics,
			.hists = &h, .nhists = 1,
		};
		if (batch > 1) {
			rc = (i % batch == 0 && db_begin(db)) || db_run_finish(db, ids[i], &r) ||
			     ((i % batch == batch - 1 || i == runs - 1) && db_commit(db));
		} else if (two) {
			rc = db_run_start(db, ids[i]) || db_run_finish(db, ids[i], &r);
		} else {
			rc = db_run_finish_start(db, ids[i], &r, i + 1 < runs ? ids[i + 1] : 0);
		}
		if (rc)
			fprintf(stderr, "ingest: run %d: %s\n", i, db_errmsg(db));
	}
	tm->wall = now() - t0;
	tm->cpu = cpu_now() - c0;
	tm->wait = w0 < 0 ? -1 : runq_wait() - w0;
	if (!rc && getenv("INGEST_FRAMES")) {
		char frames[32] = "";
		if (db_query(db, "PRAGMA wal_checkpoint(PASSIVE)", wal_frames, frames) == 0)
			printf("WAL pages appended: %s, %.2f a run\n", frames,
			       atof(frames) / runs);
	}
	json_decref(hj);
	free(m);
	free(names);
	free(ids);
	db_close(db);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 20000;
	int nmetrics = argc > 2 ? atoi(argv[2]) : 25;
	int rounds = argc > 3 ? atoi(argv[3]) : 3;
	const char *dir = argc > 4 ? argv[4] : "/tmp";
	int batch = argc > 5 ? atoi(argv[5]) : 1;
	if (runs < 1 || nmetrics < 1 || rounds < 1 || batch < 1) {
		fprintf(stderr, "usage: ingest [RUNS>0] [METRICS>0] [ROUNDS>0] [DIR] [BATCH>0]\n");
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/schedlab-ingest-%d.db", dir, (int)getpid());
	double *wall = calloc((size_t)rounds, sizeof(double));
	double *cpu = calloc((size_t)rounds, sizeof(double));
	double *own = calloc((size_t)rounds, sizeof(double));
	double rows = runs * (double)nmetrics;
	for (int i = 0; i < rounds; i++) {
		struct timing tm;
		if (one_round(path, runs, nmetrics, batch, &tm))
			return 1;
		wall[i] = tm.wall;
		cpu[i] = tm.cpu;
		own[i] = tm.wait < 0 ? tm.wall : tm.wall - tm.wait;
		printf("round %d: %d runs x %d metrics in %.3f s (%.3f s CPU): %.0f metric rows/s, "
		       "%.0f runs/s; %.0f rows per CPU second; %.3f s waiting for a CPU: %.0f rows/s "
		       "without that wait\n",
		       i + 1, runs, nmetrics, tm.wall, tm.cpu, rows / tm.wall, runs / tm.wall,
		       rows / tm.cpu, tm.wait, rows / own[i]);
	}
	qsort(wall, (size_t)rounds, sizeof(double), cmp_double);
	qsort(cpu, (size_t)rounds, sizeof(double), cmp_double);
	qsort(own, (size_t)rounds, sizeof(double), cmp_double);
	double med = wall[rounds / 2], cmed = cpu[rounds / 2], omed = own[rounds / 2];
	if (batch > 1)
		printf("ingest (BULK path, %d runs per transaction, not the live path): median %.0f "
		       "metric rows/s (%.0f runs/s of %d metrics; %.0f rows per CPU second; %.0f "
		       "without waiting for a CPU), WAL, synchronous=NORMAL\n",
		       batch, rows / med, runs / med, nmetrics, rows / cmed, rows / omed);
	else
		printf("ingest: median %.0f metric rows/s (%.0f runs/s of %d metrics, %s, WAL, "
		       "synchronous=NORMAL; %.0f rows per CPU second; %.0f without waiting for a "
		       "CPU); target >= 200000\n",
		       rows / med, runs / med, nmetrics,
		       mode_two() ? "a commit to mark each run running and one to store it"
				  : "one commit a run: its store and the next run's mark",
		       rows / cmed, rows / omed);
	if (getenv("INGEST_KEEP")) {
		printf("database kept: %s\n", path);
		free(wall);
		free(cpu);
		free(own);
		return 0;
	}
	char wal_path[4200], shm_path[4200];
	snprintf(wal_path, sizeof(wal_path), "%s-wal", path);
	snprintf(shm_path, sizeof(shm_path), "%s-shm", path);
	unlink(path);
	unlink(wal_path);
	unlink(shm_path);
	free(wall);
	free(cpu);
	free(own);
	return 0;
}
