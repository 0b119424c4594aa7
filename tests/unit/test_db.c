/*
 * Unit tests of the results store (db/db.c, db/schema.c): a fresh file is
 * migrated to the newest schema; a version-1 database with data migrates
 * forward without losing it; db_run_finish stores a run with its metrics,
 * histogram and schedstat in one transaction (all or nothing), and the
 * `results` view shows only ok runs of ok boots; pending runs in execution
 * order and crash recovery; a run's store and the next run's mark in one
 * commit, and what a controller killed with SIGKILL at any point of that
 * leaves for --resume (a forked child, stopped at chosen points or killed
 * at random times); session selectors; the sessions of a lab; refusing
 * files that are not schedlab databases or are newer than this build. Each
 * test works in its own temporary directory.
 */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db/bisect_store.h"
#include "db/db.h"
#include "db/results.h"
#include "db/serve_reads.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"

static char tmpdir[64];

static char *tmp_path(const char *name)
{
	return xstrfmt("%s/%s", tmpdir, name);
}

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sl-test-db-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
}


/* every row of a query, columns joined by '|', rows by ';' (NULL as "NULL") */
static int collect(void *ctx, int n, const char *const *names, const char *const *vals)
{
	struct strbuf *sb = ctx;
	if (!vals)
		return 0; /* a statement's header */
	if (sb->len)
		strbuf_addch(sb, ';');
	for (int i = 0; i < n; i++)
		strbuf_addf(sb, "%s%s", i ? "|" : "", vals[i] ? vals[i] : "NULL");
	return 0;
}

static char *q(struct db *db, const char *sql)
{
	struct strbuf sb = STRBUF_INIT;
	if (db_query(db, sql, collect, &sb)) {
		printf("#   query failed: %s: %s\n", sql, db_errmsg(db));
		strbuf_addstr(&sb, "ERROR");
	}
	return strbuf_detach(&sb, NULL);
}

static void check_q(struct db *db, const char *sql, const char *expect)
{
	char *r = q(db, sql);
	CHECK_STR(r, expect);
	free(r);
}

static int exec(struct db *db, const char *sql)
{
	int rc = db_exec(db, sql);
	if (rc)
		printf("#   sql failed: %s\n", db_errmsg(db));
	return rc;
}

static void rm_db(const char *name)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		char *p = xstrfmt("%s/%s%s", tmpdir, name, sfx[i]);
		unlink(p);
		free(p);
	}
}

static struct db *open_fresh(const char *name)
{
	char *p = tmp_path(name);
	struct db *db = NULL;
	char *err = NULL;
	if (db_open(p, DB_READWRITE, &db, &err)) {
		printf("#   db_open %s: %s\n", p, err ? err : "?");
		free(err);
	}
	free(p);
	return db;
}

TEST(fresh_file_is_latest)
{
	struct db *db = open_fresh("t.db");
	CHECK(db != NULL);
	if (!db)
		return;
	CHECK(db_latest_version() == 20);
	CHECK(db_user_version(db) == db_latest_version());
	check_q(db, "SELECT name FROM sqlite_master WHERE type IN ('table','view') ORDER BY name",
		"alert;alert_event;alert_group;alert_hook;bisect;bisect_step;boot;histogram;kernel;"
		"machine;metric;"
		"results;run;schedstat;session");
	check_q(db, "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
		    "ORDER BY name", "alert_hook_pending;alert_series;session_tag");
	/* metric and histogram are clustered on their keys (migrations 5 and 6:
	 * ingest rate), and no CHECK builds a temporary B-tree per row */
	check_q(db, "SELECT sql LIKE '%WITHOUT ROWID' FROM sqlite_master WHERE name = 'metric'", "1");
	check_q(db, "SELECT sql LIKE '%WITHOUT ROWID' FROM sqlite_master WHERE name = 'histogram'",
		"1");
	check_q(db, "SELECT sql LIKE '%better IN (%' FROM sqlite_master WHERE name = 'metric'", "0");
	CHECK(db_exec(db, "INSERT INTO metric (run_id, workload, name, value, better) VALUES"
			  " (1, 'w', 'm', 1, 'sideways')") != 0);
	check_q(db, "PRAGMA journal_mode", "wal");
	check_q(db, "PRAGMA foreign_keys", "1");
	check_q(db, "SELECT count(*) FROM results", "0");
	/* the results view ends with the columns added after DESIGN.md's list */
	check_q(db, "SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('results')"
		    " ORDER BY cid)",
		"session,tag,run_id,started_at,target,machine,kernel_release,hz,sched_mc,preempt,"
		"cmdline,knobs,workload,params,rep,metric,value,unit,better,run_workload,config_hash,"
		"preempt_build,boot,plan,machine_id,note,censored,kernel_commit,kernel_describe,clock,clock_shift,"
		"qemu_version,scheduler,seed");
	/* migrating again is a no-op */
	CHECK(db_migrate_to(db, db_latest_version()) == 0);
	CHECK(db_user_version(db) == db_latest_version());
	db_close(db);
	/* reopening keeps the version */
	db = open_fresh("t.db");
	CHECK(db && db_user_version(db) == db_latest_version());
	db_close(db);
}

/* docs/schema.md's table of the results view names its columns, in the
 * view's order: a column added by a migration is documented there */
TEST(schema_doc_lists_the_view_columns)
{
	struct db *db = open_fresh("t.db");
	char *path = xstrfmt("%s/../../docs/schema.md", SCHEDLAB_TESTDATA_DIR);
	FILE *f = fopen(path, "r");
	struct strbuf doc = STRBUF_INIT;
	char line[4096];
	int in_view = 0;
	CHECK(db != NULL && f != NULL);
	if (!db || !f) {
		printf("#   cannot open %s\n", path);
		goto out;
	}
	/* the rows "| `name` | meaning |" of the section "The `results` view" */
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "## ", 3))
			in_view = strstr(line, "`results` view") != NULL;
		else if (in_view && !strncmp(line, "| `", 3)) {
			char *end = strchr(line + 3, '`');
			if (end)
				strbuf_addf(&doc, "%s%.*s", doc.len ? "," : "", (int)(end - line - 3),
					    line + 3);
		}
	}
	char *view = q(db, "SELECT group_concat(name, ',') FROM (SELECT name FROM "
			   "pragma_table_info('results') ORDER BY cid)");
	CHECK_STR(doc.buf, view);
	free(view);
out:
	if (f)
		fclose(f);
	if (db)
		db_close(db);
	strbuf_release(&doc);
	free(path);
}

TEST(migrate_from_v1_keeps_data)
{
	char *p = tmp_path("v1.db");
	struct db *db = NULL;
	char *err = NULL;
	CHECK(db_open_raw(p, &db, &err) == 0);
	free(p);
	if (!db)
		return;
	CHECK(db_user_version(db) == 0);   /* raw: nothing applied */
	CHECK(db_migrate_to(db, 1) == 0);
	CHECK(db_user_version(db) == 1);
	CHECK(exec(db,
		   "INSERT INTO machine (id, name, fingerprint) VALUES (1, 'box', 'fp1');"
		   "INSERT INTO kernel (id, release, hz, sched_mc) VALUES (1, '6.1.0-57', 250, 1);"
		   "INSERT INTO session (id, name, plan_json, tag, target, harness_version)"
		   "  VALUES (1, 'old', '{}', 'nightly', 'local', 'v0');"
		   "INSERT INTO boot (id, session_id, seq, cfg, status, machine_id, kernel_id, preempt,"
		   "  cmdline) VALUES (1, 1, 0, 0, 'ok', 1, 1, 'full', 'quiet');"
		   "INSERT INTO run (id, session_id, boot_id, seq, round, workload, params, rep, status)"
		   "  VALUES (1, 1, 1, 0, 0, 'hackbench', '{\"groups\":4}', 0, 'ok');"
		   "INSERT INTO metric (run_id, workload, name, value, unit, better, note)"
		   "  VALUES (1, 'hackbench', 'time_s', 0.769, 's', 'lower', 'n1');"
		   "INSERT INTO histogram (run_id, name, unit, data)"
		   "  VALUES (1, 'latency_us', 'us', '{\"total\":0}');"
		   "INSERT INTO schedstat (run_id, before, after) VALUES (1, 'b', 'a');") == 0);
	/* the version-1 view has no note column */
	check_q(db, "SELECT session, tag, machine, kernel_release, hz, sched_mc, preempt, cmdline,"
		    " workload, rep, metric, value, unit, better FROM results",
		"1|nightly|box|6.1.0-57|250|1|full|quiet|hackbench|0|time_s|0.769|s|lower");
	char *r = q(db, "SELECT count(*) FROM pragma_table_info('results') WHERE name = 'note'");
	CHECK_STR(r, "0");
	free(r);
	CHECK(db_migrate_to(db, db_latest_version()) == 0);
	CHECK(db_user_version(db) == db_latest_version());
	check_q(db, "SELECT session, tag, machine, kernel_release, preempt, workload, metric, value,"
		    " better, note, plan, run_workload, machine_id, censored FROM results",
		"1|nightly|box|6.1.0-57|full|hackbench|time_s|0.769|lower|n1|old|hackbench|fp1|0");
	/* migration 14: a boot stored before the clock was recorded ran on a
	 * real clock; a virtual one is shown with its shift, and a value the
	 * column does not allow is refused */
	check_q(db, "SELECT clock, quote(clock_shift) FROM results", "real|NULL");
	CHECK(exec(db, "UPDATE boot SET clock = 'virtual', clock_shift = 3") == 0);
	check_q(db, "SELECT clock, clock_shift FROM results", "virtual|3");
	CHECK(exec(db, "UPDATE boot SET clock = 'icount'") != 0);
	CHECK(exec(db, "UPDATE boot SET clock = NULL, clock_shift = NULL") == 0);
	check_q(db, "SELECT count(*) FROM metric", "1");
	/* migration 15: a session tagged plain "nightly" is not one of the
	 * nightly's (its tags were nightly-*); one that is, is marked */
	check_q(db, "SELECT nightly FROM session WHERE id = 1", "0");
	/* migration 16: a boot stored before has no qemu version; one that has
	 * is in the view */
	check_q(db, "SELECT quote(qemu_version) FROM results", "NULL");
	CHECK(exec(db, "UPDATE boot SET qemu_version = '10.0.13'") == 0);
	check_q(db, "SELECT qemu_version FROM results", "10.0.13");
	CHECK(exec(db, "UPDATE boot SET qemu_version = NULL") == 0);
	/* migration 6 rebuilt histogram: its row is there */
	check_q(db, "SELECT run_id, name, unit, data FROM histogram", "1|latency_us|us|{\"total\":0}");
	check_q(db, "SELECT before, after FROM schedstat", "b|a");
	db_close(db);

	/* db_open on the migrated file opens it as is */
	err = NULL;
	p = tmp_path("v1.db");
	CHECK(db_open(p, DB_READONLY, &db, &err) == 0);
	free(p);
	free(err);
	if (db) {
		check_q(db, "SELECT value FROM results", "0.769");
		db_close(db);
	}
}

