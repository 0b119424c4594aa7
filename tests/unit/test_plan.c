/*
 * Unit tests of harness/orchestrate/plan.c: defaults of a minimal plan, matrix expansion
 * (boots = kernel x preempt x cmdline, runs = knobs x workloads x
 * repetitions), the interleaved order (every round visits every boot once,
 * and runs every knobs x workload pair once per visit; deterministic for a
 * seed, different for another) and the sequential order, the validation
 * messages (file:line:column for syntax, JSON paths for everything else),
 * knobs_to_writes, knob_label, plan_estimate_s, the PRNG, and plan_tools
 * (the programs a target needs for the plan's workloads and their loads);
 * the qemu target's admission of vCPUs on a virtual clock by the version of
 * the qemu that will run (fake qemus answering -version).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/agent/knobs.h"
#include "harness/orchestrate/plan.h"
#include "harness/targets/qemu_vt.h"
#include "harness/targets/target.h"
#include "tests/unit/tap.h"

/* load expecting success; a failure prints the message */
static int load_ok(const char *text, struct plan *p)
{
	struct strbuf err = STRBUF_INIT;
	int r = plan_load_string(text, "p.json", p, &err);
	if (r)
		printf("#   unexpected error: %s\n", err.buf);
	strbuf_release(&err);
	return r;
}

/* load expecting failure; returns the message (caller frees) */
static char *load_err(const char *text)
{
	struct plan p;
	struct strbuf err = STRBUF_INIT;
	int r = plan_load_string(text, "p.json", &p, &err);
	CHECK(r == -1);
	plan_release(&p);
	return strbuf_detach(&err, NULL);
}

static void check_err(const char *text, const char *expect)
{
	char *e = load_err(text);
	CHECK_CONTAINS(e, expect);
	free(e);
}

TEST(minimal_plan_defaults)
{
	struct plan p;
	CHECK(load_ok("{\"workloads\": [{\"type\": \"hackbench\"}]}", &p) == 0);
	CHECK_STR(p.path, "p.json");
	CHECK_STR(p.name, "unnamed");
	CHECK_STR(json_string_value(json_object_get(p.target, "type")), "local");
	CHECK(p.tops != NULL);
	CHECK(p.repetitions == 1);
	CHECK_STR(p.order, "interleaved");
	CHECK_STR(p.switch_method, "auto");
	CHECK(p.seed == 1);
	CHECK(p.schedstat == 1);
	CHECK(p.nboots == 1);
	CHECK(p.boots[0].kernel == NULL && p.boots[0].preempt == NULL);
	CHECK_STR(p.boots[0].cmdline, "");
	CHECK(json_array_size(p.knobs) == 1);
	CHECK(json_object_size(json_array_get(p.knobs, 0)) == 0);
	CHECK(p.nwl == 1);
	CHECK_STR(p.wl[0].ops->name, "hackbench");
	/* params resolved with defaults, "type" kept */
	CHECK_STR(json_string_value(json_object_get(p.wl[0].params, "type")), "hackbench");
	CHECK(json_integer_value(json_object_get(p.wl[0].params, "groups")) == 4);
	CHECK(p.nvisits == 1);
	CHECK(p.visits[0].cfg == 0 && p.visits[0].round == 0 && p.visits[0].nruns == 1);
	CHECK(plan_run_count(&p) == 1);
	plan_release(&p);
}

TEST(explicit_top_level_values)
{
	struct plan p;
	CHECK(load_ok("{\"name\": \"ab\", \"target\": \"local\", \"switch\": \"runtime\", "
		      "\"repetitions\": 4, \"seed\": 99, \"order\": \"sequential\", "
		      "\"schedstat\": false, \"workloads\": [{\"type\": \"stress-ng\"}]}",
		      &p) == 0);
	CHECK_STR(p.name, "ab");
	CHECK_STR(json_string_value(json_object_get(p.target, "type")), "local");
	CHECK_STR(p.switch_method, "runtime");
	CHECK(p.repetitions == 4);
	CHECK(p.seed == 99);
	CHECK_STR(p.order, "sequential");
	CHECK(p.schedstat == 0);
	CHECK(plan_run_count(&p) == 4);
	plan_release(&p);
}

static const char *const matrix_plan =
	"{\"name\": \"m\", \"repetitions\": 3, \"seed\": %d, \"order\": \"%s\",\n"
	" \"matrix\": {\"kernel\": [\"ka\", \"kb\"], \"preempt\": [\"voluntary\", \"full\"],\n"
	"   \"cmdline\": [\"nohz=off\", \"threadirqs\"],\n"
	"   \"knobs\": [{}, {\"sched_features\": [\"NO_TTWU_QUEUE\"]},\n"
	"             {\"tunables\": {\"migration_cost_ns\": 100000}}]},\n"
	" \"workloads\": [{\"type\": \"hackbench\"}, {\"type\": \"cyclictest\", \"duration_s\": 2}]}";

static int load_matrix(int seed, const char *order, struct plan *p)
{
	char *text = xstrfmt(matrix_plan, seed, order);
	int r = load_ok(text, p);
	free(text);
	return r;
}

TEST(matrix_boots_kernel_preempt_cmdline)
{
	struct plan p;
	CHECK(load_matrix(1, "interleaved", &p) == 0);
	CHECK(p.nboots == 2 * 2 * 2);
	CHECK(json_array_size(p.knobs) == 3);
	CHECK(p.nwl == 2);
	/* kernel outermost, then preempt, then cmdline */
	static const char *const want[8][3] = {
		{ "ka", "voluntary", "nohz=off" }, { "ka", "voluntary", "threadirqs" },
		{ "ka", "full", "nohz=off" },      { "ka", "full", "threadirqs" },
		{ "kb", "voluntary", "nohz=off" }, { "kb", "voluntary", "threadirqs" },
		{ "kb", "full", "nohz=off" },      { "kb", "full", "threadirqs" },
	};
	for (size_t i = 0; i < p.nboots && i < 8; i++) {
		CHECK_STR(p.boots[i].kernel, want[i][0]);
		CHECK_STR(p.boots[i].preempt, want[i][1]);
		CHECK_STR(p.boots[i].cmdline, want[i][2]);
	}
	/* 8 boots x 3 rounds, each 3 knobs x 2 workloads */
	CHECK(p.nvisits == 24);
	CHECK(plan_run_count(&p) == 8 * 3 * 3 * 2);
	plan_release(&p);
}

TEST(single_string_dimension)
{
	struct plan p;
	CHECK(load_ok("{\"matrix\": {\"preempt\": \"full\", \"cmdline\": \"\"},"
		      " \"workloads\": [{\"type\": \"hackbench\"}, {\"type\": \"stress-ng\"}],"
		      " \"repetitions\": 2}", &p) == 0);
	CHECK(p.nboots == 1);
	CHECK(p.boots[0].kernel == NULL);
	CHECK_STR(p.boots[0].preempt, "full");
	CHECK_STR(p.boots[0].cmdline, "");
	CHECK(p.nvisits == 2);
	CHECK(plan_run_count(&p) == 4);
	plan_release(&p);
}

TEST(interleaved_rounds_cover_everything)
{
	struct plan p;
	CHECK(load_matrix(1, "interleaved", &p) == 0);
	int bad = 0, shuffled_boots = 0, shuffled_runs = 0;
	for (int r = 0; r < 3; r++) {
		int seen[8] = { 0 };
		for (size_t b = 0; b < 8; b++) {
			const struct plan_visit *v = &p.visits[(size_t)r * 8 + b];
			bad += v->round != r;
			bad += v->cfg < 0 || v->cfg >= 8;
			if (v->cfg >= 0 && v->cfg < 8)
				seen[v->cfg]++;
			shuffled_boots += v->cfg != (int)b;
			bad += v->nruns != 6;
			int pair[3][2] = { { 0 } };
			for (size_t i = 0; i < v->nruns && i < 6; i++) {
				const struct plan_run *run = &v->runs[i];
				bad += run->rep != r;
				bad += run->knob < 0 || run->knob >= 3 || run->wl < 0 || run->wl >= 2;
				if (run->knob >= 0 && run->knob < 3 && run->wl >= 0 && run->wl < 2)
					pair[run->knob][run->wl]++;
				shuffled_runs += run->knob * 2 + run->wl != (int)i;
			}
			for (int k = 0; k < 3; k++)
				for (int w = 0; w < 2; w++)
					bad += pair[k][w] != 1;
		}
		for (int c = 0; c < 8; c++)
			bad += seen[c] != 1;
	}
	CHECK(bad == 0);
	CHECK(shuffled_boots > 0);   /* not the plan order */
	CHECK(shuffled_runs > 0);
	plan_release(&p);
}

