/*
 * The fixed reads of serve's pages (serve_reads.h). Run counts are taken
 * per session through the run_session index, by the classes of
 * db/runstate.c (what `schedlab sessions` and `run --resume` count alike);
 * the overview groups the boots of every session once (0.03 CPU s at
 * 18,000 sessions: bench/serve-scale.sh).
 */
#include "db/serve_reads.h"
#include "db/alertstate.h"
#include "db/db_internal.h"
#include "db/runstate.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* an open alert's status, as alertstate.c's table says (:open is bound to
 * alert_open_words(), the store's other queries ask the same) */
#define ALERT_IS_OPEN "instr(:open, ',' || a.status || ',') > 0"
/* the queries with RUN_COUNTS in them take the counts from run_counts() */
#define RUN_COUNTS " @RUN_COUNTS@"

/* the texts made on first use are made under this lock: serve builds its
 * pages in several threads, each on a connection of its own */
static pthread_mutex_t made_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *run_counts(void)
{
	static char q[2048];
	if (!q[0])
		snprintf(q, sizeof(q),
			 " (SELECT count(*) FROM run r WHERE r.session_id = s.id) AS runs,"
			 " (SELECT count(*) FROM run r WHERE r.session_id = s.id AND %s) AS ok,"
			 " (SELECT count(*) FROM run r WHERE r.session_id = s.id AND %s) AS failed,"
			 " (SELECT count(*) FROM run r WHERE r.session_id = s.id AND %s) AS todo",
			 run_class_sql(RUN_DONE_OK, "r"), run_class_sql(RUN_DONE_FAILED, "r"),
			 run_class_sql(RUN_TODO, "r"));
	return q;
}

