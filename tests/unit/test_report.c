/*
 * Unit tests of the HTML report: a whole page rendered from a small
 * database whose plan name, kernel command line and tool output carry
 * markup, which must come out as text (control characters and invalid
 * UTF-8 as serve's site shows them: harness/util/html.c, test_html), and
 * the bounded history of the trends (report_window_pick, and a report of
 * two sessions out of 150 nightly ones that must embed only the window's
 * points).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "harness/results/report.h"
#include "tests/unit/tap.h"

static void exec_sql(struct db *db, const char *sql)
{
	if (db_exec(db, sql))
		printf("# sql failed: %s\n", db_errmsg(db));
}

TEST(page_escapes_what_came_from_the_database)
{
	char path[] = "/tmp/schedlab-report-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	unlink(path);
	struct db *db = NULL;
	char *msg = NULL;
	CHECK(db_open(path, DB_READWRITE, &db, &msg) == 0);
	free(msg);
	if (!db)
		return;
	exec_sql(db,
		 "INSERT INTO machine (id, name, fingerprint) VALUES (1, 'box<b>', 'fp');"
		 "INSERT INTO kernel (id, release, config_hash, hz, sched_mc) VALUES (1, '6.1<i>', 'h', 250, 1);"
		 "INSERT INTO session (id, name, plan_json, tag, target, harness_version, status, started_at)"
		 " VALUES (1, 'plan <script>alert(1)</script> \"q\" ' || char(27) || '[31m' || CAST(X'ff' AS TEXT),"
		 " '{}', 't', 'local', 'v', 'done',"
		 " '2026-01-01T00:00:00.000Z');"
		 "INSERT INTO boot (id, session_id, seq, cfg, status, machine_id, kernel_id, preempt, cmdline, sysinfo)"
		 " VALUES (1, 1, 0, 0, 'ok', 1, 1, 'full', 'quiet <script>evil()</script> x=\"1\"',"
		 " '{\"cmdline\":{\"value\":\"quiet <script>evil()</script>\",\"source\":\"/proc/cmdline\"}}');");
	for (int r = 1; r <= 3; r++) {
		char sql[512];
		snprintf(sql, sizeof(sql),
			 "INSERT INTO run (id, session_id, boot_id, seq, round, workload, params, knobs, rep,"
			 " status, started_at) VALUES (%d, 1, 1, %d, 0, 'hackbench', '{\"groups\":1}', '{}', %d,"
			 " 'ok', '2026-01-01T00:00:0%d.000Z');"
			 "INSERT INTO metric (run_id, workload, name, value, unit, better) VALUES"
			 " (%d, 'hackbench', 'time_s', %g, 's', 'lower');",
			 r, r, r - 1, r, r, 1.0 + 0.01 * r);
		exec_sql(db, sql);
	}
	struct report_options o;
	report_options_default(&o);
	o.mode = REPORT_SESSION;
	o.session = "1";
	o.dbpath = path;
	struct report r;
	struct strbuf err = STRBUF_INIT, page = STRBUF_INIT;
	int rc = report_build(db, &o, &r, &err);
	CHECK(rc == 0);
	if (rc)
		printf("# report_build: %s\n", err.buf);
	else {
		report_render_html(&r, &page);
		report_free(&r);
		CHECK_CONTAINS(page.buf, "plan &lt;script&gt;alert(1)&lt;/script&gt; &quot;q&quot;");
		CHECK_CONTAINS(page.buf, "&lt;script&gt;evil()&lt;/script&gt;");
		/* as serve's site shows it (harness/util/html.c): ESC as its
		 * picture, an invalid byte as U+FFFD, neither raw */
		CHECK_CONTAINS(page.buf, "&quot;q&quot; \xe2\x90\x9b[31m\xef\xbf\xbd");
		CHECK(!strchr(page.buf, '\x1b') && !strchr(page.buf, '\xff'));
		CHECK(!strstr(page.buf, "<script>alert(1)"));
		CHECK(!strstr(page.buf, "<script>evil()"));
		CHECK(!strstr(page.buf, "box<b>"));
		CHECK(!strstr(page.buf, "6.1<i>"));
		/* self-contained: no external resource */
		CHECK(!strstr(page.buf, "src=\"http"));
		CHECK(!strstr(page.buf, "href=\"http"));
	}
	strbuf_release(&err);
	strbuf_release(&page);
	db_close(db);
	unlink(path);
	char side[64];
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

/* ---- the window of history the trends draw from -------------------------- */