static int same_order(const struct plan *a, const struct plan *b)
{
	if (a->nvisits != b->nvisits)
		return 0;
	for (size_t v = 0; v < a->nvisits; v++) {
		if (a->visits[v].cfg != b->visits[v].cfg || a->visits[v].nruns != b->visits[v].nruns)
			return 0;
		for (size_t i = 0; i < a->visits[v].nruns; i++)
			if (a->visits[v].runs[i].knob != b->visits[v].runs[i].knob ||
			    a->visits[v].runs[i].wl != b->visits[v].runs[i].wl ||
			    a->visits[v].runs[i].rep != b->visits[v].runs[i].rep)
				return 0;
	}
	return 1;
}

TEST(interleaved_deterministic_per_seed)
{
	struct plan a, b, c;
	CHECK(load_matrix(7, "interleaved", &a) == 0);
	CHECK(load_matrix(7, "interleaved", &b) == 0);
	CHECK(load_matrix(8, "interleaved", &c) == 0);
	CHECK(same_order(&a, &b));
	CHECK(!same_order(&a, &c));
	/* the boot order alone differs too (8! orders per round) */
	int diff = 0;
	for (size_t v = 0; v < a.nvisits; v++)
		diff += a.visits[v].cfg != c.visits[v].cfg;
	CHECK(diff > 0);
	plan_release(&a);
	plan_release(&b);
	plan_release(&c);
}

/* the seed of a repetition (docs/virtual-time.md "Seeds"): a function of the
 * plan's seed and the rep alone, deterministic, 32 bits, different for every
 * rep of a plan seed; the values are pinned: stored seeds and the runs
 * they repeat depend on them */
TEST(rep_seed_derivation)
{
	CHECK(plan_rep_seed(1, 0) == 3967562512LL);
	CHECK(plan_rep_seed(1, 1) == 3481209663LL);
	CHECK(plan_rep_seed(3, 0) == 504368119LL);
	CHECK(plan_rep_seed(3, 1) == 3788627092LL);
	static const uint64_t seeds[] = { 0, 1, 3, 12345, UINT64_MAX / 2 };
	for (size_t k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++) {
		enum { N = 4096 };
		static int64_t got[N];
		int distinct = 1, in_range = 1, same = 1;
		for (int r = 0; r < N; r++) {
			got[r] = plan_rep_seed(seeds[k], r);
			same &= got[r] == plan_rep_seed(seeds[k], r);
			in_range &= got[r] >= 0 && got[r] <= 0xffffffffLL;
			for (int q = 0; q < r && distinct; q++)
				distinct = got[q] != got[r];
		}
		CHECK(same);
		CHECK(in_range);
		CHECK(distinct);
		/* another plan seed, other seeds */
		CHECK(plan_rep_seed(seeds[k], 0) != plan_rep_seed(seeds[k] + 1, 0));
	}
	/* both sides of an A/B: every configuration's rep r of a plan gets the
	   same seed, as session_start stores it (plan_rep_seed of the plan's
	   seed and the run's rep, nothing of the boot) */
	struct plan p;
	CHECK(load_matrix(3, "interleaved", &p) == 0);
	CHECK(p.seed == 3);
	int64_t first[64];
	int seen[64] = { 0 }, agree = 1;
	for (size_t v = 0; v < p.nvisits; v++)
		for (size_t i = 0; i < p.visits[v].nruns; i++) {
			int rep = p.visits[v].runs[i].rep;
			int64_t sd = plan_rep_seed(p.seed, rep);
			if (rep < 64 && seen[rep])
				agree &= first[rep] == sd;
			else if (rep < 64) {
				seen[rep] = 1;
				first[rep] = sd;
			}
		}
	CHECK(agree && seen[0] && seen[1]);
	plan_release(&p);
}

TEST(sequential_order)
{
	struct plan p;
	CHECK(load_matrix(1, "sequential", &p) == 0);
	CHECK(p.nvisits == 8);
	CHECK(plan_run_count(&p) == 144);
	int bad = 0;
	for (size_t b = 0; b < p.nvisits; b++) {
		const struct plan_visit *v = &p.visits[b];
		bad += v->cfg != (int)b || v->round != 0 || v->nruns != 18;
		/* reps back to back; inside a rep knobs outer, workloads inner */
		for (size_t i = 0; i < v->nruns && i < 18; i++) {
			int rep = (int)i / 6, k = ((int)i % 6) / 2, w = (int)i % 2;
			bad += v->runs[i].rep != rep || v->runs[i].knob != k || v->runs[i].wl != w;
		}
	}
	CHECK(bad == 0);
	CHECK(p.visits[3].runs[7].rep == 1 && p.visits[3].runs[7].knob == 0 &&
	      p.visits[3].runs[7].wl == 1);
	plan_release(&p);
}

/* "evidence": resolved with its defaults, kept out of the params, and one
 * traced run per configuration x knobs at the end of the configuration's
 * last visit (after all its repetitions), in both orders */
TEST(evidence_extra_traced_run)
{
	static const char *const orders[] = { "interleaved", "sequential" };
	for (int o = 0; o < 2; o++) {
		char *text = xstrfmt(
			"{\"name\": \"ev\", \"target\": \"local\", \"repetitions\": 3, "
			"\"order\": \"%s\", \"matrix\": {\"preempt\": [\"voluntary\", \"full\"], "
			"\"knobs\": [{}, {\"tunables\": {\"migration_cost_ns\": 100000}}]}, "
			"\"workloads\": [{\"type\": \"hackbench\", \"evidence\": {\"trace_s\": 2}}, "
			"{\"type\": \"cyclictest\", \"duration_s\": 1}]}", orders[o]);
		struct plan p;
		CHECK(load_ok(text, &p) == 0);
		free(text);
		CHECK(p.wl[0].evidence && !p.wl[1].evidence);
		CHECK(!json_object_get(p.wl[0].params, "evidence"));
		CHECK_NEAR(json_number_value(json_object_get(p.wl[0].evidence, "trace_s")), 2, 1e-9);
		CHECK(json_array_size(json_object_get(p.wl[0].evidence, "events")) == 4);
		CHECK(json_integer_value(json_object_get(p.wl[0].evidence, "buffer_kb")) == 8192);
		/* the trigger is the plan's, not the traced series': not in evidence */
		CHECK(!json_object_get(p.wl[0].evidence, "when"));
		CHECK(p.wl[0].when == EVIDENCE_ALWAYS);
		/* 2 boots x 2 knobs x 2 workloads x 3 reps, + 2 boots x 2 knobs traced */
		CHECK(plan_run_count(&p) == 24 + 4);
		for (int cfg = 0; cfg < 2; cfg++) {
			size_t last = 0, ntr = 0;
			int seen = 0;
			for (size_t v = 0; v < p.nvisits; v++)
				if (p.visits[v].cfg == cfg) {
					last = v;
					seen = 1;
				}
			CHECK(seen);
			for (size_t v = 0; v < p.nvisits; v++)
				for (size_t r = 0; r < p.visits[v].nruns; r++) {
					const struct plan_run *pr = &p.visits[v].runs[r];
					if (p.visits[v].cfg != cfg || !pr->traced)
						continue;
					ntr++;
					CHECK(v == last && pr->wl == 0 && pr->rep == 3);
					/* after every untraced run of the visit */
					for (size_t q = r; q < p.visits[v].nruns; q++)
						CHECK(p.visits[v].runs[q].traced);
				}
			CHECK(ntr == 2);
		}
		plan_release(&p);
	}
}