TEST(migrate_v1_then_open_migrates)
{
	/* a v1 file opened with db_open (read-write) is brought to the newest */
	char *p = tmp_path("other.db");
	struct db *db = NULL;
	char *err = NULL;
	CHECK(db_open_raw(p, &db, &err) == 0);
	CHECK(db_migrate_to(db, 1) == 0);
	db_close(db);
	CHECK(db_open(p, DB_READWRITE, &db, &err) == 0);
	CHECK(db && db_user_version(db) == db_latest_version());
	db_close(db);
	free(p);
	free(err);
}

TEST(migrate_v3_sets_censored_from_notes)
{
	/* rows stored before the censored column said "lower bound" in their
	 * note only: migration 4 turns that into the flag */
	char *p = tmp_path("v3.db");
	struct db *db = NULL;
	char *err = NULL;
	CHECK(db_open_raw(p, &db, &err) == 0);
	free(p);
	if (!db)
		return;
	CHECK(db_migrate_to(db, 3) == 0);
	CHECK(exec(db,
		   "INSERT INTO machine (id, name, fingerprint) VALUES (1, 'box', 'fp1');"
		   "INSERT INTO session (id, name, plan_json, target, harness_version)"
		   "  VALUES (1, 'old', '{}', 'qemu', 'v0');"
		   "INSERT INTO boot (id, session_id, seq, cfg, status, machine_id, preempt, cmdline)"
		   "  VALUES (1, 1, 0, 0, 'ok', 1, 'none', 'preempt=none');"
		   "INSERT INTO run (id, session_id, boot_id, seq, round, workload, params, rep, status)"
		   "  VALUES (1, 1, 1, 0, 0, 'cyclictest', '{}', 0, 'ok');"
		   "INSERT INTO metric (run_id, workload, name, value, unit, better, note) VALUES"
		   "  (1, 'cyclictest', 'lat_p999_us', 10000, 'us', 'lower',"
		   "   'in histogram overflow: the value is a lower bound'),"
		   "  (1, 'cyclictest', 'lat_p99_us', 9017, 'us', 'lower', NULL),"
		   "  (1, 'cyclictest', 'lat_p50_us', 900, 'us', 'lower', 'something else');") == 0);
	CHECK(db_migrate_to(db, db_latest_version()) == 0);
	check_q(db, "SELECT metric, value, censored FROM results ORDER BY metric",
		"lat_p50_us|900.0|0;lat_p999_us|10000.0|1;lat_p99_us|9017.0|0");
	/* the flag is 0 or 1 */
	CHECK(db_exec(db, "UPDATE metric SET censored = 2") != 0);
	db_close(db);
}

TEST(migrate_v14_marks_the_nightly_sessions)
{
	/* before schema 15 the robot knew its sessions by their tag alone
	 * (nightly-*): migration 15 marks those as the nightly's, and no other */
	char *p = tmp_path("v14.db");
	struct db *db = NULL;
	char *err = NULL;
	CHECK(db_open_raw(p, &db, &err) == 0);
	free(p);
	if (!db)
		return;
	CHECK(db_migrate_to(db, 14) == 0);
	CHECK(exec(db,
		   "INSERT INTO session (id, name, plan_json, tag, target, harness_version) VALUES"
		   "  (1, 'p', '{}', 'nightly-2026-01-01', 'local', 'v0'),"
		   "  (2, 'p', '{}', 'night-2', 'local', 'v0'),"
		   "  (3, 'p', '{}', NULL, 'local', 'v0'),"
		   "  (4, 'p', '{}', 'nightlyx', 'local', 'v0');") == 0);
	CHECK(db_migrate_to(db, db_latest_version()) == 0);
	check_q(db, "SELECT group_concat(id || '=' || nightly, ' ') FROM session", "1=1 2=0 3=0 4=0");
	CHECK(db_exec(db, "UPDATE session SET nightly = 2") != 0);
	db_close(db);
}

TEST(migrate_v17_splits_skip_reasons_and_notes)
{
	/* before schema 18 a skipped run's reason and a good run's notes were
	 * its error: "boot failed: ..." (redone by --resume), "note: A; note:
	 * B"; migration 18 puts both in their columns */
	char *p = tmp_path("v17.db");
	struct db *db = NULL;
	char *err = NULL;
	CHECK(db_open_raw(p, &db, &err) == 0);
	free(p);
	if (!db)
		return;
	CHECK(db_migrate_to(db, 17) == 0);
	CHECK(exec(db,
		   "INSERT INTO session (id, name, plan_json, target, harness_version, status) VALUES"
		   "  (1, 'p', '{}', 'local', 'v0', 'interrupted');"
		   "INSERT INTO boot (id, session_id, seq, cfg, status) VALUES (1, 1, 0, 0, 'failed'),"
		   "  (2, 1, 1, 1, 'ok');"
		   "INSERT INTO run (id, session_id, boot_id, seq, round, workload, params, rep,"
		   "  status, error) VALUES"
		   "  (1, 1, 1, 0, 0, 'w', '{}', 0, 'skipped', 'boot failed: no banner'),"
		   "  (2, 1, 1, 1, 0, 'w', '{}', 1, 'skipped', 'boot mismatch: preempt is none'),"
		   "  (3, 1, 2, 2, 0, 'w', '{}', 0, 'skipped', 'unsupported by this kernel: no x'),"
		   "  (4, 1, 2, 3, 0, 'w', '{}', 1, 'skipped',"
		   "   'decided (sequential repetitions): p < 0.01'),"
		   "  (5, 1, 2, 4, 0, 'w', '{}', 2, 'skipped', 'evidence not needed: nothing flagged'),"
		   "  (6, 1, 2, 5, 0, 'w', '{}', 3, 'skipped', 'something else'),"
		   "  (7, 1, 2, 6, 0, 'w', '{}', 4, 'ok', 'note: no placement; note: traced run (x)'),"
		   "  (8, 1, 2, 7, 0, 'w', '{}', 5, 'failed', 'w exited 1; note: traced for evidence, y'),"
		   "  (9, 1, 2, 8, 0, 'w', '{}', 6, 'ok', NULL),"
		   "  (10, 1, 2, 9, 0, 'w', '{}', 7, 'interrupted', 'failed: target lost: z');") == 0);
	/* what the counts said before: the boot-failed run was to do */
	CHECK(db_migrate_to(db, db_latest_version()) == 0);
	check_q(db, "SELECT group_concat(id || '=' || coalesce(skip_reason, '-'), ' ') FROM run",
		"1=boot-failed 2=boot-mismatch 3=unsupported 4=decided 5=not-needed 6=- 7=- 8=- 9=- "
		"10=-");
	check_q(db, "SELECT id, coalesce(error, '-'), replace(notes, char(10), '|') FROM run"
		    " WHERE notes IS NOT NULL ORDER BY id",
		"7|-|no placement|traced run (x);8|w exited 1|traced for evidence, y");
	check_q(db, "SELECT error FROM run WHERE id = 1", "boot failed: no banner");
	int planned, ok, failed, skipped;
	CHECK(db_session_counts(db, 1, &planned, &ok, &failed, &skipped) == 0);
	CHECK(planned == 2 && ok == 2 && failed == 1 && skipped == 5);
	CHECK(db_exec(db, "UPDATE run SET skip_reason = 'boot failed' WHERE id = 1") != 0);
	db_close(db);
	free(err);
}