static size_t count_kept(const unsigned char *keep, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += keep[i];
	return k;
}

TEST(window_scope_and_history_around_the_last)
{
	/* 0..9 history, 10 and 12 in scope, 11 between, 13..14 later */
	unsigned char in[15] = { 0 }, keep[15];
	in[10] = in[12] = 1;
	struct report_window w;
	report_window_pick(in, 15, 4, 400, keep, &w);
	CHECK(w.scope == 2 && w.before == 4 && w.available == 11 && w.later == 2 && w.after == 2);
	CHECK(w.every == 1 && w.shown == 8 && count_kept(keep, 15) == 8);
	/* the 4 latest others before session 12: 11, 9, 8, 7; both after it */
	CHECK(keep[12] && keep[11] && keep[10] && keep[9] && keep[8] && keep[7]);
	CHECK(!keep[6] && !keep[0] && keep[13] && keep[14]);
	/* at most `history` after too */
	report_window_pick(in, 15, 1, 400, keep, &w);
	CHECK(w.before == 1 && w.after == 1 && keep[11] && keep[13] && !keep[14] && !keep[9]);
	/* history 0: the scope only */
	report_window_pick(in, 15, 0, 400, keep, &w);
	CHECK(w.shown == 2 && keep[10] && keep[12] && count_kept(keep, 15) == 2);
	/* nothing in scope: nothing */
	unsigned char none[3] = { 0 };
	report_window_pick(none, 3, 60, 400, keep, &w);
	CHECK(w.shown == 0 && w.scope == 0 && count_kept(keep, 3) == 0);
	report_window_pick(none, 0, 60, 400, keep, &w);
	CHECK(w.shown == 0 && w.every == 1);
}

TEST(window_thins_beyond_max_points_keeping_the_newest)
{
	enum { N = 1000 };
	unsigned char in[N], keep[N];
	memset(in, 1, sizeof(in));
	struct report_window w;
	report_window_pick(in, N, 60, 400, keep, &w);
	CHECK(w.scope == N && w.every == 3 && w.shown == 334);
	CHECK(count_kept(keep, N) == 334 && keep[N - 1] && keep[N - 4] && !keep[N - 2]);
	/* exactly max_points: nothing thinned */
	report_window_pick(in, 400, 60, 400, keep, &w);
	CHECK(w.every == 1 && w.shown == 400);
	report_window_pick(in, 401, 60, 400, keep, &w);
	CHECK(w.every == 2 && w.shown == 201 && keep[400] && !keep[399] && keep[0]);
	/* 0 reads as the default */
	report_window_pick(in, N, 60, 0, keep, &w);
	CHECK(w.max_points == REPORT_MAX_POINTS_DEFAULT && w.shown <= REPORT_MAX_POINTS_DEFAULT);
}

/* a database of NS nightly sessions (one a day, 2 runs, 2 metrics with a
 * direction) on machine 1, and 20 more on machine 2 interleaved with them */
enum { NS = 150, NB = 20 };

static void nightly_db(struct db *db)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "BEGIN;"
			   "INSERT INTO machine (id, name, fingerprint) VALUES (1, 'lab1', 'fp1'),"
			   " (2, 'lab2', 'fp2');"
			   "INSERT INTO kernel (id, release, config_hash, hz, sched_mc)"
			   " VALUES (1, '6.1.0', 'h', 250, 1);");
	int run = 0;
	for (int s = 1; s <= NS + NB; s++) {
		int day = s <= NS ? s : 2 * (s - NS);   /* machine 2 on every other day */
		int mach = s <= NS ? 1 : 2;
		char at[32];
		snprintf(at, sizeof(at), "2026-%02d-%02dT03:00:0%d", 1 + (day - 1) / 28,
			 1 + (day - 1) % 28, mach);
		strbuf_addf(&sb, "INSERT INTO session (id, name, plan_json, tag, target,"
				 " harness_version, status, started_at) VALUES (%d, 'n', '{}', 'night-%d',"
				 " 'local', 'v', 'done', '%s.000Z');"
				 "INSERT INTO boot (id, session_id, seq, cfg, status, machine_id, kernel_id,"
				 " preempt, cmdline) VALUES (%d, %d, 0, 0, 'ok', %d, 1, 'full', 'q');",
			    s, s, at, s, s, mach);
		for (int rep = 0; rep < 2; rep++) {
			run++;
			strbuf_addf(&sb, "INSERT INTO run (id, session_id, boot_id, seq, round, workload,"
					 " params, knobs, rep, status, started_at) VALUES (%d, %d, %d, %d,"
					 " 0, 'hackbench', '{\"groups\":1}', '{}', %d, 'ok', '%s.%03dZ');"
					 "INSERT INTO metric (run_id, workload, name, value, unit, better)"
					 " VALUES (%d, 'hackbench', 'time_s', %g, 's', 'lower'),"
					 " (%d, 'hackbench', 'ops', %g, 'ops/s', 'higher');",
				    run, s, s, rep, rep, at, rep, run, 1.0 + 0.001 * ((s * 7 + rep) % 5),
				    run, 100.0 + (s * 3 + rep) % 4);
		}
	}
	strbuf_addstr(&sb, "COMMIT;");
	exec_sql(db, sb.buf);
	strbuf_release(&sb);
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