static const char *const sql[DB_SERVE_NQUERIES] = {
	[DB_SERVE_OVERVIEW] =
		"SELECT o.plan, o.machine, o.machine_id, o.sessions, o.latest_session,"
		" s.tag AS latest_tag, s.started_at AS latest_started_at,"
		" s.status AS latest_status,"
		" (SELECT count(*) FROM alert a JOIN alert_group g ON g.id = a.group_id"
		"   WHERE g.plan = o.plan AND g.machine_id = o.machine_id"
		"   AND " ALERT_IS_OPEN ") AS open_alerts,"
		/* the latest night as the robot judged it (robot.c): alerts it
		   raised, alerts it saw again, alerts it found fixed */
		" (SELECT count(*) FROM alert a JOIN alert_group g ON g.id = a.group_id"
		"   WHERE g.plan = o.plan AND g.machine_id = o.machine_id"
		"   AND a.bad_session = s.id) AS night_new,"
		" (SELECT count(*) FROM alert a JOIN alert_group g ON g.id = a.group_id"
		"   WHERE g.plan = o.plan AND g.machine_id = o.machine_id"
		"   AND a.last_seen_session = s.id AND a.bad_session <> s.id) AS night_known,"
		" (SELECT count(*) FROM alert a JOIN alert_group g ON g.id = a.group_id"
		"   WHERE g.plan = o.plan AND g.machine_id = o.machine_id"
		"   AND a.fixed_session = s.id) AS night_fixed," RUN_COUNTS
		" FROM (SELECT s.name AS plan, m.name AS machine, m.id AS machine_id,"
		"         count(DISTINCT s.id) AS sessions, max(s.id) AS latest_session"
		"       FROM boot b JOIN session s ON s.id = b.session_id"
		"       JOIN machine m ON m.id = b.machine_id"
		"       GROUP BY s.name, m.id) o"
		" JOIN session s ON s.id = o.latest_session"
		" ORDER BY o.plan, o.machine",
	/* what the compare page's sides are picked from: the newest ?1 tags,
	   kernels, configurations and machines */
	[DB_SERVE_PICK_TAGS] =
		"SELECT tag AS value, count(*) AS sessions, max(started_at) AS latest"
		" FROM session WHERE tag IS NOT NULL AND tag <> ''"
		" GROUP BY tag ORDER BY max(id) DESC LIMIT ?1",
	[DB_SERVE_PICK_KERNELS] =
		"SELECT k.release AS value, count(DISTINCT b.session_id) AS sessions"
		" FROM boot b JOIN kernel k ON k.id = b.kernel_id"
		" GROUP BY k.release ORDER BY max(b.session_id) DESC LIMIT ?1",
	[DB_SERVE_PICK_CONFIGS] =
		"SELECT 'preempt=' || COALESCE(b.preempt, '') || ',hz=' || COALESCE(k.hz, '')"
		" || ',sched_mc=' || COALESCE(k.sched_mc, '') AS value,"
		" count(DISTINCT b.session_id) AS sessions"
		" FROM boot b JOIN kernel k ON k.id = b.kernel_id"
		" GROUP BY b.preempt, k.hz, k.sched_mc ORDER BY max(b.session_id) DESC LIMIT ?1",
	[DB_SERVE_PICK_MACHINES] =
		"SELECT m.name AS value, count(DISTINCT b.session_id) AS sessions"
		" FROM boot b JOIN machine m ON m.id = b.machine_id"
		" GROUP BY m.id ORDER BY m.name LIMIT ?1",
	[DB_SERVE_RUNNING] =
		"SELECT s.id AS session, s.name AS plan, s.tag, s.target, s.started_at,"
		" s.owner_host AS host," RUN_COUNTS
		" FROM session s WHERE s.status = 'running' ORDER BY s.id",
	[DB_SERVE_RECENT] =
		"SELECT s.id AS session, s.name AS plan, s.tag, s.target, s.status, s.started_at,"
		RUN_COUNTS " FROM session s ORDER BY s.id DESC LIMIT ?1",
	[DB_SERVE_SESSION] =
		"SELECT s.id AS session, s.name AS plan, s.tag, s.target, s.status, s.started_at,"
		" s.finished_at, s.harness_version, s.seed, s.plan_path, s.plan_json," RUN_COUNTS
		" FROM session s WHERE s.id = ?1",
	[DB_SERVE_BOOTS] =
		"SELECT b.id AS boot, b.seq, b.cfg, b.status, m.name AS machine,"
		" k.release AS kernel, k.config_hash, k.hz, k.sched_mc, b.req_preempt,"
		" b.preempt, b.cmdline, b.kernel_commit, b.kernel_describe,"
		" COALESCE(b.clock, 'real') AS clock, b.qemu_version, b.method, b.error, b.booted_at, b.sysinfo"
		" FROM boot b LEFT JOIN machine m ON m.id = b.machine_id"
		" LEFT JOIN kernel k ON k.id = b.kernel_id"
		" WHERE b.session_id = ?1 ORDER BY b.seq, b.id",
	[DB_SERVE_RUNS] =
		"SELECT r.id AS run, r.boot_id AS boot, r.seq, r.round, r.workload, r.params,"
		" r.knobs, r.rep, r.status, r.error, r.started_at, r.finished_at,"
		" r.evidence_of, r.skip_reason, r.notes"
		" FROM run r WHERE r.session_id = ?1 ORDER BY r.seq, r.round, r.id",
	[DB_SERVE_METRICS] =
		"SELECT r.workload AS run_workload, r.params, mv.workload, mv.name AS metric,"
		" mv.unit, mv.better, count(*) AS n, min(mv.value) AS min, max(mv.value) AS max"
		" FROM metric mv JOIN run r ON r.id = mv.run_id"
		" WHERE r.session_id = ?1 AND r.status = 'ok'"
		" GROUP BY r.workload, r.params, mv.workload, mv.name"
		" ORDER BY r.workload, r.params, mv.workload, mv.name",
	[DB_SERVE_MACHINE] = "SELECT name FROM machine WHERE id = ?1",
	[DB_SERVE_RUN] =
		"SELECT r.id AS run, r.session_id AS session, r.boot_id AS boot, r.seq, r.round,"
		" r.workload, r.params, r.knobs, r.rep, r.status, r.error, r.started_at,"
		" r.finished_at, r.wall_s, r.exit_code, r.argv, r.knobs_applied, r.load, r.files,"
		" r.evidence_of, r.evidence_why, r.stdout, r.stderr, r.skip_reason, r.notes"
		" FROM run r WHERE r.id = ?1",
	[DB_SERVE_RUN_METRICS] =
		("SELECT workload, name AS metric, value, unit, better, censored, note"
		 " FROM metric WHERE run_id = ?1 ORDER BY workload, name"),
};