TEST(migrate_v11_keeps_bisect_threshold_rule)
{
	/* a bisection stored before thresholds were symmetric (schema 12)
	 * keeps the percent rule; a new one is stored with the ratio rule */
	char *p = tmp_path("v11.db");
	struct db *db = NULL;
	char *err = NULL;
	CHECK(db_open_raw(p, &db, &err) == 0);
	free(p);
	if (!db)
		return;
	CHECK(db_migrate_to(db, 11) == 0);
	CHECK(exec(db,
		   "INSERT INTO bisect (id, inputs, plan_json, git_dir, good, bad, good_ref, bad_ref,"
		   "  workload, metric, repetitions, max_repetitions, max_steps, alpha,"
		   "  threshold_pct) VALUES (1, 'in-old', '{}', '/g', 'a', 'b', 'a1', 'b1',"
		   "  'pingpong', 'rps', 3, 9, 5, 0.05, 2);") == 0);
	CHECK(db_migrate_to(db, db_latest_version()) == 0);
	check_q(db, "SELECT threshold_rule FROM bisect WHERE id = 1", "percent");
	struct db_bisect b;
	CHECK(db_bisect_load(db, "1", &b) == 0);
	CHECK(b.threshold_percent == 1 && b.threshold_pct == 2);
	db_bisect_free(&b);
	struct db_bisect nb = { .inputs = "in-new", .plan_json = "{}", .git_dir = "/g",
				.good = "a", .bad = "b", .good_ref = "a1", .bad_ref = "b1",
				.workload = "pingpong", .metric = "rps", .repetitions = 3,
				.max_repetitions = 9, .max_steps = 5, .alpha = 0.05,
				.threshold_pct = 100 };
	int existed = 0;
	int64_t id = db_bisect_create(db, &nb, &existed);
	CHECK(id == 2 && !existed);
	check_q(db, "SELECT threshold_rule FROM bisect WHERE id = 2", "ratio");
	CHECK(db_bisect_load(db, "2", &b) == 0);
	CHECK(b.threshold_percent == 0);
	db_bisect_free(&b);
	/* only the two rules */
	CHECK(db_exec(db, "UPDATE bisect SET threshold_rule = 'log'") != 0);
	/* schema 13: the rows there were ran without the drift guard; a new
	 * one stores its setting */
	check_q(db, "SELECT drift_guard FROM bisect WHERE id = 1", "0");
	CHECK(db_bisect_load(db, "1", &b) == 0);
	CHECK(b.drift_guard == 0);
	db_bisect_free(&b);
	nb.inputs = "in-guard";
	nb.drift_guard = 1;
	id = db_bisect_create(db, &nb, &existed);
	CHECK(id == 3 && !existed);
	CHECK(db_bisect_load(db, "3", &b) == 0);
	CHECK(b.drift_guard == 1);
	db_bisect_free(&b);
	CHECK(db_exec(db, "UPDATE bisect SET drift_guard = 2") != 0);
	/* and the looks' rule: Bonferroni for the rows before, what a new
	 * one says */
	check_q(db, "SELECT group_concat(looks_rule) FROM bisect", "bonferroni,bonferroni,bonferroni");
	CHECK(db_bisect_load(db, "1", &b) == 0);
	CHECK(b.looks_exact == 0);
	db_bisect_free(&b);
	nb.inputs = "in-exact";
	nb.looks_exact = 1;
	id = db_bisect_create(db, &nb, &existed);
	check_q(db, "SELECT looks_rule FROM bisect WHERE id = 4", "exact");
	CHECK(db_bisect_load(db, "4", &b) == 0);
	CHECK(b.looks_exact == 1);
	db_bisect_free(&b);
	CHECK(db_exec(db, "UPDATE bisect SET looks_rule = 'pocock'") != 0);
	db_close(db);
	free(err);
}

static const char *const si_text =
	"{\"hostname\": {\"value\": \"vm\", \"source\": \"/proc/sys/kernel/hostname\"},"
	" \"cpu_model\": {\"value\": \"QEMU Virtual CPU\"},"
	" \"ncpus\": {\"value\": 2},"
	" \"llc_groups\": {\"value\": [\"0-1\"]},"
	" \"kernel_release\": {\"value\": \"6.1.0-57-amd64\"},"
	" \"kernel_version\": {\"value\": \"#1 SMP PREEMPT_DYNAMIC\"},"
	" \"config_hash\": {\"value\": \"abc\"},"
	" \"hz\": {\"value\": 250}, \"sched_mc\": {\"value\": 1},"
	" \"preempt_build\": {\"value\": \"voluntary\"},"
	" \"preempt_dynamic\": {\"value\": true}}";

struct fixture {
	struct db *db;
	int64_t sid, boot_ok, boot_bad, run[4];
	json_t *si;
};

static int fixture_setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	rm_db("t.db");
	f->db = open_fresh("t.db");
	if (!f->db)
		return -1;
	f->si = json_loads(si_text, 0, NULL);
	struct db_session s = { .name = "ab", .plan_path = "p.json", .plan_json = "{}",
				.tag = "t1", .target = "local", .version = "test", .seed = 1 };
	f->sid = db_session_create(f->db, &s);
	f->boot_ok = db_boot_plan(f->db, f->sid, 0, 0, NULL, "full", "");
	f->boot_bad = db_boot_plan(f->db, f->sid, 1, 1, NULL, "none", "");
	int64_t mid = db_machine_get(f->db, f->si), kid = db_kernel_get(f->db, f->si);
	struct db_boot_result ok = { .status = "ok", .machine_id = mid, .kernel_id = kid,
				     .preempt = "full", .cmdline = "quiet", .method = "runtime",
				     .sysinfo = f->si };
	struct db_boot_result mismatch = { .status = "mismatch", .machine_id = mid,
					   .kernel_id = kid, .preempt = "voluntary",
					   .cmdline = "quiet", .error = "preempt is voluntary" };
	if (f->sid <= 0 || f->boot_ok <= 0 || f->boot_bad <= 0 || mid <= 0 || kid <= 0 ||
	    db_boot_finish(f->db, f->boot_ok, &ok) || db_boot_finish(f->db, f->boot_bad, &mismatch)) {
		printf("#   fixture: %s\n", db_errmsg(f->db));
		return -1;
	}
	/* seq 0..2 in boot_ok, seq 3 in the mismatched boot */
	for (int i = 0; i < 4; i++) {
		f->run[i] = db_run_plan(f->db, f->sid, i < 3 ? f->boot_ok : f->boot_bad, i, 0,
					"hackbench", "{\"groups\":4}", i == 1 ? NULL : "{}", 0);
		if (f->run[i] <= 0)
			return -1;
	}
	return 0;
}

static void fixture_teardown(struct fixture *f)
{
	json_decref(f->si);
	db_close(f->db);
	rm_db("t.db");
}

TEST(machine_and_kernel_are_deduplicated)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	CHECK(db_machine_get(f.db, f.si) == db_machine_get(f.db, f.si));
	CHECK(db_kernel_get(f.db, f.si) == db_kernel_get(f.db, f.si));
	check_q(f.db, "SELECT name, cpu_model, ncpus, fingerprint FROM machine",
		"vm|QEMU Virtual CPU|2|vm|QEMU Virtual CPU|2|[\"0-1\"]");
	check_q(f.db, "SELECT release, version, config_hash, hz, sched_mc, preempt_build,"
		      " preempt_dynamic FROM kernel",
		"6.1.0-57-amd64|#1 SMP PREEMPT_DYNAMIC|abc|250|1|voluntary|1");
	/* another kernel release is another row */
	json_object_set_new(json_object_get(f.si, "kernel_release"), "value",
			    json_string("6.1.0-58-amd64"));
	CHECK(db_kernel_get(f.db, f.si) == 2);
	fixture_teardown(&f);
}

static const struct db_metric metrics_ok[] = {
	{ .workload = "hackbench", .name = "time_s", .unit = "s", .better = "lower", .value = 0.769 },
	{ .workload = "hackbench", .name = "p99_us", .unit = "us", .better = NULL, .value = 87,
	  .note = "n", .censored = 1 },
};

TEST(run_finish_and_results_view)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	json_t *hist = json_loads("{\"scheme\":\"linear\",\"nbuckets\":200,\"buckets\":[[24,3]],"
				  "\"overflow\":1,\"total\":4}", 0, NULL);
	struct db_hist h = { .name = "latency_us", .unit = "us", .data = hist };
	struct db_run_result ok = { .status = "ok", .wall_s = 1.25, .exit_code = 0,
				    .argv_json = "[\"hackbench\"]", .out = "Time: 0.769\n",
				    .err = "", .metrics = metrics_ok, .nmetrics = 2, .hists = &h,
				    .nhists = 1, .schedstat_before = "version 15\n",
				    .schedstat_after = "version 15\n" };
	CHECK(db_run_start(f.db, f.run[0]) == 0);
	check_q(f.db, "SELECT status FROM run WHERE seq = 0", "running");
	CHECK(db_run_finish(f.db, f.run[0], &ok) == 0);
	/* a failed run with a metric: stored, not in results */
	struct db_run_result failed = ok;
	failed.status = "failed";
	failed.error = "exit code 1";
	failed.nhists = 0;
	CHECK(db_run_finish(f.db, f.run[2], &failed) == 0);
	/* an ok run of a mismatched boot: not in results either */
	CHECK(db_run_finish(f.db, f.run[3], &ok) == 0);
	check_q(f.db, "SELECT seq, status, wall_s, exit_code, stdout, error FROM run ORDER BY seq",
		"0|ok|1.25|0|Time: 0.769\n|NULL;1|planned|NULL|NULL|NULL|NULL;"
		"2|failed|1.25|0|Time: 0.769\n|exit code 1;3|ok|1.25|0|Time: 0.769\n|NULL");
	check_q(f.db, "SELECT count(*) FROM metric", "6");
	check_q(f.db, "SELECT run_id, metric, value, unit, better, note, preempt, cmdline, machine,"
		      " kernel_release, hz, sched_mc, tag, knobs, workload, target, censored"
		      " FROM results ORDER BY metric",
		"1|p99_us|87.0|us|none|n|full|quiet|vm|6.1.0-57-amd64|250|1|t1|{}|hackbench|local|1;"
		"1|time_s|0.769|s|lower|NULL|full|quiet|vm|6.1.0-57-amd64|250|1|t1|{}|hackbench|local|0");
	/* runs 1 and 4 had the histogram, the failed run 3 none */
	check_q(f.db, "SELECT run_id, name, unit, data FROM histogram ORDER BY run_id",
		"1|latency_us|us|{\"buckets\":[[24,3]],\"nbuckets\":200,\"overflow\":1,"
		"\"scheme\":\"linear\",\"total\":4};"
		"4|latency_us|us|{\"buckets\":[[24,3]],\"nbuckets\":200,\"overflow\":1,"
		"\"scheme\":\"linear\",\"total\":4}");
	check_q(f.db, "SELECT run_id, before FROM schedstat ORDER BY run_id",
		"1|version 15\n;3|version 15\n;4|version 15\n");
	/* the run planned with NULL knobs got "{}" */
	check_q(f.db, "SELECT knobs FROM run WHERE seq = 1", "{}");
	/* once the boot is ok, the run of boot_bad shows up */
	CHECK(exec(f.db, "UPDATE boot SET status = 'ok' WHERE status = 'mismatch'") == 0);
	check_q(f.db, "SELECT count(*), group_concat(DISTINCT preempt) FROM results WHERE run_id = 4",
		"2|voluntary");
	json_decref(hist);
	fixture_teardown(&f);
}

