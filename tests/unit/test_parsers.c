/*
 * Unit tests of the external-tool drivers (workloads/cyclictest.c,
 * hackbench.c, stressng.c) on real outputs kept in tests/data: cyclictest's
 * JSON with its text output (overflow counts), without it, with NaN
 * averages and without histograms; hackbench's "Time:" line; stress-ng's
 * YAML and "metrc:" lines. Also /proc/schedstat parsing and deltas
 * (analysis/schedstat.c) on a guest snapshot, and the argv each driver's
 * build() makes from resolved plan parameters. perf bench sched messaging
 * and pipe (perfbench.c): the values perf printed, its other benchmark's
 * output and cut or damaged output refused with the line expected.
 * sockperf (sockperf.c): its summary and full log, the argv through
 * sl-netpair, and what its failures are explained as.
 *
 * Expected values come from the data files by hand:
 *  cyclictest-2.4-hist: thread 0: cycles 5999, 5993 in the histogram, min 9,
 *  max 517, avg 24.90; thread 1: cycles 5976, 5932 in the histogram, min 7,
 *  max 2747, avg 29.43; "# Histogram Overflows: 00006 00044". Merged: 11975
 *  samples, 11925 in range, 50 overflow. Nearest rank: p50 = ceil(5987.5) =
 *  5988th sample; the cumulative count is 5688 up to 23 us and 6260 up to
 *  24 us -> 24. p99 = ceil(11855.25) = 11856th sample: 11855 up to 86 us,
 *  11857 up to 87 us -> 87. p99.9 = 11964th sample > 11925: overflow.
 *  cumulative_to() below re-checks these ranks against the parsed histogram.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist.h"
#include "analysis/schedstat.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"
#include "workloads/parsers.h"
#include "workloads/workload.h"


/* every metric a parser stored is one its workload lists (ops->metrics:
 * what plans and bisect check metric names against) */
static void all_known(const struct workload_ops *ops, const struct metric_set *ms)
{
	for (size_t i = 0; i < ms->nr; i++)
		if (!workload_metric_known(ops, ms->m[i].name)) {
			printf("#   %s: metric %s is not in its list\n", ops->name, ms->m[i].name);
			CHECK(0);
		}
	CHECK(workload_metric_known(ops, ops->primary));
	CHECK(!workload_metric_known(ops, "nosuch"));
}

static json_t *resolve(const struct workload_ops *ops, const char *json, struct strbuf *err);

static char *slurp(const char *name)
{
	return testdata_slurp(name);
}

static char *argv_str(struct strvec *sv)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sv->nr; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", sv->v[i]);
	return strbuf_detach(&sb, NULL);
}

