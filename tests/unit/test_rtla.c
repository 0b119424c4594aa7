/*
 * Unit tests of the rtla drivers (workloads/timerlat.c, osnoise.c, rtla.c):
 * the text parsers on outputs captured from rtla 6.1 in a 2-CPU qemu/TCG
 * guest on the tracing variant kernel (tests/data/rtla-6.1/: timerlat hist
 * at 1 ms and 10 ms, automatic mode with its saved trace, osnoise top), and on hand-made
 * outputs in rtla's exact print formats for the cases a short real run does
 * not show (overflow, "-" averages, damaged tables); the refusals captured
 * on Debian's 6.1 kernel (no tracer); the argv build() makes; plan errors.
 *
 * The hand-made timerlat table (SYNTH below): IRQ-000 900/90/10 at 0/1/2
 * us, Thr-000 700/250/45 at 1/2/5 us + 5 over, IRQ-001 950/45/5, Thr-001
 * 800/190/10 at 1/2/5, 1000 samples each. Merged thread: 2000 samples,
 * 1500 at 1, 440 at 2, 55 at 5, 5 over: p50 = rank 1000 -> 1; p99 = rank
 * 1980 (1940 up to 2 us, 1995 up to 5) -> 5; p99.9 = rank 1998 > 1995 in
 * range -> overflow, censored at the range (100). Thr-000 p99: rank 990,
 * 950 up to 2, 995 up to 5 -> 5; Thr-001 p99: 800, 990 up to 2 -> 2.
 * Merged IRQ: 1850 at 0, 135 at 1, 15 at 2: p99 = rank 1980 -> 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"
#include "workloads/parsers.h"
#include "workloads/workload.h"


/* every metric a parser stored is one its workload lists (ops->metrics) */
static void all_known(const char *type, const struct metric_set *ms)
{
	const struct workload_ops *ops = workload_find(type);
	for (size_t i = 0; ops && i < ms->nr; i++)
		if (!workload_metric_known(ops, ms->m[i].name)) {
			printf("#   %s: metric %s is not in its list\n", type, ms->m[i].name);
			CHECK(0);
		}
	CHECK(ops && ms->nr > 0);
}

static char *slurp(const char *name)
{
	char rel[512];
	snprintf(rel, sizeof(rel), "rtla-6.1/%s", name);
	return testdata_slurp(rel);
}

static const char SYNTH[] =
	"# RTLA timerlat histogram\n"
	"# Time unit is microseconds (us)\n"
	"# Duration:   0 00:00:02\n"
	"Index   IRQ-000   Thr-000   IRQ-001   Thr-001\n"
	"0           900         0       950         0 \n"
	"1            90       700        45       800 \n"
	"2            10       250         5       190 \n"
	"5             0        45         0        10 \n"
	"over:         0         5         0         0 \n"
	"count:     1000      1000      1000      1000 \n"
	"min:          0         1         0         1 \n"
	"avg:          0         1         0         1 \n"
	"max:          2      1500         2         5 \n";

static const struct metric *metric(const struct metric_set *ms, const char *name, double v,
				   const char *unit)
{
	const struct metric *m = metric_find(ms, name);
	CHECK(m != NULL);
	if (!m) {
		printf("#   metric %s missing\n", name);
		return NULL;
	}
	CHECK_NEAR(m->value, v, 1e-9);
	CHECK_STR(m->unit, unit);
	return m;
}

static const struct hist *hist_named(const struct metric_set *ms, const char *name)
{
	for (size_t i = 0; i < ms->nhist; i++)
		if (!strcmp(ms->hist[i].name, name))
			return &ms->hist[i].h;
	printf("#   histogram %s missing\n", name);
	return NULL;
}

/* params_resolve + the driver's check, as plan.c does; "" when valid */
static char *plan_error(const char *type, const char *text, json_t **out)
{
	const struct workload_ops *ops = workload_find(type);
	struct strbuf err = STRBUF_INIT;
	json_t *obj = json_loads(text, 0, NULL);
	json_t *p = ops && obj ? params_resolve(ops->params, obj, "workloads[0]", &err) : NULL;
	if (p && ops->check && ops->check(p, "workloads[0]", &err)) {
		json_decref(p);
		p = NULL;
	}
	json_decref(obj);
	if (out)
		*out = p;
	else
		json_decref(p);
	return strbuf_detach(&err, NULL);
}

