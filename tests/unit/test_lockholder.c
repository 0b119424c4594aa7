/*
 * Unit tests of the lockholder driver (workloads/lockholder.c): parameter
 * validation with the messages a plan author sees, the argv it builds for
 * bin/sl-lockholder, and parse() on real outputs of the program kept in
 * tests/data (one from Debian's 6.1 kernel in a qemu/TCG guest with page
 * faults in the critical section, one from this 6.18 host with system
 * calls), on outputs that are cut, inconsistent or null, and on a failed
 * run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/tap.h"
#include "workloads/workload.h"

extern const struct workload_ops lockholder_workload;

static json_t *resolve(const char *text, struct strbuf *err)
{
	const struct workload_ops *w = &lockholder_workload;
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

TEST(registered)
{
	CHECK(workload_find("lockholder") == &lockholder_workload);
	CHECK(workload_metric_known(&lockholder_workload, "holder_preemptions"));
	CHECK(workload_metric_known(&lockholder_workload, "spin_cpu_pct"));
	CHECK(!workload_metric_known(&lockholder_workload, "rps"));
}

TEST(params_build)
{
	struct strbuf err = STRBUF_INIT;
	json_t *p = resolve("{\"type\":\"lockholder\",\"threads\":8,\"enter\":\"syscall\","
			    "\"entries\":16,\"cs_us\":5,\"delay_us\":1000,\"detect\":\"rseq\","
			    "\"duration_s\":2.5}", &err);
	CHECK(p != NULL);
	if (p) {
		struct wl_exec ex;
		wl_exec_init(&ex);
		CHECK(lockholder_workload.build(p, &ex, &err) == 0);
		CHECK_STR(ex.argv.v[0], "sl-lockholder");
		CHECK(argv_has(&ex, "--threads=8"));
		CHECK(argv_has(&ex, "--enter=syscall"));
		CHECK(argv_has(&ex, "--entries=16"));
		CHECK(argv_has(&ex, "--cs-us=5"));
		CHECK(argv_has(&ex, "--delay-us=1000"));
		CHECK(argv_has(&ex, "--detect=rseq"));
		CHECK(argv_has(&ex, "--lock=tts-yield"));
		CHECK(argv_has(&ex, "--duration=2.5"));
		CHECK(!argv_has(&ex, "--think-us=0"));
		CHECK(ex.timeout_s > 3);
		CHECK_STR(ex.package, "schedlab");
		CHECK_NEAR(lockholder_workload.estimate_s(p), 3.0, 1e-9);
		wl_exec_release(&ex);
		json_decref(p);
	}
	/* the defaults: twice the CPUs, page faults, getrusage */
	strbuf_reset(&err);
	p = resolve("{\"type\":\"lockholder\"}", &err);
	CHECK(p != NULL);
	if (p) {
		struct wl_exec ex;
		wl_exec_init(&ex);
		CHECK(lockholder_workload.build(p, &ex, &err) == 0);
		CHECK(argv_has(&ex, "--threads=0"));
		CHECK(argv_has(&ex, "--enter=fault"));
		CHECK(argv_has(&ex, "--detect=getrusage"));
		CHECK(!argv_has(&ex, "--delay-us=0"));
		wl_exec_release(&ex);
		json_decref(p);
	}
	strbuf_release(&err);
}

