/*
 * Unit tests of the pgbench workload on real PostgreSQL 15.18 output
 * (Debian 12's postgresql-15, tests/data/pgbench-15/, captured on this
 * machine):
 *  - pgbench's report (workloads/pgbench.c: pgbench_parse_report):
 *    select-only.stdout (-c 2 -j 2 -T 5 -S: tps = 38819.140158, 193957
 *    transactions, 0 failed, latency average = 0.052 ms), tpcb.stdout
 *    (-c 2 -j 1 -T 5: 2219.968262, 11088, 0, 0.901 ms) and
 *    failed-repeatable-read.stdout (a REPEATABLE READ update of one branch
 *    by 4 clients: 397.657932 tps, 1189 processed, 2777 failed (70.020%),
 *    "latency average = 3.016 ms (including failures)"); `pgbench -i`'s
 *    output and a report cut before its tps line are refused with the line
 *    expected;
 *  - the per-transaction log (workloads/native/pgbench_log.c): the first
 *    1500 lines of each thread's log of the select-only run (3000
 *    latencies; sorted by hand with sort -n: nearest-rank p50 = 29 us, p99
 *    = 544 us, min 17, max 4022) and the complete logs of the failing run
 *    (1189 latencies and 2777 "failed" lines: the counts pgbench reported;
 *    p50 502 us, p99 17761 us, max 159114 us), also fed in odd-sized
 *    pieces; lines of other formats are counted as bad with the first
 *    one's number;
 *  - the driver: parse() of a real sl-pgbench run (sl-pgbench-select.*:
 *    tps 11965.378227, 35839 transactions, its histogram of 35839), what it
 *    stores and with which units and directions, a missing sl-pgbench.json,
 *    explain() of sl-pgbench's and pgbench's error lines, build()'s argv
 *    and input file, and check()'s refusals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"
#include "workloads/native/pgbench_log.h"
#include "workloads/parsers.h"
#include "workloads/workload.h"

static char *slurp(const char *name)
{
	return testdata_slurp(name);
}

TEST(report_select_tpcb_failed)
{
	char *sel = slurp("pgbench-15/select-only.stdout");
	char *tpcb = slurp("pgbench-15/tpcb.stdout");
	char *fail = slurp("pgbench-15/failed-repeatable-read.stdout");
	struct pgbench_report r;
	struct strbuf err = STRBUF_INIT;
	CHECK(pgbench_parse_report(sel, &r, &err) == 0);
	CHECK_NEAR(r.tps, 38819.140158, 1e-9);
	CHECK_NEAR(r.transactions, 193957, 0);
	CHECK_NEAR(r.failed, 0, 0);
	CHECK_NEAR(r.lat_avg_ms, 0.052, 1e-12);
	CHECK(pgbench_parse_report(tpcb, &r, &err) == 0);
	CHECK_NEAR(r.tps, 2219.968262, 1e-9);
	CHECK_NEAR(r.transactions, 11088, 0);
	CHECK_NEAR(r.lat_avg_ms, 0.901, 1e-12);
	CHECK(pgbench_parse_report(fail, &r, &err) == 0);
	CHECK_NEAR(r.tps, 397.657932, 1e-9);
	CHECK_NEAR(r.transactions, 1189, 0);
	CHECK_NEAR(r.failed, 2777, 0);
	CHECK_NEAR(r.lat_avg_ms, 3.016, 1e-12);   /* "(including failures)" after it */
	CHECK(err.len == 0);
	free(sel);
	free(tpcb);
	free(fail);
}

