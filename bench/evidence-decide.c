/*
 * Benchmark (not a test): what an evidence trigger's decision costs
 * between two runs of a session ("evidence": {"when": "flagged"},
 * harness/orchestrate/evidence.h). A fresh database with one session whose
 * configuration has RUNS stored untraced hackbench runs (ok, 25 metrics
 * each, one of them time_s) and one planned traced run; evidence_for_run()
 * for that traced run, ROUNDS times: the query of the session's runs of the
 * workload, the selection of the configuration's runs and the MAD rule.
 * Prints the median wall time of one decision. The decision happens
 * between runs, never while one is measured.
 *
 *   build/bench/evidence-decide [RUNS=1000] [ROUNDS=20] [DIR=/tmp]
 *
 * Built by `make bench-evidence`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "harness/orchestrate/evidence.h"
#include "harness/orchestrate/plan.h"

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

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 1000, rounds = argc > 2 ? atoi(argv[2]) : 20;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	if (runs < 1 || rounds < 1) {
		fprintf(stderr, "usage: evidence-decide [RUNS>=1] [ROUNDS>=1] [DIR]\n");
		return 2;
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/evidence-decide-%d.db", dir, (int)getpid());
	struct strbuf err = STRBUF_INIT;
	struct plan p;
	if (plan_load_string("{\"name\": \"b\", \"target\": \"local\", \"workloads\": [{\"type\": "
			     "\"hackbench\", \"groups\": 1, \"loops\": 50, \"evidence\": "
			     "{\"when\": \"flagged\"}}]}", "bench.json", &p, &err)) {
		fprintf(stderr, "%s\n", err.buf);
		return 1;
	}
	struct db *db = NULL;
	char *msg = NULL;
	if (db_open(path, DB_READWRITE, &db, &msg)) {
		fprintf(stderr, "%s\n", msg);
		free(msg);
		return 1;
	}
	char *params = json_dumps(p.wl[0].params, JSON_COMPACT | JSON_SORT_KEYS);
	json_t *tj = json_copy(p.wl[0].params);
	json_object_set(tj, "evidence", p.wl[0].evidence);
	char *tparams = json_dumps(tj, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(tj);
	struct db_session s = { .name = "b", .plan_json = "{}", .target = "local",
				.version = "bench" };
	int64_t sid = db_session_create(db, &s);
	int64_t bid = db_boot_plan(db, sid, 0, 0, NULL, NULL, NULL);
	struct db_boot_result br = { .status = "ok" };
	db_boot_finish(db, bid, &br);
	struct db_metric m[25];
	char names[25][16];
	for (int k = 0; k < 25; k++) {
		snprintf(names[k], sizeof(names[k]), k ? "m%02d" : "time_s", k);
		m[k] = (struct db_metric){ "hackbench", names[k], "s", "lower", NULL, 1.0, 0 };
	}
	db_begin(db);
	for (int i = 0; i < runs; i++) {
		int64_t rid = db_run_plan(db, sid, bid, i, i, "hackbench", params, "{}", i);
		m[0].value = 0.05 + 0.001 * (i % 7);
		struct db_run_result r = { .status = "ok", .metrics = m, .nmetrics = 25 };
		if (rid < 0 || db_run_finish(db, rid, &r)) {
			fprintf(stderr, "database: %s\n", db_errmsg(db));
			return 1;
		}
	}
	int64_t tid = db_run_plan(db, sid, bid, runs, runs, "hackbench", tparams, "{}", runs);
	db_commit(db);
	struct db_pending_run pr = { .run_id = tid, .boot_id = bid, .seq = runs, .round = runs,
				     .rep = runs, .cfg = 0, .workload = "hackbench",
				     .params = tparams, .knobs = "{}" };
	double *t = calloc((size_t)rounds, sizeof(double));
	struct evidence_decision d;
	evidence_decision_init(&d);
	for (int r = 0; r < rounds; r++) {
		double t0 = now();
		if (evidence_for_run(db, sid, &p, &pr, &d, &err)) {
			fprintf(stderr, "%s\n", err.buf);
			return 1;
		}
		t[r] = now() - t0;
	}
	qsort(t, (size_t)rounds, sizeof(double), cmp_double);
	printf("evidence decision over %d stored runs (25 metrics each): median %.3f ms, "
	       "min %.3f ms, max %.3f ms (%d rounds); %s: %s\n", runs, 1e3 * t[rounds / 2],
	       1e3 * t[0], 1e3 * t[rounds - 1], rounds,
	       d.verdict == EVIDENCE_SKIP ? "skipped" : "traced", d.why.buf);
	evidence_decision_release(&d);
	free(t);
	free(params);
	free(tparams);
	db_close(db);
	plan_release(&p);
	strbuf_release(&err);
	char side[600];
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	return 0;
}