static int evidence_row(void *ctx, const struct db_evidence_row *r)
{
	struct strbuf *sb = ctx;
	strbuf_addf(sb, "%lld|%d|%s|%s|%s|%d|%g|%s|%s;", (long long)r->run_id, r->cfg, r->status,
		    r->error, r->boot_status, r->has_value, r->has_value ? r->value : -1, r->unit,
		    r->better);
	return 0;
}

/* evidence triggers (migration 10): a traced run's decision is stored and
 * replaced (a resumed session decides again), NULL for none; the runs of a
 * workload come back in execution order with their boot's configuration
 * and the metric's value for ok runs only */
TEST(evidence_decision_and_runs)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	struct db_run_result ok = { .status = "ok", .metrics = metrics_ok, .nmetrics = 2 };
	struct db_run_result failed = { .status = "failed", .error = "exit 1",
					.metrics = metrics_ok, .nmetrics = 1 };
	CHECK(db_run_finish(f.db, f.run[0], &ok) == 0);
	CHECK(db_run_finish(f.db, f.run[2], &failed) == 0);
	int64_t tr = db_run_plan(f.db, f.sid, f.boot_ok, 9, 1, "hackbench",
				 "{\"evidence\":{\"trace_s\":5},\"groups\":4}", "{}", 1);
	CHECK(tr > 0);
	check_q(f.db, "SELECT evidence_of, evidence_why FROM run WHERE id = 5", "NULL|NULL");
	CHECK(db_run_set_evidence(f.db, tr, f.run[2], "flagged: run 3 failed") == 0);
	check_q(f.db, "SELECT evidence_of, evidence_why FROM run WHERE id = 5",
		"3|flagged: run 3 failed");
	CHECK(db_run_set_evidence(f.db, tr, 0, NULL) == 0);
	check_q(f.db, "SELECT evidence_of, evidence_why FROM run WHERE id = 5", "NULL|NULL");
	struct strbuf sb = STRBUF_INIT;
	CHECK(db_evidence_runs(f.db, f.sid, 0, "hackbench", "time_s", evidence_row, &sb) == 0);
	CHECK_STR(sb.buf, "1|0|ok||ok|1|0.769|s|lower;2|0|planned||ok|0|-1||;"
			  "3|0|failed|exit 1|ok|0|-1||;5|0|planned||ok|0|-1||;");
	strbuf_reset(&sb);
	CHECK(db_evidence_runs(f.db, f.sid, 1, "hackbench", "time_s", evidence_row, &sb) == 0);
	CHECK_STR(sb.buf, "4|1|planned||mismatch|0|-1||;");
	strbuf_reset(&sb);
	CHECK(db_evidence_runs(f.db, f.sid, 0, "cyclictest", "time_s", evidence_row, &sb) == 0);
	CHECK_STR(sb.buf, "");
	strbuf_release(&sb);
	fixture_teardown(&f);
}

/* kernels from git (migration 6): the boot's commit and description are in
 * results; a re-planned boot keeps them; the kernel row gets them once, and
 * only through db_kernel_set_git */
TEST(git_commit_in_results)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	const char *c1 = "0123456789abcdef0123456789abcdef01234567";
	CHECK(db_boot_set_git(f.db, f.boot_ok, c1, "v6.1-2-g0123456789ab+1 patch") == 0);
	struct db_run_result ok = { .status = "ok", .wall_s = 1, .exit_code = 0,
				    .metrics = metrics_ok, .nmetrics = 2 };
	CHECK(db_run_finish(f.db, f.run[0], &ok) == 0);
	check_q(f.db, "SELECT DISTINCT kernel_commit, kernel_describe FROM results",
		"0123456789abcdef0123456789abcdef01234567|v6.1-2-g0123456789ab+1 patch");
	int64_t nb = db_boot_replan(f.db, f.boot_ok);
	CHECK(nb > 0);
	char *sql = xstrfmt("SELECT kernel_commit FROM boot WHERE id = %lld", (long long)nb);
	check_q(f.db, sql, c1);
	free(sql);
	check_q(f.db, "SELECT git_commit FROM kernel", "NULL");
	int64_t kid = db_kernel_get(f.db, f.si);
	CHECK(db_kernel_set_git(f.db, kid, c1, "d1") == 0);
	CHECK(db_kernel_set_git(f.db, kid, "ffffffffffffffffffffffffffffffffffffffff", "d2") == 0);
	check_q(f.db, "SELECT git_commit, git_describe FROM kernel",
		"0123456789abcdef0123456789abcdef01234567|d1");
	/* a boot without a commit of its own shows the kernel row's */
	CHECK(exec(f.db, "UPDATE boot SET kernel_commit = NULL, kernel_describe = NULL") == 0);
	check_q(f.db, "SELECT DISTINCT kernel_describe FROM results", "d1");
	fixture_teardown(&f);
}

TEST(run_finish_is_all_or_nothing)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	struct db_metric bad[] = {
		{ .workload = "hackbench", .name = "time_s", .unit = "s", .better = "lower",
		  .value = 1 },
		{ .workload = "hackbench", .name = "x", .unit = "s", .better = "smaller", .value = 2 },
	};
	struct db_run_result r = { .status = "ok", .metrics = bad, .nmetrics = 2 };
	CHECK(db_run_start(f.db, f.run[0]) == 0);
	CHECK(db_run_finish(f.db, f.run[0], &r) == -1);
	CHECK_CONTAINS(db_errmsg(f.db), "inserting metric");
	/* nothing of it was kept: status still running, no metric */
	check_q(f.db, "SELECT status, finished_at FROM run WHERE seq = 0", "running|NULL");
	check_q(f.db, "SELECT count(*) FROM metric", "0");
	/* an invalid run status is refused as a whole too */
	struct db_run_result r2 = { .status = "great", .metrics = metrics_ok, .nmetrics = 2 };
	CHECK(db_run_finish(f.db, f.run[0], &r2) == -1);
	CHECK_CONTAINS(db_errmsg(f.db), "finishing run");
	check_q(f.db, "SELECT count(*) FROM metric", "0");
	/* the database is usable afterwards (no transaction left open) */
	struct db_run_result good = { .status = "ok", .metrics = metrics_ok, .nmetrics = 2 };
	CHECK(db_run_finish(f.db, f.run[0], &good) == 0);
	check_q(f.db, "SELECT count(*) FROM results", "2");
	fixture_teardown(&f);
}

/* metrics go in batches of 16, 8, 4, 2 and 1 rows per statement: 37 of
 * them (16 + 16 + 4 + 1) and 31 (16 + 8 + 4 + 2 + 1) all arrive with their
 * own values and flags; a bad row inside a batch refuses the whole run */
TEST(run_finish_many_metrics)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	struct db_metric m[37];
	char names[37][16];
	for (int i = 0; i < 37; i++) {
		snprintf(names[i], sizeof(names[i]), "m%02d", i);
		m[i] = (struct db_metric){ .workload = "hackbench", .name = names[i], .unit = "us",
					   .better = i % 2 ? "lower" : "higher",
					   .note = i == 20 ? "twenty" : NULL, .value = 100 + i,
					   .censored = i == 36 };
	}
	struct db_run_result r = { .status = "ok", .metrics = m, .nmetrics = 37 };
	CHECK(db_run_finish(f.db, f.run[0], &r) == 0);
	check_q(f.db, "SELECT count(*), sum(value), sum(censored), count(note) FROM metric",
		"37|4366.0|1|1");
	check_q(f.db, "SELECT name, value, better, note FROM metric WHERE name IN ('m15', 'm16',"
		      " 'm20', 'm32') ORDER BY name",
		"m15|115.0|lower|NULL;m16|116.0|higher|NULL;m20|120.0|higher|twenty;"
		"m32|132.0|higher|NULL");
	check_q(f.db, "SELECT name FROM metric WHERE censored = 1", "m36");
	r.nmetrics = 31;
	CHECK(db_run_finish(f.db, f.run[1], &r) == 0);
	check_q(f.db, "SELECT count(*), sum(value), min(name), max(name) FROM metric WHERE run_id = 2",
		"31|3565.0|m00|m30");
	r.nmetrics = 37;
	m[5].better = "smaller";
	CHECK(db_run_finish(f.db, f.run[2], &r) == -1);
	check_q(f.db, "SELECT count(*) FROM metric WHERE run_id = 3", "0");
	fixture_teardown(&f);
}

/* a bulk path stores several runs in one transaction of its own: each run
 * is a savepoint in it; a run that fails leaves nothing, the others are
 * committed together */
TEST(run_finish_inside_a_bulk_transaction)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	struct db_metric bad[] = {
		{ .workload = "hackbench", .name = "x", .unit = "s", .better = "smaller", .value = 2 },
	};
	struct db_run_result good = { .status = "ok", .metrics = metrics_ok, .nmetrics = 2,
				      .schedstat_before = "b", .schedstat_after = "a" };
	struct db_run_result r = { .status = "ok", .metrics = bad, .nmetrics = 1 };
	CHECK(db_begin(f.db) == 0);
	CHECK(db_run_finish(f.db, f.run[0], &good) == 0);
	CHECK(db_run_finish(f.db, f.run[2], &r) == -1);
	CHECK_CONTAINS(db_errmsg(f.db), "inserting metric");
	CHECK(db_run_finish(f.db, f.run[1], &good) == 0);
	CHECK(db_commit(f.db) == 0);
	check_q(f.db, "SELECT seq, status FROM run WHERE seq < 3 ORDER BY seq",
		"0|ok;1|ok;2|planned");
	check_q(f.db, "SELECT run_id, count(*) FROM metric GROUP BY run_id", "1|2;2|2");
	check_q(f.db, "SELECT count(*) FROM schedstat", "2");
	/* and outside a transaction it commits by itself, as before */
	CHECK(db_run_finish(f.db, f.run[2], &good) == 0);
	check_q(f.db, "SELECT count(*) FROM metric", "6");
	fixture_teardown(&f);
}