TEST(report_refused)
{
	char *init = slurp("pgbench-15/init.txt");
	char *sel = slurp("pgbench-15/select-only.stdout");
	struct pgbench_report r;
	struct strbuf err = STRBUF_INIT;
	CHECK(pgbench_parse_report(init, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "no \"transaction type:\" line");
	strbuf_reset(&err);
	CHECK(pgbench_parse_report(NULL, &r, &err) == -1);
	strbuf_reset(&err);
	/* cut before the tps line */
	*strstr(sel, "tps =") = '\0';
	CHECK(pgbench_parse_report(sel, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "no \"tps = <number>");
	strbuf_reset(&err);
	/* a tps that is no number */
	CHECK(pgbench_parse_report("transaction type: x\ntps = -nan\n"
				   "number of transactions actually processed: 1\n",
				   &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "tps");
	strbuf_reset(&err);
	CHECK(pgbench_parse_report("transaction type: x\ntps = 5 (without initial connection "
				   "time)\n", &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "number of transactions actually processed");
	strbuf_release(&err);
	free(init);
	free(sel);
}

/* nearest-rank percentile p of h within the histogram's resolution of v */
static void check_pct(const struct hist *h, double p, double v)
{
	double got;
	CHECK(hist_percentile(h, p, &got) == HIST_OK);
	if (fabs(got - v) > 0.008 * v + 1) {
		printf("#   p%g: %g, expected %g\n", p, got, v);
		CHECK(0);
	}
}

static void feed_all(const char *text, size_t piece, struct hist *h, struct pglog_stats *st)
{
	size_t len = strlen(text), off = 0, have = 0;
	uint64_t lineno = 0;
	char *buf = malloc(len + 1);
	/* as sl-pgbench reads: pieces appended to what is left of the last */
	while (off < len) {
		size_t n = len - off < piece ? len - off : piece;
		memcpy(buf + have, text + off, n);
		have += n;
		off += n;
		size_t used = pglog_feed(buf, have, 0, h, st, &lineno);
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	pglog_feed(buf, have, 1, h, st, &lineno);
	free(buf);
}

TEST(log_select_only)
{
	char *a = slurp("pgbench-15/select-only.log.0");
	char *b = slurp("pgbench-15/select-only.log.1");
	size_t pieces[] = { 1 << 20, 1, 7, 4096 };
	for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		struct hist h;
		struct pglog_stats st = { 0 };
		CHECK(pglog_hist_init(&h) == 0);
		feed_all(a, pieces[k], &h, &st);
		feed_all(b, pieces[k], &h, &st);
		CHECK(st.done == 3000 && st.failed == 0 && st.skipped == 0 && st.bad_lines == 0);
		CHECK(h.total == 3000 && h.overflow == 0);
		CHECK_NEAR(h.min, 17, 0);
		CHECK_NEAR(h.max, 4022, 0);
		check_pct(&h, 50, 29);
		check_pct(&h, 99, 544);
		hist_free(&h);
	}
	free(a);
	free(b);
}

TEST(log_failed_counts_match_report)
{
	char *a = slurp("pgbench-15/failed-repeatable-read.log.0");
	char *b = slurp("pgbench-15/failed-repeatable-read.log.1");
	struct hist h;
	struct pglog_stats st = { 0 };
	CHECK(pglog_hist_init(&h) == 0);
	feed_all(a, 333, &h, &st);
	feed_all(b, 333, &h, &st);
	CHECK(st.done == 1189);     /* "number of transactions actually processed: 1189" */
	CHECK(st.failed == 2777);   /* "number of failed transactions: 2777" */
	CHECK(st.bad_lines == 0);
	check_pct(&h, 50, 502);
	check_pct(&h, 99, 17761);
	CHECK_NEAR(h.max, 159114, 0);
	hist_free(&h);
	free(a);
	free(b);
}

TEST(log_bad_lines)
{
	/* an aggregated log line (--aggregate-interval, with lag and retries:
	 * 12 fields; one of 6 to 8 looks like a transaction line, but
	 * sl-pgbench never asks for one), a cut line, words,
	 * a negative latency, a skipped one, schedule lag and retries, CRLF */
	static const char text[] =
		"0 1 1030 0 1796524623 32142\n"
		"1796524623 120 14000 2000000 50 300 0 10 20 1 2 0\n"
		"0 2 45\n"
		"hello world\n"
		"0 3 -5 0 1796524623 32673\n"
		"\n"
		"0 4 skipped 0 1796524623 32700 12\n"
		"0 5 200 0 1796524623 32800 15 0\r\n"
		"0 6 failed 0 1796524623 32900 0 3\n"
		"0 7 300 0 1796524623 33000 1 2 3\n"
		"0 8 99999999999999999999999 0 1 2\n";
	struct hist h;
	struct pglog_stats st = { 0 };
	uint64_t lineno = 0;
	CHECK(pglog_hist_init(&h) == 0);
	CHECK(pglog_feed(text, sizeof(text) - 1, 0, &h, &st, &lineno) == sizeof(text) - 1);
	CHECK(st.done == 2 && st.failed == 1 && st.skipped == 1);
	CHECK(st.bad_lines == 6);
	CHECK(st.first_bad == 2);
	CHECK(lineno == 11);
	CHECK_NEAR(h.max, 1030, 0);
	/* a last line without its newline waits for the next piece */
	memset(&st, 0, sizeof(st));
	lineno = 0;
	CHECK(pglog_feed("0 1 5 0 1 2\n0 2 6 0 1 3", 23, 0, &h, &st, &lineno) == 12);
	CHECK(st.done == 1);
	CHECK(pglog_feed("0 2 6 0 1 3", 11, 1, &h, &st, &lineno) == 11);
	CHECK(st.done == 2);
	hist_free(&h);
}

static json_t *resolve(const struct workload_ops *ops, const char *json, struct strbuf *err)
{
	json_t *o = json_loads(json, 0, NULL);
	json_t *p = params_resolve(ops->params, o, "w", err);
	json_decref(o);
	if (p && ops->check && ops->check(p, "w", err)) {
		json_decref(p);
		return NULL;
	}
	return p;
}

static void check_metric(const struct metric_set *ms, const char *name, double v,
			 const char *unit, enum better b, double tol)
{
	const struct metric *m = metric_find(ms, name);
	CHECK(m != NULL);
	if (!m) {
		printf("#   no metric %s\n", name);
		return;
	}
	CHECK_NEAR(m->value, v, tol);
	CHECK_STR(m->unit, unit);
	CHECK(m->better == b);
}

TEST(driver_parse)
{
	const struct workload_ops *ops = workload_find("pgbench");
	CHECK(ops != NULL);
	if (!ops)
		return;
	char *out = slurp("pgbench-15/sl-pgbench-select.stdout");
	char *js = slurp("pgbench-15/sl-pgbench-select.json");
	struct strbuf err = STRBUF_INIT;
	json_t *p = resolve(ops, "{\"type\":\"pgbench\",\"mode\":\"select-only\"}", &err);
	json_t *files = json_pack("{s:s}", "sl-pgbench.json", js);
	struct wl_output o = { .out = out, .err = "starting vacuum...end.\n", .files = files };
	struct metric_set ms;
	metric_set_init(&ms);
	CHECK(p != NULL);
	CHECK(ops->parse(p, &o, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	check_metric(&ms, "tps", 11965.378227, "tps", BETTER_HIGHER, 1e-9);
	check_metric(&ms, "transactions", 35839, "count", BETTER_HIGHER, 0);
	check_metric(&ms, "failed_transactions", 0, "count", BETTER_LOWER, 0);
	check_metric(&ms, "lat_avg_us", 167, "us", BETTER_LOWER, 1e-9);
	check_metric(&ms, "lat_max_us", 404599, "us", BETTER_LOWER, 0);
	CHECK(metric_find(&ms, "lat_p50_us") && metric_find(&ms, "lat_p90_us") &&
	      metric_find(&ms, "lat_p99_us") && metric_find(&ms, "lat_p999_us"));
	const struct metric *p50 = metric_find(&ms, "lat_p50_us"),
			    *p99 = metric_find(&ms, "lat_p99_us");
	CHECK(p50 && p99 && p50->value >= 17 && p50->value <= p99->value &&
	      p99->value <= 404599);
	CHECK(ms.nhist == 1);
	if (ms.nhist) {
		CHECK_STR(ms.hist[0].name, "latency_us");
		CHECK(ms.hist[0].h.total == 35839);   /* the log had every transaction */
	}
	for (size_t i = 0; i < ms.nr; i++)
		CHECK(workload_metric_known(ops, ms.m[i].name));
	CHECK_STR(ops->primary, "tps");
	metric_set_release(&ms);

	/* no sl-pgbench.json: the run is unusable, the message says why */
	struct wl_output o2 = { .out = out, .err = "", .files = NULL };
	metric_set_init(&ms);
	CHECK(ops->parse(p, &o2, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "sl-pgbench.json was not written");
	metric_set_release(&ms);
	strbuf_reset(&err);
	/* not pgbench's report */
	struct wl_output o3 = { .out = "hello\n", .err = "", .files = files };
	metric_set_init(&ms);
	CHECK(ops->parse(p, &o3, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no report");
	metric_set_release(&ms);
	strbuf_release(&err);
	json_decref(files);
	json_decref(p);
	free(out);
	free(js);
}

/* a percentile whose bucket's midpoint lies above the longest
 * transaction is capped at it (a guest run: p99 4866048, max 4863567) */
TEST(driver_pct_capped_at_max)
{
	struct hist h;
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	CHECK(pglog_hist_init(&h) == 0);
	for (int i = 0; i < 70; i++)
		hist_record(&h, 100000 + (uint64_t)i);
	for (int i = 0; i < 3; i++)
		hist_record(&h, 4863567);
	json_t *o = json_pack("{s:o}", "latency_us", hist_to_json(&h));
	char *text = json_dumps(o, 0);
	metric_set_init(&ms);
	CHECK(pgbench_parse_result(text, &ms, &err) == 0);
	const struct metric *p99 = metric_find(&ms, "lat_p99_us"), *mx = metric_find(&ms, "lat_max_us");
	CHECK(p99 && mx && mx->value == 4863567 && p99->value == 4863567);
	double raw;
	CHECK(hist_percentile(&h, 99, &raw) == HIST_OK && raw > 4863567);  /* what was capped */
	metric_set_release(&ms);
	strbuf_release(&err);
	free(text);
	json_decref(o);
	hist_free(&h);
}

TEST(driver_explain)
{
	struct strbuf msg = STRBUF_INIT;
	CHECK(pgbench_explain("starting vacuum...end.\nsl-pgbench: the PostgreSQL server did not "
			      "start: FATAL:  8 8kB is outside the valid range for parameter "
			      "\"shared_buffers\" (16 .. 1073741823)\n", &msg) == 1);
	CHECK_STR(msg.buf, "sl-pgbench: the PostgreSQL server did not start: FATAL:  8 8kB is "
			   "outside the valid range for parameter \"shared_buffers\" (16 .. "
			   "1073741823)");
	strbuf_reset(&msg);
	CHECK(pgbench_explain("pgbench: error: syntax error at line 1 of script\n", &msg) == 1);
	CHECK_CONTAINS(msg.buf, "syntax error");
	strbuf_reset(&msg);
	CHECK(pgbench_explain("something else\n", &msg) == 0);
	CHECK(pgbench_explain(NULL, &msg) == 0);
	strbuf_release(&msg);
}

static char *argv_str(struct strvec *sv)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sv->nr; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", sv->v[i]);
	return strbuf_detach(&sb, NULL);
}

TEST(driver_build_and_check)
{
	const struct workload_ops *ops = workload_find("pgbench");
	struct strbuf err = STRBUF_INIT;
	struct wl_exec ex;
	char *s;
	if (!ops)
		return;
	json_t *p = resolve(ops, "{\"type\":\"pgbench\"}", &err);
	CHECK(p != NULL);
	wl_exec_init(&ex);
	CHECK(ops->build(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "sl-pgbench --duration=10 --clients=2 --threads=1 --scale=1 --mode=tpcb "
		     "--shared-buffers=128MB --huge-pages=off --user=nobody");
	free(s);
	CHECK(ex.inputs == NULL);
	CHECK(ex.files.nr == 4 && !strcmp(ex.files.v[0], "sl-pgbench.json"));
	CHECK(ex.timeout_s > 10 + 120);
	wl_exec_release(&ex);
	json_decref(p);

	p = resolve(ops, "{\"type\":\"pgbench\",\"mode\":\"script\",\"clients\":4,\"threads\":2,"
			 "\"huge_pages\":\"try\",\"fsync\":true,\"script\":[\"\\\\set aid "
			 "random(1, 100000 * :scale)\",\"SELECT abalance FROM pgbench_accounts "
			 "WHERE aid = :aid;\"]}", &err);
	CHECK(p != NULL);
	wl_exec_init(&ex);
	CHECK(p && ops->build(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "sl-pgbench --duration=10 --clients=4 --threads=2 --scale=1 --mode=script "
		     "--script=pgbench-script.sql --shared-buffers=128MB --huge-pages=try --fsync "
		     "--user=nobody");
	free(s);
	CHECK_STR(json_string_value(json_object_get(ex.inputs, "pgbench-script.sql")),
		  "\\set aid random(1, 100000 * :scale)\n"
		  "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n");
	wl_exec_release(&ex);
	json_decref(p);
	strbuf_reset(&err);

	static const struct {
		const char *plan, *msg;
	} bad[] = {
		{ "{\"type\":\"pgbench\",\"clients\":2,\"threads\":3}", "w.threads: 3 is more than clients" },
		{ "{\"type\":\"pgbench\",\"mode\":\"script\"}", "w.script: mode \"script\" needs" },
		{ "{\"type\":\"pgbench\",\"mode\":\"script\",\"script\":[]}", "w.script: mode" },
		{ "{\"type\":\"pgbench\",\"mode\":\"script\",\"script\":[\"a\\nb\"]}", "w.script" },
		{ "{\"type\":\"pgbench\",\"script\":\"SELECT 1;\"}", "w.script: only with" },
		{ "{\"type\":\"pgbench\",\"shared_buffers\":\"lots\"}", "w.shared_buffers: \"lots\" is not a size" },
		{ "{\"type\":\"pgbench\",\"shared_buffers\":\"1MB -c fsync=on\"}", "w.shared_buffers" },
		{ "{\"type\":\"pgbench\",\"user\":\"../x\"}", "w.user" },
		{ "{\"type\":\"pgbench\",\"user\":\"-x\"}", "w.user" },
		{ "{\"type\":\"pgbench\",\"bindir\":\"bin\"}", "w.bindir: \"bin\" must be an absolute" },
		{ "{\"type\":\"pgbench\",\"huge_pages\":\"maybe\"}", "w.huge_pages: must be one of" },
		{ "{\"type\":\"pgbench\",\"mode\":\"tpcc\"}", "w.mode: must be one of" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strbuf_reset(&err);
		p = resolve(ops, bad[i].plan, &err);
		CHECK(p == NULL);
		if (!strstr(err.buf, bad[i].msg)) {
			printf("#   %s: got \"%s\"\n", bad[i].plan, err.buf);
			CHECK(0);
		}
		json_decref(p);
	}
	/* an explicit bindir is passed on */
	strbuf_reset(&err);
	p = resolve(ops, "{\"type\":\"pgbench\",\"bindir\":\"/opt/pg/bin\"}", &err);
	wl_exec_init(&ex);
	CHECK(p && ops->build(p, &ex, &err) == 0);
	CHECK(ex.argv.nr && !strcmp(ex.argv.v[ex.argv.nr - 1], "--bindir=/opt/pg/bin"));
	wl_exec_release(&ex);
	json_decref(p);
	/* PostgreSQL checks the unit itself: accepted here */
	strbuf_reset(&err);
	p = resolve(ops, "{\"type\":\"pgbench\",\"shared_buffers\":\"64kB\"}", &err);
	CHECK(p != NULL);
	json_decref(p);
	strbuf_release(&err);
}

int main(void)
{
	RUN(report_select_tpcb_failed);
	RUN(report_refused);
	RUN(log_select_only);
	RUN(log_failed_counts_match_report);
	RUN(log_bad_lines);
	RUN(driver_parse);
	RUN(driver_pct_capped_at_max);
	RUN(driver_explain);
	RUN(driver_build_and_check);
	return tap_done();
}