TEST(evidence_errors)
{
	const char *pre = "{\"name\": \"e\", \"target\": \"local\", \"workloads\": "
			  "[{\"type\": \"hackbench\", \"evidence\": ";
	static const struct { const char *ev, *msg; } cases[] = {
		{ "5", "workloads[0].evidence: must be an object" },
		{ "{\"x\": 1}", "workloads[0].evidence.x: unknown key (valid: trace_s" },
		{ "{\"trace_s\": -1}", "evidence.trace_s: must be a number of seconds in (0, 600]" },
		{ "{\"trace_s\": \"5\"}", "evidence.trace_s: must be a number" },
		{ "{\"events\": []}", "evidence.events: must be a non-empty array" },
		{ "{\"events\": [\"sched_wakeup\"]}", "evidence.events: must include sched_switch" },
		{ "{\"events\": [\"sched_switch\", 3]}", "evidence.events[1]: unknown event" },
		{ "{\"buffer_kb\": 1}", "evidence.buffer_kb: must be an integer from 64 to" },
		{ "{\"max_kb\": 99999}", "evidence.max_kb: must be an integer from 16 to 16384" },
		{ "{\"when\": \"best\"}", "evidence.when: must be \"always\" (a traced run in "
		  "every configuration), \"worst\"" },
		{ "{\"when\": 1}", "evidence.when: must be \"always\"" },
		{ "{\"outlier_k\": 2}", "evidence.outlier_k: only with \"when\": \"flagged\"" },
		{ "{\"when\": \"worst\", \"outlier_k\": 2}", "evidence.outlier_k: only with" },
		{ "{\"when\": \"flagged\", \"outlier_k\": 0}",
		  "evidence.outlier_k: must be a number in (0, 100]" },
		{ "{\"when\": \"flagged\", \"outlier_k\": \"3\"}",
		  "evidence.outlier_k: must be a number" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = xstrfmt("%s%s}]}", pre, cases[i].ev);
		check_err(t, cases[i].msg);
		free(t);
	}
	check_err("{\"name\": \"e\", \"target\": \"local\", \"repetitions\": {\"min\": 2, "
		  "\"max\": 5, \"until\": \"decided\"}, \"workloads\": [{\"type\": \"hackbench\", "
		  "\"evidence\": {}}]}", "workloads[0].evidence: not with sequential repetitions");
}

/* "when": always (also as "extra_run", its name before the triggers),
 * worst, flagged with its outlier_k; the traced runs are planned alike
 * whatever the trigger (decided when their turn comes, evidence.h) */
TEST(evidence_when)
{
	static const struct { const char *ev; enum evidence_when w; double k; } cases[] = {
		{ "{}", EVIDENCE_ALWAYS, 3 },
		{ "{\"when\": \"always\"}", EVIDENCE_ALWAYS, 3 },
		{ "{\"when\": \"extra_run\"}", EVIDENCE_ALWAYS, 3 },
		{ "{\"when\": \"worst\"}", EVIDENCE_WORST, 3 },
		{ "{\"when\": \"flagged\"}", EVIDENCE_FLAGGED, 3 },
		{ "{\"when\": \"flagged\", \"outlier_k\": 4.5}", EVIDENCE_FLAGGED, 4.5 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = xstrfmt("{\"name\": \"w\", \"target\": \"local\", \"repetitions\": 3, "
				  "\"workloads\": [{\"type\": \"hackbench\", \"evidence\": %s}]}",
				  cases[i].ev);
		struct plan p;
		CHECK(load_ok(t, &p) == 0);
		free(t);
		CHECK(p.wl[0].when == cases[i].w);
		if (cases[i].w == EVIDENCE_FLAGGED)
			CHECK_NEAR(p.wl[0].outlier_k, cases[i].k, 1e-12);
		CHECK(!json_object_get(p.wl[0].evidence, "when"));
		CHECK(!json_object_get(p.wl[0].evidence, "outlier_k"));
		CHECK(plan_run_count(&p) == 4);
		CHECK(p.visits[p.nvisits - 1].runs[p.visits[p.nvisits - 1].nruns - 1].traced);
		plan_release(&p);
	}
	CHECK_STR(evidence_when_name(EVIDENCE_WORST), "worst");
	CHECK_STR(evidence_when_name(EVIDENCE_FLAGGED), "flagged");
	CHECK_STR(evidence_when_name(EVIDENCE_ALWAYS), "always");
	/* a batch target cannot decide before it sends the traced run */
	char tokf[] = "/tmp/test_plan.token.XXXXXX";
	int tfd = mkstemp(tokf); /* mode 600, as a token file must be */
	if (tfd < 0 || write(tfd, "abc123\n", 7) != 7)
		CHECK(0);
	if (tfd >= 0)
		close(tfd);
	char *lava = xstrfmt("{\"type\": \"lava\", \"url\": \"http://127.0.0.1:8100\", "
			     "\"token_file\": \"%s\", \"user\": \"u\", \"device_type\": "
			     "\"qemu\"}", tokf);
	char *t = xstrfmt("{\"name\": \"w\", \"target\": %s, \"workloads\": [{\"type\": "
			  "\"hackbench\", \"evidence\": {\"when\": \"flagged\"}}]}", lava);
	check_err(t, "workloads[0].evidence.when: \"flagged\" is not possible on the lava target");
	free(t);
	t = xstrfmt("{\"name\": \"w\", \"target\": %s, \"workloads\": [{\"type\": "
		    "\"hackbench\", \"evidence\": {\"when\": \"always\"}}]}", lava);
	struct plan p;
	CHECK(load_ok(t, &p) == 0);
	free(t);
	plan_release(&p);
	/* ... nor when --target makes the plan's target one */
	CHECK(load_ok("{\"name\": \"w\", \"target\": \"local\", \"workloads\": [{\"type\": "
		      "\"hackbench\", \"evidence\": {\"when\": \"worst\"}}]}", &p) == 0);
	struct strbuf e = STRBUF_INIT;
	json_t *lt = json_loads(lava, 0, NULL);
	CHECK(plan_set_target(&p, lt, &e) == -1);
	json_decref(lt);
	CHECK_CONTAINS(e.buf, "\"worst\" is not possible on the lava target");
	CHECK_STR(json_string_value(json_object_get(p.target, "type")), "local");
	strbuf_release(&e);
	plan_release(&p);
	free(lava);
	unlink(tokf);
}

TEST(estimate_positive_and_exact)
{
	struct plan p;
	/* hackbench defaults: 0.77 * 4*20*200 / (4*20*200) + 0.2 = 0.97 s, plus
	 * 0.3 s per run and 0.2 s per local boot: 1.47 s */
	CHECK(load_ok("{\"workloads\": [{\"type\": \"hackbench\"}]}", &p) == 0);
	CHECK_NEAR(plan_estimate_s(&p), 1.47, 1e-9);
	plan_release(&p);
	CHECK(load_ok("{\"repetitions\": 3, \"workloads\": [{\"type\": \"hackbench\"}]}", &p) == 0);
	CHECK_NEAR(plan_estimate_s(&p), 3 * 1.47, 1e-9);
	plan_release(&p);
	/* cyclictest 2 s + 0.5, +0.3, +1 warm-up for the load, 0.2 boot: 4.0 */
	CHECK(load_ok("{\"workloads\": [{\"type\": \"cyclictest\", \"duration_s\": 2,"
		      " \"load\": {\"type\": \"stress-ng\"}}]}", &p) == 0);
	CHECK_NEAR(plan_estimate_s(&p), 4.0, 1e-9);
	plan_release(&p);
	CHECK(load_matrix(1, "interleaved", &p) == 0);
	CHECK(plan_estimate_s(&p) > 0);
	plan_release(&p);
}

/* ---- error messages ------------------------------------------------------ */

TEST(syntax_error_file_line_column)
{
	/* line 3 is `  "repetitions": ,` : the ',' at column 18 is unexpected */
	char *e = load_err("{\n  \"name\": \"x\",\n  \"repetitions\": ,\n"
			   "  \"workloads\": []}\n");
	CHECK(!strncmp(e, "p.json:3:18: ", 13));
	if (strncmp(e, "p.json:3:18: ", 13))
		printf("#   got: %s\n", e);
	free(e);
	e = load_err("");
	CHECK(!strncmp(e, "p.json:", 7));
	free(e);
	e = load_err("{\"workloads\": [{\"type\": \"hackbench\"}]} trailing");
	CHECK(!strncmp(e, "p.json:1:", 9));
	free(e);
}

TEST(duplicate_keys_rejected)
{
	char *e = load_err("{\"name\": \"a\", \"name\": \"b\", \"workloads\": [{\"type\": \"hackbench\"}]}");
	CHECK(!strncmp(e, "p.json:1:", 9));
	CHECK_CONTAINS(e, "duplicate");
	free(e);
	/* nested objects too */
	e = load_err("{\"workloads\": [{\"type\": \"hackbench\", \"groups\": 1, \"groups\": 2}]}");
	CHECK_CONTAINS(e, "duplicate");
	free(e);
}

TEST(not_an_object)
{
	check_err("[1, 2]", "p.json: the plan must be a JSON object");
}

TEST(unknown_top_level_key)
{
	check_err("{\"nmae\": \"x\", \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: nmae: unknown key (valid: name, target, targets, switch, repetitions, seed, "
		  "order, schedstat, matrix, workloads)");
}

TEST(top_level_value_errors)
{
	check_err("{\"repetitions\": 0, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: repetitions: must be a positive integer");
	check_err("{\"repetitions\": \"3\", \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: repetitions: must be a positive integer");
	check_err("{\"seed\": -1, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: seed: must be a non-negative integer");
	check_err("{\"order\": \"random\", \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: order: must be one of \"interleaved\", \"sequential\"");
	check_err("{\"switch\": \"kexek\", \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: switch: must be one of \"auto\", \"runtime\", \"reboot\", \"kexec\"");
	check_err("{\"schedstat\": 1, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: schedstat: must be true or false");
	check_err("{\"name\": \"\", \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: name: must be a non-empty string");
}

TEST(target_errors)
{
	check_err("{\"target\": \"vm\", \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: target: \"vm\": unknown target spec");
	check_err("{\"target\": {\"type\": \"vm\"}, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: target.type: unknown target \"vm\" (valid: ");
	check_err("{\"target\": {\"type\": \"local\", \"cpus\": 2}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: target.cpus: unknown key for the local target");
	check_err("{\"target\": 3, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: target: must be");
}

/* "clock": "virtual" (docs/virtual-time.md): refused where qemu's icount
 * cannot run, and with more than one vCPU, each naming why; checked before
 * the kernel is resolved, so no kernel is needed here */
TEST(virtual_clock_errors)
{
#define QV(extra) "{\"target\": {\"type\": \"qemu\", \"clock\": \"virtual\"" extra "}, " \
		  "\"workloads\": [{\"type\": \"hackbench\"}]}"
	check_err(QV(", \"accel\": \"kvm\""),
		  "p.json: target.accel: \"kvm\" cannot run a virtual clock");
	check_err(QV(", \"tcg_thread\": \"multi\""),
		  "p.json: target.tcg_thread: \"multi\" cannot run a virtual clock");
	check_err(QV(", \"icount_shift\": 11"),
		  "p.json: target.icount_shift: must be a non-negative integer no larger than 10");
	check_err(QV(", \"icount_shift\": \"0\""),
		  "p.json: target.icount_shift: must be a non-negative integer no larger than 10");
	check_err("{\"target\": {\"type\": \"qemu\", \"clock\": \"instructions\"}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: target.clock: must be one of \"real\", \"virtual\"");
	check_err("{\"target\": {\"type\": \"qemu\", \"icount_shift\": 3}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: target.icount_shift: only with \"clock\": \"virtual\"");
#undef QV
}

/* a fake qemu in dir that answers -version as qemu VERSION does */
static char *fake_qemu(const char *dir, const char *name, const char *version)
{
	char *path = xstrfmt("%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "#!/bin/sh\necho 'QEMU emulator version %s (fake)'\n"
			   "echo 'Copyright (c) 2003-2025 Fabrice Bellard'\n", version);
		fclose(f);
	}
	chmod(path, 0755);
	return path;
}

/* the qemu target's check of a target object (JSON text): its error, "" when
 * it passes */
static char *qemu_check_err(const char *text)
{
	struct strbuf err = STRBUF_INIT;
	json_t *in = json_loads(text, 0, NULL), *out;
	CHECK(in != NULL);
	out = qemu_target.check(in, "target", &err);
	CHECK(out != NULL || err.len);
	json_decref(out);
	json_decref(in);
	return strbuf_detach(&err, NULL);
}

/* "cpus" 2-8 with a virtual clock (issue 49): admitted when the qemu that
 * will run is >= 8.1 (its -version asked before anything runs), refused
 * naming the version and `make -C kernels qemu` otherwise; without a
 * "qemu" key the provided one under the cache, else the system's */
TEST(virtual_clock_cpus_need_qemu_8_1)
{
	char dir[] = "/tmp/sl-test-qemu-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *old = fake_qemu(dir, "qemu-old", "7.2.22");
	char *new = fake_qemu(dir, "qemu-new", "10.0.13");
	char *t, *e;
#define QK(q, cpus) "{\"type\": \"qemu\", \"clock\": \"virtual\", \"kernel\": \"/bin/sh\", " \
		    "\"qemu\": \"%s\", \"cpus\": " cpus "}", q
	t = xstrfmt(QK(old, "2"));
	e = qemu_check_err(t);
	CHECK_CONTAINS(e, "target.cpus: 2 vCPUs on a virtual clock need qemu >= 8.1");
	CHECK_CONTAINS(e, "qemu-old is 7.2.22: run `make -C kernels qemu`");
	free(e), free(t);
	t = xstrfmt(QK(new, "2"));
	e = qemu_check_err(t);
	CHECK_STR(e, "");
	free(e), free(t);
	t = xstrfmt(QK(new, "8"));
	e = qemu_check_err(t);
	CHECK_STR(e, "");
	free(e), free(t);
	t = xstrfmt(QK(new, "9"));
	e = qemu_check_err(t);
	CHECK_CONTAINS(e, "target.cpus: a virtual clock runs 1 to 8 vCPUs, not 9");
	free(e), free(t);
	/* one vCPU asks nothing of the qemu; a missing one is named */
	t = xstrfmt(QK("/nonexistent/qemu", "1"));
	e = qemu_check_err(t);
	CHECK_STR(e, "");
	free(e), free(t);
	t = xstrfmt(QK("/nonexistent/qemu", "2"));
	e = qemu_check_err(t);
	CHECK_CONTAINS(e, "need qemu >= 8.1");
	CHECK_CONTAINS(e, "cannot run /nonexistent/qemu -version");
	free(e), free(t);
#undef QK
	/* no "qemu": the provided one under the cache; missing, the system's
	 * (here the old fake, first in PATH) */
	char *path0 = xstrdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	char *xdg0 = getenv("XDG_CACHE_HOME") ? xstrdup(getenv("XDG_CACHE_HOME")) : NULL;
	char *bindir = xstrfmt("%s/bin", dir), *sys = NULL, *pdir = NULL, *prov = NULL;
	mkdir(bindir, 0755);
	sys = fake_qemu(bindir, "qemu-system-x86_64", "7.2.22");
	char *path1 = xstrfmt("%s:%s", bindir, path0);
	setenv("PATH", path1, 1);
	setenv("XDG_CACHE_HOME", dir, 1);
	static const char noq[] = "{\"type\": \"qemu\", \"clock\": \"virtual\", "
				  "\"kernel\": \"/bin/sh\", \"cpus\": 2}";
	e = qemu_check_err(noq);
	CHECK_CONTAINS(e, "qemu-system-x86_64 is 7.2.22, and the provided qemu is missing: run "
			  "`make -C kernels qemu`");
	free(e);
	pdir = xstrfmt("%s/schedlab/qemu-vt", dir);
	char *sdir = xstrfmt("%s/schedlab", dir);
	mkdir(sdir, 0755);
	mkdir(pdir, 0755);
	prov = fake_qemu(pdir, "qemu-system-x86_64", "10.0.13");
	e = qemu_check_err(noq);
	CHECK_STR(e, "");
	free(e);
	/* the checked object names no qemu: it is chosen when the VM starts */
	json_t *in = json_loads(noq, 0, NULL);
	struct strbuf err = STRBUF_INIT;
	json_t *out = qemu_target.check(in, "target", &err);
	CHECK(out && !json_object_get(out, "qemu"));
	int fallback = -1;
	char *bin = qemu_vt_binary(out, &fallback);
	CHECK_STR(bin, prov);
	CHECK(fallback == 0);
	free(bin);
	json_decref(out);
	json_decref(in);
	strbuf_release(&err);
	setenv("PATH", path0, 1);
	if (xdg0)
		setenv("XDG_CACHE_HOME", xdg0, 1);
	else
		unsetenv("XDG_CACHE_HOME");
	unlink(prov), unlink(sys), unlink(old), unlink(new);
	rmdir(pdir), rmdir(sdir), rmdir(bindir), rmdir(dir);
	free(prov), free(sys), free(old), free(new), free(pdir), free(sdir), free(bindir);
	free(path0), free(path1), free(xdg0);
}

/* the qemu target's "topology" (issue 49): checked with the target, before
 * anything runs; cpus follows from it, the stored object names every level;
 * a virtual clock's cpus comes from the topology, not its default of 1 */
TEST(qemu_topology_in_the_target)
{
	char dir[] = "/tmp/sl-test-topo-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *q40 = fake_qemu(dir, "qemu-4.0", "4.0.0");
	char *q10 = fake_qemu(dir, "qemu-10", "10.0.13");
	struct strbuf err = STRBUF_INIT;
	char *t, *e;
	json_t *in, *out;
#define QT(q, clock, rest) "{\"type\": \"qemu\", \"kernel\": \"/bin/sh\", \"qemu\": \"%s\", " \
			   "\"clock\": \"" clock "\", " rest "}", q
	t = xstrfmt(QT(q10, "virtual", "\"topology\": {\"sockets\": 2, \"cores\": 2}"));
	in = json_loads(t, 0, NULL);
	out = qemu_target.check(in, "p.json", &err);
	CHECK(out != NULL);
	CHECK_STR(err.buf, "");
	CHECK(json_integer_value(json_object_get(out, "cpus")) == 4);
	char *topo = json_dumps(json_object_get(out, "topology"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(topo, "{\"cores\":2,\"dies\":1,\"sockets\":2,\"threads\":1}");
	free(topo), free(t);
	json_decref(out), json_decref(in);
	t = xstrfmt(QT(q10, "real", "\"cpus\": 6, \"topology\": {\"sockets\": 2, \"cores\": 2}"));
	e = qemu_check_err(t);
	CHECK_STR(e, "target.topology: sockets x dies x cores x threads = 2x1x2x1 = 4, "
		     "but cpus is 6: the product must equal cpus (leave out cpus, or cores, to "
		     "have it follow)");
	free(e), free(t);
	t = xstrfmt(QT(q10, "virtual", "\"topology\": {\"sockets\": 2, \"cores\": 8}"));
	e = qemu_check_err(t);
	CHECK_STR(e, "target.topology: 2x1x8x1 = 16 vCPUs; a virtual clock runs 1 to 8");
	free(e), free(t);
	t = xstrfmt(QT(q10, "virtual", "\"topology\": {\"cores\": 2, \"threads\": 2}"));
	e = qemu_check_err(t);
	CHECK_CONTAINS(e, "target.topology.threads: 2 threads a core under TCG");
	free(e), free(t);
	t = xstrfmt(QT(q40, "real", "\"topology\": {\"dies\": 2}"));
	e = qemu_check_err(t);
	CHECK_CONTAINS(e, "target.topology.dies: more than one die needs qemu >= 4.1 on "
			  "x86; this qemu is 4.0.0");
	free(e), free(t);
	t = xstrfmt(QT(q10, "virtual", "\"topology\": {\"dies\": 2, \"cores\": 2}"));
	e = qemu_check_err(t);
	CHECK_STR(e, "");
	free(e), free(t);
	/* a cpus of 0 is cpus' own error, not one the topology fills in */
	t = xstrfmt(QT(q10, "real", "\"cpus\": 0, \"topology\": {\"sockets\": 2}"));
	e = qemu_check_err(t);
	CHECK_STR(e, "target.cpus: must be a positive integer no larger than 256");
	free(e), free(t);
	t = xstrfmt(QT(q10, "real", "\"topology\": {\"socket\": 2}"));
	e = qemu_check_err(t);
	CHECK_STR(e, "target.topology.socket: unknown key (valid: sockets, dies, cores, "
		     "threads)");
	free(e), free(t);
#undef QT
	strbuf_release(&err);
	unlink(q40), unlink(q10), rmdir(dir);
	free(q40), free(q10);
}

TEST(workload_param_error_by_path)
{
	check_err("{\"workloads\": [{\"type\": \"hackbench\"}, "
		  "{\"type\": \"cyclictest\", \"duration_s\": 0}]}",
		  "p.json: workloads[1].duration_s: must be a positive integer");
	check_err("{\"workloads\": [{\"type\": \"hackbench\", \"grups\": 2}]}",
		  "p.json: workloads[0].grups: unknown key (valid: type, groups, loops");
}

/* one run's estimated time is capped (PLAN_MAX_RUN_S): the error names the
 * estimate, the cap and the keys that make the run long (issue 41) */
TEST(run_time_cap)
{
	check_err("{\"workloads\": [{\"type\": \"hackbench\"}, {\"type\": \"perf-messaging\", "
		  "\"groups\": 1000, \"loops\": 100000000, \"mode\": \"thread\"}]}",
		  "p.json: workloads[1]: one run of perf-messaging is estimated at 48000050 s, "
		  "above the cap of 172800 s (48 h) on one run's time: lower workloads[1].groups "
		  "1000, workloads[1].loops 100000000");
	/* a day's measurement is within it */
	struct plan p;
	CHECK(load_ok("{\"workloads\": [{\"type\": \"cyclictest\", \"duration_s\": 86400}, "
		      "{\"type\": \"pgbench\", \"duration_s\": 86400}, "
		      "{\"type\": \"perf-messaging\", \"groups\": 1000, \"loops\": 300}]}",
		      &p) == 0);
	plan_release(&p);
}

TEST(workloads_missing_or_empty)
{
	char *e = load_err("{\"name\": \"x\"}");
	CHECK_CONTAINS(e, "p.json: workloads: missing");
	CHECK_CONTAINS(e, workload_names());
	free(e);
	check_err("{\"workloads\": []}", "p.json: workloads: must be a non-empty array");
	check_err("{\"workloads\": [3]}", "p.json: workloads[0]: must be an object with \"type\"");
	check_err("{\"workloads\": [{\"groups\": 3}]}", "p.json: workloads[0].type: missing (valid: ");
}

TEST(unknown_workload_type_lists_types)
{
	char *e = load_err("{\"workloads\": [{\"type\": \"hackbench\"}, {\"type\": \"fio\"}]}");
	CHECK_CONTAINS(e, "p.json: workloads[1].type: unknown workload \"fio\" (valid: ");
	CHECK_CONTAINS(e, workload_names());
	CHECK_CONTAINS(e, "cyclictest, hackbench, stress-ng");
	free(e);
}

TEST(bad_preempt_lists_modes)
{
	check_err("{\"matrix\": {\"preempt\": [\"full\", \"rt\"]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.preempt[1]: \"rt\" is not valid (valid: none, voluntary, full, lazy, laziest)");
	check_err("{\"matrix\": {\"preempt\": []}, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.preempt: must be a string or a non-empty array of strings");
	check_err("{\"matrix\": {\"preempt\": [1]}, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.preempt[0]: must be a string");
	check_err("{\"matrix\": {\"preemt\": \"full\"}, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.preemt: unknown key (valid: kernel, preempt, cmdline, knobs, scheduler, impossible)");
}

TEST(cmdline_rejections)
{
	check_err("{\"matrix\": {\"cmdline\": [\"quiet\", \"foo=\\\"bar\\\"\"]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.cmdline[1]: character '\"' is not allowed");
	check_err("{\"matrix\": {\"cmdline\": \"quiet\\nsingle\"}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.cmdline[0]: character '\\n' is not allowed");
	check_err("{\"matrix\": {\"cmdline\": [\"nohz=off preempt=full\"]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.cmdline[0]: set preempt= with matrix.preempt, not in cmdline");
	/* directly */
	struct strbuf err = STRBUF_INIT;
	CHECK(cmdline_check("", "c", &err) == 0);
	CHECK(cmdline_check("nohz_full=1-3 isolcpus=domain,1-3 rcu_nocbs=1-3", "c", &err) == 0);
	CHECK(cmdline_check("mitigations=off", "c", &err) == 0);
	CHECK(cmdline_check("preempt_notrace", "c", &err) == 0);   /* not "preempt=" */
	CHECK_STR(err.buf, "");
	CHECK(cmdline_check("a 'b'", "c", &err) == -1);
	CHECK_CONTAINS(err.buf, "c: character ''' is not allowed");
	strbuf_reset(&err);
	CHECK(cmdline_check("a;reboot", "c", &err) == -1);
	CHECK_CONTAINS(err.buf, "character ';'");
	strbuf_reset(&err);
	CHECK(cmdline_check("quiet =1", "c", &err) == -1);
	CHECK_CONTAINS(err.buf, "c: a parameter must not start with '='");
	strbuf_reset(&err);
	CHECK(cmdline_check("quiet preempt=none", "c", &err) == -1);
	CHECK_CONTAINS(err.buf, "set preempt= with matrix.preempt");
	strbuf_reset(&err);
	CHECK(cmdline_check("  quiet", "c", &err) == -1);
	CHECK_CONTAINS(err.buf, "c: parameters are separated by single spaces");
	strbuf_release(&err);
}

TEST(knob_errors)
{
	check_err("{\"matrix\": {\"knobs\": [{}, {\"sched_features\": [\"no_ttwu_queue\"]}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs[1].sched_features[0]: must be a feature name like "
		  "\"TTWU_QUEUE\" or \"NO_TTWU_QUEUE\"");
	check_err("{\"matrix\": {\"knobs\": [{\"sched_features\": [\"TTWU QUEUE\"]}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs[0].sched_features[0]: must be a feature name");
	check_err("{\"matrix\": {\"knobs\": [{\"sched_features\": \"NO_HRTICK\"}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs[0].sched_features: must be an array of feature names");
	check_err("{\"matrix\": {\"knobs\": [{\"features\": []}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs[0].features: unknown key (valid: sched_features, tunables, sysctl)");
	check_err("{\"matrix\": {\"knobs\": [{\"sysctl\": {\"Sched_rt\": 1}}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs[0].sysctl.Sched_rt: not a valid sysctl");
	check_err("{\"matrix\": {\"knobs\": [{\"tunables\": {\"../../etc/passwd\": 1}}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs[0].tunables.../../etc/passwd: not a valid scheduler tunable");
	/* a per-CPU tunable (6.12's fair_server/cpuN/runtime) is a name; an
	   empty, dotted or too deep one is not */
	check_err("{\"matrix\": {\"knobs\": [{\"tunables\": {\"fair_server//runtime\": 1}}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs[0].tunables.fair_server//runtime: not a valid scheduler "
		  "tunable name (lowercase letters, digits, _; a file in a folder of sched/ as "
		  "fair_server/cpu0/runtime)");
	check_err("{\"matrix\": {\"knobs\": [{\"tunables\": {\"fair_server/../x\": 1}}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "tunables.fair_server/../x: not a valid scheduler tunable");
	check_err("{\"matrix\": {\"knobs\": [{\"tunables\": {\"a/b/c/d/e\": 1}}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "tunables.a/b/c/d/e: not a valid scheduler tunable");
	check_err("{\"matrix\": {\"knobs\": [{\"sysctl\": {\"sched/x\": 1}}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "sysctl.sched/x: not a valid sysctl");
	{
		struct strbuf err = STRBUF_INIT;
		json_t *k = json_loads("{\"tunables\": {\"fair_server/cpu0/runtime\": 40000000, "
				       "\"base_slice_ns\": 2000000}}", 0, NULL);
		CHECK(knob_object_check(k, "matrix.knobs[0]", &err) == 0);
		if (err.len)
			printf("#   %s\n", err.buf);
		json_t *w = NULL;
		CHECK(knobs_to_writes(k, &w, &err) == 0);
		char *t = json_dumps(w, JSON_COMPACT);
		CHECK_STR(t, "[{\"path\":\"/sys/kernel/debug/sched/fair_server/cpu0/runtime\","
			     "\"value\":\"40000000\"},{\"path\":\"/sys/kernel/debug/sched/"
			     "base_slice_ns\",\"value\":\"2000000\"}]");
		/* the agent's allow-list takes the per-CPU path */
		CHECK(knob_path_allowed("/sys/kernel/debug/sched/fair_server/cpu0/runtime"));
		free(t);
		json_decref(w);
		json_decref(k);
		strbuf_release(&err);
	}
	check_err("{\"matrix\": {\"knobs\": [{\"tunables\": {\"migration_cost_ns\": 1.5}}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs[0].tunables.migration_cost_ns: value must be an integer");
	check_err("{\"matrix\": {\"knobs\": []}, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs: must be a non-empty array of knob objects");
	check_err("{\"matrix\": {\"knobs\": [\"NO_HRTICK\"]}, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "p.json: matrix.knobs[0]: must be an object");
}

TEST(load_of_non_load_type)
{
	char *e = load_err("{\"workloads\": [{\"type\": \"cyclictest\", "
			   "\"load\": {\"type\": \"cyclictest\"}}]}");
	CHECK_CONTAINS(e, "p.json: workloads[0].load.type: \"cyclictest\" cannot be used as load "
			  "(valid: hackbench stress-ng)");
	free(e);
	check_err("{\"workloads\": [{\"type\": \"cyclictest\", \"load\": {\"type\": \"pingpong\"}}]}",
		  "workloads[0].load.type: \"pingpong\" cannot be used as load");
	check_err("{\"workloads\": [{\"type\": \"cyclictest\", \"load\": {\"groups\": 2}}]}",
		  "workloads[0].load.type: missing (valid load types: hackbench stress-ng)");
	check_err("{\"workloads\": [{\"type\": \"cyclictest\", \"load\": {\"type\": \"stress-ng\","
		  " \"stressor\": \"CPU\"}}]}",
		  "workloads[0].load.stressor: \"CPU\" is not a stress-ng stressor");
}

/* ---- knobs ---------------------------------------------------------------- */

TEST(knobs_to_writes_paths)
{
	struct strbuf err = STRBUF_INIT;
	json_t *k = json_loads("{\"sched_features\": [\"NO_TTWU_QUEUE\", \"WA_IDLE\"],"
			       " \"tunables\": {\"migration_cost_ns\": 100000},"
			       " \"sysctl\": {\"sched_rt_runtime_us\": \"-1\"}}", 0, NULL);
	CHECK(knob_object_check(k, "matrix.knobs[0]", &err) == 0);
	json_t *w = NULL;
	CHECK(knobs_to_writes(k, &w, &err) == 0);
	char *s = json_dumps(w, JSON_COMPACT);
	CHECK_STR(s, "[{\"path\":\"/sys/kernel/debug/sched/features\",\"value\":\"NO_TTWU_QUEUE\"},"
		     "{\"path\":\"/sys/kernel/debug/sched/features\",\"value\":\"WA_IDLE\"},"
		     "{\"path\":\"/sys/kernel/debug/sched/migration_cost_ns\",\"value\":\"100000\"},"
		     "{\"path\":\"/proc/sys/kernel/sched_rt_runtime_us\",\"value\":\"-1\"}]");
	free(s);
	json_decref(w);
	json_decref(k);
	/* the empty knob writes nothing */
	k = json_object();
	CHECK(knobs_to_writes(k, &w, &err) == 0);
	CHECK(json_is_array(w) && json_array_size(w) == 0);
	json_decref(w);
	json_decref(k);
	strbuf_release(&err);
}

TEST(knob_labels)
{
	json_t *k = json_object();
	char *l = knob_label(k);
	CHECK_STR(l, "default");
	free(l);
	json_decref(k);
	k = json_loads("{\"tunables\": {\"b\": 1}, \"sched_features\": [\"NO_HRTICK\"]}", 0, NULL);
	l = knob_label(k);
	CHECK_STR(l, "{\"sched_features\":[\"NO_HRTICK\"],\"tunables\":{\"b\":1}}");
	free(l);
	json_decref(k);
}

/* splitmix64: the reference sequence from state 0 */
TEST(prng_reference_values)
{
	uint64_t s = 0;
	CHECK(plan_rand(&s) == 0xe220a8397b1dcdafULL);
	CHECK(plan_rand(&s) == 0x6e789e6aa1b965f4ULL);
	CHECK(plan_rand(&s) == 0x06c45d188009454fULL);
	CHECK(s == 3 * 0x9e3779b97f4a7c15ULL);
}

/* the tools of the workloads and of their background loads, sorted, once */
static void tools_of(const char *plan, const char *expect)
{
	struct plan p;
	struct strvec v = STRVEC_INIT;
	struct strbuf got = STRBUF_INIT, kept = STRBUF_INIT;
	CHECK(load_ok(plan, &p) == 0);
	plan_tools(&p, &v);
	for (size_t i = 0; i < v.nr; i++)
		strbuf_addf(&got, "%s%s", i ? " " : "", v.v[i]);
	for (size_t i = 0; i < p.tools.nr; i++)
		strbuf_addf(&kept, "%s%s", i ? " " : "", p.tools.v[i]);
	CHECK_STR(got.buf, expect);
	CHECK_STR(kept.buf, expect); /* plan_load kept the same list */
	CHECK(p.tools.v && p.tools.v[p.tools.nr] == NULL);
	strvec_clear(&v);
	strbuf_release(&got);
	strbuf_release(&kept);
	plan_release(&p);
}

TEST(tools_of_workloads_and_loads)
{
	tools_of("{\"workloads\": [{\"type\": \"hackbench\"}]}", "hackbench");
	tools_of("{\"workloads\": [{\"type\": \"pingpong\"}, {\"type\": \"hackbench\"},"
		 " {\"type\": \"pingpong\", \"stages\": 3}]}", "hackbench sl-pingpong");
	/* a load's tool counts, and each tool appears once */
	tools_of("{\"workloads\": [{\"type\": \"cyclictest\", \"load\": {\"type\": \"hackbench\"}},"
		 " {\"type\": \"hackbench\"}]}", "cyclictest hackbench");
	tools_of("{\"workloads\": [{\"type\": \"cyclictest\", \"load\": {\"type\": \"stress-ng\"}},"
		 " {\"type\": \"jbb\"}]}", "cyclictest sl-jbb stress-ng");
}


/* a kernel folder in a temporary directory with one of the configs of
 * tests/data/kconfig/ (what `make -C kernels debian` or a variant build
 * leaves: kernel.json naming its config) */
static char kdirs[64];
static const char *kernel_folder(const char *name)
{
	static char path[4][160];
	static int next;
	if (!kdirs[0]) {
		snprintf(kdirs, sizeof(kdirs), "/tmp/sl-test-plan-XXXXXX");
		if (!mkdtemp(kdirs))
			return "/nonexistent";
	}
	char *out = path[next++ % 4];
	snprintf(out, sizeof(path[0]), "%s/%s", kdirs, name);
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp '%s/kconfig/%s.config' %s/cfg && "
		 "printf '{\"release\": \"%s\", \"config\": \"cfg\"}' >%s/kernel.json",
		 out, testdata_dir(), name, out, name, out);
	CHECK(system(cmd) == 0);
	return out;
}

/* a kernel folder (kernel_folder) with the schedulers of a build beside
 * it: scx/schedulers and an executable file per name */
static void add_schedulers(const char *k, const char *names)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "rm -rf %s/scx && mkdir -p %s/scx && for n in %s; do echo $n >>%s/scx/schedulers; "
		 "printf '#!/bin/sh\n' >%s/scx/$n; chmod 755 %s/scx/$n; done", k, k, names, k, k, k);
	CHECK(system(cmd) == 0);
}

/* matrix.scheduler: a run dimension, each knob object once per scheduler
 * with its "scheduler" key, the schedulers innermost */
TEST(scheduler_axis)
{
	const char *k = kernel_folder("7.3");
	add_schedulers(k, "scx_simple scx_qmap");
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"target\": \"local\", \"matrix\": {\"kernel\": \"%s\", \"preempt\": \"full\", "
		 "\"scheduler\": [\"eevdf\", \"scx_simple\"], \"knobs\": [{}, {\"sysctl\": "
		 "{\"sched_rt_runtime_us\": 950000}}]}, "
		 "\"workloads\": [{\"type\": \"hackbench\"}], \"repetitions\": 2}", k);
	struct plan p;
	CHECK(load_ok(text, &p) == 0);
	CHECK(p.nboots == 1);
	CHECK(json_array_size(p.knobs) == 4);
	const char *want[] = { "eevdf", "scx_simple", "eevdf", "scx_simple" };
	for (size_t i = 0; i < 4; i++) {
		const json_t *kn = json_array_get(p.knobs, i);
		CHECK_STR(json_string_value(json_object_get(kn, "scheduler")), want[i]);
		CHECK((json_object_get(kn, "sysctl") != NULL) == (i >= 2));
	}
	/* every run of a visit: 2 knobs x 2 schedulers x 1 workload */
	CHECK(p.nvisits == 2 && p.visits[0].nruns == 4);
	plan_release(&p);
	/* one scheduler as a string */
	snprintf(text, sizeof(text),
		 "{\"target\": \"local\", \"matrix\": {\"kernel\": \"%s\", \"scheduler\": "
		 "\"scx_qmap\"}, \"workloads\": [{\"type\": \"hackbench\"}]}", k);
	CHECK(load_ok(text, &p) == 0);
	CHECK(json_array_size(p.knobs) == 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(p.knobs, 0), "scheduler")),
		  "scx_qmap");
	plan_release(&p);
}

/* matrix.scheduler refused before anything runs: a name that is none, twice
 * the same, one the kernel's build lacks (naming what it has), a kernel
 * without sched_ext, a kernel without a build, no kernel folder; the
 * "scheduler" key in a knob object of the user's is no knob */
TEST(scheduler_refusals)
{
	const char *k73 = kernel_folder("7.3"), *k612 = kernel_folder("6.12");
	const char *kbare = kernel_folder("7.0");
	add_schedulers(k73, "scx_simple scx_qmap");
	char text[1024];
#define SCHED_PLAN(kern, sched) \
	snprintf(text, sizeof(text), "{\"target\": \"local\", \"matrix\": {\"kernel\": \"%s\", " \
		 "\"scheduler\": %s}, \"workloads\": [{\"type\": \"hackbench\"}]}", kern, sched)
	SCHED_PLAN(k73, "[\"eevdf\", \"cfs\"]");
	check_err(text, "p.json: matrix.scheduler[1]: \"cfs\" is no scheduler: \"eevdf\" (the "
			"kernel's own class) or scx_NAME");
	SCHED_PLAN(k73, "[\"scx_simple\", \"scx_simple\"]");
	check_err(text, "matrix.scheduler[1]: \"scx_simple\" is listed twice");
	SCHED_PLAN(k73, "[\"scx_Bad;rm\"]");
	check_err(text, "matrix.scheduler[0]: \"scx_Bad;rm\" is no scheduler");
	SCHED_PLAN(k73, "[]");
	check_err(text, "matrix.scheduler: must be a string or a non-empty array of strings");
	SCHED_PLAN(k73, "[\"eevdf\", \"scx_central\"]");
	char *e = load_err(text);
	CHECK_CONTAINS(e, "matrix.scheduler[1]: kernel ");
	CHECK_CONTAINS(e, "'s build has no scx_central; it has scx_simple, scx_qmap, and eevdf");
	free(e);
	SCHED_PLAN(k612, "[\"eevdf\", \"scx_simple\"]");
	check_err(text, "has no sched_ext (CONFIG_SCHED_CLASS_EXT=y is not in its config): "
			"scx_simple cannot run on it");
	SCHED_PLAN(kbare, "\"scx_simple\"");
	check_err(text, "has no sched_ext");
	/* eevdf alone asks nothing of the kernel */
	struct plan p;
	SCHED_PLAN(k612, "\"eevdf\"");
	CHECK(load_ok(text, &p) == 0);
	plan_release(&p);
	check_err("{\"target\": \"local\", \"matrix\": {\"scheduler\": \"scx_simple\"}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "matrix.scheduler[0]: scx_simple needs a kernel folder with sched_ext and its "
		  "schedulers built");
	check_err("{\"matrix\": {\"knobs\": [{\"scheduler\": \"scx_simple\"}]}, "
		  "\"workloads\": [{\"type\": \"hackbench\"}]}",
		  "matrix.knobs[0].scheduler: unknown key");
#undef SCHED_PLAN
}

/* matrix.impossible: refuse (default) names each pair and the offer;
 * drop leaves them out, notes them, and expands what is left */
TEST(impossible_pairs_refused_or_dropped)
{
	const char *k61 = kernel_folder("6.1"), *krt = kernel_folder("6.1-rt");
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"target\": \"local\", \"matrix\": {\"kernel\": [\"%s\", \"%s\"], "
		 "\"preempt\": [\"none\", \"full\"], \"cmdline\": [\"\", \"quiet\"]%s}, "
		 "\"workloads\": [{\"type\": \"hackbench\"}], \"repetitions\": 2}", k61, krt, "");
	char *e = load_err(text);
	CHECK_CONTAINS(e, "p.json: matrix: 2 of 8 boot configurations ask a kernel for a "
			  "preemption mode it does not offer");
	CHECK_CONTAINS(e, "preempt=none: it offers full (PREEMPT_RT, no PREEMPT_DYNAMIC");
	CHECK_CONTAINS(e, "\"impossible\": \"drop\"");
	free(e);
	snprintf(text, sizeof(text),
		 "{\"target\": \"local\", \"matrix\": {\"kernel\": [\"%s\", \"%s\"], "
		 "\"preempt\": [\"none\", \"full\"], \"cmdline\": [\"\", \"quiet\"]%s}, "
		 "\"workloads\": [{\"type\": \"hackbench\"}], \"repetitions\": 2}", k61, krt,
		 ", \"impossible\": \"drop\"");
	struct plan p;
	CHECK(load_ok(text, &p) == 0);
	CHECK(p.nboots == 6 && p.nvisits == 12);
	for (size_t i = 0; i < p.nboots; i++)
		CHECK(p.boots[i].kernel_index == 0 || !strcmp(p.boots[i].preempt, "full"));
	for (size_t v = 0; v < p.nvisits; v++)
		CHECK(p.visits[v].cfg >= 0 && p.visits[v].cfg < 6);
	CHECK(p.offer_notes.nr == 2);
	CHECK_CONTAINS(p.offer_notes.v[1], "2 boot configurations left out as impossible, 6 left");
	CHECK(json_array_size(p.dropped) == 1);
	plan_release(&p);
	check_err("{\"matrix\": {\"impossible\": true}, \"workloads\": [{\"type\": \"hackbench\"}]}",
		  "matrix.impossible: must be \"refuse\"");
}