/* the rows of a prepared statement to fn (header first), then finalized */
static int rows_out(struct db *db, sqlite3_stmt *st, db_row_fn fn, void *ctx)
{
	sqlite3 *h = db_sqlite(db);
	int nc = sqlite3_column_count(st);
	const char **names = calloc((size_t)nc + 1, sizeof(char *));
	const char **vals = calloc((size_t)nc + 1, sizeof(char *));
	int ret = 0, rc;
	if (!names || !vals) {
		db_seterr(db, "serve: out of memory");
		ret = -1;
		goto out;
	}
	for (int i = 0; i < nc; i++)
		names[i] = sqlite3_column_name(st, i);
	if (fn(ctx, nc, names, NULL)) {
		ret = -1;
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < nc; i++)
			vals[i] = (const char *)sqlite3_column_text(st, i);
		if (fn(ctx, nc, names, vals)) {
			ret = -1;
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		db_seterr(db, "serve: %s", sqlite3_errmsg(h));
		ret = -1;
	}
out:
	free(names);
	free(vals);
	sqlite3_finalize(st);
	return ret;
}

int db_serve_rows(struct db *db, enum db_serve_query q, int64_t arg, db_row_fn fn, void *ctx)
{
	if (q >= DB_SERVE_NQUERIES) {
		db_seterr(db, "serve: no query %d", (int)q);
		return -1;
	}
	sqlite3 *h = db_sqlite(db);
	sqlite3_stmt *st = NULL;
	static char made[DB_SERVE_NQUERIES][8192];
	const char *text = sql[q], *at = strstr(text, RUN_COUNTS);
	if (at) {
		pthread_mutex_lock(&made_mu);
		if (!made[q][0])
			snprintf(made[q], sizeof(made[q]), "%.*s%s%s", (int)(at - text), text,
				 run_counts(), at + strlen(RUN_COUNTS));
		pthread_mutex_unlock(&made_mu);
		text = made[q];
	}
	if (sqlite3_prepare_v2(h, text, -1, &st, NULL) != SQLITE_OK) {
		db_seterr(db, "serve: %s", sqlite3_errmsg(h));
		sqlite3_finalize(st);
		return -1;
	}
	int ia = sqlite3_bind_parameter_index(st, "?1"), io = sqlite3_bind_parameter_index(st, ":open");
	if (ia)
		sqlite3_bind_int64(st, ia, arg);
	if (io)
		sqlite3_bind_text(st, io, alert_open_words(), -1, SQLITE_STATIC);
	return rows_out(db, st, fn, ctx);
}

/* the headline metrics' means over the sessions chosen below, given as
 * ?1, a JSON array of [plan, machine id, session id, k] (k = 1 the latest) */