TEST(pending_runs_and_reset)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	/* planned out of order: seq 6 before seq 5 */
	int64_t r6 = db_run_plan(f.db, f.sid, f.boot_ok, 6, 2, "stress-ng", "{}", "{\"a\":1}", 2);
	int64_t r5 = db_run_plan(f.db, f.sid, f.boot_ok, 5, 1, "cyclictest", "{}", "{}", 1);
	CHECK(r6 > 0 && r5 > r6);
	/* seq must be unique in a session */
	CHECK(db_run_plan(f.db, f.sid, f.boot_ok, 5, 1, "cyclictest", "{}", "{}", 1) == -1);
	struct db_run_result ok = { .status = "ok" };
	struct db_run_result skipped = { .status = "skipped" };
	CHECK(db_run_finish(f.db, f.run[1], &ok) == 0);
	CHECK(db_run_finish(f.db, f.run[3], &skipped) == 0);
	CHECK(db_run_start(f.db, f.run[2]) == 0);   /* running when the controller died */
	struct db_pending_run *runs = NULL;
	size_t n = 0;
	CHECK(db_pending_runs(f.db, f.sid, &runs, &n) == 0);
	CHECK(n == 4);
	static const int seqs[] = { 0, 2, 5, 6 };
	for (size_t i = 0; i < n && i < 4; i++)
		CHECK(runs[i].seq == seqs[i]);
	if (n == 4) {
		CHECK(runs[0].run_id == f.run[0] && runs[1].run_id == f.run[2]);
		CHECK(runs[2].run_id == r5 && runs[3].run_id == r6);
		CHECK_STR(runs[3].workload, "stress-ng");
		CHECK_STR(runs[3].knobs, "{\"a\":1}");
		CHECK(runs[3].round == 2 && runs[3].rep == 2 && runs[3].boot_id == f.boot_ok);
		CHECK_STR(runs[2].workload, "cyclictest");
		CHECK(runs[2].round == 1 && runs[2].rep == 1);
	}
	db_pending_runs_free(runs, n);
	int planned, nok, failed, nskipped;
	CHECK(db_session_counts(f.db, f.sid, &planned, &nok, &failed, &nskipped) == 0);
	CHECK(planned == 4 && nok == 1 && failed == 0 && nskipped == 1);
	/* crash recovery: the running run becomes planned again */
	CHECK(db_session_reset_running(f.db, f.sid) == 0);
	check_q(f.db, "SELECT seq, status, started_at FROM run WHERE status NOT IN ('ok','skipped')"
		      " ORDER BY seq", "0|planned|NULL;2|planned|NULL;5|planned|NULL;6|planned|NULL");
	/* other sessions are untouched */
	struct db_session s2 = { .name = "b", .plan_json = "{}", .target = "local",
				 .version = "test" };
	int64_t sid2 = db_session_create(f.db, &s2);
	int64_t b2 = db_boot_plan(f.db, sid2, 0, 0, NULL, NULL, NULL);
	int64_t x = db_run_plan(f.db, sid2, b2, 0, 0, "hackbench", "{}", "{}", 0);
	CHECK(db_run_start(f.db, x) == 0);
	CHECK(db_session_reset_running(f.db, f.sid) == 0);
	check_q(f.db, "SELECT status FROM run WHERE session_id = 2", "running");
	CHECK(db_pending_runs(f.db, sid2, &runs, &n) == 0);
	CHECK(n == 1);
	db_pending_runs_free(runs, n);
	fixture_teardown(&f);
}

/* the first reason a run was left for --resume, in plan order: an
 * interrupted run or one skipped because its boot failed, never a run
 * skipped for another reason or one that failed */
TEST(first_resumable_reason)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	char *why = (char *)"x";
	CHECK(db_session_first_resumable(f.db, f.sid, &why) == 0);
	CHECK(why == NULL);
	struct db_run_result unsup = { .status = "skipped", .error = "unsupported by this kernel" };
	struct db_run_result fail = { .status = "failed", .error = "exit 1" };
	struct db_run_result boot = { .status = "skipped", .error = "boot failed: no banner",
				      .skip = SKIP_BOOT_FAILED };
	/* the words of an error are no state: this one is skipped for good */
	struct db_run_result said = { .status = "skipped", .error = "boot failed: in words only" };
	CHECK(db_run_finish(f.db, f.run[2], &said) == 0);
	CHECK(db_session_first_resumable(f.db, f.sid, &why) == 0);
	CHECK(why == NULL);
	CHECK(exec(f.db, "UPDATE run SET status = 'planned', error = NULL WHERE seq = 2") == 0);
	struct db_run_result lost = { .status = "interrupted",
				      .error = "failed: target lost: closed\n--- console" };
	CHECK(db_run_finish(f.db, f.run[0], &unsup) == 0);
	CHECK(db_run_finish(f.db, f.run[1], &fail) == 0);
	CHECK(db_session_first_resumable(f.db, f.sid, &why) == 0);
	CHECK(why == NULL);
	CHECK(db_run_finish(f.db, f.run[3], &boot) == 0);
	CHECK(db_session_first_resumable(f.db, f.sid, &why) == 0);
	CHECK_STR(why, "boot failed: no banner");
	free(why);
	CHECK(db_run_finish(f.db, f.run[2], &lost) == 0);
	CHECK(db_session_first_resumable(f.db, f.sid, &why) == 0);
	CHECK_STR(why, "failed: target lost: closed\n--- console");
	free(why);
	fixture_teardown(&f);
}

/* one row per class of what is left to do (db/runstate.c), and every
 * reader that counts runs of a session asks the same table: a run skipped
 * because its boot failed is to do for --resume (db_session_counts, the
 * pending list after the reset), for `schedlab sessions`
 * (db_sessions_summary) and for serve (db_serve_rows); one skipped because
 * its boot did not match is skipped for good */
struct counts_row {
	const char *want[4];
	char got[4][32];
};

static int grab_counts(void *ctx, int nc, const char *const *names, const char *const *vals)
{
	struct counts_row *c = ctx;
	if (!vals)
		return 0;
	for (int i = 0; i < nc; i++)
		for (int k = 0; k < 4; k++)
			if (c->want[k] && !strcmp(names[i], c->want[k]))
				snprintf(c->got[k], sizeof(c->got[k]), "%s", vals[i] ? vals[i] : "");
	return 0;
}

TEST(boot_failed_is_to_do_everywhere)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	/* run 0 ok; run 1 skipped: its boot failed; run 2 failed; run 3 (the
	   mismatched boot) skipped for good */
	struct db_run_result ok = { .status = "ok" };
	struct db_run_result bootf = { .status = "skipped", .error = "boot failed: no banner",
				       .skip = boot_skip_reason(BOOT_ST_FAILED) };
	struct db_run_result fail = { .status = "failed", .error = "exit 1",
				      .notes = "traced for evidence, x" };
	struct db_run_result mism = { .status = "skipped", .error = "boot mismatch: none",
				      .skip = boot_skip_reason(BOOT_ST_MISMATCH) };
	CHECK(db_run_finish(f.db, f.run[0], &ok) == 0);
	CHECK(db_run_finish(f.db, f.run[1], &bootf) == 0);
	CHECK(db_run_finish(f.db, f.run[2], &fail) == 0);
	CHECK(db_run_finish(f.db, f.run[3], &mism) == 0);
	check_q(f.db, "SELECT group_concat(coalesce(skip_reason, '-') || ',' || coalesce(notes, '-'),"
		      " ' ') FROM run", "-,- boot-failed,- -,traced for evidence, x boot-mismatch,-");
	int planned, nok, failed, skipped;
	CHECK(db_session_counts(f.db, f.sid, &planned, &nok, &failed, &skipped) == 0);
	CHECK(planned == 1 && nok == 1 && failed == 1 && skipped == 1);
	struct counts_row s = { .want = { "todo", "skipped", "ok", "failed" } };
	CHECK(db_sessions_summary(f.db, grab_counts, &s) == 0);
	CHECK_STR(s.got[0], "1");
	CHECK_STR(s.got[1], "1");
	CHECK_STR(s.got[2], "1");
	CHECK_STR(s.got[3], "1");
	struct counts_row v = { .want = { "todo", "runs", "ok", "failed" } };
	CHECK(db_serve_rows(f.db, DB_SERVE_SESSION, f.sid, grab_counts, &v) == 0);
	CHECK_STR(v.got[0], "1");
	CHECK_STR(v.got[1], "4");
	struct counts_row r = { .want = { "todo" } };
	CHECK(db_serve_rows(f.db, DB_SERVE_RECENT, 10, grab_counts, &r) == 0);
	CHECK_STR(r.got[0], "1");
	/* a bisection resumes the session of a commit whose boot failed
	   (docs/bisect.md: a later --resume tries that boot once more) */
	CHECK(exec(f.db, "UPDATE session SET plan_json = '{\"matrix\": {\"kernel\":"
			 " {\"commit\": \"c0ffee\"}}}'") == 0);
	struct db_bisect_session *bs = NULL;
	size_t nbs = 0;
	CHECK(db_bisect_sessions(f.db, "t1", "c0ffee", &bs, &nbs) == 0);
	CHECK(nbs == 1 && bs[0].todo == 1);
	db_bisect_sessions_free(bs, nbs);
	/* a finished run is not finished again: the table refuses the move */
	CHECK(db_run_finish(f.db, f.run[0], &fail) == -1);
	CHECK(strstr(db_errmsg(f.db), "run is ok and cannot become failed (from ok: none)") != NULL);
	CHECK(db_run_finish(f.db, f.run[3], &ok) == -1);
	CHECK(strstr(db_errmsg(f.db), "run is skipped for good") == NULL);
	CHECK(strstr(db_errmsg(f.db), "run is skipped and cannot become ok") != NULL);
	struct db_run_result wrong = { .status = "failed", .skip = SKIP_BOOT_FAILED };
	CHECK(db_run_finish(f.db, f.run[0], &wrong) == -1);
	/* --resume: the boot-failed run goes back to planned, the mismatched
	   one stays */
	CHECK(db_session_reset_running(f.db, f.sid) == 0);
	check_q(f.db, "SELECT group_concat(seq || '=' || status || ',' || coalesce(skip_reason, '-'),"
		      " ' ') FROM run", "0=ok,- 1=planned,- 2=failed,- 3=skipped,boot-mismatch");
	struct db_pending_run *runs = NULL;
	size_t n = 0;
	CHECK(db_pending_runs(f.db, f.sid, &runs, &n) == 0);
	CHECK(n == 1 && runs[0].run_id == f.run[1]);
	db_pending_runs_free(runs, n);
	fixture_teardown(&f);
}