/* a variant's config is known once it is built: checked then, and the
 * execution order expanded again without the pairs left out */
TEST(impossible_after_a_variant_is_built)
{
	const char *k70 = kernel_folder("7.0");
	struct plan p;
	CHECK(load_ok("{\"target\": \"local\", \"matrix\": {\"kernel\": [{\"variant\": [\"hz1000\"]}], "
		      "\"preempt\": [\"voluntary\", \"full\", \"lazy\"], \"impossible\": \"drop\"}, "
		      "\"workloads\": [{\"type\": \"hackbench\"}], \"repetitions\": 3}", &p) == 0);
	CHECK(p.nboots == 3 && p.nvisits == 9);
	struct strbuf err = STRBUF_INIT;
	CHECK(plan_set_kernel_image(&p, 0, k70, &err) == 0);
	CHECK(plan_check_offers(&p, &err) == 0);
	CHECK(p.nboots == 2 && p.nvisits == 6);
	CHECK_STR(p.boots[0].preempt, "full");
	CHECK_STR(p.boots[1].preempt, "lazy");
	CHECK_CONTAINS(p.offer_notes.v[0], "preempt=voluntary: it offers full, lazy");
	/* what the stored plan holds ("image", "dropped") loads to the same
	   expansion, even when the kernel's config changed meanwhile */
	json_t *d = json_object_get(json_object_get(p.root, "matrix"), "dropped");
	CHECK(json_array_size(d) == 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(d, 0), "preempt")), "voluntary");
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "cp '%s/kconfig/6.1.config' %s/cfg", testdata_dir(), k70);
	CHECK(system(cmd) == 0);
	char *stored = json_dumps(p.root, JSON_COMPACT);
	struct plan q;
	CHECK(load_ok(stored, &q) == 0);
	CHECK(q.nboots == 2 && q.nvisits == 6);
	for (size_t v = 0; v < q.nvisits && v < p.nvisits; v++)
		CHECK(q.visits[v].cfg == p.visits[v].cfg);
	CHECK(q.offer_notes.nr == 1);
	CHECK_CONTAINS(q.offer_notes.nr ? q.offer_notes.v[0] : NULL,
		       "1 boot configuration left out as impossible when the session was planned");
	free(stored);
	snprintf(cmd, sizeof(cmd), "cp '%s/kconfig/7.0.config' %s/cfg", testdata_dir(), k70);
	CHECK(system(cmd) == 0);
	/* a plan file may not say what was left out */
	char file[128];
	snprintf(file, sizeof(file), "%s/dropped.json", kdirs);
	FILE *f = fopen(file, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("{\"matrix\": {\"dropped\": []}, \"workloads\": [{\"type\": \"hackbench\"}]}", f);
		fclose(f);
	}
	struct plan r;
	CHECK(plan_load(file, &r, &err) == -1);
	CHECK_CONTAINS(err.buf, "matrix.dropped: set by schedlab run in the plan it stores");
	plan_release(&r);
	strbuf_reset(&err);
	plan_release(&q);
	plan_release(&p);
	/* without drop: refused after the build */
	CHECK(load_ok("{\"target\": \"local\", \"matrix\": {\"kernel\": [{\"variant\": [\"hz1000\"]}], "
		      "\"preempt\": [\"voluntary\"]}, \"workloads\": [{\"type\": \"hackbench\"}]}",
		      &p) == 0);
	CHECK(plan_set_kernel_image(&p, 0, k70, &err) == 0);
	CHECK(plan_check_offers(&p, &err) == -1);
	CHECK_CONTAINS(err.buf, "nothing would be left to run");
	plan_release(&p);
	strbuf_release(&err);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", kdirs);
	CHECK(system(cmd) == 0);
}