static char *argv_of(const char *type, const char *text)
{
	json_t *p = NULL;
	char *e = plan_error(type, text, &p);
	free(e);
	struct wl_exec ex;
	wl_exec_init(&ex);
	struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
	if (p && !workload_find(type)->build(p, &ex, &err))
		for (size_t i = 0; i < ex.argv.nr; i++)
			strbuf_addf(&sb, "%s%s", i ? " " : "", ex.argv.v[i]);
	for (size_t i = 0; i < ex.files.nr; i++)
		strbuf_addf(&sb, " [file %s]", ex.files.v[i]);
	if (ex.stop_sigint)
		strbuf_addstr(&sb, " [stop INT]");
	wl_exec_release(&ex);
	strbuf_release(&err);
	json_decref(p);
	return strbuf_detach(&sb, NULL);
}

TEST(rtla_registered)
{
	const struct workload_ops *t = workload_find("timerlat"), *o = workload_find("osnoise");
	CHECK(t && o);
	if (!t || !o)
		return;
	CHECK_STR(t->tool, "rtla");
	CHECK_STR(t->package, "rtla");
	CHECK_STR(t->tracer, "timerlat");
	CHECK_STR(o->tracer, "osnoise");
	CHECK_STR(t->primary, "thread_lat_p99_us");
	CHECK_STR(o->primary, "noise_max_single_us");
	CHECK_STR(t->range_param, "histogram_us");
	CHECK(t->explain && o->explain && t->check && o->check);
	struct strbuf err = STRBUF_INIT;
	CHECK(workload_check_registry(&err) == 0);
	strbuf_release(&err);
}