/* replace the first occurrence of `from` by `to` (returns a new string) */
static char *replace(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	if (!p)
		return xstrdup(s);
	return xstrfmt("%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
}

static void check_metric(const struct metric_set *ms, const char *name, double v,
			 const char *unit, enum better better, double eps)
{
	const struct metric *m = metric_find(ms, name);
	CHECK(m != NULL);
	if (!m) {
		printf("#   metric %s missing\n", name);
		return;
	}
	CHECK_NEAR(m->value, v, eps);
	CHECK_STR(m->unit, unit);
	CHECK(m->better == better);
}

/* ---- cyclictest --------------------------------------------------------- */

/* the values every parse of cyclictest-2.4-hist must give, overflow 6 + 44 */
static void check_hist_result(const struct metric_set *ms)
{
	check_metric(ms, "lat_min_us", 7, "us", BETTER_LOWER, 0);
	check_metric(ms, "lat_max_us", 2747, "us", BETTER_LOWER, 0);
	/* (24.90 * 5999 + 29.43 * 5976) / (5999 + 5976) = 325248.78 / 11975 */
	check_metric(ms, "lat_avg_us", (24.90 * 5999 + 29.43 * 5976) / 11975, "us",
		     BETTER_LOWER, 1e-9);
	CHECK_NEAR(metric_find(ms, "lat_avg_us")->value, 27.1606497, 1e-6);
	check_metric(ms, "lat_p50_us", 24, "us", BETTER_LOWER, 0);
	check_metric(ms, "lat_p99_us", 87, "us", BETTER_LOWER, 0);
	CHECK(metric_find(ms, "lat_p50_us")->note == NULL);
	CHECK(metric_find(ms, "lat_p99_us")->note == NULL);
	CHECK(!metric_find(ms, "lat_p50_us")->censored && !metric_find(ms, "lat_p99_us")->censored);
	/* rank ceil(0.999 * 11975) = 11964 > 11925 in range: a lower bound,
	 * censored, at the histogram's range */
	check_metric(ms, "lat_p999_us", 200, "us", BETTER_LOWER, 0);
	const struct metric *m = metric_find(ms, "lat_p999_us");
	CHECK(m && m->note != NULL && m->censored == 1);
	if (m)
		CHECK_CONTAINS(m->note, "overflow");
	/* cyclictest's max and average are exact, also beyond the histogram */
	CHECK(!metric_find(ms, "lat_max_us")->censored && !metric_find(ms, "lat_avg_us")->censored);
	check_metric(ms, "overflows", 50, "count", BETTER_LOWER, 0);
	check_metric(ms, "samples", 11975, "count", BETTER_NONE, 0);
	CHECK(ms->nhist == 1);
	if (ms->nhist == 1) {
		const struct hist *h = &ms->hist[0].h;
		CHECK_STR(ms->hist[0].name, "latency_us");
		CHECK(h->scheme == HIST_LINEAR && h->nbuckets == 200);
		CHECK(h->total == 11975 && h->overflow == 50);
		CHECK(h->counts[7] == 1);           /* thread 1 only */
		CHECK(h->counts[9] == 1);           /* thread 0 only */
		CHECK(h->counts[12] == 30 + 40);
		CHECK(h->counts[24] == 253 + 319);
		CHECK(h->counts[199] == 0);
		CHECK_NEAR(h->min, 7, 0);
		CHECK_NEAR(h->max, 2747, 0);
	}
}

/* cumulative in-range count of buckets 0..b of the merged data file histogram */
static long long cumulative_to(const struct metric_set *ms, size_t b)
{
	long long c = 0;
	for (size_t i = 0; i <= b; i++)
		c += (long long)ms->hist[0].h.counts[i];
	return c;
}

TEST(cyclictest_text_overflow_line)
{
	char *txt = slurp("cyclictest-2.4-hist.stdout");
	long long o[8] = { 0 };
	CHECK(cyclictest_text_overflows(txt, o, 8) == 2);
	CHECK(o[0] == 6 && o[1] == 44);
	CHECK(cyclictest_text_overflows(txt, o, 1) == 1);   /* max respected */
	CHECK(cyclictest_text_overflows(NULL, o, 8) == -1);
	CHECK(cyclictest_text_overflows("# Total: 000005993 000005932\n", o, 8) == -1);
	free(txt);
}

TEST(cyclictest_hist_with_stdout)
{
	char *js = slurp("cyclictest-2.4-hist.json"), *txt = slurp("cyclictest-2.4-hist.stdout");
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(js && txt);
	CHECK(cyclictest_parse_result(js, txt, 200, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	check_hist_result(&ms);
	if (ms.nhist == 1) {
		/* the hand-derived ranks: 5988th sample is at 24, 11856th at 87 */
		CHECK(cumulative_to(&ms, 23) < 5988 && cumulative_to(&ms, 24) >= 5988);
		CHECK(cumulative_to(&ms, 86) < 11856 && cumulative_to(&ms, 87) >= 11856);
		CHECK(cumulative_to(&ms, 199) == 11925);
	}
	metric_set_release(&ms);
	strbuf_release(&err);
	free(js);
	free(txt);
}

/* without the text output, overflow = cycles - histogram sum per thread,
 * which is 5999 - 5993 = 6 and 5976 - 5932 = 44 again */
TEST(cyclictest_hist_without_stdout)
{
	char *js = slurp("cyclictest-2.4-hist.json");
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(cyclictest_parse_result(js, NULL, 200, &ms, &err) == 0);
	check_hist_result(&ms);
	metric_set_release(&ms);
	/* a text output lacking the overflow line: the same fallback */
	metric_set_init(&ms);
	CHECK(cyclictest_parse_result(js, "# /dev/cpu_dma_latency set to 0us\n", 200, &ms,
				      &err) == 0);
	check_hist_result(&ms);
	metric_set_release(&ms);
	strbuf_release(&err);
	free(js);
}

/* every sample beyond a 10 us histogram (a real run, under load and TCG it
 * is the common case): cyclictest writes "histogram": {} per thread and
 * "# Histogram Overflows: 04999 05000"; the percentiles are the range end,
 * censored, never a failure and never a plain number; max and avg stay exact */
TEST(cyclictest_all_overflow)
{
	char *js = slurp("cyclictest-2.4-all-overflow.json");
	char *txt = slurp("cyclictest-2.4-all-overflow.stdout");
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(js && txt);
	CHECK(cyclictest_parse_result(js, txt, 10, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	static const char *const pct[] = { "lat_p50_us", "lat_p99_us", "lat_p999_us" };
	for (size_t i = 0; i < 3; i++) {
		check_metric(&ms, pct[i], 10, "us", BETTER_LOWER, 0);
		const struct metric *m = metric_find(&ms, pct[i]);
		CHECK(m && m->censored == 1);
	}
	check_metric(&ms, "overflows", 4999 + 5000, "count", BETTER_LOWER, 0);
	check_metric(&ms, "samples", 4999 + 5000, "count", BETTER_NONE, 0);
	check_metric(&ms, "lat_max_us", 201, "us", BETTER_LOWER, 0);
	const struct metric *mx = metric_find(&ms, "lat_max_us");
	CHECK(mx && mx->censored == 0);
	CHECK(ms.nhist == 1 && ms.nhist && hist_overflow_fraction(&ms.hist[0].h) == 1.0);
	metric_set_release(&ms);
	/* without the text: overflow = cycles, the same */
	metric_set_init(&ms);
	CHECK(cyclictest_parse_result(js, NULL, 10, &ms, &err) == 0);
	check_metric(&ms, "overflows", 4999 + 5000, "count", BETTER_LOWER, 0);
	metric_set_release(&ms);
	strbuf_release(&err);
	free(js);
	free(txt);
}

/* the text's counts win over cycles - sum when both exist */
TEST(cyclictest_text_overflow_preferred)
{
	char *js = slurp("cyclictest-2.4-hist.json");
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(cyclictest_parse_result(js, "# Histogram Overflows: 00010 00044\n", 200, &ms,
				      &err) == 0);
	check_metric(&ms, "overflows", 54, "count", BETTER_LOWER, 0);
	check_metric(&ms, "samples", 11925 + 54, "count", BETTER_NONE, 0);
	metric_set_release(&ms);
	strbuf_release(&err);
	free(js);
}

/* a smaller histogram range than the run used: buckets >= 100 become
 * overflow; 11925 - cumulative(99) of the file's histogram + 50 */
TEST(cyclictest_smaller_range)
{
	char *js = slurp("cyclictest-2.4-hist.json");
	struct metric_set ms, full;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	metric_set_init(&full);
	CHECK(cyclictest_parse_result(js, NULL, 200, &full, &err) == 0);
	CHECK(cyclictest_parse_result(js, NULL, 100, &ms, &err) == 0);
	long long above = 11925 - cumulative_to(&full, 99);
	CHECK(above == 46);   /* thread 0: 13, thread 1: 33 samples in buckets 100..199 */
	check_metric(&ms, "overflows", 50 + (double)above, "count", BETTER_LOWER, 0);
	check_metric(&ms, "samples", 11975, "count", BETTER_NONE, 0);
	check_metric(&ms, "lat_p99_us", 87, "us", BETTER_LOWER, 0);
	check_metric(&ms, "lat_p999_us", 100, "us", BETTER_LOWER, 0);
	metric_set_release(&ms);
	metric_set_release(&full);
	strbuf_release(&err);
	free(js);
}

TEST(cyclictest_sanitize_nan)
{
	char *s = cyclictest_sanitize_json("{\"avg\": nan, \"b\":-nan, \"c\": -inf, "
					   "\"d\": \"nan in a string\", \"e\": 1.5, \"f\": NaN}");
	CHECK_STR(s, "{\"avg\": null, \"b\":null, \"c\": null, "
		     "\"d\": \"nan in a string\", \"e\": 1.5, \"f\": null}");
	json_t *j = json_loads(s, 0, NULL);
	CHECK(j != NULL);
	CHECK(json_is_null(json_object_get(j, "avg")));
	CHECK_STR(json_string_value(json_object_get(j, "d")), "nan in a string");
	json_decref(j);
	free(s);
	/* keys with a trailing colon are left alone */
	s = cyclictest_sanitize_json("{\"cmdline:\": \"cyclictest -q\"}");
	CHECK_STR(s, "{\"cmdline:\": \"cyclictest -q\"}");
	free(s);
}

/* avg nan in one thread: lat_avg from the other; in both: absent */
TEST(cyclictest_nan_avg)
{
	char *js = slurp("cyclictest-2.4-hist.json");
	char *one = replace(js, "\"avg\": 24.90", "\"avg\": -nan");
	char *both = replace(one, "\"avg\": 29.43", "\"avg\": nan");
	CHECK(strcmp(js, one) && strcmp(one, both));   /* the edits happened */
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(cyclictest_parse_result(one, NULL, 200, &ms, &err) == 0);
	check_metric(&ms, "lat_avg_us", 29.43, "us", BETTER_LOWER, 1e-12);
	check_metric(&ms, "lat_p50_us", 24, "us", BETTER_LOWER, 0);
	metric_set_release(&ms);
	metric_set_init(&ms);
	CHECK(cyclictest_parse_result(both, NULL, 200, &ms, &err) == 0);
	CHECK(metric_find(&ms, "lat_avg_us") == NULL);
	check_metric(&ms, "lat_max_us", 2747, "us", BETTER_LOWER, 0);
	metric_set_release(&ms);
	strbuf_release(&err);
	free(js);
	free(one);
	free(both);
}

TEST(cyclictest_smp_no_histogram)
{
	char *js = slurp("cyclictest-2.4-smp.json");
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(cyclictest_parse_result(js, NULL, 10000, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no histogram");
	CHECK(ms.nr == 0 && ms.nhist == 0);
	metric_set_release(&ms);
	strbuf_release(&err);
	free(js);
}

TEST(cyclictest_garbage)
{
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(cyclictest_parse_result("cyclictest: invalid option", NULL, 200, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "cyclictest JSON: line 1");
	strbuf_reset(&err);
	CHECK(cyclictest_parse_result("{\"file_version\": 1}", NULL, 200, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no \"thread\" results");
	strbuf_reset(&err);
	CHECK(cyclictest_parse_result("{\"thread\": {}}", NULL, 200, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no \"thread\" results");
	strbuf_reset(&err);
	CHECK(cyclictest_parse_result("", NULL, 200, &ms, &err) == -1);
	CHECK(err.len > 0);
	CHECK(ms.nr == 0);
	metric_set_release(&ms);
	strbuf_release(&err);
}

/* counts are untrusted: near INT64_MAX they overflowed the sum (UBSan:
 * signed overflow, samples stored as 1.8e19), 1e300 cycles was an
 * undefined cast; now each is a parse error naming the thread */
TEST(cyclictest_counts_out_of_range)
{
	static const char *const bad[] = {
		"{\"thread\": {\"0\": {\"cycles\": 10, \"histogram\": "
		"{\"1\": 9223372036854775000, \"2\": 9223372036854775000}}}}",
		"{\"thread\": {\"0\": {\"cycles\": 1e300, \"histogram\": {\"1\": 5}}}}",
		"{\"thread\": {\"0\": {\"cycles\": -4, \"histogram\": {\"1\": 5}}}}",
		"{\"thread\": {\"0\": {\"cycles\": \"many\", \"histogram\": {\"1\": 5}}}}",
		"{\"thread\": {\"0\": {\"cycles\": 10, \"histogram\": {\"1\": 9007199254740993}}}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct metric_set ms;
		struct strbuf err = STRBUF_INIT;
		metric_set_init(&ms);
		CHECK(cyclictest_parse_result(bad[i], NULL, 200, &ms, &err) == -1);
		CHECK_CONTAINS(err.buf, "thread 0");
		CHECK(ms.nr == 0);
		metric_set_release(&ms);
		strbuf_release(&err);
	}
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(cyclictest_parse_result("{\"thread\": {\"0\": {\"cycles\": 5, \"histogram\": {\"1\": 5}}}}",
				      "# Histogram Overflows: 99999999999999999999\n", 200, &ms,
				      &err) == -1);
	CHECK_CONTAINS(err.buf, "overflows is out of range");
	metric_set_release(&ms);
	strbuf_release(&err);
}

/* through the driver: parse() finds the JSON among the returned files */
TEST(cyclictest_driver_parse)
{
	const struct workload_ops *ops = workload_find("cyclictest");
	CHECK(ops != NULL);
	if (!ops)
		return;
	char *js = slurp("cyclictest-2.4-hist.json"), *txt = slurp("cyclictest-2.4-hist.stdout");
	struct strbuf err = STRBUF_INIT;
	json_t *obj = json_pack("{s:s,s:i,s:i}", "type", "cyclictest", "duration_s", 3,
				"histogram_us", 200);
	json_t *p = params_resolve(ops->params, obj, "workloads[0]", &err);
	CHECK(p != NULL);
	json_t *files = json_pack("{s:s}", "cyclictest.json", js);
	struct wl_output out = { .out = txt, .err = "", .files = files };
	struct metric_set ms;
	metric_set_init(&ms);
	CHECK(ops->parse(p, &out, &ms, &err) == 0);
	check_hist_result(&ms);
	all_known(ops, &ms);
	metric_set_release(&ms);
	/* no JSON file returned */
	struct wl_output none = { .out = txt, .err = "", .files = NULL };
	metric_set_init(&ms);
	CHECK(ops->parse(p, &none, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no JSON");
	metric_set_release(&ms);
	json_decref(files);
	json_decref(obj);
	json_decref(p);
	strbuf_release(&err);
	free(js);
	free(txt);
}

/* ---- hackbench, stress-ng ---------------------------------------------- */

TEST(hackbench_text)
{
	char *a = slurp("hackbench-process.txt"), *b = slurp("hackbench-threads-pipe.txt");
	double t = -1;
	CHECK(hackbench_parse_text(a, &t) == 0);
	CHECK_NEAR(t, 0.769, 1e-12);
	CHECK(hackbench_parse_text(b, &t) == 0);
	CHECK_NEAR(t, 0.158, 1e-12);
	CHECK(hackbench_parse_text(NULL, &t) == -1);
	CHECK(hackbench_parse_text("Running in process mode\n", &t) == -1);
	CHECK(hackbench_parse_text("Time: n/a\n", &t) == -1);
	free(a);
	free(b);
}

TEST(hackbench_driver_parse)
{
	const struct workload_ops *ops = workload_find("hackbench");
	CHECK(ops != NULL);
	if (!ops)
		return;
	char *a = slurp("hackbench-process.txt");
	struct strbuf err = STRBUF_INIT;
	json_t *obj = json_pack("{s:s}", "type", "hackbench");
	json_t *p = params_resolve(ops->params, obj, "workloads[0]", &err);
	struct wl_output out = { .out = a, .err = "" };
	struct metric_set ms;
	metric_set_init(&ms);
	CHECK(ops->parse(p, &out, &ms, &err) == 0);
	CHECK(ms.nr == 1);
	check_metric(&ms, "time_s", 0.769, "s", BETTER_LOWER, 1e-12);
	all_known(ops, &ms);
	metric_set_release(&ms);
	struct wl_output bad = { .out = "hackbench: fork failed\n", .err = "" };
	metric_set_init(&ms);
	CHECK(ops->parse(p, &bad, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "Time:");
	metric_set_release(&ms);
	json_decref(obj);
	json_decref(p);
	strbuf_release(&err);
	free(a);
}

TEST(stressng_yaml)
{
	char *y = slurp("stress-ng-cpu.yaml");
	double ops = -1, rate = -1;
	CHECK(stressng_parse_yaml(y, &ops, &rate) == 0);
	CHECK_NEAR(ops, 8455, 0);
	CHECK_NEAR(rate, 2816.926315, 1e-9);
	CHECK(stressng_parse_yaml(NULL, &ops, &rate) == -1);
	CHECK(stressng_parse_yaml("---\nsystem-info:\n  cpus: 2\n", &ops, &rate) == -1);
	CHECK(stressng_parse_yaml("---\nmetrics:\n    - stressor: cpu\n", &ops, &rate) == -1);
	free(y);
}

TEST(stressng_text)
{
	char *t = slurp("stress-ng-cpu.stdout");
	double ops = -1, rate = -1;
	CHECK(stressng_parse_text(t, "cpu", &ops, &rate) == 0);
	CHECK_NEAR(ops, 8455, 0);
	CHECK_NEAR(rate, 2816.93, 1e-9);
	CHECK(stressng_parse_text(t, "vm", &ops, &rate) == -1);
	CHECK(stressng_parse_text(t, "cp", &ops, &rate) == -1);   /* whole name only */
	CHECK(stressng_parse_text(NULL, "cpu", &ops, &rate) == -1);
	free(t);
}

TEST(stressng_driver_parse)
{
	const struct workload_ops *ops = workload_find("stress-ng");
	CHECK(ops != NULL);
	if (!ops)
		return;
	char *y = slurp("stress-ng-cpu.yaml"), *t = slurp("stress-ng-cpu.stdout");
	struct strbuf err = STRBUF_INIT;
	json_t *obj = json_pack("{s:s}", "type", "stress-ng");
	json_t *p = params_resolve(ops->params, obj, "workloads[0]", &err);
	json_t *files = json_pack("{s:s}", "stress-ng.yaml", y);
	struct metric_set ms;
	/* the YAML file */
	struct wl_output o1 = { .out = "", .err = "", .files = files };
	metric_set_init(&ms);
	CHECK(ops->parse(p, &o1, &ms, &err) == 0);
	check_metric(&ms, "bogo_ops_per_s", 2816.926315, "ops/s", BETTER_HIGHER, 1e-9);
	check_metric(&ms, "bogo_ops", 8455, "count", BETTER_HIGHER, 0);
	all_known(ops, &ms);
	metric_set_release(&ms);
	/* no file: the metrc: line on stderr (rounded to 2 decimals) */
	struct wl_output o2 = { .out = "", .err = t, .files = NULL };
	metric_set_init(&ms);
	CHECK(ops->parse(p, &o2, &ms, &err) == 0);
	check_metric(&ms, "bogo_ops_per_s", 2816.93, "ops/s", BETTER_HIGHER, 1e-9);
	metric_set_release(&ms);
	/* nothing at all */
	struct wl_output o3 = { .out = "", .err = "", .files = NULL };
	metric_set_init(&ms);
	CHECK(ops->parse(p, &o3, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no metrics");
	metric_set_release(&ms);
	json_decref(files);
	json_decref(obj);
	json_decref(p);
	strbuf_release(&err);
	free(y);
	free(t);
}

/* ---- perf bench sched (perfbench.c) -------------------------------------- */

/*
 * perf 6.1.192 (Debian 12's linux-perf), default format, stdout:
 *  perf-bench-sched-pipe.txt (shared testdata): -l 100000, processes:
 *    Total time: 4.580 [sec], 45.807100 usecs/op, 21830 ops/sec
 *  perf-bench-sched-pipe-threads.txt: -l 20000 -T:
 *    Total time: 0.037 [sec], 1.873850 usecs/op, 533660 ops/sec
 *  perf-bench-sched-messaging.txt: -g 2 -l 50: Total time: 0.129 [sec]
 *  perf-bench-sched-messaging-threads-pipe.txt: -g 1 -l 100 -t -p: 0.013
 */
TEST(perfbench_text)
{
	char *pp = slurp("perf-bench-sched-pipe.txt");
	char *pt = slurp("perf-bench-sched-pipe-threads.txt");
	char *mp = slurp("perf-bench-sched-messaging.txt");
	char *mt = slurp("perf-bench-sched-messaging-threads-pipe.txt");
	struct perfbench_result r;
	struct strbuf err = STRBUF_INIT;
	CHECK(perfbench_parse("pipe", pp, &r, &err) == 0);
	CHECK_NEAR(r.time_s, 4.580, 1e-12);
	CHECK_NEAR(r.usecs_per_op, 45.8071, 1e-12);
	CHECK_NEAR(r.ops_per_s, 21830, 0);
	CHECK(perfbench_parse("pipe", pt, &r, &err) == 0);
	CHECK_NEAR(r.time_s, 0.037, 1e-12);
	CHECK_NEAR(r.usecs_per_op, 1.87385, 1e-12);
	CHECK_NEAR(r.ops_per_s, 533660, 0);
	CHECK(perfbench_parse("messaging", mp, &r, &err) == 0);
	CHECK_NEAR(r.time_s, 0.129, 1e-12);
	CHECK(isnan(r.usecs_per_op) && isnan(r.ops_per_s));   /* perf prints neither */
	CHECK(perfbench_parse("messaging", mt, &r, &err) == 0);
	CHECK_NEAR(r.time_s, 0.013, 1e-12);
	CHECK(err.len == 0);

	/* the other benchmark's output: its header is named */
	CHECK(perfbench_parse("messaging", pp, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "no \"# Running 'sched/messaging' benchmark:\" line");
	strbuf_reset(&err);
	CHECK(perfbench_parse("pipe", mp, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "'sched/pipe'");
	strbuf_reset(&err);
	/* perf -f simple prints the number alone */
	CHECK(perfbench_parse("pipe", "4.580\n", &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "expected perf's default format");
	strbuf_reset(&err);
	CHECK(perfbench_parse("pipe", NULL, &r, &err) == -1);
	strbuf_reset(&err);
	/* cut after the header: the Total time line is named */
	char *cut = xstrfmt("%.*s", (int)(strstr(pp, "Total") - pp), pp);
	CHECK(perfbench_parse("pipe", cut, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "no \"Total time: <seconds> [sec]\" line");
	free(cut);
	strbuf_reset(&err);
	/* cut before ops/sec: both per-op lines are named */
	cut = xstrfmt("%.*s", (int)(strstr(pp, "  21830") - pp), pp);
	CHECK(perfbench_parse("pipe", cut, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "\"<number> usecs/op\" and \"<number> ops/sec\"");
	free(cut);
	strbuf_reset(&err);
	/* numbers that are not: n/a, negative (perf -l -5), inf, trailing text */
	char *bad = replace(pp, "4.580", "n/a");
	CHECK(perfbench_parse("pipe", bad, &r, &err) == -1);
	free(bad);
	bad = replace(pp, "45.807100", "-166.600000");
	CHECK(perfbench_parse("pipe", bad, &r, &err) == -1);
	free(bad);
	bad = replace(pp, "21830", "inf");
	CHECK(perfbench_parse("pipe", bad, &r, &err) == -1);
	free(bad);
	bad = replace(pp, "ops/sec", "ops/sec (approx)");
	CHECK(perfbench_parse("pipe", bad, &r, &err) == -1);
	free(bad);
	bad = replace(mp, "[sec]", "[msec]");
	CHECK(perfbench_parse("messaging", bad, &r, &err) == -1);
	free(bad);
	strbuf_release(&err);
	free(pp);
	free(pt);
	free(mp);
	free(mt);
}

/* each driver's parse on real output: the metrics, units, directions */
TEST(perfbench_driver_parse)
{
	const struct workload_ops *msg = workload_find("perf-messaging");
	const struct workload_ops *pip = workload_find("perf-pipe");
	CHECK(msg != NULL && pip != NULL);
	if (!msg || !pip)
		return;
	char *pp = slurp("perf-bench-sched-pipe.txt");
	char *mp = slurp("perf-bench-sched-messaging.txt");
	struct strbuf err = STRBUF_INIT;
	json_t *p1 = resolve(pip, "{\"type\":\"perf-pipe\"}", &err);
	json_t *p2 = resolve(msg, "{\"type\":\"perf-messaging\"}", &err);
	struct metric_set ms;
	struct wl_output o1 = { .out = pp, .err = "" };
	metric_set_init(&ms);
	CHECK(pip->parse(p1, &o1, &ms, &err) == 0);
	CHECK(ms.nr == 3);
	check_metric(&ms, "time_s", 4.580, "s", BETTER_LOWER, 1e-12);
	check_metric(&ms, "usecs_per_op", 45.8071, "us", BETTER_LOWER, 1e-12);
	check_metric(&ms, "ops_per_s", 21830, "ops/s", BETTER_HIGHER, 0);
	CHECK_STR(pip->primary, "usecs_per_op");
	all_known(pip, &ms);
	metric_set_release(&ms);
	struct wl_output o2 = { .out = mp, .err = "" };
	metric_set_init(&ms);
	CHECK(msg->parse(p2, &o2, &ms, &err) == 0);
	CHECK(ms.nr == 1);
	check_metric(&ms, "time_s", 0.129, "s", BETTER_LOWER, 1e-12);
	all_known(msg, &ms);
	CHECK(!workload_metric_known(msg, "usecs_per_op"));
	metric_set_release(&ms);
	/* the other's output, and nothing */
	metric_set_init(&ms);
	CHECK(msg->parse(p2, &o1, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "perf bench sched messaging: no \"# Running 'sched/messaging'");
	CHECK(ms.nr == 0);
	strbuf_reset(&err);
	struct wl_output o3 = { .out = "", .err = "" };
	CHECK(pip->parse(p1, &o3, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "perf bench sched pipe: no");
	CHECK(ms.nr == 0);
	metric_set_release(&ms);
	json_decref(p1);
	json_decref(p2);
	strbuf_release(&err);
	free(pp);
	free(mp);
}

TEST(perfbench_explain_errors)
{
	struct strbuf msg = STRBUF_INIT;
	/* linux-base's wrapper when no perf matches the running kernel */
	CHECK(perfbench_explain("", "/usr/bin/perf: line 13: exec: perf_5.10: not found\n"
			       "E: linux-perf-5.10 is not installed.\n", &msg) == 1);
	CHECK_CONTAINS(msg.buf, "install the Debian package linux-perf");
	strbuf_reset(&msg);
	CHECK(perfbench_explain("# Running 'sched/messaging' benchmark:\n",
				"perf: socketpair: Too many open files\n", &msg) == 1);
	CHECK_CONTAINS(msg.buf, "fewer groups");
	strbuf_reset(&msg);
	CHECK(perfbench_explain("", "", &msg) == 0);
	CHECK(perfbench_explain(NULL, NULL, &msg) == 0);
	CHECK(msg.len == 0);
	strbuf_release(&msg);
}

/* ---- schedstat ----------------------------------------------------------- */

/* the text between "=== NAME\n" and the next "===" line of the snapshot */
static char *section(const char *snap, const char *name)
{
	char *hdr = xstrfmt("=== %s\n", name);
	const char *p = snap ? strstr(snap, hdr) : NULL;
	char *r = NULL;
	if (p) {
		p += strlen(hdr);
		const char *e = strstr(p, "\n===");
		r = xstrfmt("%.*s\n", (int)(e ? e - p : (long)strlen(p)), p);
	}
	free(hdr);
	return r;
}

/*
 * cpu lines (yld, legacy, sched_count, sched_goidle, ttwu_count, ttwu_local,
 * rq_cpu_time, run_delay, pcount):
 *   before cpu0: 0 0   16   6    8    6 1158576170   168117086  480
 *          cpu1: 0 0    9   5    3    2 1663454329    77621047  392
 *   after  cpu0: 0 0 6632  12 5050 2918 2235933072 20355898500 7087
 *          cpu1: 0 0 5107 129 2780 1797 2657771438 23257656579 5366
 */
TEST(schedstat_parse_snapshot)
{
	char *snap = slurp("guest-debian-6.1-snapshot.txt");
	char *b = section(snap, "schedstat-before"), *a = section(snap, "schedstat-after");
	struct schedstat sb, sa;
	CHECK(b && a);
	CHECK(schedstat_parse(b, &sb) == 0);
	CHECK(sb.version == 15 && sb.ncpus == 2);
	CHECK(sb.total.yld_count == 0);
	CHECK(sb.total.sched_count == 25);
	CHECK(sb.total.sched_goidle == 11);
	CHECK(sb.total.ttwu_count == 11);
	CHECK(sb.total.ttwu_local == 8);
	CHECK(sb.total.rq_cpu_time == 2822030499ULL);
	CHECK(sb.total.run_delay == 245738133ULL);
	CHECK(sb.total.pcount == 872);
	CHECK(schedstat_parse(a, &sa) == 0);
	CHECK(sa.version == 15 && sa.ncpus == 2);
	CHECK(sa.total.sched_count == 11739);
	CHECK(sa.total.sched_goidle == 141);
	CHECK(sa.total.ttwu_count == 7830);
	CHECK(sa.total.ttwu_local == 4715);
	CHECK(sa.total.run_delay == 43613555079ULL);
	CHECK(sa.total.pcount == 12453);
	free(snap);
	free(a);
	free(b);
}

TEST(schedstat_delta_snapshot)
{
	char *snap = slurp("guest-debian-6.1-snapshot.txt");
	char *b = section(snap, "schedstat-before"), *a = section(snap, "schedstat-after");
	struct schedstat sb, sa;
	struct schedstat_delta d;
	CHECK(schedstat_parse(b, &sb) == 0 && schedstat_parse(a, &sa) == 0);
	CHECK(schedstat_delta(&sb, &sa, &d) == 0);
	CHECK_NEAR(d.ttwu_count, 7819, 0);                   /* 7830 - 11 */
	CHECK_NEAR(d.ttwu_local_pct, 100.0 * 4707 / 7819, 1e-9); /* (4715 - 8) / 7819 */
	CHECK_NEAR(d.ttwu_local_pct, 60.1995, 1e-4);
	CHECK_NEAR(d.run_delay_ms, 43367.816946, 1e-6);      /* 43613555079 - 245738133 ns */
	CHECK_NEAR(d.sched_count, 11714, 0);                 /* 11739 - 25 */
	/* backwards (after, before) is refused */
	CHECK(schedstat_delta(&sa, &sb, &d) == -1);
	/* the same snapshot twice: zero wakeups, no percentage */
	CHECK(schedstat_delta(&sb, &sb, &d) == 0);
	CHECK_NEAR(d.ttwu_count, 0, 0);
	CHECK(isnan(d.ttwu_local_pct));
	/* versions differ */
	struct schedstat v16 = sa;
	v16.version = 16;
	CHECK(schedstat_delta(&sb, &v16, &d) == -1);
	free(snap);
	free(a);
	free(b);
}

TEST(schedstat_rejects)
{
	struct schedstat s;
	CHECK(schedstat_parse(NULL, &s) == -1);
	CHECK(schedstat_parse("", &s) == -1);
	CHECK(schedstat_parse("version 14\ntimestamp 1\ncpu0 0 0 1 1 1 1 1 1 1\n", &s) == -1);
	CHECK(schedstat_parse("version 18\ntimestamp 1\ncpu0 0 0 1 1 1 1 1 1 1\n", &s) == -1);
	CHECK(schedstat_parse("version 15\ntimestamp 1\n", &s) == -1);      /* no cpu */
	CHECK(schedstat_parse("version 15\ntimestamp 1\ncpu0 0 0 1 2\n", &s) == -1); /* short */
	CHECK(schedstat_parse("version 17\ntimestamp 1\ncpu0 1 0 2 3 4 5 6 7 8\n", &s) == 0);
	CHECK(s.version == 17 && s.ncpus == 1);
	CHECK(s.total.yld_count == 1 && s.total.sched_count == 2 && s.total.ttwu_local == 5 &&
	      s.total.run_delay == 7 && s.total.pcount == 8);
}

/* ---- build(): argv from resolved parameters ----------------------------- */

static json_t *resolve(const struct workload_ops *ops, const char *json, struct strbuf *err)
{
	json_t *obj = json_loads(json, 0, NULL);
	json_t *p = params_resolve(ops->params, obj, "workloads[0]", err);
	json_decref(obj);
	return p;
}

TEST(cyclictest_build_argv)
{
	const struct workload_ops *ops = workload_find("cyclictest");
	struct strbuf err = STRBUF_INIT;
	json_t *p = resolve(ops, "{\"type\":\"cyclictest\",\"duration_s\":3}", &err);
	CHECK(p != NULL);
	CHECK(param_int(p, "threads") == 0);
	CHECK(param_int(p, "histogram_us") == 10000);
	struct wl_exec ex;
	wl_exec_init(&ex);
	CHECK(ops->build(p, &ex, &err) == 0);
	char *s = argv_str(&ex.argv);
	CHECK_STR(s, "cyclictest -q -m --priority=95 --policy=fifo --interval=1000 "
		     "--duration=3 --histogram=10000 -t -a --json=cyclictest.json");
	free(s);
	CHECK(ex.argv.v[ex.argv.nr] == NULL);
	CHECK(ex.files.nr == 1);
	CHECK_STR(ex.files.v[0], "cyclictest.json");
	CHECK_NEAR(ex.timeout_s, 3 * 1.5 + 30 + 10, 1e-12);   /* + 1 s per 1000 buckets */
	CHECK_STR(ex.package, "rt-tests");
	CHECK_NEAR(ops->estimate_s(p), 3.5, 1e-12);
	wl_exec_release(&ex);
	json_decref(p);

	p = resolve(ops, "{\"type\":\"cyclictest\",\"threads\":2,\"policy\":\"rr\","
			 "\"priority\":80,\"interval_us\":500,\"histogram_us\":200}", &err);
	CHECK(p != NULL);
	wl_exec_init(&ex);
	CHECK(ops->build(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "cyclictest -q -m --priority=80 --policy=rr --interval=500 "
		     "--duration=10 --histogram=200 --threads=2 --json=cyclictest.json");
	free(s);
	CHECK_NEAR(ex.timeout_s, 10 * 1.5 + 30 + 0.2, 1e-12);
	wl_exec_release(&ex);
	json_decref(p);
	strbuf_release(&err);
}

TEST(hackbench_build_argv)
{
	const struct workload_ops *ops = workload_find("hackbench");
	struct strbuf err = STRBUF_INIT;
	struct wl_exec ex;
	json_t *p = resolve(ops, "{\"type\":\"hackbench\"}", &err);
	wl_exec_init(&ex);
	CHECK(ops->build(p, &ex, &err) == 0);
	char *s = argv_str(&ex.argv);
	CHECK_STR(s, "hackbench -g 4 -l 200 -f 20 -s 100 -P");   /* process, sockets */
	free(s);
	CHECK(ex.timeout_s > 60);
	wl_exec_release(&ex);
	json_decref(p);

	p = resolve(ops, "{\"type\":\"hackbench\",\"groups\":2,\"loops\":100,"
			 "\"mode\":\"thread\",\"transport\":\"pipe\"}", &err);
	CHECK(p != NULL);
	wl_exec_init(&ex);
	CHECK(ops->build(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "hackbench -g 2 -l 100 -f 20 -s 100 -T -p");   /* threads, pipes */
	free(s);
	wl_exec_release(&ex);
	/* as load: the same with a huge loop count */
	wl_exec_init(&ex);
	CHECK(ops->can_be_load && ops->build_load(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "hackbench -g 2 -l 1000000000 -f 20 -s 100 -T -p");
	free(s);
	wl_exec_release(&ex);
	json_decref(p);
	strbuf_release(&err);
}

TEST(stressng_build_argv)
{
	const struct workload_ops *ops = workload_find("stress-ng");
	struct strbuf err = STRBUF_INIT;
	struct wl_exec ex;
	json_t *p = resolve(ops, "{\"type\":\"stress-ng\",\"threads\":2,\"duration_s\":3}", &err);
	CHECK(p != NULL);
	CHECK(ops->check(p, "workloads[0]", &err) == 0);
	wl_exec_init(&ex);
	CHECK(ops->build(p, &ex, &err) == 0);
	char *s = argv_str(&ex.argv);
	CHECK_STR(s, "stress-ng --cpu 2 --timeout=3s --metrics-brief --yaml=stress-ng.yaml");
	free(s);
	CHECK(ex.files.nr == 1);
	CHECK_STR(ex.files.v[0], "stress-ng.yaml");
	CHECK_STR(ex.package, "stress-ng");
	wl_exec_release(&ex);
	wl_exec_init(&ex);
	CHECK(ops->build_load(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "stress-ng --cpu 2 --quiet");
	free(s);
	wl_exec_release(&ex);
	json_decref(p);

	p = resolve(ops, "{\"type\":\"stress-ng\",\"stressor\":\"CPU; rm\"}", &err);
	CHECK(p != NULL);
	CHECK(ops->check(p, "workloads[2]", &err) == -1);
	CHECK_CONTAINS(err.buf, "workloads[2].stressor: \"CPU; rm\" is not a stress-ng stressor");
	json_decref(p);
	strbuf_release(&err);
}

TEST(perfbench_build_argv)
{
	const struct workload_ops *msg = workload_find("perf-messaging");
	const struct workload_ops *pip = workload_find("perf-pipe");
	struct strbuf err = STRBUF_INIT;
	struct wl_exec ex;
	json_t *p = resolve(msg, "{\"type\":\"perf-messaging\"}", &err);
	CHECK(p != NULL);
	wl_exec_init(&ex);
	CHECK(msg->build(p, &ex, &err) == 0);
	char *s = argv_str(&ex.argv);
	CHECK_STR(s, "perf bench sched messaging -g 10 -l 100");   /* perf's defaults */
	free(s);
	CHECK(ex.argv.v[ex.argv.nr] == NULL);
	CHECK_STR(ex.package, "linux-perf");
	CHECK_STR(msg->tool, "perf");
	CHECK(ex.timeout_s >= 60 && ex.timeout_s > msg->estimate_s(p));
	wl_exec_release(&ex);
	json_decref(p);
	p = resolve(msg, "{\"type\":\"perf-messaging\",\"groups\":3,\"loops\":7,"
			 "\"mode\":\"thread\",\"transport\":\"pipe\"}", &err);
	CHECK(p != NULL);
	wl_exec_init(&ex);
	CHECK(msg->build(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "perf bench sched messaging -g 3 -l 7 -t -p");
	free(s);
	wl_exec_release(&ex);
	json_decref(p);

	p = resolve(pip, "{\"type\":\"perf-pipe\"}", &err);
	CHECK(p != NULL);
	wl_exec_init(&ex);
	CHECK(pip->build(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "perf bench sched pipe -l 100000");
	free(s);
	wl_exec_release(&ex);
	json_decref(p);
	p = resolve(pip, "{\"type\":\"perf-pipe\",\"loops\":5000,\"mode\":\"thread\"}", &err);
	CHECK(p != NULL);
	wl_exec_init(&ex);
	CHECK(pip->build(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "perf bench sched pipe -l 5000 -T");
	free(s);
	wl_exec_release(&ex);
	json_decref(p);
	CHECK(err.len == 0);

	/* nothing a plan gives can become an option or an extra word */
	p = resolve(pip, "{\"type\":\"perf-pipe\",\"loops\":\"-T\"}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].loops: must be a positive integer");
	strbuf_reset(&err);
	p = resolve(pip, "{\"type\":\"perf-pipe\",\"loops\":-5}", &err);
	CHECK(p == NULL);
	strbuf_reset(&err);
	/* above the bound: the bound is named, in full (issue 41) */
	p = resolve(pip, "{\"type\":\"perf-pipe\",\"loops\":2000000000}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].loops: must be a positive integer no larger than "
				"1000000000");
	strbuf_reset(&err);
	p = resolve(msg, "{\"type\":\"perf-messaging\",\"mode\":\"-l 1\"}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].mode: must be one of \"process\", \"thread\"");
	strbuf_reset(&err);
	p = resolve(msg, "{\"type\":\"perf-messaging\",\"groups\":0}", &err);
	CHECK(p == NULL);
	strbuf_reset(&err);
	p = resolve(msg, "{\"type\":\"perf-messaging\",\"fds\":2}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].fds: unknown key (valid: type, groups, loops, mode, "
				"transport)");
	strbuf_release(&err);
}

TEST(params_resolve_errors)
{
	const struct workload_ops *cy = workload_find("cyclictest");
	struct strbuf err = STRBUF_INIT;
	json_t *p;

	p = resolve(cy, "{\"type\":\"cyclictest\",\"duration_s\":0}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].duration_s: must be a positive integer");
	strbuf_reset(&err);
	p = resolve(cy, "{\"type\":\"cyclictest\",\"duration_s\":2.5}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].duration_s: must be a positive integer");
	strbuf_reset(&err);
	p = resolve(cy, "{\"type\":\"cyclictest\",\"priority\":100}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].priority: must be a non-negative integer no larger than 99");
	strbuf_reset(&err);
	p = resolve(cy, "{\"type\":\"cyclictest\",\"bogus\":1}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].bogus: unknown key (valid: type, duration_s, ");
	CHECK_CONTAINS(err.buf, "histogram_us");
	strbuf_reset(&err);
	p = resolve(cy, "{\"type\":\"cyclictest\",\"policy\":\"batch\"}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].policy: must be one of \"fifo\", \"rr\", \"other\"");
	strbuf_reset(&err);
	p = resolve(cy, "{\"type\":\"cyclictest\",\"load\":{\"type\":\"cyclictest\"}}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].load.type: \"cyclictest\" cannot be used as load");
	CHECK_CONTAINS(err.buf, "hackbench");
	CHECK_CONTAINS(err.buf, "stress-ng");
	strbuf_reset(&err);
	p = resolve(cy, "{\"type\":\"cyclictest\",\"load\":{\"type\":\"hackbench\",\"groups\":0}}",
		    &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].load.groups: must be a positive integer");
	strbuf_reset(&err);
	/* a valid load is resolved with its own defaults */
	p = resolve(cy, "{\"type\":\"cyclictest\",\"load\":{\"type\":\"hackbench\",\"groups\":2}}",
		    &err);
	CHECK(p != NULL);
	json_t *load = json_object_get(p, "load");
	CHECK(param_int(load, "groups") == 2);
	CHECK(param_int(load, "loops") == 200);
	CHECK_STR(param_str(load, "transport"), "socket");
	json_decref(p);
	strbuf_release(&err);
}

/* ---- sockperf (sockperf.c) ----------------------------------------------- */

/*
 * sockperf 3.7 (Debian 12), client stdout, captured here on loopback:
 *  sockperf/ping-pong-tcp-full-rtt.txt: ping-pong --tcp -t 1 -m 64 --full-rtt
 *    --full-log: valid 0.550 s, 30349 sent and received, avg-rtt 18.075
 *    (std-dev 51.114), 30349 observations, min 4.743, p50 5.106, p90 73.073,
 *    p99 90.045, p99.9 170.804, p99.99 2516.573, max 3728.385, 0 dropped
 *  sockperf/under-load-tcp-full-rtt.txt: under-load --tcp --mps 5000
 *    --reply-every 10 --full-rtt: valid 0.544 s, 2721 sent, 273 received and
 *    observed, avg-rtt 34.095, p50 11.005, p99 767.631, max 1817.012
 *  sockperf/ping-pong-udp-half-rtt.txt: without --full-rtt (sockperf prints
 *    avg-latency, half the round trip): refused, naming --full-rtt
 *  sockperf/full-log-head.csv: the summary, the header and the first 100
 *    rows of the --full-log of the first run (rtt 80.031, 76.783, ...; the
 *    least 52.309, the most 145.813)
 */
TEST(sockperf_summary)
{
	char *pp = slurp("sockperf/ping-pong-tcp-full-rtt.txt");
	char *ul = slurp("sockperf/under-load-tcp-full-rtt.txt");
	char *half = slurp("sockperf/ping-pong-udp-half-rtt.txt");
	struct sockperf_result r;
	struct strbuf err = STRBUF_INIT;
	CHECK(pp && ul && half);
	if (!pp || !ul || !half)
		return;
	CHECK(sockperf_parse_summary(pp, &r, &err) == 0);
	CHECK_NEAR(r.valid_s, 0.550, 1e-12);
	CHECK_NEAR(r.sent, 30349, 0);
	CHECK_NEAR(r.received, 30349, 0);
	CHECK_NEAR(r.avg_us, 18.075, 1e-12);
	CHECK_NEAR(r.stddev_us, 51.114, 1e-12);
	CHECK_NEAR(r.observations, 30349, 0);
	CHECK_NEAR(r.dropped, 0, 0);
	CHECK_NEAR(r.min_us, 4.743, 1e-12);
	CHECK_NEAR(r.p50_us, 5.106, 1e-12);
	CHECK_NEAR(r.p90_us, 73.073, 1e-12);
	CHECK_NEAR(r.p99_us, 90.045, 1e-12);
	CHECK_NEAR(r.p999_us, 170.804, 1e-12);
	CHECK_NEAR(r.p9999_us, 2516.573, 1e-12);
	CHECK_NEAR(r.max_us, 3728.385, 1e-12);
	CHECK(sockperf_parse_summary(ul, &r, &err) == 0);
	CHECK_NEAR(r.sent, 2721, 0);
	CHECK_NEAR(r.received, 273, 0);
	CHECK_NEAR(r.observations, 273, 0);
	CHECK_NEAR(r.avg_us, 34.095, 1e-12);
	CHECK_NEAR(r.p50_us, 11.005, 1e-12);
	CHECK_NEAR(r.p99_us, 767.631, 1e-12);
	CHECK_NEAR(r.max_us, 1817.012, 1e-12);
	CHECK(err.len == 0);

	/* half round trips are refused: every stored latency is a full one */
	CHECK(sockperf_parse_summary(half, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "--full-rtt");
	strbuf_reset(&err);
	/* the test ended before its statistics */
	char *cut = xstrfmt("%.*s", (int)(strstr(pp, "[Valid Duration]") - pp), pp);
	CHECK(sockperf_parse_summary(cut, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "no \"[Valid Duration]\" line");
	free(cut);
	strbuf_reset(&err);
	/* cut before the percentiles: the first missing line is named */
	cut = xstrfmt("%.*s", (int)(strstr(pp, "percentile 99.000") - pp), pp);
	CHECK(sockperf_parse_summary(cut, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "no \"---> percentile 99.000 =\" line");
	free(cut);
	strbuf_reset(&err);
	/* numbers that are not */
	char *bad = replace(pp, "avg-rtt=18.075", "avg-rtt=nan");
	CHECK(sockperf_parse_summary(bad, &r, &err) == -1);
	free(bad);
	strbuf_reset(&err);
	bad = replace(pp, "<MAX> observation = 3728.385", "<MAX> observation = -1");
	CHECK(sockperf_parse_summary(bad, &r, &err) == -1);
	free(bad);
	strbuf_reset(&err);
	bad = replace(pp, "RunTime=0.550", "RunTime=0");
	CHECK(sockperf_parse_summary(bad, &r, &err) == -1);
	free(bad);
	strbuf_reset(&err);
	CHECK(sockperf_parse_summary("", &r, &err) == -1);
	strbuf_release(&err);
	free(pp);
	free(ul);
	free(half);
}

TEST(sockperf_full_log)
{
	char *csv = slurp("sockperf/full-log-head.csv");
	struct hist h;
	struct strbuf err = STRBUF_INIT;
	CHECK(csv != NULL);
	if (!csv)
		return;
	CHECK(sockperf_parse_full_log(csv, &h, &err) == 0);
	CHECK(h.total == 100);             /* rows 0..99 */
	CHECK_NEAR(h.min, 52309, 0);       /* 52.309 us (row 4) in ns, exact */
	CHECK_NEAR(h.max, 145813, 0);      /* 145.813 us */
	hist_free(&h);
	/* a file that is not sockperf's full log */
	CHECK(sockperf_parse_full_log("a,b\n1,2\n", &h, &err) == -1);
	CHECK_CONTAINS(err.buf, "no \"packet, txTime(sec), rxTime(sec), rtt(usec)\" header");
	strbuf_reset(&err);
	/* a damaged row ends the reading, keeping what came before */
	char *bad = replace(csv, "2, 2.419373261", "2, x");
	CHECK(sockperf_parse_full_log(bad, &h, &err) == 0);
	CHECK(h.total == 2);
	hist_free(&h);
	free(bad);
	strbuf_release(&err);
	free(csv);
}

TEST(sockperf_driver)
{
	const struct workload_ops *ops = workload_find("sockperf");
	CHECK(ops != NULL);
	if (!ops)
		return;
	struct strbuf err = STRBUF_INIT;
	struct wl_exec ex;
	json_t *p = resolve(ops, "{\"type\":\"sockperf\"}", &err);
	CHECK(p != NULL && ops->check(p, "workloads[0]", &err) == 0);
	wl_exec_init(&ex);
	CHECK(ops->build(p, &ex, &err) == 0);
	char *s = argv_str(&ex.argv);
	CHECK_STR(s, "sl-netpair --proto udp --ready PORT = --log sockperf-server.log -- "
		     "sockperf server -i 127.0.0.1 -p {port} -- sockperf ping-pong -i 127.0.0.1 "
		     "-p {port} -t 5 -m 64 --full-rtt");
	free(s);
	CHECK(ex.timeout_s > ops->estimate_s(p));
	CHECK_STR(ops->also_tools[0], "sockperf");
	wl_exec_release(&ex);
	json_decref(p);
	p = resolve(ops, "{\"type\":\"sockperf\",\"mode\":\"under-load\",\"protocol\":\"tcp\","
			 "\"mps\":2000,\"reply_every\":5,\"duration_s\":2,\"msg_size\":100,"
			 "\"full_log\":true}", &err);
	CHECK(p != NULL && ops->check(p, "workloads[0]", &err) == 0);
	wl_exec_init(&ex);
	CHECK(ops->build(p, &ex, &err) == 0);
	s = argv_str(&ex.argv);
	CHECK_STR(s, "sl-netpair --proto tcp --ready PORT = --log sockperf-server.log -- "
		     "sockperf server -i 127.0.0.1 -p {port} --tcp -- sockperf under-load -i "
		     "127.0.0.1 -p {port} --tcp -t 2 -m 100 --mps=2000 --reply-every=5 --full-rtt "
		     "--full-log sockperf-full.csv");
	free(s);
	wl_exec_release(&ex);
	json_decref(p);
	/* under-load needs a rate */
	p = resolve(ops, "{\"type\":\"sockperf\",\"mode\":\"under-load\"}", &err);
	CHECK(p != NULL && ops->check(p, "workloads[0]", &err) == -1);
	CHECK_CONTAINS(err.buf, "workloads[0].mps: mode \"under-load\" needs a rate");
	json_decref(p);
	strbuf_reset(&err);
	/* nothing a plan gives becomes an option */
	CHECK(resolve(ops, "{\"type\":\"sockperf\",\"protocol\":\"--tcp\"}", &err) == NULL);
	CHECK_CONTAINS(err.buf, "workloads[0].protocol: must be one of \"udp\", \"tcp\"");
	strbuf_reset(&err);
	CHECK(resolve(ops, "{\"type\":\"sockperf\",\"msg_size\":10}", &err) == NULL);
	strbuf_reset(&err);

	/* parse: the metrics, units, directions; the histogram from the log */
	char *pp = slurp("sockperf/ping-pong-tcp-full-rtt.txt");
	char *csv = slurp("sockperf/full-log-head.csv");
	json_t *files = json_pack("{s:s}", "sockperf-full.csv", csv ? csv : "");
	struct wl_output out = { .out = pp, .err = "", .files = files };
	struct metric_set ms;
	metric_set_init(&ms);
	p = resolve(ops, "{\"type\":\"sockperf\",\"full_log\":true}", &err);
	CHECK(ops->parse(p, &out, &ms, &err) == 0);
	check_metric(&ms, "rtt_p50_us", 5.106, "us", BETTER_LOWER, 1e-12);
	check_metric(&ms, "rtt_p999_us", 170.804, "us", BETTER_LOWER, 1e-12);
	check_metric(&ms, "rtt_max_us", 3728.385, "us", BETTER_LOWER, 1e-12);
	check_metric(&ms, "msgs_per_s", 30349 / 0.550, "msgs/s", BETTER_HIGHER, 1e-6);
	check_metric(&ms, "observations", 30349, "count", BETTER_NONE, 0);
	check_metric(&ms, "dropped", 0, "count", BETTER_LOWER, 0);
	all_known(ops, &ms);
	CHECK(ms.nhist == 1 && !strcmp(ms.hist[0].name, "rtt_ns") && ms.hist[0].h.total == 100);
	metric_set_release(&ms);
	/* the log asked for and not brought back (over 32 MiB): a note, no histogram */
	json_t *none = json_object();
	out.files = none;
	metric_set_init(&ms);
	CHECK(ops->parse(p, &out, &ms, &err) == 0);
	CHECK(ms.nhist == 0);
	CHECK_CONTAINS(ms.note.buf, "no histogram rtt_ns");
	metric_set_release(&ms);
	json_decref(p);
	/* a missing sockperf and a server that never got ready are named */
	struct strbuf msg = STRBUF_INIT;
	struct wl_output bad = { .out = "", .err = "sl-netpair: the server (sockperf) exited with "
				 "status 127 before it was ready; its last line: sl-netpair: cannot "
				 "run sockperf: No such file or directory\n" };
	CHECK(ops->explain(NULL, &bad, &msg) == 1);
	CHECK_CONTAINS(msg.buf, "the Debian package sockperf");
	strbuf_reset(&msg);
	bad.err = "sl-netpair: the server (sockperf) did not print \"PORT =\" within 30 s; its "
		  "last line: x\nmore\n";
	CHECK(ops->explain(NULL, &bad, &msg) == 1);
	CHECK_STR(msg.buf, "sl-netpair: the server (sockperf) did not print \"PORT =\" within 30 s; "
			   "its last line: x");
	strbuf_release(&msg);
	json_decref(files);
	json_decref(none);
	free(pp);
	free(csv);
	strbuf_release(&err);
}

int main(void)
{
	RUN(cyclictest_text_overflow_line);
	RUN(cyclictest_hist_with_stdout);
	RUN(cyclictest_hist_without_stdout);
	RUN(cyclictest_all_overflow);
	RUN(cyclictest_text_overflow_preferred);
	RUN(cyclictest_smaller_range);
	RUN(cyclictest_sanitize_nan);
	RUN(cyclictest_nan_avg);
	RUN(cyclictest_smp_no_histogram);
	RUN(cyclictest_garbage);
	RUN(cyclictest_counts_out_of_range);
	RUN(cyclictest_driver_parse);
	RUN(hackbench_text);
	RUN(hackbench_driver_parse);
	RUN(stressng_yaml);
	RUN(stressng_text);
	RUN(stressng_driver_parse);
	RUN(perfbench_text);
	RUN(perfbench_driver_parse);
	RUN(perfbench_explain_errors);
	RUN(sockperf_summary);
	RUN(sockperf_full_log);
	RUN(sockperf_driver);
	RUN(schedstat_parse_snapshot);
	RUN(schedstat_delta_snapshot);
	RUN(schedstat_rejects);
	RUN(cyclictest_build_argv);
	RUN(hackbench_build_argv);
	RUN(stressng_build_argv);
	RUN(perfbench_build_argv);
	RUN(params_resolve_errors);
	return tap_done();
}