/* pgbench runs on every target (issue 30: the ssh bundle and the lava
 * initramfs carry PostgreSQL), a lab member included; the mechanism that
 * once kept it to local and qemu (workload_ops.targets) still answers for a
 * workload that names its targets */
TEST(workload_targets)
{
	struct plan p;
	char tokf[] = "/tmp/sl-plan-tok-XXXXXX";
	int tfd = mkstemp(tokf);
	CHECK(tfd >= 0 && write(tfd, "abc123\n", 7) == 7);
	if (tfd >= 0)
		close(tfd);
	char *lava = xstrfmt("{\"type\": \"lava\", \"url\": \"http://127.0.0.1:8100\", "
			     "\"token_file\": \"%s\", \"user\": \"u\", \"device_type\": "
			     "\"qemu\"}", tokf);
	const char *const tg[] = { "\"local\"", "{\"type\": \"ssh\", \"host\": \"lab1\"}",
				   lava, NULL };
	for (const char *const *t = tg; *t; t++) {
		char *plan = xstrfmt("{\"name\": \"w\", \"target\": %s, \"workloads\": "
				     "[{\"type\": \"hackbench\"}, {\"type\": \"pgbench\"}]}", *t);
		int r = load_ok(plan, &p);
		if (r)
			printf("#   refused: %s\n", plan);
		CHECK(r == 0);
		if (!r)
			plan_release(&p);
		free(plan);
	}
	CHECK(load_ok("{\"name\": \"w\", \"targets\": [\"local\", {\"type\": \"ssh\", "
		      "\"host\": \"lab1\"}], \"workloads\": [{\"type\": \"pgbench\"}]}", &p) == 0);
	plan_release(&p);
	free(lava);
	unlink(tokf);
	const struct workload_ops *pg = workload_find("pgbench");
	CHECK(pg && !pg->targets && workload_runs_on(pg, "lava"));
	static const char *const only[] = { "local", "qemu", NULL };
	struct workload_ops w = { .name = "x", .targets = only };
	CHECK(workload_runs_on(&w, "qemu") && workload_runs_on(&w, "local"));
	CHECK(!workload_runs_on(&w, "ssh") && !workload_runs_on(&w, NULL));
}

