/*
 * Unit tests of the rt-app driver (workloads/rtapp.c): the plan checks of a
 * task set and a sweep (each error names its key and what is valid), the
 * JSON task description it writes for rt-app, the argv, input and log file
 * names of build(), the log parser on real rt-app 1.0 logs kept in
 * tests/data/rtapp-1.0, and the explanation of a SCHED_DEADLINE set that
 * admission control refused (its real stderr).
 *
 * Expected values were computed from the logs by hand (a short Python
 * script over the rows: response = c_period - slack, a miss is a response
 * beyond the deadline, percentiles interpolated as numpy's):
 *  taskset-fifo-other: ctl 399 rows, bg 99 rows, no miss; response p50
 *  588.5, max 6105; ctl p50 568, max 1645; bg max 6105; slack min 3355;
 *  wakeup latency (rows with slack > 0) p50 74, max 3557.
 *  sweep-fifo (2 tasks, 40..200% in 40% steps, 100 periods a step per
 *  task): misses per step 0, 2, 8, 191, 198; 399 in all of 1000 periods.
 *  deadline-accepted (deadline_us 8000 of a 10000 us period): 394 rows,
 *  7 responses beyond 8000 us, max 23480.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	snprintf(rel, sizeof(rel), "rtapp-1.0/%s", name);
	return testdata_slurp(rel);
}

/* params_resolve + the driver's check, as plan.c does */
static json_t *resolve(const char *text, struct strbuf *err)
{
	const struct workload_ops *ops = workload_find("rtapp");
	json_t *obj = json_loads(text, 0, NULL);
	if (!ops || !obj) {
		json_decref(obj);
		strbuf_addstr(err, "test: bad JSON or no rtapp workload");
		return NULL;
	}
	json_t *p = params_resolve(ops->params, obj, "workloads[0]", err);
	json_decref(obj);
	if (p && ops->check(p, "workloads[0]", err)) {
		json_decref(p);
		return NULL;
	}
	return p;
}

/* the plan error of text, "" when it is valid */
static char *plan_error(const char *text)
{
	struct strbuf err = STRBUF_INIT;
	json_t *p = resolve(text, &err);
	json_decref(p);
	return strbuf_detach(&err, NULL);
}

/* a directory of logs as the agent returns them: {name: content} */
static json_t *files_of(const char *dir, const char *const *names)
{
	json_t *f = json_object();
	for (; *names; names++) {
		char *rel = xstrfmt("%s/%s", dir, *names);
		char *s = slurp(rel);
		if (s)
			json_object_set_new(f, *names, json_string(s));
		free(s);
		free(rel);
	}
	return f;
}

static double mval(const struct metric_set *ms, const char *name)
{
	const struct metric *m = metric_find(ms, name);
	if (!m)
		printf("#   no metric %s\n", name);
	return m ? m->value : NAN;
}

TEST(rtapp_registered)
{
	const struct workload_ops *ops = workload_find("rtapp");
	CHECK(ops != NULL);
	if (!ops)
		return;
	CHECK_STR(ops->tool, "rt-app");
	CHECK_STR(ops->package, "rt-app");
	CHECK_STR(ops->primary, "response_p99_us");
	CHECK(ops->check && ops->explain);
	struct strbuf err = STRBUF_INIT;
	CHECK(workload_check_registry(&err) == 0);
	strbuf_release(&err);
}