static const char spark_sql[] =
	"WITH rk AS (SELECT json_extract(value, '$[0]') AS plan, json_extract(value, '$[1]') AS mid,"
	"            json_extract(value, '$[2]') AS sid, json_extract(value, '$[3]') AS k"
	"            FROM json_each(?1)),"
	" latest AS MATERIALIZED (SELECT rk.plan, rk.mid, rk.sid, (SELECT min(mv.workload)"
	"            FROM run r JOIN metric mv ON mv.run_id = r.id"
	"            WHERE r.session_id = rk.sid AND r.status = 'ok') AS workload"
	"            FROM rk WHERE rk.k = 1),"
	" hl AS MATERIALIZED (SELECT DISTINCT g.plan, g.machine_id AS mid, a.workload,"
	"        a.metric AS name FROM alert a JOIN alert_group g ON g.id = a.group_id"
	"        WHERE " ALERT_IS_OPEN
	"        UNION SELECT l.plan, l.mid, l.workload, (SELECT min(mv.name) FROM run r"
	"          JOIN metric mv ON mv.run_id = r.id AND mv.workload = l.workload"
	"          WHERE r.session_id = l.sid AND r.status = 'ok')"
	"        FROM latest l WHERE l.workload IS NOT NULL)"
	" SELECT rk.plan, m.name AS machine, rk.sid AS session, s.tag, s.started_at,"
	" mv.workload || '.' || mv.name AS metric, mv.unit, mv.better,"
	" avg(mv.value) AS value, count(*) AS n"
	/* in this order (CROSS JOIN): a run's metric rows are sought by the
	   headline metric's key, not read all (0.33 CPU s at 50 x 365) */
	" FROM rk CROSS JOIN hl CROSS JOIN run r CROSS JOIN metric mv"
	" JOIN boot rb ON rb.id = r.boot_id"
	" JOIN session s ON s.id = rk.sid JOIN machine m ON m.id = rk.mid"
	" WHERE hl.plan = rk.plan AND hl.mid = rk.mid AND r.session_id = rk.sid"
	" AND r.status = 'ok' AND mv.run_id = r.id AND mv.workload = hl.workload"
	" AND mv.name = hl.name AND rb.machine_id = rk.mid"
	" GROUP BY rk.plan, rk.mid, rk.sid, mv.workload, mv.name"
	" ORDER BY rk.plan, m.name, metric, rk.sid";

int db_serve_spark(struct db *db, int nights, size_t npairs, db_row_fn fn, void *ctx)
{
	/* the latest nights of each plan and machine: boots newest first (by
	   key), until every one of the npairs has its nights (a store whose
	   pairs all ran lately reads a few rows, not the whole table) */
	sqlite3 *h = db_sqlite(db);
	sqlite3_stmt *st = NULL;
	static const char boots[] =
		"SELECT s.name, b.machine_id, b.session_id FROM boot b"
		" JOIN session s ON s.id = b.session_id ORDER BY b.id DESC";
	if (sqlite3_prepare_v2(h, boots, -1, &st, NULL) != SQLITE_OK) {
		db_seterr(db, "serve: %s", sqlite3_errmsg(h));
		sqlite3_finalize(st);
		return -1;
	}
	json_t *seen = json_object(), *list = json_array();
	size_t full = 0;
	int rc = SQLITE_ROW;
	while (full < npairs && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *plan = (const char *)sqlite3_column_text(st, 0);
		sqlite3_int64 mid = sqlite3_column_int64(st, 1), sid = sqlite3_column_int64(st, 2);
		char key[512];
		snprintf(key, sizeof(key), "%lld\x1f%s", (long long)mid, plan ? plan : "");
		json_t *got = json_object_get(seen, key);
		if (!got) {
			got = json_array();
			json_object_set_new(seen, key, got);
		}
		size_t n = json_array_size(got), i = 0;
		while (i < n && json_integer_value(json_array_get(got, i)) != sid)
			i++;
		if ((int)n >= nights || i < n)
			continue;   /* full, or another boot of a session it has */
		json_array_append_new(got, json_integer(sid));
		json_array_append_new(list, json_pack("[s,I,I,I]", plan ? plan : "", (json_int_t)mid,
						      (json_int_t)sid, (json_int_t)n + 1));
		if ((int)n + 1 == nights)
			full++;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_seterr(db, "serve: %s", sqlite3_errmsg(h));
		sqlite3_finalize(st);
		json_decref(seen);
		json_decref(list);
		return -1;
	}
	sqlite3_finalize(st);
	json_decref(seen);
	char *arg = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	st = NULL;
	if (!arg || sqlite3_prepare_v2(h, spark_sql, -1, &st, NULL) != SQLITE_OK) {
		db_seterr(db, "serve: %s", arg ? sqlite3_errmsg(h) : "out of memory");
		sqlite3_finalize(st);
		free(arg);
		return -1;
	}
	sqlite3_bind_text(st, sqlite3_bind_parameter_index(st, "?1"), arg, -1, free);
	sqlite3_bind_text(st, sqlite3_bind_parameter_index(st, ":open"), alert_open_words(), -1,
			  SQLITE_STATIC);
	return rows_out(db, st, fn, ctx);
}