/* "repetitions".boundaries: a plan file gets the exact design, written into
 * the plan (so its session's stored plan names it); a stored plan without
 * the key was run with Bonferroni's looks before the key existed, and keeps
 * them; a bad value names the valid ones */
TEST(seq_boundaries)
{
	const char *body = "{\"name\": \"s\", \"target\": \"local\", \"order\": \"interleaved\", "
			   "\"repetitions\": {\"max\": 10, \"until\": \"decided\"%s}, "
			   "\"workloads\": [{\"type\": \"hackbench\"}]}";
	char path[] = "/tmp/sl-seqb-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	char *t = xstrfmt(body, "");
	FILE *f = fdopen(fd, "w");
	fputs(t, f);
	fclose(f);
	struct plan p;
	struct strbuf err = STRBUF_INIT;
	CHECK(plan_load(path, &p, &err) == 0);
	CHECK(p.seq.boundary == SEQ_EXACT);
	CHECK_STR(json_string_value(json_object_get(json_object_get(p.root, "repetitions"),
						    "boundaries")), "exact");
	plan_release(&p);
	unlink(path);
	/* stored (plan_load_string): no key, the old design */
	CHECK(plan_load_string(t, "stored", &p, &err) == 0);
	CHECK(p.seq.boundary == SEQ_BONFERRONI);
	plan_release(&p);
	free(t);
	t = xstrfmt(body, ", \"boundaries\": \"bonferroni\"");
	CHECK(plan_load_string(t, "stored", &p, &err) == 0);
	CHECK(p.seq.boundary == SEQ_BONFERRONI);
	plan_release(&p);
	free(t);
	t = xstrfmt(body, ", \"boundaries\": \"exact\"");
	CHECK(plan_load_string(t, "stored", &p, &err) == 0);
	CHECK(p.seq.boundary == SEQ_EXACT);
	plan_release(&p);
	free(t);
	t = xstrfmt(body, ", \"boundaries\": \"pocock\"");
	check_err(t, "repetitions.boundaries: must be \"exact\"");
	free(t);
	strbuf_release(&err);
}