TEST(rtapp_plan_errors)
{
	static const struct { const char *plan, *want; } cases[] = {
		{ "{\"type\":\"rtapp\"}", "workloads[0]: needs exactly one of \"tasks\"" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"a\",\"run_us\":1,\"period_us\":100}],"
		  "\"sweep\":{\"tasks\":1,\"from_pct\":10,\"to_pct\":20}}", ", not both" },
		{ "{\"type\":\"rtapp\",\"tasks\":[]}", "workloads[0].tasks: must be a non-empty array" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"run_us\":1,\"period_us\":100}]}",
		  "workloads[0].tasks[0].name: missing (1-16 characters" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"Bad-1\",\"run_us\":1,\"period_us\":100}]}",
		  "tasks[0].name: not a valid task name" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"a\",\"run_us\":1,\"period_us\":100},"
		  "{\"name\":\"a\",\"run_us\":1,\"period_us\":100}]}",
		  "tasks[1].name: \"a\" is also the name of tasks[0]" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"a\",\"run_us\":200,\"period_us\":100}]}",
		  "tasks[0].run_us: must be an integer in [1, 100]" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"a\",\"run_us\":1}]}",
		  "tasks[0].period_us: missing (an integer in [100, 10000000])" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"a\",\"run_us\":1,\"period_us\":100,"
		  "\"policy\":\"batch\"}]}",
		  "tasks[0].policy: must be one of \"other\", \"fifo\", \"rr\", \"deadline\"" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"a\",\"run_us\":1,\"period_us\":100,"
		  "\"priority\":5}]}", "tasks[0].priority: only for policy \"fifo\" or \"rr\"" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"a\",\"run_us\":1,\"period_us\":100,"
		  "\"policy\":\"fifo\",\"runtime_us\":5}]}",
		  "tasks[0].runtime_us: only for policy \"deadline\"" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"a\",\"run_us\":50,\"period_us\":100,"
		  "\"policy\":\"deadline\",\"deadline_us\":40}]}",
		  "tasks[0].run_us: 50 is beyond deadline_us 40" },
		{ "{\"type\":\"rtapp\",\"tasks\":[{\"name\":\"a\",\"run_us\":1,\"period_us\":100,"
		  "\"cpu\":1}]}", "tasks[0].cpu: unknown key (valid: name, policy, priority" },
		{ "{\"type\":\"rtapp\",\"sweep\":{\"tasks\":2,\"from_pct\":50,\"to_pct\":40}}",
		  "workloads[0].sweep.to_pct: must be an integer in [50, 200]" },
		{ "{\"type\":\"rtapp\",\"sweep\":{\"tasks\":4,\"from_pct\":10,\"to_pct\":20,"
		  "\"step_pct\":1,\"period_us\":100}}",
		  "sweep.period_us: 100 us is too short to tell" },
		{ "{\"type\":\"rtapp\",\"sweep\":{\"tasks\":2,\"from_pct\":1,\"to_pct\":101,"
		  "\"step_pct\":1}}", "sweep.step_pct: 101 steps from 1% to 101%; at most 100" },
		{ "{\"type\":\"rtapp\",\"sweep\":{\"tasks\":1}}", "sweep.from_pct: missing" },
		{ "{\"type\":\"rtapp\",\"sweep\":[1]}", "workloads[0].sweep: must be an object" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *e = plan_error(cases[i].plan);
		CHECK_CONTAINS(e, cases[i].want);
		free(e);
	}
	char *e = plan_error("{\"type\":\"rtapp\",\"sweep\":{\"tasks\":1,\"from_pct\":1,"
			     "\"to_pct\":99,\"step_pct\":1}}");
	CHECK_STR(e, "");
	free(e);
}

TEST(rtapp_taskset_json)
{
	struct strbuf err = STRBUF_INIT;
	json_t *p = resolve("{\"type\":\"rtapp\",\"duration_s\":3,\"tasks\":["
			    "{\"name\":\"ctl\",\"policy\":\"fifo\",\"priority\":20,\"run_us\":500,"
			    "\"period_us\":5000},"
			    "{\"name\":\"bg\",\"run_us\":2000,\"period_us\":20000,\"instances\":2},"
			    "{\"name\":\"dl\",\"policy\":\"deadline\",\"run_us\":1000,"
			    "\"period_us\":10000,\"deadline_us\":8000}]}", &err);
	CHECK(p != NULL);
	if (!p) {
		printf("#   %s\n", err.buf);
		return;
	}
	char *s = rtapp_build_taskset(p, &err);
	json_t *j = s ? json_loads(s, 0, NULL) : NULL;
	CHECK(j != NULL);
	json_t *g = json_object_get(j, "global"), *t = json_object_get(j, "tasks");
	CHECK(json_integer_value(json_object_get(g, "duration")) == 3);
	CHECK_STR(json_string_value(json_object_get(g, "calibration")), "CPU0");
	CHECK_STR(json_string_value(json_object_get(g, "logdir")), "./");
	CHECK_STR(json_string_value(json_object_get(g, "log_basename")), "rt-app");
	/* the plan's order is rt-app's thread order */
	const char *k;
	json_t *v;
	struct strbuf order = STRBUF_INIT;
	json_object_foreach(t, k, v)
		strbuf_addf(&order, "%s ", k);
	CHECK_STR(order.buf, "ctl bg dl ");
	strbuf_release(&order);
	json_t *ctl = json_object_get(t, "ctl"), *bg = json_object_get(t, "bg"),
	       *dl = json_object_get(t, "dl");
	CHECK_STR(json_string_value(json_object_get(ctl, "policy")), "SCHED_FIFO");
	CHECK(json_integer_value(json_object_get(ctl, "priority")) == 20);
	CHECK(json_integer_value(json_object_get(ctl, "run")) == 500);
	CHECK(json_integer_value(json_object_get(ctl, "loop")) == -1);
	CHECK_STR(json_string_value(json_object_get(json_object_get(ctl, "timer"), "ref")), "unique");
	CHECK(json_integer_value(json_object_get(json_object_get(ctl, "timer"), "period")) == 5000);
	CHECK_STR(json_string_value(json_object_get(bg, "policy")), "SCHED_OTHER");
	CHECK(json_object_get(bg, "priority") == NULL);
	CHECK(json_integer_value(json_object_get(bg, "instance")) == 2);
	CHECK_STR(json_string_value(json_object_get(dl, "policy")), "SCHED_DEADLINE");
	CHECK(json_integer_value(json_object_get(dl, "dl-period")) == 10000);
	CHECK(json_integer_value(json_object_get(dl, "dl-deadline")) == 8000);
	/* default budget: run_us plus a quarter */
	CHECK(json_integer_value(json_object_get(dl, "dl-runtime")) == 1250);
	json_decref(j);
	free(s);

	/* build(): the file goes in as an input, the logs are numbered in
	 * thread order, instances one after another */
	const struct workload_ops *ops = workload_find("rtapp");
	struct wl_exec ex;
	wl_exec_init(&ex);
	CHECK(ops->build(p, &ex, &err) == 0);
	CHECK(ex.argv.nr == 2);
	CHECK_STR(ex.argv.v[0], "rt-app");
	CHECK_STR(ex.argv.v[1], "taskset.json");
	CHECK(json_is_string(json_object_get(ex.inputs, "taskset.json")));
	CHECK(ex.files.nr == 4);
	if (ex.files.nr == 4) {
		CHECK_STR(ex.files.v[0], "rt-app-ctl-0.log");
		CHECK_STR(ex.files.v[1], "rt-app-bg-1.log");
		CHECK_STR(ex.files.v[2], "rt-app-bg-2.log");
		CHECK_STR(ex.files.v[3], "rt-app-dl-3.log");
	}
	CHECK_STR(ex.package, "rt-app");
	CHECK(ex.timeout_s > 3);
	CHECK(ops->estimate_s(p) > 3);
	wl_exec_release(&ex);
	json_decref(p);
	strbuf_release(&err);
}

TEST(rtapp_sweep_json)
{
	struct strbuf err = STRBUF_INIT;
	json_t *p = resolve("{\"type\":\"rtapp\",\"duration_s\":1,\"calibration_ns\":22,"
			    "\"sweep\":{\"tasks\":2,\"from_pct\":40,\"to_pct\":200,"
			    "\"step_pct\":40,\"period_us\":10000}}", &err);
	CHECK(p != NULL);
	if (!p)
		return;
	char *s = rtapp_build_taskset(p, &err);
	json_t *j = s ? json_loads(s, 0, NULL) : NULL;
	json_t *g = json_object_get(j, "global");
	CHECK(json_integer_value(json_object_get(g, "duration")) == -1);
	CHECK(json_integer_value(json_object_get(g, "calibration")) == 22);
	json_t *s1 = json_object_get(json_object_get(j, "tasks"), "s1");
	CHECK_STR(json_string_value(json_object_get(s1, "policy")), "SCHED_FIFO");
	CHECK(json_integer_value(json_object_get(s1, "priority")) == 10);
	CHECK(json_integer_value(json_object_get(s1, "loop")) == 1);
	json_t *ph = json_object_get(s1, "phases");
	CHECK(json_object_size(ph) == 5);
	const char *k;
	json_t *v;
	long long want_run = 2000;
	struct strbuf order = STRBUF_INIT;
	json_object_foreach(ph, k, v) {
		strbuf_addf(&order, "%s ", k);
		CHECK(json_integer_value(json_object_get(v, "run")) == want_run);
		CHECK(json_integer_value(json_object_get(v, "loop")) == 100);
		CHECK_STR(json_string_value(json_object_get(json_object_get(v, "timer"), "ref")), "s1");
		want_run += 2000;
	}
	CHECK_STR(order.buf, "u040 u080 u120 u160 u200 ");
	strbuf_release(&order);
	json_decref(j);
	free(s);
	const struct workload_ops *ops = workload_find("rtapp");
	CHECK_NEAR(ops->estimate_s(p), 5 + 0.2, 1e-9);
	json_decref(p);
	strbuf_release(&err);
}

static json_t *params_file(const char *rel)
{
	char *s = slurp(rel);
	struct strbuf err = STRBUF_INIT;
	json_t *p = s ? resolve(s, &err) : NULL;
	if (!p)
		printf("#   %s: %s\n", rel, err.buf);
	strbuf_release(&err);
	free(s);
	return p;
}

TEST(rtapp_parse_taskset)
{
	json_t *p = params_file("taskset-fifo-other/params.json");
	json_t *f = files_of("taskset-fifo-other",
			     (const char *const[]){ "rt-app-ctl-0.log", "rt-app-bg-1.log", NULL });
	struct metric_set ms;
	metric_set_init(&ms);
	struct strbuf err = STRBUF_INIT;
	CHECK(p && rtapp_parse_logs(p, f, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	CHECK_NEAR(mval(&ms, "periods"), 498, 0);
	CHECK_NEAR(mval(&ms, "misses"), 0, 0);
	CHECK_NEAR(mval(&ms, "miss_pct"), 0, 0);
	CHECK_NEAR(mval(&ms, "response_p50_us"), 588.5, 1e-9);
	CHECK_NEAR(mval(&ms, "response_p99_us"), 5524.99, 1e-6);
	CHECK_NEAR(mval(&ms, "response_max_us"), 6105, 0);
	CHECK_NEAR(mval(&ms, "slack_min_us"), 3355, 0);
	CHECK_NEAR(mval(&ms, "slack_p1_us"), 4243.85, 1e-6);
	CHECK_NEAR(mval(&ms, "wu_lat_p50_us"), 74, 0);
	CHECK_NEAR(mval(&ms, "wu_lat_max_us"), 3557, 0);
	CHECK_NEAR(mval(&ms, "ctl_response_p50_us"), 568, 0);
	CHECK_NEAR(mval(&ms, "ctl_response_max_us"), 1645, 0);
	CHECK_NEAR(mval(&ms, "bg_response_max_us"), 6105, 0);
	CHECK_NEAR(mval(&ms, "bg_misses"), 0, 0);
	const struct metric *m = metric_find(&ms, "slack_p1_us");
	CHECK(m && m->better == BETTER_HIGHER && !strcmp(m->unit, "us"));
	m = metric_find(&ms, "misses");
	CHECK(m && m->better == BETTER_LOWER && !strcmp(m->unit, "count"));
	CHECK(metric_find(&ms, "miss_onset_pct") == NULL);
	/* the response histogram holds every period */
	CHECK(ms.nhist == 2);
	if (ms.nhist == 2) {
		CHECK_STR(ms.hist[0].name, "response_us");
		CHECK(ms.hist[0].h.total == 498);
	}
	all_known("rtapp", &ms);
	metric_set_release(&ms);
	strbuf_release(&err);
	json_decref(f);
	json_decref(p);
}

TEST(rtapp_parse_sweep)
{
	json_t *p = params_file("sweep-fifo/params.json");
	json_t *f = files_of("sweep-fifo",
			     (const char *const[]){ "rt-app-s0-0.log", "rt-app-s1-1.log", NULL });
	struct metric_set ms;
	metric_set_init(&ms);
	struct strbuf err = STRBUF_INIT;
	CHECK(p && rtapp_parse_logs(p, f, &ms, &err) == 0);
	CHECK_STR(err.buf, "");
	CHECK_NEAR(mval(&ms, "periods"), 1000, 0);
	CHECK_NEAR(mval(&ms, "misses"), 399, 0);
	static const struct { const char *name; double v; } steps[] = {
		{ "u040_misses", 0 }, { "u080_misses", 2 }, { "u120_misses", 8 },
		{ "u160_misses", 191 }, { "u200_misses", 198 },
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		CHECK_NEAR(mval(&ms, steps[i].name), steps[i].v, 0);
	const struct metric *m = metric_find(&ms, "miss_onset_pct");
	CHECK(m && m->value == 80 && !m->censored && m->better == BETTER_HIGHER);
	CHECK(metric_find(&ms, "s0_misses") == NULL);
	json_t *curve = json_object_get(ms.extra, "steps");
	CHECK(json_array_size(curve) == 5);
	CHECK(json_integer_value(json_object_get(json_array_get(curve, 3), "misses")) == 191);
	metric_set_release(&ms);

	/* without the steps from 80% on: no miss, so the onset is a lower bound */
	json_t *p2 = json_deep_copy(p);
	json_object_set_new(json_object_get(p2, "sweep"), "to_pct", json_integer(40));
	metric_set_init(&ms);
	strbuf_reset(&err);
	CHECK(rtapp_parse_logs(p2, f, &ms, &err) == 0);
	m = metric_find(&ms, "miss_onset_pct");
	CHECK(m && m->value == 40 && m->censored);
	CHECK_NEAR(mval(&ms, "periods"), 200, 0);
	metric_set_release(&ms);
	json_decref(p2);
	strbuf_release(&err);
	json_decref(f);
	json_decref(p);
}

TEST(rtapp_parse_deadline)
{
	json_t *p = params_file("deadline-accepted/params.json");
	json_t *f = files_of("deadline-accepted",
			     (const char *const[]){ "rt-app-dl-0.log", "rt-app-dl-1.log", NULL });
	struct metric_set ms;
	metric_set_init(&ms);
	struct strbuf err = STRBUF_INIT;
	CHECK(p && rtapp_parse_logs(p, f, &ms, &err) == 0);
	/* misses count against deadline_us (8000), not the period */
	CHECK_NEAR(mval(&ms, "periods"), 394, 0);
	CHECK_NEAR(mval(&ms, "dl_misses"), 7, 0);
	CHECK_NEAR(mval(&ms, "response_max_us"), 23480, 0);
	metric_set_release(&ms);
	strbuf_release(&err);
	json_decref(f);
	json_decref(p);
}

TEST(rtapp_parse_damaged)
{
	json_t *p = params_file("taskset-fifo-other/params.json");
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	/* a log cut in the middle of a row: the partial row is not counted */
	char *ctl = slurp("taskset-fifo-other/rt-app-ctl-0.log");
	char *bg = slurp("taskset-fifo-other/rt-app-bg-1.log");
	if (!ctl || !bg || !p) {
		CHECK(0);
		goto out;
	}
	/* the newline ending the second row (after the policy and column lines) */
	char *second = strchr(strchr(strchr(strchr(ctl, '\n') + 1, '\n') + 1, '\n') + 1, '\n');
	second[-3] = 0;   /* the first row complete, the second cut */
	json_t *f = json_pack("{s:s,s:s}", "rt-app-ctl-0.log", ctl, "rt-app-bg-1.log", bg);
	metric_set_init(&ms);
	CHECK(rtapp_parse_logs(p, f, &ms, &err) == 0);
	CHECK_NEAR(mval(&ms, "periods"), 1 + 99, 0);
	metric_set_release(&ms);
	json_decref(f);

	/* a task that ran with another policy than asked */
	char *other = xstrfmt("# Policy : SCHED_OTHER priority : 0\n%s", strchr(ctl, '\n') + 1);
	f = json_pack("{s:s,s:s}", "rt-app-ctl-0.log", other, "rt-app-bg-1.log", bg);
	metric_set_init(&ms);
	strbuf_reset(&err);
	CHECK(rtapp_parse_logs(p, f, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "task ctl ran with \"SCHED_OTHER priority : 0\", not SCHED_FIFO");
	metric_set_release(&ms);
	json_decref(f);
	free(other);

	/* a task without a log, and no logs at all */
	f = json_pack("{s:s}", "rt-app-bg-1.log", bg);
	metric_set_init(&ms);
	strbuf_reset(&err);
	CHECK(rtapp_parse_logs(p, f, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "task ctl has no complete period row");
	metric_set_release(&ms);
	json_decref(f);
	f = json_pack("{s:s}", "unrelated.txt", "x");
	metric_set_init(&ms);
	strbuf_reset(&err);
	CHECK(rtapp_parse_logs(p, f, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "no per-thread log");
	metric_set_release(&ms);
	json_decref(f);

	/* every thread ended as it started (a guest under hackbench in
	   preempt=none: the start-up outlasted the window): headers only */
	f = json_pack("{s:s,s:s}", "rt-app-ctl-0.log", "# Policy : SCHED_FIFO priority : 20\n"
		      "#idx     perf      run   period           start             end          "
		      "rel_st      slack c_duration   c_period     wu_lat\n",
		      "rt-app-bg-1.log", "# Policy : SCHED_OTHER priority : 0\n"
		      "#idx     perf      run   period           start             end          "
		      "rel_st      slack c_duration   c_period     wu_lat\n");
	metric_set_init(&ms);
	strbuf_reset(&err);
	CHECK(rtapp_parse_logs(p, f, &ms, &err) == -1);
	CHECK_CONTAINS(err.buf, "rt-app wrote logs without a complete period row");
	CHECK_CONTAINS(err.buf, "no thread completed a period in the 2 s window");
	CHECK_CONTAINS(err.buf, "a longer duration_s");
	metric_set_release(&ms);
	json_decref(f);
out:
	free(ctl);
	free(bg);
	strbuf_release(&err);
	json_decref(p);
}

TEST(rtapp_explain_admission)
{
	json_t *p = params_file("deadline-ebusy.params.json");
	char *se = slurp("deadline-ebusy.stderr");
	struct strbuf msg = STRBUF_INIT;
	CHECK(p && se && rtapp_explain(p, se, &msg) == 1);
	CHECK_CONTAINS(msg.buf, "SCHED_DEADLINE admission control refused the task set");
	CHECK_CONTAINS(msg.buf, "EBUSY");
	CHECK_CONTAINS(msg.buf, "3.00 CPUs");
	strbuf_reset(&msg);
	CHECK(rtapp_explain(p, "sched_setattr: Operation not permitted\n", &msg) == 1);
	CHECK_CONTAINS(msg.buf, "need root or CAP_SYS_NICE");
	strbuf_reset(&msg);
	CHECK(rtapp_explain(p, "[rt-app] <crit> something else\n", &msg) == 0);
	CHECK(rtapp_explain(p, NULL, &msg) == 0);
	CHECK_STR(msg.buf, "");
	strbuf_release(&msg);
	free(se);
	json_decref(p);
}

int main(void)
{
	RUN(rtapp_registered);
	RUN(rtapp_plan_errors);
	RUN(rtapp_taskset_json);
	RUN(rtapp_sweep_json);
	RUN(rtapp_parse_taskset);
	RUN(rtapp_parse_sweep);
	RUN(rtapp_parse_deadline);
	RUN(rtapp_parse_damaged);
	RUN(rtapp_explain_admission);
	return tap_done();
}