/* ---- a page's budget ------------------------------------------------------ */

static int watch_progress(void *ctx)
{
	struct db_watch *w = ctx;
	atomic_fetch_add_explicit(&w->steps, 1, memory_order_relaxed);
	return atomic_load_explicit(&w->stop, memory_order_relaxed) != 0;
}

void db_serve_watch(struct db *db, struct db_watch *w)
{
	sqlite3_progress_handler(db_sqlite(db), w ? DB_WATCH_STEPS : 0, w ? watch_progress : NULL, w);
}

/* one number of a statement with since bound as ?1 (and ?2) */
static int since_scalar(struct db *db, const char *q, const char *since, int64_t n2,
			int64_t *out)
{
	sqlite3_stmt *st = db_prep(db, q);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, since, -1, SQLITE_TRANSIENT);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, n2);
	int rc = sqlite3_step(st);
	*out = 0;
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE) {
		db_seterr(db, "serve: %s", sqlite3_errmsg(db_sqlite(db)));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

int db_serve_range(struct db *db, const char *since, int64_t max_rows, struct db_serve_range *r)
{
	memset(r, 0, sizeof(*r));
	/* the sessions and runs by their keys; the metric rows a run holds,
	   from a sample of the range's first 200 runs (counting 91 million
	   rows would cost what the page costs) */
	if (since_scalar(db, "SELECT count(*) FROM session WHERE started_at >= ?1", since, 0,
			 &r->sessions) ||
	    since_scalar(db, "SELECT count(*) FROM run WHERE session_id IN"
			     " (SELECT id FROM session WHERE started_at >= ?1)", since, 0, &r->runs))
		return -1;
	int64_t sampled = 0, rows = 0;
	if (since_scalar(db, "SELECT count(*) FROM (SELECT r.id FROM run r WHERE r.session_id IN"
			     " (SELECT id FROM session WHERE started_at >= ?1) LIMIT ?2)", since, 200,
			 &sampled) ||
	    since_scalar(db, "SELECT count(*) FROM metric WHERE run_id IN (SELECT r.id FROM run r"
			     " WHERE r.session_id IN (SELECT id FROM session WHERE started_at >= ?1)"
			     " LIMIT ?2)", since, 200, &rows))
		return -1;
	r->metric_rows = sampled ? (int64_t)((double)rows / (double)sampled * (double)r->runs) : 0;
	/* the newest sessions that stay within max_rows: the start of the
	   oldest of them */
	if (max_rows > 0 && r->sessions > 0 && r->metric_rows > max_rows) {
		int64_t per = r->metric_rows / r->sessions;
		int64_t fit = per > 0 ? max_rows / per : r->sessions;
		if (fit < 1)
			fit = 1;
		sqlite3_stmt *st = db_prep(db, "SELECT started_at FROM session WHERE started_at >= ?1"
					       " ORDER BY started_at DESC LIMIT 1 OFFSET ?2");
		if (!st)
			return -1;
		sqlite3_bind_text(st, 1, since, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, fit - 1);
		if (sqlite3_step(st) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(st, 0);
			if (t)
				snprintf(r->fit_since, sizeof(r->fit_since), "%.10s", t);
		}
		sqlite3_finalize(st);
	}
	return 0;
}