TEST(report_embeds_only_the_window_of_history)
{
	char path[] = "/tmp/schedlab-report-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	unlink(path);
	struct db *db = NULL;
	char *msg = NULL;
	CHECK(db_open(path, DB_READWRITE, &db, &msg) == 0);
	free(msg);
	if (!db)
		return;
	nightly_db(db);
	struct report_options o;
	report_options_default(&o);
	CHECK(o.history == 60 && o.max_points == 400);
	o.dbpath = path;
	struct report r;
	struct strbuf err = STRBUF_INIT, page = STRBUF_INIT;

	/* session 100 against 101, 20 sessions of history: 42 points a trend,
	 * sessions 80..121 of machine 1 only */
	o.mode = REPORT_COMPARE;
	o.a = "session=100";
	o.b = "session=101";
	o.history = 20;
	int rc = report_build(db, &o, &r, &err);
	CHECK(rc == 0);
	if (rc) {
		printf("# report_build: %s\n", err.buf);
	} else {
		CHECK(r.ntrends == 2);
		CHECK(r.window.scope == 2 && r.window.before == 20 && r.window.after == 20);
		CHECK(r.window.shown == 42);
		CHECK(r.window.available == 99 && r.window.later == NS - 101);
		for (size_t i = 0; i < r.ntrends; i++) {
			const struct trend *t = &r.trends[i].t;
			CHECK(t->np == 42);
			for (size_t k = 0; k < t->np; k++)
				CHECK(t->pt[k].session >= 80 && t->pt[k].session <= 121);
		}
		report_render_html(&r, &page);
		CHECK(count_str(page.buf, "<circle class=\"pt\"") == 2 * 42);
		CHECK(!strstr(page.buf, "data-session=\"122\""));
		CHECK(!strstr(page.buf, "data-session=\"79\""));
		CHECK_CONTAINS(page.buf, "data-sessions=\"42\"");
		CHECK_CONTAINS(page.buf, "the 2 sessions in scope, the 20 before the last of them and "
					 "the 20 after it");
		report_free(&r);
	}
	strbuf_reset(&page);

	/* the default history: 60 before; a page that grows with the window,
	 * not with the database */
	o.history = 60;
	rc = report_build(db, &o, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		/* 60 before, the 49 after (all there are) */
		CHECK(r.window.shown == 111 && r.trends[0].t.np == 111);
		report_render_html(&r, &page);
		CHECK(count_str(page.buf, "<circle class=\"pt\"") == 2 * 111);
		report_free(&r);
	}
	strbuf_reset(&page);

	/* since the start, at most 50 points: one session in 3 from the newest */
	o.mode = REPORT_SINCE;
	o.since = "2026-01-01";
	o.max_points = 50;
	rc = report_build(db, &o, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		/* machines 1 and 2: a trend each */
		CHECK(r.window.scope == NS + NB && r.window.every == 4 && r.window.shown <= 50);
		for (size_t i = 0; i < r.ntrends; i++)
			CHECK(r.trends[i].t.np <= 50);
		report_render_html(&r, &page);
		CHECK(count_str(page.buf, "<circle class=\"pt\"") <= 2 * 50 * 2);
		CHECK_CONTAINS(page.buf, "only one in 4 is drawn");
		CHECK(r.notes.nr >= 1);
		report_free(&r);
	}
	strbuf_release(&err);
	strbuf_release(&page);
	db_close(db);
	unlink(path);
	char side[64];
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

int main(void)
{
	RUN(page_escapes_what_came_from_the_database);
	RUN(window_scope_and_history_around_the_last);
	RUN(window_thins_beyond_max_points_keeping_the_newest);
	RUN(report_embeds_only_the_window_of_history);
	return tap_done();
}