/* the store and the next run's mark are one transaction: both or neither */
TEST(run_finish_marks_the_next_run)
{
	struct fixture f;
	CHECK(fixture_setup(&f) == 0);
	if (!f.db)
		return;
	struct db_run_result ok = { .status = "ok", .metrics = metrics_ok, .nmetrics = 2 };
	CHECK(db_run_start(f.db, f.run[0]) == 0);
	CHECK(db_run_finish_start(f.db, f.run[0], &ok, f.run[1]) == 0);
	check_q(f.db, "SELECT seq, status, started_at IS NOT NULL, finished_at IS NOT NULL FROM run"
		      " ORDER BY seq", "0|ok|1|1;1|running|1|0;2|planned|0|0;3|planned|0|0");
	/* a store that fails marks nothing: run 1 still running, run 2 planned */
	struct db_metric bad[] = {
		{ .workload = "hackbench", .name = "x", .unit = "s", .better = "smaller", .value = 2 },
	};
	struct db_run_result r = { .status = "ok", .metrics = bad, .nmetrics = 1 };
	CHECK(db_run_finish_start(f.db, f.run[1], &r, f.run[2]) == -1);
	check_q(f.db, "SELECT seq, status FROM run WHERE seq IN (1, 2) ORDER BY seq",
		"1|running;2|planned");
	/* nor does one whose next run does not exist: the store is undone too */
	CHECK(db_run_finish_start(f.db, f.run[1], &ok, 999) == -1);
	CHECK_CONTAINS(db_errmsg(f.db), "run 999 does not exist");
	check_q(f.db, "SELECT status, (SELECT count(*) FROM metric WHERE run_id = run.id) FROM run"
		      " WHERE seq = 1", "running|0");
	/* the last run of a boot marks none */
	CHECK(db_run_finish_start(f.db, f.run[1], &ok, 0) == 0);
	check_q(f.db, "SELECT group_concat(status) FROM (SELECT status FROM run ORDER BY seq)",
		"ok,ok,planned,planned");
	/* Ctrl-C between a mark and its run: back to planned, as if unmarked;
	 * a run that is not running is left alone */
	CHECK(db_run_start(f.db, f.run[2]) == 0);
	CHECK(db_run_unstart(f.db, f.run[2]) == 0);
	CHECK(db_run_unstart(f.db, f.run[0]) == 0);
	check_q(f.db, "SELECT seq, status, started_at IS NULL FROM run WHERE seq IN (0, 2)"
		      " ORDER BY seq", "0|ok|0;2|planned|1");
	/* inside a caller's transaction (a savepoint) the mark is kept with the
	 * run and goes with the caller's commit or rollback */
	CHECK(db_begin(f.db) == 0);
	CHECK(db_run_finish_start(f.db, f.run[2], &ok, f.run[3]) == 0);
	db_rollback(f.db);
	check_q(f.db, "SELECT seq, status FROM run WHERE seq IN (2, 3) ORDER BY seq",
		"2|planned;3|planned");
	fixture_teardown(&f);
}

/*
 * SIGKILL at any point: a child stores CRASH_RUNS runs of a boot as a
 * session does (the first marked alone, then each store marking the next)
 * and is killed; the file must then hold exactly what --resume expects: a
 * prefix of the runs ok with all their metrics, at most the run after it
 * running (never two), the rest planned; reset and pending list give back
 * exactly the runs not ok, and finishing them stores every run once.
 */
#define CRASH_RUNS 60
#define CRASH_METRICS 25

static struct db *open_path(const char *path)
{
	struct db *db = NULL;
	char *err = NULL;
	if (db_open(path, DB_READWRITE, &db, &err)) {
		printf("#   db_open %s: %s\n", path, err ? err : "?");
		free(err);
	}
	return db;
}

/* a session of CRASH_RUNS planned runs in one boot; ids in run[] */
static int64_t crash_session(struct db *db, int64_t *run)
{
	struct db_session s = { .name = "crash", .plan_json = "{}", .target = "local",
				.version = "test" };
	int64_t sid = db_session_create(db, &s);
	int64_t bid = sid > 0 ? db_boot_plan(db, sid, 0, 0, NULL, "full", "") : -1;
	if (bid <= 0 || db_begin(db))
		return -1;
	for (int i = 0; i < CRASH_RUNS; i++)
		if ((run[i] = db_run_plan(db, sid, bid, i, 0, "hackbench", "{}", "{}", i)) <= 0) {
			db_rollback(db);
			return -1;
		}
	return db_commit(db) ? -1 : sid;
}

static struct db_metric crash_m[CRASH_METRICS];
static char crash_names[CRASH_METRICS][16];

/* run i's result as the child stores it */
static struct db_run_result crash_result(int i)
{
	for (int k = 0; k < CRASH_METRICS; k++) {
		snprintf(crash_names[k], sizeof(crash_names[k]), "m%02d", k);
		crash_m[k] = (struct db_metric){ .workload = "hackbench", .name = crash_names[k],
						 .unit = "s", .better = "lower", .value = i + k };
	}
	return (struct db_run_result){ .status = "ok", .out = "Time: 1\n", .metrics = crash_m,
				       .nmetrics = CRASH_METRICS, .schedstat_before = "b",
				       .schedstat_after = "a" };
}

/* where the child stops itself (SIGSTOP) to be killed; -1: never */
enum crash_point {
	STOP_AFTER_FIRST_MARK,   /* run 0 marked, nothing stored */
	STOP_INSIDE_STORE,       /* run 2's store and run 3's mark written, not committed */
	STOP_AFTER_STORE,        /* run 2 stored and run 3 marked */
	STOP_AT_END,             /* every run stored */
	STOP_NEVER,
};

/* the child: a session's stores; never returns */
static void crash_child(const char *path, const int64_t *run, enum crash_point stop)
{
	struct db *db = open_path(path);
	if (!db || db_run_start(db, run[0]))
		_exit(3);
	if (stop == STOP_AFTER_FIRST_MARK)
		raise(SIGSTOP);
	for (int i = 0; i < CRASH_RUNS; i++) {
		struct db_run_result r = crash_result(i);
		int64_t next = i + 1 < CRASH_RUNS ? run[i + 1] : 0;
		if (stop == STOP_INSIDE_STORE && i == 2) {
			/* the state of a store killed before its commit: its
			   statements done, the commit not */
			if (db_begin(db) || db_run_finish_start(db, run[i], &r, next))
				_exit(3);
			raise(SIGSTOP);
		}
		if (db_run_finish_start(db, run[i], &r, next))
			_exit(3);
		if (stop == STOP_AFTER_STORE && i == 2)
			raise(SIGSTOP);
	}
	if (stop == STOP_AT_END)
		raise(SIGSTOP);
	_exit(0);
}

/* fork the child, kill it with SIGKILL when it stops at `stop` (or after
 * `after_us` when it does not stop); 0 when it was killed or finished */
static int crash_run(const char *path, const int64_t *run, enum crash_point stop, long after_us)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		crash_child(path, run, stop);
	int st = 0;
	if (stop != STOP_NEVER) {
		if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) {
			printf("#   child did not stop (status %#x)\n", st);
			return -1;
		}
	} else {
		/* until it is killed after after_us, or ends by itself */
		struct timespec t0, t, tick = { 0, 100 * 1000 };
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			pid_t w = waitpid(pid, &st, WNOHANG);
			if (w == pid)
				goto reaped;
			if (w < 0)
				return -1;
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 >=
			    after_us)
				break;
			nanosleep(&tick, NULL);
		}
	}
	kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
reaped:
	if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
		printf("#   child failed (exit %d)\n", WEXITSTATUS(st));
		return -1;
	}
	return 0;
}

/* the statuses of the session's runs in order, one letter each (o ok,
 * r running, p planned, else ?) */
static char *crash_states(struct db *db, int64_t sid)
{
	char *sql = xstrfmt("SELECT group_concat(CASE status WHEN 'ok' THEN 'o' WHEN 'running'"
			    " THEN 'r' WHEN 'planned' THEN 'p' ELSE '?' END, '') FROM (SELECT"
			    " status FROM run WHERE session_id = %lld ORDER BY seq)", (long long)sid);
	char *r = q(db, sql);
	free(sql);
	return r;
}

/* what the killed child left is a state --resume expects; then resume:
 * every run stored exactly once. *states gets the letters found */
