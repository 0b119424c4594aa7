/*
 * Unit tests of the native workloads' pure parts: SPECjbb metric arithmetic
 * (workloads/native/jbb_metrics.c, including the critical-jOPS worked example),
 * sl-pingpong's hot-path latency recorder (nat_lat_add and nat_lat_finish
 * leave exactly what hist_record would have), its hot-path clock and CPU
 * (nat_fast_ns agrees with CLOCK_MONOTONIC, nat_cpu_fast with sched_getcpu)
 * and the pingpong and jbb drivers' parameter
 * validation, argv building and output parsing (workloads/pingpong.c,
 * workloads/jbb.c) on fixed outputs; nat_task_sched's counters as
 * analysis/tasksched.c reads them.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/tasksched.h"
#include "workloads/native/jbb_metrics.h"
#include "workloads/native/libnative.h"
#include "tests/unit/tap.h"
#include "workloads/workload.h"

extern const struct workload_ops pingpong_workload;
extern const struct workload_ops jbb_workload;

TEST(critical_jops_worked_example)
{
	const double sla[JBB_NSLA] = { 4774, 7442, 9643, 11833, 13791 };
	double g = jbb_geomean(sla, JBB_NSLA);
	CHECK_NEAR(g, 8902.1, 0.1);
	CHECK(lround(g) == 8902);
}

TEST(geomean_edge_cases)
{
	const double z[3] = { 10, 0, 10 };
	const double one[1] = { 7 };
	CHECK(jbb_geomean(z, 3) == 0);
	CHECK(jbb_geomean(one, 0) == 0);
	CHECK_NEAR(jbb_geomean(one, 1), 7, 1e-12);
}

TEST(step_pass_tolerance)
{
	CHECK(jbb_step_pass(1000, 1000, 5));
	CHECK(jbb_step_pass(1000, 950, 5));
	CHECK(!jbb_step_pass(1000, 949, 5));
	CHECK(!jbb_step_pass(0, 0, 5));
	CHECK(jbb_step_pass(1000, 1100, 0));
}

/* steps reproducing the worked example: each SLA met up to a given IR */
TEST(summarise_curve)
{
	struct jbb_step s[] = {
		{ .ir = 4774, .p99_ms = 9, .ok = 1 },
		{ .ir = 7442, .p99_ms = 20, .ok = 1 },
		{ .ir = 9643, .p99_ms = 50, .ok = 1 },
		{ .ir = 11833, .p99_ms = 70, .ok = 1 },
		{ .ir = 13791, .p99_ms = 99, .ok = 1 },
		{ .ir = 14000, .p99_ms = 400, .ok = 1 },
		{ .ir = 14500, .p99_ms = 30, .ok = 0 },   /* first failure */
		{ .ir = 15000, .p99_ms = 1, .ok = 1 },    /* after it: ignored */
	};
	struct jbb_result r;
	jbb_summarise(s, sizeof(s) / sizeof(s[0]), &r);
	CHECK_NEAR(r.max_jops, 14000, 0);
	CHECK_NEAR(r.sla_jops[0], 4774, 0);
	CHECK_NEAR(r.sla_jops[1], 7442, 0);
	CHECK_NEAR(r.sla_jops[2], 9643, 0);
	CHECK_NEAR(r.sla_jops[3], 11833, 0);
	CHECK_NEAR(r.sla_jops[4], 13791, 0);
	CHECK(lround(r.critical_jops) == 8902);
	CHECK(r.critical_jops <= r.max_jops);
	CHECK(r.passed == 6);
	CHECK(r.failed == 1);
}

TEST(summarise_first_step_fails)
{
	struct jbb_step s[] = { { .ir = 100, .p99_ms = 1, .ok = 0 } };
	struct jbb_result r;
	jbb_summarise(s, 1, &r);
	CHECK(r.max_jops == 0);
	CHECK(r.critical_jops == 0);
	CHECK(r.passed == 0);
}

TEST(summarise_sla_never_met)
{
	/* no step meets 10 ms: that SLA is 0 and so is critical-jOPS */
	struct jbb_step s[] = { { .ir = 100, .p99_ms = 12, .ok = 1 },
				{ .ir = 101, .p99_ms = 13, .ok = 1 } };
	struct jbb_result r;
	jbb_summarise(s, 2, &r);
	CHECK(r.sla_jops[0] == 0);
	CHECK(r.sla_jops[1] == 101);
	CHECK(r.critical_jops == 0);
	CHECK(r.max_jops == 101);
	CHECK(r.failed == 0);
}