/* repetitions.threshold_pct and alpha: the CLI's bounds (--threshold in
 * (0, 1000), an alpha some round can reach), one check (issue 41) */
TEST(seq_threshold_alpha_bounds)
{
	const char *body = "{\"repetitions\": {\"max\": 30, \"until\": \"decided\"%s}, "
			   "\"workloads\": [{\"type\": \"hackbench\"}]}";
	static const struct {
		const char *extra, *err;
	} bad[] = {
		{ ", \"threshold_pct\": 1e308", "repetitions: threshold_pct must be a percentage in "
						 "(0, 1000), as the CLI's --threshold" },
		{ ", \"threshold_pct\": 1000", "threshold_pct must be a percentage in (0, 1000)" },
		{ ", \"threshold_pct\": 0", "threshold_pct must be a percentage in (0, 1000)" },
		{ ", \"alpha\": 1e-300", "repetitions: alpha is at or below the smallest p max "
					 "rounds a side can give" },
		{ ", \"alpha\": 0.5", "repetitions: alpha must lie in (0, 0.5)" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *t = xstrfmt(body, bad[i].extra);
		check_err(t, bad[i].err);
		free(t);
	}
	struct plan p;
	char *t = xstrfmt(body, ", \"threshold_pct\": 999, \"alpha\": 1e-10");
	CHECK(load_ok(t, &p) == 0);
	plan_release(&p);
	free(t);
}

int main(void)
{
	RUN(seq_threshold_alpha_bounds);
	RUN(seq_boundaries);
	RUN(minimal_plan_defaults);
	RUN(explicit_top_level_values);
	RUN(matrix_boots_kernel_preempt_cmdline);
	RUN(single_string_dimension);
	RUN(interleaved_rounds_cover_everything);
	RUN(interleaved_deterministic_per_seed);
	RUN(rep_seed_derivation);
	RUN(sequential_order);
	RUN(evidence_extra_traced_run);
	RUN(evidence_errors);
	RUN(evidence_when);
	RUN(estimate_positive_and_exact);
	RUN(syntax_error_file_line_column);
	RUN(duplicate_keys_rejected);
	RUN(not_an_object);
	RUN(unknown_top_level_key);
	RUN(top_level_value_errors);
	RUN(target_errors);
	RUN(virtual_clock_errors);
	RUN(virtual_clock_cpus_need_qemu_8_1);
	RUN(qemu_topology_in_the_target);
	RUN(workload_param_error_by_path);
	RUN(run_time_cap);
	RUN(workloads_missing_or_empty);
	RUN(unknown_workload_type_lists_types);
	RUN(workload_targets);
	RUN(bad_preempt_lists_modes);
	RUN(cmdline_rejections);
	RUN(knob_errors);
	RUN(load_of_non_load_type);
	RUN(knobs_to_writes_paths);
	RUN(knob_labels);
	RUN(prng_reference_values);
	RUN(tools_of_workloads_and_loads);
	RUN(impossible_pairs_refused_or_dropped);
	RUN(impossible_after_a_variant_is_built);
	RUN(scheduler_axis);
	RUN(scheduler_refusals);
	return tap_done();
}