static void crash_check(const char *path, int64_t sid, const int64_t *run, char **states)
{
	struct db *db = open_path(path);
	CHECK(db != NULL);
	if (!db)
		return;
	char *st = crash_states(db, sid);
	*states = xstrdup(st);
	/* ok* then at most one running, then planned* */
	size_t nok = strspn(st, "o"), nrun = strspn(st + nok, "r");
	CHECK(nrun <= 1 && strspn(st + nok + nrun, "p") == strlen(st + nok + nrun));
	CHECK(strlen(st) == CRASH_RUNS);
	/* an ok run has all of its rows, the others none */
	char *sql = xstrfmt("SELECT count(*), count(DISTINCT run_id) FROM metric WHERE run_id IN"
			    " (SELECT id FROM run WHERE session_id = %lld)", (long long)sid);
	char *got = q(db, sql), *want = xstrfmt("%zu|%zu", nok * CRASH_METRICS, nok);
	CHECK_STR(got, want);
	free(sql);
	free(got);
	free(want);
	sql = xstrfmt("SELECT count(*) FROM schedstat WHERE run_id IN (SELECT id FROM run WHERE"
		      " session_id = %lld)", (long long)sid);
	got = q(db, sql);
	want = xstrfmt("%zu", nok);
	CHECK_STR(got, want);
	free(sql);
	free(got);
	free(want);
	/* resume: what is not ok is pending, in order */
	struct db_pending_run *pend = NULL;
	size_t n = 0;
	CHECK(db_session_reset_running(db, sid) == 0);
	CHECK(db_pending_runs(db, sid, &pend, &n) == 0);
	CHECK(n == CRASH_RUNS - nok);
	for (size_t i = 0; i < n && nok + i < CRASH_RUNS; i++)
		CHECK(pend[i].run_id == run[nok + i]);
	/* and redone as a session does: every run stored once */
	for (size_t i = 0; i < n; i++) {
		struct db_run_result r = crash_result((int)(nok + i));
		if (i == 0)
			CHECK(db_run_start(db, pend[i].run_id) == 0);
		CHECK(db_run_finish_start(db, pend[i].run_id, &r,
					  i + 1 < n ? pend[i + 1].run_id : 0) == 0);
	}
	db_pending_runs_free(pend, n);
	char *after = crash_states(db, sid);
	char all[CRASH_RUNS + 1];
	memset(all, 'o', CRASH_RUNS);
	all[CRASH_RUNS] = 0;
	CHECK_STR(after, all);
	sql = xstrfmt("SELECT count(*), count(DISTINCT run_id) FROM metric WHERE run_id IN"
		      " (SELECT id FROM run WHERE session_id = %lld)", (long long)sid);
	got = q(db, sql);
	want = xstrfmt("%d|%d", CRASH_RUNS * CRASH_METRICS, CRASH_RUNS);
	CHECK_STR(got, want);
	free(sql);
	free(got);
	free(want);
	free(after);
	free(st);
	db_close(db);
}

TEST(sigkill_at_chosen_points)
{
	static const struct {
		enum crash_point stop;
		const char *states;   /* the first 5 runs right after the kill */
	} cases[] = {
		{ STOP_AFTER_FIRST_MARK, "rpppp" },
		{ STOP_INSIDE_STORE, "oorpp" },
		{ STOP_AFTER_STORE, "ooorp" },
		{ STOP_AT_END, "ooooo" },
	};
	rm_db("crash.db");
	char *path = tmp_path("crash.db");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct db *db = open_path(path);
		int64_t run[CRASH_RUNS];
		int64_t sid = db ? crash_session(db, run) : -1;
		CHECK(sid > 0);
		db_close(db);
		if (sid <= 0)
			break;
		CHECK(crash_run(path, run, cases[c].stop, 0) == 0);
		char *states = NULL;
		crash_check(path, sid, run, &states);
		if (!states || strncmp(states, cases[c].states, 5)) {
			printf("#   case %zu: states %s, expected %s...\n", c,
			       states ? states : "(none)", cases[c].states);
			CHECK(0);
		}
		free(states);
	}
	free(path);
	rm_db("crash.db");
}

/* killed at random times: whatever it left is a state --resume expects
 * (the seed is printed to replay a failure) */