static json_t *resolve(const struct workload_ops *w, const char *text, struct strbuf *err)
{
	json_t *o = json_loads(text, 0, NULL);
	json_t *p = params_resolve(w->params, o, "workloads[0]", err);
	if (p && w->check && w->check(p, "workloads[0]", err)) {
		json_decref(p);
		p = NULL;
	}
	json_decref(o);
	return p;
}

static int argv_has(const struct wl_exec *ex, const char *s)
{
	for (size_t i = 0; i < ex->argv.nr; i++)
		if (!strcmp(ex->argv.v[i], s))
			return 1;
	return 0;
}

TEST(pingpong_params)
{
	struct strbuf err = STRBUF_INIT;
	json_t *p = resolve(&pingpong_workload,
			    "{\"type\":\"pingpong\",\"stages\":4,\"duration_s\":10,"
			    "\"mechanism\":\"futex\",\"tasks\":\"procs\",\"rate\":500}", &err);
	CHECK(p != NULL);
	if (p) {
		struct wl_exec ex;
		wl_exec_init(&ex);
		CHECK(pingpong_workload.build(p, &ex, &err) == 0);
		CHECK_STR(ex.argv.v[0], "sl-pingpong");
		CHECK(argv_has(&ex, "--stages=4"));
		CHECK(argv_has(&ex, "--mechanism=futex"));
		CHECK(argv_has(&ex, "--procs"));
		CHECK(argv_has(&ex, "--rate=500"));
		CHECK(argv_has(&ex, "--duration=10"));
		CHECK(ex.timeout_s > 11);
		CHECK_NEAR(pingpong_workload.estimate_s(p), 11.5, 1e-9);
		wl_exec_release(&ex);
		json_decref(p);
	}
	strbuf_reset(&err);
	p = resolve(&pingpong_workload, "{\"type\":\"pingpong\",\"mechanism\":\"smoke\"}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "mechanism");
	strbuf_reset(&err);
	p = resolve(&pingpong_workload, "{\"type\":\"pingpong\",\"stages\":0}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "stages");
	strbuf_reset(&err);
	p = resolve(&pingpong_workload, "{\"type\":\"pingpong\",\"policy\":\"fifo\"}", &err);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.buf, "priority");
	strbuf_release(&err);
}

static const char pp_out[] =
	"{\"tool\":\"sl-pingpong\",\"format\":1,\"requests_sent\":101,"
	"\"requests_completed\":100,\"requests_in_flight\":1,\"rps\":50.0,"
	"\"req_p50_us\":10.5,\"req_p99_us\":20.0,\"req_p999_us\":30.0,"
	"\"wakeup_p50_us\":3.0,\"wakeup_p99_us\":7.0,\"same_cpu_wakeup_pct\":25.0,"
	"\"cross_llc_wakeup_pct\":0.0,\"migrations_per_kreq\":10.0,\"csw_per_req\":null,"
	"\"hist\":{\"request_ns\":{\"scheme\":\"loglin\",\"sub_bits\":7,\"nbuckets\":4352,"
	"\"buckets\":[[1000,100]],\"overflow\":0,\"total\":100},"
	"\"wakeup_ns\":{\"scheme\":\"loglin\",\"sub_bits\":7,\"nbuckets\":4352,"
	"\"buckets\":[[900,200]],\"overflow\":0,\"total\":200}}}";

TEST(pingpong_parse)
{
	struct strbuf err = STRBUF_INIT;
	struct metric_set ms;
	struct wl_output out = { .exit_code = 0, .out = pp_out, .err = "" };
	metric_set_init(&ms);
	CHECK(pingpong_workload.parse(NULL, &out, &ms, &err) == 0);
	const struct metric *m = metric_find(&ms, "rps");
	CHECK(m && m->value == 50.0 && m->better == BETTER_HIGHER);
	m = metric_find(&ms, "req_p99_us");
	CHECK(m && m->value == 20.0 && m->better == BETTER_LOWER && !strcmp(m->unit, "us"));
	CHECK(m && !m->censored && !m->note);
	CHECK(metric_find(&ms, "csw_per_req") == NULL);       /* null: absent */
	CHECK(metric_find(&ms, "same_cpu_wakeup_pct") != NULL);
	CHECK(ms.nhist == 2);
	if (ms.nhist == 2) {
		CHECK_STR(ms.hist[0].name, "request_ns");
		CHECK(ms.hist[0].h.total == 100);
	}
	metric_set_release(&ms);

	metric_set_init(&ms);
	struct wl_output bad = { .exit_code = 0, .out = "Segmentation fault", .err = "" };
	CHECK(pingpong_workload.parse(NULL, &bad, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "JSON");
	strbuf_reset(&err);
	struct wl_output failed = { .exit_code = 2, .out = "", .err = "sl-pingpong: --stages: bad" };
	CHECK(pingpong_workload.parse(NULL, &failed, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "--stages");
	metric_set_release(&ms);
	strbuf_release(&err);
}

/* a request histogram with 2% of its samples beyond its range: p99 and
 * p99.9 are in the overflow, p50 is not; the wakeup histogram is fine */
static const char pp_ovf_out[] =
	"{\"tool\":\"sl-pingpong\",\"format\":1,\"requests_completed\":100,\"rps\":50.0,"
	"\"req_p50_us\":10.5,\"req_p99_us\":1099511627.776,\"req_p999_us\":1099511627.776,"
	"\"wakeup_p50_us\":3.0,\"wakeup_p99_us\":7.0,"
	"\"hist\":{\"request_ns\":{\"scheme\":\"loglin\",\"sub_bits\":7,\"nbuckets\":4352,"
	"\"buckets\":[[1000,98]],\"overflow\":2,\"total\":100},"
	"\"wakeup_ns\":{\"scheme\":\"loglin\",\"sub_bits\":7,\"nbuckets\":4352,"
	"\"buckets\":[[900,200]],\"overflow\":0,\"total\":200}}}";

TEST(pingpong_censored)
{
	struct strbuf err = STRBUF_INIT;
	struct metric_set ms;
	struct wl_output out = { .exit_code = 0, .out = pp_ovf_out, .err = "" };
	metric_set_init(&ms);
	CHECK(pingpong_workload.parse(NULL, &out, &ms, &err) == 0);
	const struct metric *m = metric_find(&ms, "req_p99_us");
	CHECK(m && m->censored == 1 && m->note && strstr(m->note, "histogram overflow"));
	m = metric_find(&ms, "req_p999_us");
	CHECK(m && m->censored == 1);
	m = metric_find(&ms, "req_p50_us");
	CHECK(m && m->censored == 0 && m->value == 10.5);
	m = metric_find(&ms, "wakeup_p99_us");
	CHECK(m && m->censored == 0);
	metric_set_release(&ms);

	/* open loop behind schedule: the request percentiles are lower bounds,
	 * the wakeup ones are not */
	static const char backlog[] =
		"{\"tool\":\"sl-pingpong\",\"requests_completed\":10,\"requests_backlog\":5,"
		"\"req_p50_us\":10.0,\"wakeup_p50_us\":3.0}";
	struct wl_output bl = { .exit_code = 0, .out = backlog, .err = "" };
	metric_set_init(&ms);
	CHECK(pingpong_workload.parse(NULL, &bl, &ms, &err) == 0);
	m = metric_find(&ms, "req_p50_us");
	CHECK(m && m->censored == 1 && m->note && strstr(m->note, "fell behind"));
	m = metric_find(&ms, "wakeup_p50_us");
	CHECK(m && m->censored == 0);
	metric_set_release(&ms);
	strbuf_release(&err);
}

TEST(jbb_params)
{
	struct strbuf err = STRBUF_INIT;
	json_t *p = resolve(&jbb_workload,
			    "{\"type\":\"jbb\",\"duration_s\":60,\"nice\":\"-5,5\","
			    "\"rr_group\":1,\"priority\":20}", &err);
	CHECK(p != NULL);
	if (p) {
		struct wl_exec ex;
		wl_exec_init(&ex);
		CHECK(jbb_workload.build(p, &ex, &err) == 0);
		CHECK_STR(ex.argv.v[0], "sl-jbb");
		CHECK(argv_has(&ex, "--duration=60"));
		CHECK(argv_has(&ex, "--nice=-5,5"));
		CHECK(argv_has(&ex, "--rr-group=1"));
		CHECK(argv_has(&ex, "--rr-priority=20"));
		CHECK(argv_has(&ex, "--start-pct=50"));
		CHECK(jbb_workload.estimate_s(p) <= 61);
		wl_exec_release(&ex);
		json_decref(p);
	}
	const char *bad[][2] = {
		{ "{\"type\":\"jbb\",\"mix\":\"50,30,10\"}", "mix" },
		{ "{\"type\":\"jbb\",\"mix\":\"a,b\"}", "mix" },
		{ "{\"type\":\"jbb\",\"nice\":\"0,0,0\"}", "nice" },
		{ "{\"type\":\"jbb\",\"nice\":\"-21\"}", "nice" },
		{ "{\"type\":\"jbb\",\"rr_group\":2}", "rr_group" },
		{ "{\"type\":\"jbb\",\"duration_s\":1}", "duration_s" },
		{ "{\"type\":\"jbb\",\"start_pct\":0}", "start_pct" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strbuf_reset(&err);
		p = resolve(&jbb_workload, bad[i][0], &err);
		CHECK(p == NULL);
		CHECK_CONTAINS(err.buf, bad[i][1]);
		json_decref(p);
	}
	strbuf_release(&err);
}

static const char jbb_out[] =
	"{\"tool\":\"sl-jbb\",\"format\":1,\"hbir_jops\":1000.0,\"max_jops\":900.0,"
	"\"critical_jops\":800.5,\"sla_10ms_jops\":700.0,\"sla_25ms_jops\":750.0,"
	"\"sla_50ms_jops\":800.0,\"sla_75ms_jops\":850.0,\"sla_100ms_jops\":900.0,"
	"\"steps_passed\":3,\"ramp_complete\":false,"
	"\"steps\":[{\"pct\":88,\"ir_jops\":880,\"ok\":true},"
	"{\"pct\":89,\"ir_jops\":890,\"ok\":true},{\"pct\":90,\"ir_jops\":900,\"ok\":true}]}";

TEST(jbb_parse)
{
	struct strbuf err = STRBUF_INIT;
	struct metric_set ms;
	struct wl_output out = { .exit_code = 0, .out = jbb_out, .err = "" };
	metric_set_init(&ms);
	CHECK(jbb_workload.parse(NULL, &out, &ms, &err) == 0);
	/* the ramp ran out of time (ramp_complete false): max_jops is a lower
	 * bound, so is the 100 ms SLA value (met at the last step, 900), and
	 * with it critical_jops; the SLAs already missed below 900 are exact */
	const struct metric *m = metric_find(&ms, "max_jops");
	CHECK(m && m->value == 900 && m->better == BETTER_HIGHER && m->note != NULL);
	CHECK(m && m->censored == 1);
	m = metric_find(&ms, "sla_100ms_jops");
	CHECK(m && m->value == 900 && m->censored == 1 && m->note != NULL);
	m = metric_find(&ms, "critical_jops");
	CHECK(m && m->value == 800.5 && m->censored == 1);
	m = metric_find(&ms, "sla_75ms_jops");
	CHECK(m && m->value == 850 && m->censored == 0 && m->note == NULL);
	m = metric_find(&ms, "hbir_jops");
	CHECK(m && m->censored == 0);
	CHECK(ms.extra && json_array_size(json_object_get(ms.extra, "steps")) == 3);
	metric_set_release(&ms);

	/* a complete ramp: nothing is a bound */
	char *done = xstrdup(jbb_out);
	char *f = strstr(done, "\"ramp_complete\":false");
	memcpy(f, "\"ramp_complete\":true ", strlen("\"ramp_complete\":false"));
	struct wl_output comp = { .exit_code = 0, .out = done, .err = "" };
	metric_set_init(&ms);
	CHECK(jbb_workload.parse(NULL, &comp, &ms, &err) == 0);
	for (size_t i = 0; i < ms.nr; i++)
		CHECK(ms.m[i].censored == 0);
	CHECK(ms.nr >= 7);
	metric_set_release(&ms);
	free(done);
	metric_set_init(&ms);
	struct wl_output bad = { .exit_code = 0, .out = "{\"tool\":\"sl-jbb\"}", .err = "" };
	CHECK(jbb_workload.parse(NULL, &bad, &ms, &err) == -1);
	metric_set_release(&ms);
	strbuf_release(&err);
}

/* the same samples through hist_record and through nat_lat_add +
 * nat_lat_finish: identical counts, overflow, total and extremes */
TEST(nat_lat_matches_hist_record)
{
	struct hist ref, h;
	struct nat_lat r;
	uint64_t *counts = calloc(NAT_HIST_BUCKETS, sizeof(uint64_t));
	CHECK(counts != NULL);
	CHECK(hist_init_loglin(&ref, NAT_HIST_SUB, NAT_HIST_POW) == 0);
	CHECK(nat_hist_init_in(&h, counts) == 0);
	CHECK(ref.nbuckets == NAT_HIST_BUCKETS && h.nbuckets == NAT_HIST_BUCKETS);
	CHECK(nat_hist_shared_bytes() == NAT_HIST_BUCKETS * sizeof(uint64_t));

	nat_lat_init(&r, &h);
	nat_lat_finish(&r, &h);           /* nothing recorded: nothing changes */
	CHECK(h.total == 0 && h.overflow == 0 && isnan(h.min) && isnan(h.max));

	const uint64_t edge[] = { 0, 1, 127, 128, 129, 255, 256, 257, 1000, 123456789,
				  (1ull << 40) - 1, 1ull << 40, UINT64_MAX };
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		hist_record(&ref, edge[i]);
		nat_lat_add(&r, edge[i]);
		size_t b = hist_bucket_of(&ref, edge[i]);
		CHECK(b == (edge[i] < (1ull << 40) ? hist_loglin_index(NAT_HIST_SUB, edge[i])
						      : ref.nbuckets));
	}
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 200000; i++) {  /* xorshift64, all magnitudes */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t v = x >> (x & 63);
		hist_record(&ref, v);
		nat_lat_add(&r, v);
	}
	nat_lat_finish(&r, &h);
	CHECK(memcmp(ref.counts, h.counts, NAT_HIST_BUCKETS * sizeof(uint64_t)) == 0);
	CHECK(ref.total == h.total && ref.total == 200000 + sizeof(edge) / sizeof(edge[0]));
	CHECK(ref.overflow == h.overflow && h.overflow > 0);
	CHECK(ref.min == h.min && h.min == 0);
	CHECK(ref.max == h.max && h.max == (double)UINT64_MAX);
	hist_free(&ref);
	free(counts);
}

/* the kernel's clocksource, as nat_fastclock_init must read it */
static int kernel_uses_tsc(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && !strcmp(buf, "tsc\n");
	fclose(f);
	return ok;
}

/* CLOCK_MONOTONIC lies within [before - tol, after + tol] of two fast reads
 * around it, in one of a few tries (a preemption between reads widens the
 * bracket, so the tightest try counts) */
static int fast_agrees(uint64_t tol_ns)
{
	for (int i = 0; i < 20; i++) {
		uint64_t a = nat_fast_ns(), m = nat_now_ns(), b = nat_fast_ns();
		if (b >= a && b - a < 100000 && m + tol_ns >= a && m <= b + tol_ns)
			return 1;
	}
	return 0;
}

TEST(fast_clock_tracks_monotonic)
{
	for (int mode = NAT_CLOCK_AUTO; mode <= NAT_CLOCK_MONOTONIC; mode++) {
		const char *src = nat_fastclock_init(mode);
		int want_tsc = mode == NAT_CLOCK_AUTO && kernel_uses_tsc();
#if !defined(__x86_64__)
		want_tsc = 0;
#endif
		CHECK_STR(src, want_tsc ? "tsc" : "monotonic");
		CHECK(nat_fc.tsc == want_tsc);
		if (want_tsc) {
			uint64_t khz = nat_fastclock_tsc_khz();
			CHECK(khz >= 1000 && khz <= 100000000);
		} else {
			CHECK(nat_fastclock_tsc_khz() == 0);
			CHECK(nat_fastclock_drift_ns() == 0);
		}
		/* agrees at once and 60 ms on (a wrong scale factor would be off
		 * by milliseconds there); 200 us of slack for the calibration */
		CHECK(fast_agrees(200000));
		nat_sleep_ns(60000000);
		CHECK(fast_agrees(200000));
		int64_t d = nat_fastclock_drift_ns();
		CHECK(d > -200000 && d < 200000);
		/* never goes back in one thread */
		uint64_t prev = nat_fast_ns(), back = 0;
		for (int i = 0; i < 1000000; i++) {
			uint64_t t = nat_fast_ns();
			back += t < prev;
			prev = t;
		}
		CHECK(back == 0);
		/* a sleep on it does not end early */
		uint64_t until = nat_fast_ns() + 3000000;
		nat_fast_sleep_until(until);
		CHECK(nat_fast_ns() >= until);
	}
	CHECK(nat_fastclock_init(NAT_CLOCK_MONOTONIC) && !nat_fc.tsc);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* the clocksource as the kernel names it decides, at init and at the end */
TEST(fast_clock_follows_clocksource)
{
	char path[] = "/tmp/sl-test-clocksource-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	nat_fastclock_source_path(path);
	write_file(path, "hpet\n");
	CHECK_STR(nat_fastclock_init(NAT_CLOCK_AUTO), "monotonic");
	CHECK(nat_fastclock_still_valid());
	write_file(path, "tsc\n");
#if defined(__x86_64__)
	CHECK_STR(nat_fastclock_init(NAT_CLOCK_AUTO), "tsc");
	CHECK(nat_fastclock_still_valid());
	CHECK_STR(nat_fastclock_init(NAT_CLOCK_MONOTONIC), "monotonic");
	CHECK_STR(nat_fastclock_init(NAT_CLOCK_AUTO), "tsc");
	/* the watchdog took the TSC away during the run */
	write_file(path, "hpet\n");
	CHECK(!nat_fastclock_still_valid());
#else
	CHECK_STR(nat_fastclock_init(NAT_CLOCK_AUTO), "monotonic");
#endif
	unlink(path);
	/* no file: no TSC */
	CHECK_STR(nat_fastclock_init(NAT_CLOCK_AUTO), "monotonic");
	nat_fastclock_source_path(NULL);
	nat_fastclock_init(NAT_CLOCK_MONOTONIC);
}

TEST(fast_cpu_is_sched_getcpu)
{
	cpu_set_t old, one;
	CHECK(sched_getaffinity(0, sizeof(old), &old) == 0);
	for (int c = 0; c < CPU_SETSIZE && c < 64; c++) {
		if (!CPU_ISSET(c, &old))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
		CHECK(nat_cpu_fast() == c);
		CHECK(nat_cpu() == c);
	}
	CHECK(sched_setaffinity(0, sizeof(old), &old) == 0);
}

/* nat_task_sched reads its three counters through analysis/tasksched.c,
 * the dump's parser: the same numbers, a missing task -1 */
TEST(task_sched_counters_are_the_parsers)
{
	if (access("/proc/self/sched", R_OK)) {
		printf("# skip: no /proc/self/sched (CONFIG_SCHED_DEBUG)\n");
		return;
	}
	pid_t tid = gettid();
	uint64_t m = 0, v = 0, iv = 0;
	CHECK(nat_task_sched(tid, &m, &v, &iv) == 0);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/sched", (int)tid);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	static char text[TASK_SCHED_MAX_TEXT];
	size_t n = fread(text, 1, sizeof(text), f);
	fclose(f);
	struct task_sched t;
	char err[128] = "";
	CHECK(task_sched_parse(text, n, &t, err, sizeof(err)) == 0);
	/* read later: never less (a switch may come between) */
	CHECK(t.v[TS_NR_MIGRATIONS] >= m && t.v[TS_NR_VOLUNTARY] >= v &&
	      t.v[TS_NR_INVOLUNTARY] >= iv);
	CHECK(t.v[TS_NR_MIGRATIONS] - m < 1000 && t.v[TS_NR_VOLUNTARY] - v < 1000);
	CHECK(nat_task_sched(-1, &m, &v, &iv) == -1);
}

int main(void)
{
	RUN(task_sched_counters_are_the_parsers);
	RUN(fast_clock_tracks_monotonic);
	RUN(fast_clock_follows_clocksource);
	RUN(fast_cpu_is_sched_getcpu);
	RUN(nat_lat_matches_hist_record);
	RUN(critical_jops_worked_example);
	RUN(geomean_edge_cases);
	RUN(step_pass_tolerance);
	RUN(summarise_curve);
	RUN(summarise_first_step_fails);
	RUN(summarise_sla_never_met);
	RUN(pingpong_params);
	RUN(pingpong_parse);
	RUN(pingpong_censored);
	RUN(jbb_params);
	RUN(jbb_parse);
	return tap_done();
}
