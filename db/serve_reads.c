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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* an open alert's status, as alertstate.c's table says (:open is bound to
 * alert_open_words(), the store's other queries ask the same) */
#define ALERT_IS_OPEN "instr(:open, ',' || a.status || ',') > 0"
/* the queries with RUN_COUNTS in them take the counts from run_counts() */
#define RUN_COUNTS " @RUN_COUNTS@"

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
	/* each plan and machine's latest ?1 sessions: per metric the mean of
	   its ok runs on that machine (one pass over boot, as the overview;
	   then the sessions' runs and metrics by key) */
	[DB_SERVE_SPARK] =
		"WITH pm AS (SELECT DISTINCT s.name AS plan, b.machine_id AS mid, b.session_id AS sid"
		"            FROM boot b JOIN session s ON s.id = b.session_id),"
		" rk AS (SELECT plan, mid, sid, row_number() OVER"
		"        (PARTITION BY plan, mid ORDER BY sid DESC) AS k FROM pm)"
		" SELECT rk.plan, m.name AS machine, rk.sid AS session, s.tag, s.started_at,"
		" mv.workload || '.' || mv.name AS metric, mv.unit, mv.better,"
		" avg(mv.value) AS value, count(*) AS n"
		" FROM rk JOIN session s ON s.id = rk.sid JOIN machine m ON m.id = rk.mid"
		" JOIN run r ON r.session_id = rk.sid AND r.status = 'ok'"
		" JOIN boot rb ON rb.id = r.boot_id AND rb.machine_id = rk.mid"
		" JOIN metric mv ON mv.run_id = r.id"
		" WHERE rk.k <= ?1"
		" GROUP BY rk.plan, rk.mid, rk.sid, mv.workload, mv.name"
		" ORDER BY rk.plan, m.name, metric, rk.sid",
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
		if (!made[q][0])
			snprintf(made[q], sizeof(made[q]), "%.*s%s%s", (int)(at - text), text,
				 run_counts(), at + strlen(RUN_COUNTS));
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