TEST(sigkill_at_random_times)
{
	rm_db("crash.db");
	char *path = tmp_path("crash.db");
	unsigned seed = (unsigned)time(NULL);
	printf("# seed %u\n", seed);
	srand(seed);
	/* how long the whole loop takes here (a sanitizer build is slow) */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	{
		struct db *db = open_path(path);
		int64_t run[CRASH_RUNS];
		int64_t sid = db ? crash_session(db, run) : -1;
		db_close(db);
		CHECK(sid > 0 && crash_run(path, run, STOP_NEVER, 10 * 1000 * 1000) == 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long span_us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
	int mid = 0;
	for (int k = 0; k < 12; k++) {
		struct db *db = open_path(path);
		int64_t run[CRASH_RUNS];
		int64_t sid = db ? crash_session(db, run) : -1;
		db_close(db);
		CHECK(sid > 0);
		if (sid <= 0)
			break;
		long after = span_us > 0 ? rand() % span_us : 0;
		CHECK(crash_run(path, run, STOP_NEVER, after) == 0);
		char *states = NULL;
		crash_check(path, sid, run, &states);
		if (states && strchr(states, 'p') && strchr(states, 'o'))
			mid++;
		free(states);
	}
	printf("# %d of 12 kills landed mid-session\n", mid);
	free(path);
	rm_db("crash.db");
}

static int fake_alive_answer;
static int fake_alive(const struct db_owner *o)
{
	(void)o;
	return fake_alive_answer;
}

/* one owner per session: claimed in one transaction, refused while the
 * recorded owner is alive, taken over when it is not (or when forced),
 * released only by the owner */
TEST(session_owner)
{
	rm_db("t.db");
	struct db *db = open_fresh("t.db");
	CHECK(db != NULL);
	if (!db)
		return;
	struct db_session s = { .name = "a", .plan_json = "{}", .target = "local", .version = "t" };
	CHECK(db_session_create(db, &s) == 1);
	struct db_owner a = { .pid = 100, .start = 5, .host = "h1", .boot = "b1" };
	struct db_owner b = { .pid = 200, .start = 7, .host = "h1", .boot = "b1" };
	struct db_owner held;
	fake_alive_answer = 1;
	CHECK(db_session_claim(db, 1, &a, fake_alive, 0, &held) == 0);
	CHECK(held.pid == 0);
	check_q(db, "SELECT owner_pid, owner_start, owner_host, owner_boot, owner_since IS NOT NULL"
		    " FROM session", "100|5|h1|b1|1");
	/* the owner itself may claim again (session_start, then execute) */
	CHECK(db_session_claim(db, 1, &a, fake_alive, 0, &held) == 0);
	/* another, while the owner lives: refused, nothing written */
	CHECK(db_session_claim(db, 1, &b, fake_alive, 0, &held) == 1);
	CHECK(held.pid == 100 && held.start == 5 && !strcmp(held.host, "h1") && held.since[0]);
	check_q(db, "SELECT owner_pid FROM session", "100");
	/* not released by someone else */
	CHECK(db_session_release(db, 1, &b) == 0);
	check_q(db, "SELECT owner_pid FROM session", "100");
	/* the owner is gone: taken over */
	fake_alive_answer = 0;
	CHECK(db_session_claim(db, 1, &b, fake_alive, 0, &held) == 0);
	CHECK(held.pid == 100);
	check_q(db, "SELECT owner_pid FROM session", "200");
	/* forced over a live owner */
	fake_alive_answer = 1;
	CHECK(db_session_claim(db, 1, &a, fake_alive, 1, &held) == 0);
	check_q(db, "SELECT owner_pid FROM session", "100");
	CHECK(db_session_release(db, 1, &a) == 0);
	check_q(db, "SELECT owner_pid IS NULL AND owner_since IS NULL FROM session", "1");
	/* inside the caller's transaction (session_start) */
	CHECK(db_begin(db) == 0);
	CHECK(db_session_claim(db, 1, &b, fake_alive, 0, &held) == 0);
	CHECK(db_commit(db) == 0);
	check_q(db, "SELECT owner_pid FROM session", "200");
	CHECK(db_session_claim(db, 9, &b, fake_alive, 0, &held) == -1);
	CHECK_CONTAINS(db_errmsg(db), "session 9 does not exist");
	db_close(db);
}

TEST(session_resolve)
{
	rm_db("t.db");
	struct db *db = open_fresh("t.db");
	CHECK(db != NULL);
	if (!db)
		return;
	CHECK(db_session_resolve(db, "last") == -1);
	CHECK_CONTAINS(db_errmsg(db), "there is no session");
	struct db_session s = { .name = "a", .plan_json = "{}", .target = "local", .version = "t" };
	CHECK(db_session_create(db, &s) == 1);
	CHECK(db_session_create(db, &s) == 2);
	CHECK(db_session_resolve(db, "last") == 2);
	CHECK(db_session_resolve(db, "1") == 1);
	CHECK(db_session_resolve(db, "2") == 2);
	CHECK(db_session_resolve(db, "7") == -1);
	CHECK_CONTAINS(db_errmsg(db), "session 7 does not exist");
	CHECK(db_session_resolve(db, "x") == -1);
	CHECK_CONTAINS(db_errmsg(db), "session \"x\": expected a session number or \"last\"");
	CHECK(db_session_resolve(db, "0") == -1);
	CHECK(db_session_resolve(db, "1x") == -1);
	CHECK(db_session_resolve(db, "-1") == -1);
	/* status transitions */
	check_q(db, "SELECT status, finished_at IS NULL FROM session WHERE id = 1", "running|1");
	CHECK(db_session_set_status(db, 1, SESSION_ST_DONE) == 0);
	check_q(db, "SELECT status, finished_at IS NULL FROM session WHERE id = 1", "done|0");
	CHECK(db_session_set_status(db, 1, SESSION_ST_N) == -1);   /* no such state */
	char *pj = NULL, *pp = NULL, *tag = NULL, *st = NULL;
	CHECK(db_session_load(db, 2, &pj, &pp, &tag, &st) == 0);
	CHECK_STR(pj, "{}");
	CHECK(pp == NULL && tag == NULL);
	CHECK_STR(st, "running");
	free(pj);
	free(pp);
	free(tag);
	free(st);
	CHECK(db_session_load(db, 9, &pj, &pp, &tag, &st) == -1);
	db_close(db);
	rm_db("t.db");
}

TEST(lab_sessions)
{
	rm_db("t.db");
	struct db *db = open_fresh("t.db");
	CHECK(db != NULL);
	if (!db)
		return;
	char *id = NULL;
	CHECK(db_lab_resolve(db, "last", &id) == -1 && id == NULL);
	CHECK_CONTAINS(db_errmsg(db), "no session in this database is part of a lab");
	/* session 1 alone, 2 and 3 members of lab L1 (stored in reverse member
	 * order), 4 the single member of lab L2 without a label */
	struct db_session s = { .name = "a", .plan_json = "{}", .target = "local", .version = "t" };
	CHECK(db_session_create(db, &s) == 1);
	s.plan_json = "{\"lab\":{\"id\":\"L1\",\"target\":1,\"targets\":2,\"label\":\"local#2\"}}";
	s.plan_path = "lab.json";
	CHECK(db_session_create(db, &s) == 2);
	s.plan_json = "{\"lab\":{\"id\":\"L1\",\"target\":0,\"targets\":2,\"label\":\"local#1\"}}";
	CHECK(db_session_create(db, &s) == 3);
	s.plan_json = "{\"lab\":{\"id\":\"L2\",\"target\":0}}";
	s.plan_path = NULL;
	CHECK(db_session_create(db, &s) == 4);
	CHECK(db_lab_resolve(db, "last", &id) == 0);
	CHECK_STR(id, "L2");
	free(id);
	CHECK(db_lab_resolve(db, "2", &id) == 0);
	CHECK_STR(id, "L1");
	free(id);
	CHECK(db_lab_resolve(db, "1", &id) == -1);
	CHECK_CONTAINS(db_errmsg(db), "no such session, or it is not part of a lab");
	CHECK(db_lab_resolve(db, "9", &id) == -1);
	/* anything but "last" and a number is the id itself, looked up later */
	CHECK(db_lab_resolve(db, "L9", &id) == 0);
	CHECK_STR(id, "L9");
	free(id);
	struct db_lab_session *m = NULL;
	size_t n = 9;
	CHECK(db_lab_sessions(db, "L1", &m, &n) == 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(m[0].sid == 3 && m[1].sid == 2);
		CHECK_STR(m[0].label, "local#1");
		CHECK_STR(m[0].plan_path, "lab.json");
		CHECK_CONTAINS(m[1].plan_json, "\"target\":1");
	}
	db_lab_sessions_free(m, n);
	CHECK(db_lab_sessions(db, "L2", &m, &n) == 0);
	CHECK(n == 1 && m[0].sid == 4 && m[0].label == NULL && m[0].plan_path == NULL);
	db_lab_sessions_free(m, n);
	CHECK(db_lab_sessions(db, "L9", &m, &n) == 0);
	CHECK(n == 0 && m == NULL);
	db_lab_sessions_free(m, n);
	/* the reads are ended: a write right after them works */
	CHECK(db_session_set_status(db, 2, SESSION_ST_DONE) == 0);
	db_close(db);
	rm_db("t.db");
}

TEST(readonly_refuses_foreign_files)
{
	/* an SQLite file that is not ours (user_version 0) */
	rm_db("other.db");
	char *p = tmp_path("other.db");
	sqlite3 *h;
	CHECK(sqlite3_open(p, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "CREATE TABLE t (x)", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	struct db *db = (struct db *)1;
	char *err = NULL;
	CHECK(db_open(p, DB_READONLY, &db, &err) == -1);
	CHECK(db == NULL);
	CHECK_CONTAINS(err, "not a schedlab database (schema version 0)");
	CHECK_CONTAINS(err, "other.db");
	free(err);
	free(p);
	/* a text file */
	p = tmp_path("text.db");
	FILE *fp = fopen(p, "w");
	fputs("this is not a database, just some text that is long enough to matter\n", fp);
	fclose(fp);
	err = NULL;
	CHECK(db_open(p, DB_READONLY, &db, &err) == -1);
	CHECK(err != NULL);
	CHECK_CONTAINS(err, "text.db: file is not a database");
	free(err);
	free(p);
	/* a file that does not exist is not created by a read-only open */
	p = tmp_path("missing.db");
	err = NULL;
	CHECK(db_open(p, DB_READONLY, &db, &err) == -1);
	CHECK(err != NULL);
	CHECK(access(p, F_OK) != 0);
	free(err);
	free(p);
}

/* the whole file, malloc'd; *n its size */
static char *slurp(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	char *buf = NULL;
	*n = 0;
	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	if (buf)
		*n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* run's read-write open: another program's database and a file that is not
 * a database are refused before a byte of them changes (the WAL switch
 * alone would rewrite the header) */
TEST(readwrite_leaves_foreign_files_alone)
{
	static const char *const names[] = { "other-rw.db", "text-rw.db", "newer-rw.db" };
	for (int i = 0; i < 3; i++) {
		rm_db(names[i]);
		char *p = tmp_path(names[i]);
		if (i == 1) {
			FILE *fp = fopen(p, "w");
			fputs("this is not a database, just some text that is long enough\n", fp);
			fclose(fp);
		} else {
			sqlite3 *h;
			CHECK(sqlite3_open(p, &h) == SQLITE_OK);
			CHECK(sqlite3_exec(h, i == 0 ? "CREATE TABLE t (x); INSERT INTO t VALUES (1)"
						     : "PRAGMA user_version = 99",
					   NULL, NULL, NULL) == SQLITE_OK);
			sqlite3_close(h);
		}
		size_t n0, n1;
		char *before = slurp(p, &n0);
		struct db *db = (struct db *)1;
		char *err = NULL;
		CHECK(db_open(p, DB_READWRITE, &db, &err) == -1);
		CHECK(db == NULL);
		CHECK(err && !strncmp(err, p, strlen(p)));
		CHECK_CONTAINS(err, i == 0 ? "not a schedlab database (1 tables"
				    : i == 1 ? "file is not a database"
					     : "schema version 99 is newer");
		char *after = slurp(p, &n1);
		CHECK(before && after && n0 == n1 && !memcmp(before, after, n0));
		free(before);
		free(after);
		free(err);
		free(p);
	}
}

TEST(newer_schema_refused)
{
	char *p = tmp_path("new.db");
	struct db *db = NULL;
	char *err = NULL;
	CHECK(db_open_raw(p, &db, &err) == 0);
	CHECK(exec(db, "PRAGMA user_version = 99") == 0);
	CHECK(db_migrate_to(db, db_latest_version()) == -1);
	char *want = xstrfmt("database schema version 99 is newer than this schedlab (%d)",
			     db_latest_version());
	CHECK_CONTAINS(db_errmsg(db), want);
	free(want);
	db_close(db);
	CHECK(db_open(p, DB_READWRITE, &db, &err) == -1);
	CHECK(db == NULL);
	CHECK_CONTAINS(err, "schema version 99 is newer");
	free(err);
	err = NULL;
	CHECK(db_open(p, DB_READONLY, &db, &err) == -1);
	CHECK_CONTAINS(err, "schema version 99 is newer than this schedlab");
	free(err);
	free(p);
}

TEST(failed_migration_rolls_back)
{
	/* a table named like one of ours makes migration 1 fail: nothing applied */
	rm_db("other.db");
	char *p = tmp_path("other.db");
	struct db *db = NULL;
	char *err = NULL;
	CHECK(db_open_raw(p, &db, &err) == 0);
	CHECK(exec(db, "CREATE TABLE metric (x)") == 0);
	CHECK(db_migrate_to(db, db_latest_version()) == -1);
	CHECK_CONTAINS(db_errmsg(db), "migration to schema version 1 failed");
	CHECK(db_user_version(db) == 0);
	check_q(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", "metric");
	db_close(db);
	free(p);
}

int main(void)
{
	make_tmpdir();
	RUN(fresh_file_is_latest);
	RUN(schema_doc_lists_the_view_columns);
	RUN(migrate_from_v1_keeps_data);
	RUN(migrate_v1_then_open_migrates);
	RUN(migrate_v3_sets_censored_from_notes);
	RUN(migrate_v14_marks_the_nightly_sessions);
	RUN(migrate_v11_keeps_bisect_threshold_rule);
	RUN(migrate_v17_splits_skip_reasons_and_notes);
	RUN(machine_and_kernel_are_deduplicated);
	RUN(run_finish_and_results_view);
	RUN(git_commit_in_results);
	RUN(run_finish_is_all_or_nothing);
	RUN(run_finish_many_metrics);
	RUN(run_finish_inside_a_bulk_transaction);
	RUN(pending_runs_and_reset);
	RUN(first_resumable_reason);
	RUN(boot_failed_is_to_do_everywhere);
	RUN(run_finish_marks_the_next_run);
	RUN(sigkill_at_chosen_points);
	RUN(sigkill_at_random_times);
	RUN(session_owner);
	RUN(session_resolve);
	RUN(lab_sessions);
	RUN(readonly_refuses_foreign_files);
	RUN(readwrite_leaves_foreign_files_alone);
	RUN(newer_schema_refused);
	RUN(failed_migration_rolls_back);
	RUN(evidence_decision_and_runs);
	static const char *const names[] = { "t.db", "v1.db", "v3.db", "other.db", "text.db", "new.db", "other-rw.db", "text-rw.db", "newer-rw.db" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		rm_db(names[i]);
	if (rmdir(tmpdir))
		printf("# leftover files in %s\n", tmpdir);
	return tap_done();
}
