/*
 * Unit tests of the HTML report: the one escaping function, and a whole page
 * rendered from a small database whose plan name, kernel command line and
 * tool output carry markup, which must come out as text.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "harness/results/report.h"
#include "tests/unit/tap.h"

static char *esc(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	report_escape(&sb, s);
	return strbuf_detach(&sb, NULL);
}

TEST(escape_markup_and_quotes)
{
	char *e = esc("<script>alert(\"x\")</script> & 'y'");
	CHECK_STR(e, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;");
	free(e);
}

TEST(escape_control_bytes_and_keeps_text)
{
	char *e = esc("a\tb\nc\x01" "d\x7f" "é");
	CHECK_STR(e, "a\tb\nc&#xFFFD;d&#xFFFD;é");
	free(e);
	e = esc("");
	CHECK_STR(e, "");
	free(e);
	struct strbuf sb = STRBUF_INIT;
	report_escape(&sb, NULL); /* nothing, no crash */
	CHECK(sb.len == 0);
	strbuf_release(&sb);
}

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
		 " VALUES (1, 'plan <script>alert(1)</script> \"q\"', '{}', 't', 'local', 'v', 'done',"
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

int main(void)
{
	RUN(escape_markup_and_quotes);
	RUN(escape_control_bytes_and_keeps_text);
	RUN(page_escapes_what_came_from_the_database);
	return tap_done();
}