TEST(rtla_plan_errors)
{
	static const struct { const char *type, *plan, *want; } cases[] = {
		{ "timerlat", "{\"type\":\"timerlat\",\"cpus\":\"0-\"}",
		  "workloads[0].cpus: \"0-\" is not a CPU list like \"0-3,6\"" },
		{ "timerlat", "{\"type\":\"timerlat\",\"period_us\":50}",
		  "workloads[0].period_us: must be an integer in [100, 1000000]" },
		{ "timerlat", "{\"type\":\"timerlat\",\"auto_analysis\":1}",
		  "workloads[0].auto_analysis: must be true or false" },
		{ "timerlat", "{\"type\":\"timerlat\",\"nano\":true}",
		  "workloads[0].nano: unknown key" },
		{ "osnoise", "{\"type\":\"osnoise\",\"runtime_us\":2000,\"period_us\":1000}",
		  "workloads[0].runtime_us: 2000 is longer than period_us (1000)" },
		{ "osnoise", "{\"type\":\"osnoise\",\"cpus\":\"a\"}", "workloads[0].cpus: \"a\"" },
		{ "osnoise", "{\"type\":\"osnoise\",\"cpus\":\"\"}",
		  "workloads[0].cpus: must be a non-empty string" },
		{ "osnoise", "{\"type\":\"osnoise\",\"cpus\":\"1,3-4\",\"duration_s\":5}", "" },
		{ "timerlat", "{\"type\":\"timerlat\",\"cpus\":\"1\",\"load\":{\"type\":\"hackbench\"}}",
		  "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *e = plan_error(cases[i].type, cases[i].plan, NULL);
		if (!*cases[i].want)
			CHECK_STR(e, "");
		else
			CHECK_CONTAINS(e, cases[i].want);
		free(e);
	}
}

TEST(rtla_build_argv)
{
	char *a = argv_of("timerlat", "{\"type\":\"timerlat\"}");
	CHECK_STR(a, "rtla timerlat hist --duration=10 --period=1000 --bucket-size=1 "
		     "--entries=1000 [stop INT]");
	free(a);
	a = argv_of("timerlat", "{\"type\":\"timerlat\",\"duration_s\":3,\"cpus\":\"1\","
		    "\"priority\":90,\"histogram_us\":200,\"auto_analysis\":true,"
		    "\"auto_threshold_us\":40}");
	CHECK_STR(a, "rtla timerlat hist --duration=3 --period=1000 --bucket-size=1 "
		     "--entries=200 --cpus=1 --priority=f:90 --auto=40 [file timerlat_trace.txt] [stop INT]");
	free(a);
	a = argv_of("osnoise", "{\"type\":\"osnoise\",\"cpus\":\"1\",\"duration_s\":4,"
		    "\"period_us\":100000,\"runtime_us\":90000,\"threshold_us\":2}");
	CHECK_STR(a, "rtla osnoise top --quiet --duration=4 --period=100000 --runtime=90000 "
		     "--cpus=1 --threshold=2 [stop INT]");
	free(a);
}

TEST(timerlat_synthetic)
{
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(timerlat_parse_hist(SYNTH, 100, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	metric(&ms, "thread_lat_min_us", 1, "us");
	metric(&ms, "thread_lat_avg_us", 1, "us");
	metric(&ms, "thread_lat_p50_us", 1, "us");
	metric(&ms, "thread_lat_p99_us", 5, "us");
	const struct metric *m = metric(&ms, "thread_lat_p999_us", 100, "us");
	CHECK(m && m->censored && m->note);
	m = metric(&ms, "thread_lat_max_us", 1500, "us");
	CHECK(m && !m->censored && m->better == BETTER_LOWER);
	metric(&ms, "thread_overflows", 5, "count");
	metric(&ms, "thread_samples", 2000, "count");
	metric(&ms, "thread_lat_p99_cpu0_us", 5, "us");
	metric(&ms, "thread_lat_p99_cpu1_us", 2, "us");
	metric(&ms, "thread_lat_max_cpu0_us", 1500, "us");
	metric(&ms, "thread_lat_max_cpu1_us", 5, "us");
	metric(&ms, "irq_lat_min_us", 0, "us");
	metric(&ms, "irq_lat_p99_us", 1, "us");
	metric(&ms, "irq_lat_max_us", 2, "us");
	metric(&ms, "irq_overflows", 0, "count");
	metric(&ms, "measured_s", 2, "s");
	CHECK(ms.nhist == 6);
	const struct hist *h = hist_named(&ms, "thread_us");
	CHECK(h && h->total == 2000 && h->overflow == 5 && h->nbuckets == 100);
	if (h) {
		CHECK(h->counts[1] == 1500 && h->counts[2] == 440 && h->counts[5] == 55);
		CHECK_NEAR(h->max, 1500, 0);
	}
	h = hist_named(&ms, "irq_cpu1_us");
	CHECK(h && h->total == 1000 && h->counts[0] == 950);
	CHECK(hist_named(&ms, "irq_us") && hist_named(&ms, "thread_cpu0_us"));
	all_known("timerlat", &ms);
	metric_set_release(&ms);
	strbuf_release(&err);
}

/* a damaged table is an error naming the line, never numbers */
TEST(timerlat_damaged)
{
	static const struct { const char *from, *to, *want; } cases[] = {
		{ "Index   IRQ-000", "Indx    IRQ-000", "no histogram" },
		{ "2            10       250         5       190 ",
		  "2            10       250         5 ", "line 7: 3 values for 4 columns" },
		{ "1            90       700", "1            90       7x0", "\"7x0\" is not a count" },
		{ "1            90       700", "1            90       -70", "\"-70\" is not a count" },
		{ "count:     1000      1000", "count:     1000      1001",
		  "Thr-000: count 1001 but the histogram holds 995 (+5 over)" },
		{ "max:          2      1500         2         5 ",
		  "max:          2      1500         2         5         7 ",
		  "line 13: more values than the 4 columns" },
		{ "Thr-001", "Foo-001", "unknown column \"Foo-001\"" },
		{ "0           900", "0           99999999999999999", "is not a count" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = strstr(SYNTH, cases[i].from);
		CHECK(p != NULL);
		if (!p)
			continue;
		char *text = xstrfmt("%.*s%s%s", (int)(p - SYNTH), SYNTH, cases[i].to,
				     p + strlen(cases[i].from));
		struct metric_set ms;
		struct strbuf err = STRBUF_INIT;
		metric_set_init(&ms);
		CHECK(timerlat_parse_hist(text, 100, &ms, &err) == -1);
		CHECK_CONTAINS(err.buf, cases[i].want);
		CHECK(ms.nr == 0 && ms.nhist == 0);
		metric_set_release(&ms);
		strbuf_release(&err);
		free(text);
	}
	/* no samples at all: a header without columns */
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(timerlat_parse_hist("# RTLA timerlat histogram\nIndex\nover: \ncount:\n", 100, &ms,
				  &err) == -1);
	CHECK_CONTAINS(err.buf, "no samples on any CPU");
	strbuf_reset(&err);
	CHECK(timerlat_parse_hist(NULL, 100, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no histogram");
	metric_set_release(&ms);
	strbuf_release(&err);
}

/* avg "-" for a context without samples on a CPU; terminal escapes */
TEST(timerlat_dash_and_escapes)
{
	const char *t = "\033[2;37;40m# RTLA timerlat histogram\033[0;0;0m\r\n"
			"Index   IRQ-003   Thr-003\n"
			"0             4         0 \n"
			"over:         0         0 \n"
			"count:        4         0 \n"
			"min:          0 18446744073709551615 \n"
			"avg:          0         - \n"
			"max:          0         0 \n"
			"rtla timerlat hit stop tracing\n";
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	/* the min of a context without samples is rtla's ULLONG_MAX (seen in
	   automatic mode, which stops early): ignored, nothing stored for it */
	CHECK(timerlat_parse_hist(t, 50, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	metric(&ms, "irq_lat_max_cpu3_us", 0, "us");
	metric(&ms, "irq_samples", 4, "count");
	CHECK(metric_find(&ms, "thread_lat_p99_us") == NULL); /* no thread samples */
	CHECK(metric_find(&ms, "measured_s") == NULL);
	metric_set_release(&ms);
	/* but in a column with samples it is no count */
	char *t2 = xstrdup(t);
	memcpy(strstr(t2, "min:          0"), "min:         x0", 15);
	strbuf_reset(&err);
	CHECK(timerlat_parse_hist(t2, 50, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "\"x0\" is not a count");
	free(t2);
	metric_set_release(&ms);
	strbuf_release(&err);
}

/* automatic mode stopped before any sample reached the histogram: no
 * latency metric, no error; without the stop it is an error */
TEST(timerlat_auto_stopped_empty)
{
	const char *t = "# RTLA timerlat histogram\n"
			"Index   IRQ-000   Thr-000\n"
			"over:         0         0 \n"
			"count:        0         0 \n"
			"min:   18446744073709551615 18446744073709551615 \n"
			"avg:          -         - \n"
			"max:          0         0 \n"
			"rtla timerlat hit stop tracing\n";
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(timerlat_parse_hist(t, 50, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	CHECK(metric_find(&ms, "thread_lat_max_us") == NULL);
	CHECK(metric_find(&ms, "irq_samples") == NULL);
	metric_set_release(&ms);
	char *t2 = xstrdup(t);
	*strstr(t2, "rtla timerlat hit") = '\0';
	CHECK(timerlat_parse_hist(t2, 50, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no samples on any CPU");
	free(t2);
	metric_set_release(&ms);
	strbuf_release(&err);
}

TEST(timerlat_auto_text)
{
	const char *t = "max:   3  4 \nrtla timerlat hit stop tracing\n"
			"  Saving trace to timerlat_trace.txt\n";
	json_t *a = timerlat_auto_result(t, 40, "trace");
	CHECK(json_is_true(json_object_get(a, "stopped")));
	CHECK(json_integer_value(json_object_get(a, "threshold_us")) == 40);
	CHECK_STR(json_string_value(json_object_get(a, "text")),
		  "rtla timerlat hit stop tracing\n  Saving trace to timerlat_trace.txt\n");
	CHECK(json_is_true(json_object_get(a, "trace_kept")));
	json_decref(a);
	a = timerlat_auto_result("max:   3  4 \n", 40, NULL);
	CHECK(json_is_false(json_object_get(a, "stopped")));
	CHECK_STR(json_string_value(json_object_get(a, "text")), "");
	json_decref(a);
}

static const char OSN[] =
	"\033[2;37;40m                                          Operating System Noise"
	"                                                                          \033[0;0;0m\n"
	"duration:   0 00:00:03 | time is in us\n"
	"\033[2;30;47mCPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single"
	"          HW          NMI          IRQ      Softirq       Thread\033[0;0;0m\n"
	"  0 #3         3000000         1200    99.96000         600          100"
	"           0            0         3012           85           12\n"
	"  1 #3         3000000          300    99.99000         150           40"
	"           1            2           40            3            4\n";

TEST(osnoise_synthetic)
{
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(osnoise_parse_top(OSN, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	const struct metric *m = metric(&ms, "noise_max_single_us", 100, "us");
	CHECK(m && m->better == BETTER_LOWER);
	metric(&ms, "noise_max_us", 600, "us");
	metric(&ms, "noise_us", 1500, "us");
	metric(&ms, "runtime_us", 6000000, "us");
	m = metric(&ms, "cpu_avail_pct", (6000000.0 - 1500) * 100 / 6000000, "%");
	CHECK(m && m->better == BETTER_HIGHER);
	metric(&ms, "cpu_avail_min_pct", 99.96, "%");
	metric(&ms, "cpu_avail_cpu1_pct", 99.99, "%");
	metric(&ms, "noise_max_single_cpu0_us", 100, "us");
	metric(&ms, "noise_max_single_cpu1_us", 40, "us");
	metric(&ms, "hw_count", 1, "count");
	metric(&ms, "nmi_count", 2, "count");
	metric(&ms, "irq_count", 3052, "count");
	metric(&ms, "softirq_count", 88, "count");
	metric(&ms, "thread_count", 16, "count");
	metric(&ms, "irq_count_cpu0", 3012, "count");
	metric(&ms, "thread_count_cpu1", 4, "count");
	metric(&ms, "cpus", 2, "count");
	metric(&ms, "measured_s", 3, "s");
	all_known("osnoise", &ms);
	metric_set_release(&ms);
	/* damaged: a short row, a percentage beyond 100, no header, no rows */
	static const struct { const char *from, *to, *want; } cases[] = {
		{ "           4\n", "\n", "line 5: not a CPU row" },
		{ "99.99000", "199.9900", "line 5: not a CPU row" },
		{ "CPU Period", "CPU Perxod", "no summary" },
		{ "  0 #3         3000000         1200", "  0 #3         3000000         12x0",
		  "line 4: not a CPU row" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = strstr(OSN, cases[i].from);
		CHECK(p != NULL);
		if (!p)
			continue;
		char *text = xstrfmt("%.*s%s%s", (int)(p - OSN), OSN, cases[i].to,
				     p + strlen(cases[i].from));
		metric_set_init(&ms);
		strbuf_reset(&err);
		CHECK(osnoise_parse_top(text, &ms, &err) == -1);
		CHECK_CONTAINS(err.buf, cases[i].want);
		CHECK(ms.nr == 0);
		metric_set_release(&ms);
		free(text);
	}
	char *hdr = xstrfmt("%.*s", (int)(strstr(OSN, "  0 #3") - OSN), OSN);
	metric_set_init(&ms);
	strbuf_reset(&err);
	CHECK(osnoise_parse_top(hdr, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no CPU rows");
	metric_set_release(&ms);
	free(hdr);
	strbuf_release(&err);
}

/* captured: `rtla timerlat hist -d 2 -p 1000 -b 1 -E 1000` in a 2-CPU TCG
 * guest on the tracing variant (no load). rtla's own rows: count 1466 1466
 * 1718 1718, over 258 279 107 123, min 6 32 11 54, avg 472 583 276 367,
 * max 16282 16574 12657 16849 (IRQ-000 Thr-000 IRQ-001 Thr-001). */
TEST(timerlat_captured_tcg)
{
	char *t = slurp("timerlat-hist-2cpu-tcg.stdout");
	CHECK(t != NULL);
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(timerlat_parse_hist(t, 1000, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	metric(&ms, "thread_samples", 1466 + 1718, "count");
	metric(&ms, "irq_samples", 1466 + 1718, "count");
	metric(&ms, "irq_overflows", 258 + 107, "count");
	metric(&ms, "thread_overflows", 279 + 123, "count");
	metric(&ms, "irq_lat_min_us", 6, "us");
	metric(&ms, "thread_lat_min_us", 32, "us");
	metric(&ms, "irq_lat_max_us", 16282, "us");
	metric(&ms, "thread_lat_max_us", 16849, "us");
	metric(&ms, "thread_lat_max_cpu0_us", 16574, "us");
	metric(&ms, "irq_lat_max_cpu1_us", 12657, "us");
	metric(&ms, "thread_lat_avg_us", (583.0 * 1466 + 367.0 * 1718) / 3184, "us");
	/* 12.6% of the thread samples beyond 1000 us: p99 is a bound */
	const struct metric *m = metric(&ms, "thread_lat_p99_us", 1000, "us");
	CHECK(m && m->censored);
	m = metric_find(&ms, "thread_lat_p50_us");
	CHECK(m && !m->censored && m->value > 32 && m->value < 1000);
	metric(&ms, "measured_s", 2, "s");
	const struct hist *h = hist_named(&ms, "thread_cpu1_us");
	CHECK(h && h->total == 1718 && h->overflow == 123);
	h = hist_named(&ms, "irq_us");
	CHECK(h && h->total == 3184 && h->overflow == 365);
	metric_set_release(&ms);
	free(t);
	/* the 10 ms period run: 201 and 200 activations per CPU */
	t = slurp("timerlat-hist-2cpu-tcg-10ms.stdout");
	metric_set_init(&ms);
	strbuf_reset(&err);
	CHECK(timerlat_parse_hist(t, 1000, &ms, &err) == 0);
	metric(&ms, "thread_samples", 401, "count");
	metric(&ms, "thread_lat_max_us", 8301, "us");
	metric_set_release(&ms);
	free(t);
	strbuf_release(&err);
}

/* captured: automatic mode (-a 1) stopped at the first thread activation;
 * only CPU 0 had samples by then; the trace rtla saved is kept */
TEST(timerlat_captured_auto)
{
	char *t = slurp("timerlat-auto-tcg.stdout");
	char *trace = slurp("timerlat-auto-tcg-trace.txt");
	CHECK(t && trace);
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(timerlat_parse_hist(t, 1000, &ms, &err) == 0);
	metric(&ms, "thread_samples", 1, "count");
	metric(&ms, "thread_lat_max_us", 2971, "us");
	metric(&ms, "irq_lat_max_us", 170, "us");
	const struct metric *m = metric(&ms, "thread_lat_p50_us", 1000, "us");
	CHECK(m && m->censored);
	metric(&ms, "measured_s", 1, "s");
	CHECK(metric_find(&ms, "thread_lat_max_cpu1_us") == NULL);
	json_t *a = timerlat_auto_result(t, 1, trace);
	CHECK(json_is_true(json_object_get(a, "stopped")));
	CHECK_STR(json_string_value(json_object_get(a, "text")),
		  "rtla timerlat hit stop tracing\n  Saving trace to timerlat_trace.txt\n\n");
	CHECK_CONTAINS(trace, "# tracer: timerlat");
	CHECK_CONTAINS(trace, "context thread timer_latency");
	json_decref(a);
	metric_set_release(&ms);
	strbuf_release(&err);
	free(t);
	free(trace);
}

/* captured: `rtla osnoise top -q -d 2 -c 1 -p 100000 -r 90000` (TCG, no
 * load): "  1 #19  1733881  990976  42.84636  61492  9997  588  0  814  50  3" */
TEST(osnoise_captured_tcg)
{
	char *t = slurp("osnoise-top-cpu1-tcg.stdout");
	CHECK(t && strchr(t, '\033'));   /* rtla writes its escapes to a pipe too */
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	metric_set_init(&ms);
	CHECK(osnoise_parse_top(t, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	metric(&ms, "cpus", 1, "count");
	metric(&ms, "runtime_us", 1733881, "us");
	metric(&ms, "noise_us", 990976, "us");
	metric(&ms, "cpu_avail_cpu1_pct", 42.84636, "%");
	metric(&ms, "cpu_avail_min_pct", 42.84636, "%");
	metric(&ms, "cpu_avail_pct", (1733881.0 - 990976) * 100 / 1733881, "%");
	metric(&ms, "noise_max_us", 61492, "us");
	metric(&ms, "noise_max_single_us", 9997, "us");
	metric(&ms, "noise_max_single_cpu1_us", 9997, "us");
	metric(&ms, "hw_count", 588, "count");
	metric(&ms, "nmi_count", 0, "count");
	metric(&ms, "irq_count", 814, "count");
	metric(&ms, "softirq_count", 50, "count");
	metric(&ms, "thread_count", 3, "count");
	metric(&ms, "irq_count_cpu1", 814, "count");
	metric(&ms, "measured_s", 2, "s");
	CHECK(metric_find(&ms, "irq_count_cpu0") == NULL);
	metric_set_release(&ms);
	strbuf_release(&err);
	free(t);
}

/* rtla's refusals, as captured on Debian's 6.1 kernel (no osnoise tracer) */
TEST(rtla_explain_refusals)
{
	char *tl = slurp("timerlat-debian-notracer.stderr");
	char *os = slurp("osnoise-debian-notracer.stderr");
	CHECK(tl && os);
	struct strbuf msg = STRBUF_INIT;
	CHECK(rtla_explain("timerlat", "", tl, &msg) == 2);
	CHECK_STR(msg.buf, "unsupported by this kernel: rtla could not set up the timerlat tracer "
		  "(rtla: \"Failed to set timerlat period\"; it needs CONFIG_TIMERLAT_TRACER: "
		  "build a variant with the \"tracing\" fragment, kernels/fragments/tracing.config)");
	strbuf_reset(&msg);
	CHECK(rtla_explain("osnoise", NULL, os, &msg) == 2);
	CHECK_CONTAINS(msg.buf, "(rtla: \"Failed to apply CPUs config\"; it needs "
		       "CONFIG_OSNOISE_TRACER");
	strbuf_reset(&msg);
	CHECK(rtla_explain("osnoise", "", "rtla needs root permission\n", &msg) == 1);
	CHECK_CONTAINS(msg.buf, "needs root");
	strbuf_reset(&msg);
	/* rtla's trace.c: ENODEV is "not found!" (then "Failed to enable"), a
	   busy tracer only "Failed to enable" */
	CHECK(rtla_explain("timerlat", "", "Tracer timerlat not found!\nFailed to enable the "
			   "timerlat tracer\n", &msg) == 2);
	CHECK_CONTAINS(msg.buf, "(rtla: \"Tracer timerlat not found!\"");
	strbuf_reset(&msg);
	CHECK(rtla_explain("osnoise", "", "Failed to enable the osnoise tracer\n", &msg) == 1);
	CHECK_CONTAINS(msg.buf, "rtla could not enable the osnoise tracer: another tracefs instance");
	strbuf_reset(&msg);
	CHECK(rtla_explain("timerlat", "", "Segmentation fault\n", &msg) == 0);
	CHECK_STR(msg.buf, "");
	strbuf_release(&msg);
	free(tl);
	free(os);
}

TEST(rtla_escapes_and_duration)
{
	char *s = rtla_strip_escapes("\033c\033[2;30;47mCPU\033[0;0;0m x\r\n\033");
	CHECK_STR(s, "CPU x\n");
	free(s);
	CHECK_NEAR(rtla_parse_duration("# Duration:   1 02:03:04\n"), 93784, 0);
	CHECK_NEAR(rtla_parse_duration("duration:   0 00:00:10 | time is in us"), 10, 0);
	CHECK(rtla_parse_duration("# Duration: soon") < 0);
	CHECK(rtla_parse_duration(NULL) < 0);
}

int main(void)
{
	RUN(rtla_registered);
	RUN(rtla_plan_errors);
	RUN(rtla_build_argv);
	RUN(timerlat_synthetic);
	RUN(timerlat_damaged);
	RUN(timerlat_dash_and_escapes);
	RUN(timerlat_auto_stopped_empty);
	RUN(timerlat_auto_text);
	RUN(osnoise_synthetic);
	RUN(timerlat_captured_tcg);
	RUN(timerlat_captured_auto);
	RUN(osnoise_captured_tcg);
	RUN(rtla_explain_refusals);
	RUN(rtla_escapes_and_duration);
	return tap_done();
}