TEST(params_errors)
{
	static const struct {
		const char *plan, *want;
	} bad[] = {
		{ "{\"type\":\"lockholder\",\"lock\":\"mutex\"}", "workloads[0].lock" },
		{ "{\"type\":\"lockholder\",\"enter\":\"sleep\"}", "workloads[0].enter" },
		{ "{\"type\":\"lockholder\",\"threads\":-1}", "workloads[0].threads" },
		{ "{\"type\":\"lockholder\",\"threads\":1}", "one thread never waits" },
		{ "{\"type\":\"lockholder\",\"entries\":0}", "workloads[0].entries" },
		{ "{\"type\":\"lockholder\",\"lock\":\"spin\",\"delay_us\":10}",
		  "delay_us: only used with lock \"tts-yield\"" },
		{ "{\"type\":\"lockholder\",\"enter\":\"none\",\"cs_us\":0}",
		  "an empty critical section" },
		{ "{\"type\":\"lockholder\",\"detect\":\"perf\"}", "workloads[0].detect" },
		{ "{\"type\":\"lockholder\",\"spinz\":10}", "spinz" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct strbuf err = STRBUF_INIT;
		json_t *p = resolve(bad[i].plan, &err);
		CHECK(p == NULL);
		CHECK_CONTAINS(err.buf, bad[i].want);
		json_decref(p);
		strbuf_release(&err);
	}
}

static double val(const struct metric_set *ms, const char *name)
{
	const struct metric *m = metric_find(ms, name);
	return m ? m->value : -1;
}

/* the invariants every real output keeps */
static void check_real(const char *file, const char *enter)
{
	char *text = testdata_slurp(file);
	CHECK(text != NULL);
	if (!text)
		return;
	struct strbuf err = STRBUF_INIT;
	struct metric_set ms;
	struct wl_output out = { .exit_code = 0, .out = text, .err = "" };
	metric_set_init(&ms);
	CHECK(lockholder_workload.parse(NULL, &out, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	double holds = val(&ms, "holds");
	CHECK(holds > 0);
	CHECK(val(&ms, "holder_preemptions") >= 0);
	CHECK(val(&ms, "holder_preemptions") <= holds);
	CHECK(val(&ms, "acq_per_s") > 0);
	CHECK(val(&ms, "hold_p50_us") > 0);
	CHECK(val(&ms, "hold_p50_us") <= val(&ms, "hold_p99_us"));
	CHECK(val(&ms, "hold_p99_us") <= val(&ms, "hold_max_us") * 1.004);
	CHECK(val(&ms, "wait_p50_us") <= val(&ms, "wait_p99_us"));
	CHECK(val(&ms, "spin_s") >= 0);
	const struct metric *m = metric_find(&ms, "acq_per_s");
	CHECK(m && m->better == BETTER_HIGHER && !strcmp(m->unit, "acq/s"));
	m = metric_find(&ms, "holder_preemptions");
	CHECK(m && m->better == BETTER_LOWER && !strcmp(m->unit, "count"));
	m = metric_find(&ms, "spin_cpu_pct");
	CHECK(m && m->better == BETTER_LOWER && !strcmp(m->unit, "%"));
	m = metric_find(&ms, "hold_p99_us");
	CHECK(m && !m->censored);
	if (!strcmp(enter, "fault"))
		CHECK(val(&ms, "faults_per_hold") >= 8);   /* entries 8: a fault per page */
	else
		CHECK(val(&ms, "faults_per_hold") < 1);
	CHECK(val(&ms, "faults_per_hold") ==
	      val(&ms, "minflt_per_hold") + val(&ms, "majflt_per_hold"));
	/* every metric parsed is on the driver's list (docs/metrics.md) */
	for (size_t i = 0; i < ms.nr; i++)
		CHECK(workload_metric_known(&lockholder_workload, ms.m[i].name));
	CHECK(ms.nr >= 17);
	CHECK(ms.nhist == 2);
	if (ms.nhist == 2) {
		CHECK_STR(ms.hist[0].name, "hold_ns");
		CHECK_STR(ms.hist[1].name, "wait_ns");
		CHECK(ms.hist[0].h.total == (uint64_t)holds);
		CHECK(ms.hist[1].h.total == (uint64_t)holds);
	}
	/* both kernels lack the rseq time-slice extension: said in the note */
	CHECK_CONTAINS(ms.note.buf, "rseq time-slice extension: unavailable");
	metric_set_release(&ms);
	strbuf_release(&err);
	free(text);
}

TEST(parse_real_guest_fault)
{
	check_real("sl-lockholder-debian-6.1-full-fault.json", "fault");
}

TEST(parse_real_host_syscall)
{
	check_real("sl-lockholder-6.18-host-syscall.json", "syscall");
}

TEST(parse_bad)
{
	static const struct {
		const char *out, *want;
		int exit_code;
	} bad[] = {
		{ "", "not a JSON object", 0 },
		{ "{\"tool\":\"sl-lockholder\",\"holds\":10", "not a JSON object", 0 },
		{ "{\"tool\":\"sl-pingpong\",\"holds\":10,\"holder_preemptions\":1}", "lacks", 0 },
		{ "{\"tool\":\"sl-lockholder\",\"holds\":10}", "lacks", 0 },
		{ "{\"tool\":\"sl-lockholder\",\"holds\":10,\"holder_preemptions\":11}",
		  "11 holder preemptions in 10 holds", 0 },
		{ "{\"tool\":\"sl-lockholder\",\"holds\":10,\"holder_preemptions\":1,"
		  "\"hist\":{\"hold_ns\":{\"scheme\":\"nope\"}}}", "histogram \"hold_ns\"", 0 },
		{ "", "status 2: sl-lockholder: --enter: 'x' is not one of", 2 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct strbuf err = STRBUF_INIT;
		struct metric_set ms;
		struct wl_output out = { .exit_code = bad[i].exit_code, .out = bad[i].out,
					 .err = "sl-lockholder: --enter: 'x' is not one of: fault, "
						"syscall, none" };
		metric_set_init(&ms);
		CHECK(lockholder_workload.parse(NULL, &out, &ms, &err) == -1);
		CHECK_CONTAINS(err.buf, bad[i].want);
		metric_set_release(&ms);
		strbuf_release(&err);
	}
}

TEST(parse_no_holds)
{
	/* nothing held: the percentiles and rates are null and left out */
	static const char out0[] =
		"{\"tool\":\"sl-lockholder\",\"format\":1,\"holds\":0,\"holder_preemptions\":0,"
		"\"acq_per_s\":0.0,\"hold_p50_us\":null,\"hold_p99_us\":null,\"hold_max_us\":null,"
		"\"holder_preempt_pct\":null,\"rseq_slice_ext\":\"available, not used\"}";
	struct strbuf err = STRBUF_INIT;
	struct metric_set ms;
	struct wl_output out = { .exit_code = 0, .out = out0, .err = "" };
	metric_set_init(&ms);
	CHECK(lockholder_workload.parse(NULL, &out, &ms, &err) == 0);
	CHECK(metric_find(&ms, "hold_p50_us") == NULL);
	CHECK(metric_find(&ms, "holder_preempt_pct") == NULL);
	CHECK(val(&ms, "holds") == 0);
	CHECK_CONTAINS(ms.note.buf, "rseq time-slice extension: available, not used");
	metric_set_release(&ms);
	strbuf_release(&err);
}

int main(void)
{
	RUN(registered);
	RUN(params_build);
	RUN(params_errors);
	RUN(parse_real_guest_fault);
	RUN(parse_real_host_syscall);
	RUN(parse_bad);
	RUN(parse_no_holds);
	return tap_done();
}
