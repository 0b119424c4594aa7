/*
 * Unit tests of selectors and series (harness/results/select.c) and of the A/B
 * comparison logic (harness/results/compare.c), on a synthetic database: a temp
 * file created with db_open (so the schema and the results view are the
 * real ones) into which a small generator inserts machines, kernels,
 * sessions, boots, runs, metrics and histograms through SQL, on a
 * connection of its own (the data layer hands out no SQLite handle; the
 * code under test reads through db/results.h). Values come
 * from the statistics library's seeded PRNG, so every run sees the same
 * numbers.
 */
#include "harness/util/cmdline.h"
#include "analysis/hist.h"
#include "analysis/stats.h"
#include "db/db.h"
#include "harness/results/compare.h"
#include "harness/results/select.h"
#include "tests/unit/tap.h"

#include <sqlite3.h>
#include <unistd.h>

/* ---- the generator ---------------------------------------------------- */

static struct db *gdb;
static sqlite3 *gh;   /* the generator's connection */
static char gpath[64];
static int gseq;

static void exec_sql(const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(gh, sql, NULL, NULL, &msg) != SQLITE_OK) {
		printf("# sql failed: %s: %s\n", sql, msg);
		sqlite3_free(msg);
		exit(1);
	}
}

/* prepare, bind texts (NULL-terminated list of "s:..." or "i:..." or "d:..."),
 * step, return last rowid */
static int64_t ins(const char *sql, ...)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(gh, sql, -1, &st, NULL) != SQLITE_OK) {
		printf("# prepare failed: %s: %s\n", sql, sqlite3_errmsg(gh));
		exit(1);
	}
	va_list ap;
	va_start(ap, sql);
	int n = sqlite3_bind_parameter_count(st);
	for (int i = 1; i <= n; i++) {
		const char *type = va_arg(ap, const char *);
		if (type[0] == 's') {
			const char *s = va_arg(ap, const char *);
			if (s)
				sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(st, i);
		} else if (type[0] == 'i') {
			sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
		} else {
			sqlite3_bind_double(st, i, va_arg(ap, double));
		}
	}
	va_end(ap);
	if (sqlite3_step(st) != SQLITE_DONE) {
		printf("# step failed: %s: %s\n", sql, sqlite3_errmsg(gh));
		exit(1);
	}
	sqlite3_finalize(st);
	return sqlite3_last_insert_rowid(gh);
}

static int64_t machine(const char *name, const char *fp)
{
	return ins("INSERT INTO machine (name, fingerprint) VALUES (?, ?)", "s", name, "s", fp);
}

static int64_t kernel(const char *rel, const char *hash, int hz)
{
	return ins("INSERT INTO kernel (release, config_hash, hz, sched_mc) VALUES (?, ?, ?, 1)",
		   "s", rel, "s", hash, "i", (int64_t)hz);
}

static int64_t session(const char *tag, const char *started)
{
	return ins("INSERT INTO session (name, plan_json, tag, target, harness_version, status,"
		   " started_at) VALUES ('syn', '{}', ?, 'local', 'test', 'done', ?)",
		   "s", tag, "s", started);
}

static int64_t boot(int64_t sid, int64_t m, int64_t k, const char *preempt)
{
	char *cmd = xstrfmt("root=/dev/vda preempt=%s", preempt);
	int64_t id = ins("INSERT INTO boot (session_id, seq, cfg, status, machine_id, kernel_id,"
			 " preempt, cmdline) VALUES (?, 0, 0, 'ok', ?, ?, ?, ?)",
			 "i", sid, "i", m, "i", k, "s", preempt, "s", cmd);
	free(cmd);
	return id;
}

static int64_t run(int64_t sid, int64_t b, const char *wl, const char *params, int rep,
		   const char *started)
{
	return ins("INSERT INTO run (session_id, boot_id, seq, round, workload, params, knobs,"
		   " rep, status, started_at) VALUES (?, ?, ?, 0, ?, ?, '{}', ?, 'ok', ?)",
		   "i", sid, "i", b, "i", (int64_t)gseq++, "s", wl, "s", params, "i",
		   (int64_t)rep, "s", started);
}

static void metric(int64_t r, const char *wl, const char *name, double v, const char *unit,
		   const char *better)
{
	ins("INSERT INTO metric (run_id, workload, name, value, unit, better)"
	    " VALUES (?, ?, ?, ?, ?, ?)",
	    "i", r, "s", wl, "s", name, "d", v, "s", unit, "s", better);
}

static void histogram(int64_t r, const char *name, uint64_t lo, uint64_t hi, uint64_t step)
{
	struct hist h;
	hist_init_linear(&h, 1000);
	for (uint64_t v = lo; v <= hi; v += step)
		hist_record(&h, v);
	json_t *j = hist_to_json(&h);
	char *s = json_dumps(j, JSON_COMPACT);
	ins("INSERT INTO histogram (run_id, name, unit, data) VALUES (?, ?, 'us', ?)", "i", r,
	    "s", name, "s", s);
	free(s);
	json_decref(j);
	hist_free(&h);
}

static double gauss(struct stats_rng *r)
{
	double u1 = 1.0 - stats_rng_uniform(r), u2 = stats_rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

#define HB2 "{\"groups\":2,\"loops\":200,\"type\":\"hackbench\"}"
#define HB4 "{\"groups\":4,\"loops\":200,\"type\":\"hackbench\"}"
#define CT "{\"duration_s\":3,\"type\":\"cyclictest\"}"

/*
 * The synthetic database:
 *  sessions 1, 2 (tag base, preempt none) and 3 (tag cand, preempt full) on
 *  machine m1 / kernel k1: hackbench groups=2 and groups=4, 5 reps each,
 *  time_s ~ 1.0 (none) and ~ 1.3 (full, groups=2 only; groups=4 unchanged),
 *  cyclictest 5 reps with lat_p99_us ~ 50 and a histogram per run, and a
 *  samples metric with better = none;
 *  session 4 (tag other) on machine m2, preempt none: hackbench groups=2;
 *  session 5 (tag vol, started before the others), preempt voluntary on m1:
 *  hackbench groups=2, time_s ~ 1.1.
 */
static void generate(void)
{
	snprintf(gpath, sizeof(gpath), "/tmp/test_select.%d.db", (int)getpid());
	unlink(gpath);
	char *msg = NULL;
	if (db_open(gpath, DB_READWRITE, &gdb, &msg)) {
		printf("# db_open: %s\n", msg);
		exit(1);
	}
	if (sqlite3_open(gpath, &gh) != SQLITE_OK) {
		printf("# sqlite3_open: %s\n", sqlite3_errmsg(gh));
		exit(1);
	}
	struct stats_rng rng;
	stats_rng_seed(&rng, 42);
	int64_t m1 = machine("box", "fp-box"), m2 = machine("lab2", "fp-lab2");
	int64_t k1 = kernel("6.1.0", "abcdef0123456789", 250);
	exec_sql("BEGIN");
	for (int s = 0; s < 4; s++) {
		static const char *const tags[] = { "base", "base", "cand", "other" };
		char started[64];
		snprintf(started, sizeof(started), "2026-06-0%dT00:00:00.000Z", s + 1);
		int64_t sid = session(tags[s], started);
		const char *pre = s == 2 ? "full" : "none";
		int64_t b = boot(sid, s == 3 ? m2 : m1, k1, pre);
		for (int rep = 0; rep < 5; rep++) {
			char rs[64];
			snprintf(rs, sizeof(rs), "2026-06-0%dT00:%02d:00.000Z", s + 1, rep);
			double slow = s == 2 ? 1.3 : 1.0;
			int64_t r = run(sid, b, "hackbench", HB2, rep, rs);
			metric(r, "hackbench", "time_s", slow * (1.0 + 0.005 * gauss(&rng)), "s",
			       "lower");
			if (s == 3)
				continue;
			r = run(sid, b, "hackbench", HB4, rep, rs);
			metric(r, "hackbench", "time_s", 2.0 * (1.0 + 0.005 * gauss(&rng)), "s",
			       "lower");
			r = run(sid, b, "cyclictest", CT, rep, rs);
			metric(r, "cyclictest", "lat_p99_us", 50 + gauss(&rng), "us", "lower");
			metric(r, "cyclictest", "samples", 6000 + rep, "count", "none");
			metric(r, "cyclictest", "rps", 1000 * (1.0 + 0.005 * gauss(&rng)), "req/s",
			       "higher");
			/* runs of session 3 are slower: values 10..109 instead of 0..99 */
			histogram(r, "latency_us", s == 2 ? 10 : 0, s == 2 ? 109 : 99, 1);
		}
	}
	/* session 5 (tag vol, earlier), preempt voluntary on m1: hackbench groups=2 */
	int64_t sid = session("vol", "2026-05-31T00:00:00.000Z");
	int64_t b = boot(sid, m1, k1, "voluntary");
	for (int rep = 0; rep < 5; rep++) {
		int64_t r = run(sid, b, "hackbench", HB2, rep, "2026-05-31T00:00:00.000Z");
		metric(r, "hackbench", "time_s", 1.1 * (1.0 + 0.005 * gauss(&rng)), "s", "lower");
	}
	exec_sql("COMMIT");
	sqlite3_close(gh);
}

static struct strvec cols = STRVEC_INIT;

/* ---- selectors -------------------------------------------------------- */

TEST(parse_basic)
{
	struct selector s;
	struct strbuf err = STRBUF_INIT;
	CHECK(select_parse("preempt=full,workload=pingpong", &cols, &s, &err) == 0);
	CHECK(s.n == 2);
	if (s.n == 2) {
		CHECK_STR(s.terms[0].key, "preempt");
		CHECK_STR(s.terms[0].value, "full");
		CHECK_STR(s.terms[1].key, "workload");
		CHECK_STR(s.terms[1].value, "pingpong");
	}
	select_free(&s);
	CHECK(select_parse("cmdline=a=b c=d", &cols, &s, &err) == 0);
	CHECK(s.n == 1 && !strcmp(s.terms[0].value, "a=b c=d"));
	select_free(&s);
	/* a comma inside a JSON value continues it */
	CHECK(select_parse("params={\"groups\":2,\"loops\":200},session=3", &cols, &s, &err) ==
	      0);
	CHECK(s.n == 2);
	if (s.n == 2) {
		CHECK_STR(s.terms[0].value, "{\"groups\":2,\"loops\":200}");
		CHECK_STR(s.terms[1].key, "session");
	}
	select_free(&s);
	CHECK(select_parse("", &cols, &s, &err) == 0 && s.n == 0);
	CHECK(select_parse(NULL, &cols, &s, &err) == 0 && s.n == 0);
	CHECK(select_parse("tag=", &cols, &s, &err) == 0 && s.n == 1 && !*s.terms[0].value);
	select_free(&s);
	strbuf_release(&err);
}

TEST(parse_errors)
{
	struct selector s;
	struct strbuf err = STRBUF_INIT;
	CHECK(select_parse("bogus=1", &cols, &s, &err) == -1);
	CHECK_CONTAINS(err.buf, "unknown key 'bogus'");
	CHECK_CONTAINS(err.buf, "session, tag, run_id");
	CHECK_CONTAINS(err.buf, "machine_id");
	strbuf_reset(&err);
	CHECK(select_parse("full", &cols, &s, &err) == -1);
	CHECK_CONTAINS(err.buf, "'full' is not key=value");
	strbuf_reset(&err);
	CHECK(select_parse("tag=a,", &cols, &s, &err) == -1);
	CHECK_CONTAINS(err.buf, "trailing comma");
	strbuf_reset(&err);
	CHECK(select_parse(",tag=a", &cols, &s, &err) == -1);
	CHECK_CONTAINS(err.buf, "empty term");
	strbuf_release(&err);
}

static void load(const char *text, struct sample_set *set)
{
	struct selector s;
	struct strbuf err = STRBUF_INIT;
	memset(set, 0, sizeof(*set));
	if (select_parse(text, &cols, &s, &err) || select_load(gdb, &s, NULL, set, &err))
		printf("# load %s: %s\n", text, err.buf);
	select_free(&s);
	strbuf_release(&err);
}

static const struct sel_group *find(const struct sample_set *s, const char *wl,
				    const char *metric, const char *params)
{
	for (size_t i = 0; i < s->ngroups; i++) {
		const struct sel_group *g = &s->groups[i];
		if (!strcmp(g->workload, wl) && !strcmp(g->metric, metric) &&
		    (!params || !strcmp(s->series[g->series].dim[DIM_PARAMS], params)))
			return g;
	}
	return NULL;
}

TEST(load_groups)
{
	struct sample_set s;
	load("session=1", &s);
	/* hackbench x2 params, cyclictest: 3 series */
	CHECK(s.nseries == 3);
	CHECK(s.nrows == 5 * (1 + 1 + 3));
	const struct sel_group *g = find(&s, "hackbench", "time_s", HB2);
	CHECK(g && g->n == 5);
	if (g) {
		CHECK(g->better == SEL_BETTER_LOWER);
		CHECK_STR(s.series[g->series].dim[DIM_PREEMPT], "none");
		CHECK_STR(s.series[g->series].machine, "box");
		CHECK_STR(s.series[g->series].kernel_release, "6.1.0");
		CHECK(s.series[g->series].nsessions == 1);
	}
	g = find(&s, "cyclictest", "samples", NULL);
	CHECK(g && g->better == SEL_BETTER_NONE && g->n == 5);
	/* series sorted by workload: cyclictest first */
	CHECK_STR(s.series[0].dim[DIM_WORKLOAD], "cyclictest");
	sample_set_free(&s);

	/* a key twice: either value */
	load("session=1,session=2,workload=hackbench", &s);
	g = find(&s, "hackbench", "time_s", HB4);
	CHECK(g && g->n == 10);
	CHECK(s.nseries == 2);
	if (s.nseries == 2)
		CHECK(s.series[0].nsessions == 2);
	sample_set_free(&s);

	/* integers compare in text form; a quote in a value is data, not SQL */
	load("hz=250,tag=base", &s);
	CHECK(s.nrows == 2 * 25);
	sample_set_free(&s);
	load("tag=x' OR '1'='1", &s);
	CHECK(s.nrows == 0);
	sample_set_free(&s);
	load("params=" HB2 ",tag=other", &s);
	CHECK(s.nrows == 5 && s.nseries == 1);
	sample_set_free(&s);
}

TEST(load_by_key)
{
	/* session, tag, machine and machine_id terms also go by key
	 * (db/results.c); the rows are those of the text comparison */
	static const struct {
		const char *sel;
		size_t rows;
	} cases[] = {
		{ "machine=box", 80 },
		{ "machine=box,tag=base", 50 },
		{ "machine_id=fp-lab2", 5 },
		{ "machine=box,machine=lab2,tag=other", 5 },
		{ "machine=lab2,tag=base", 0 },
		{ "session=1,session=04", 25 },      /* "04" is not session 4's text */
		{ "session=5,tag=vol,machine=box", 5 },
		{ "tag=,tag=vol", 5 },               /* "" also matches NULL: no key */
		{ "machine=,machine=box,tag=cand", 25 },
		{ "session=abc", 0 },
		{ "machine=nobox", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sample_set s;
		load(cases[i].sel, &s);
		if (s.nrows != cases[i].rows)
			printf("# %s: %zu rows, expected %zu\n", cases[i].sel, s.nrows,
			       cases[i].rows);
		CHECK(s.nrows == cases[i].rows);
		sample_set_free(&s);
	}
}

TEST(filter_since)
{
	struct selector sel;
	struct strbuf err = STRBUF_INIT;
	struct sample_set s;
	select_parse("workload=hackbench", &cols, &sel, &err);
	struct sel_filter f = { .workload = "hackbench", .metric = "time_s",
				.since = "2026-06-03" };
	CHECK(select_load(gdb, &sel, &f, &s, &err) == 0);
	/* sessions 3 (two params) and 4 (one) */
	CHECK(s.nrows == 15);
	sample_set_free(&s);
	select_free(&sel);
	strbuf_release(&err);
}

TEST(json_label)
{
	const char *all[] = { HB2, HB4 };
	char *l = sel_json_label(HB2, all, 2);
	CHECK_STR(l, "groups=2");
	free(l);
	l = sel_json_label(HB4, NULL, 0);
	CHECK_STR(l, "groups=4 loops=200");
	free(l);
	l = sel_json_label("not json", NULL, 0);
	CHECK_STR(l, "not json");
	free(l);
	const char *o2[] = { "{\"a\":1,\"b\":2}" };
	l = sel_json_label("{\"a\":1}", o2, 1);
	CHECK_STR(l, "b=(unset)");
	free(l);
}

/* ---- comparison ------------------------------------------------------- */

static const struct cmp_row *row_of(const struct cmp_result *r, const struct sample_set *a,
				    const char *metric, const char *params)
{
	for (size_t i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		if (row->kind == CMP_METRIC && !strcmp(row->metric, metric) &&
		    (!params || !strcmp(a->series[r->pairs[row->pair].a].dim[DIM_PARAMS], params)))
			return row;
	}
	return NULL;
}

TEST(compare_preempt)
{
	struct sample_set a, b;
	struct cmp_result r;
	struct strbuf err = STRBUF_INIT;
	load("tag=base", &a);
	load("tag=cand", &b);
	CHECK(compare_sets(&a, &b, NULL, &r, &err) == 0);
	/* preempt and the command line differ, nothing else */
	CHECK(r.diff_mask == ((1u << DIM_PREEMPT) | (1u << DIM_CMDLINE)));
	/* one pair per series: cyclictest, hackbench x 2 params */
	CHECK(r.npairs == 3);
	CHECK(r.warnings.nr == 0);
	const struct cmp_row *hb2 = row_of(&r, &a, "time_s", HB2),
			     *hb4 = row_of(&r, &a, "time_s", HB4);
	CHECK(hb2 && hb4);
	if (hb2 && hb4) {
		CHECK(hb2->v.n_a == 10 && hb2->v.n_b == 5);
		CHECK(hb2->v.kind == VERDICT_WORSE);
		CHECK_NEAR(hb2->v.change_pct, 30.0, 2.0);
		CHECK(hb2->v.ci_lo_pct > 25 && hb2->v.ci_hi_pct < 35);
		CHECK(hb2->v.p_mwu < 0.01);
		CHECK(hb4->v.kind == VERDICT_NO_CHANGE);
		CHECK(!hb2->has_noise);
		/* the pairs are labelled by what tells them apart */
		CHECK_STR(r.pairs[hb2->pair].label, "groups=2");
		CHECK_STR(r.pairs[hb4->pair].label, "groups=4");
	}
	const struct cmp_row *samples = row_of(&r, &a, "samples", NULL);
	CHECK(samples && !samples->has_verdict);
	if (samples) {
		char *t = compare_verdict_text(samples);
		CHECK_STR(t, "-");
		free(t);
	}
	const struct cmp_row *rps = row_of(&r, &a, "rps", NULL);
	CHECK(rps && rps->centre == STATS_HMEAN);
	const struct cmp_row *p99 = row_of(&r, &a, "lat_p99_us", NULL);
	CHECK(p99 && p99->centre == STATS_MEDIAN);
	/* effect-size order within a pair */
	compare_sort(&r);
	for (size_t i = 1; i < r.nrows; i++)
		if (r.rows[i].pair == r.rows[i - 1].pair && r.rows[i].kind == CMP_METRIC &&
		    r.rows[i - 1].kind == CMP_METRIC && isfinite(r.rows[i].change_pct))
			CHECK(fabs(r.rows[i - 1].change_pct) >= fabs(r.rows[i].change_pct));
	cmp_result_free(&r);

	/* --metric and the threshold */
	struct cmp_options o;
	cmp_options_default(&o);
	o.metric = "hackbench.time_s";
	o.threshold_pct = 50;
	CHECK(compare_sets(&a, &b, &o, &r, &err) == 0);
	CHECK(r.nrows == 2);
	for (size_t i = 0; i < r.nrows; i++)
		CHECK(r.rows[i].v.kind == VERDICT_NO_CHANGE);
	cmp_result_free(&r);
	sample_set_free(&a);
	sample_set_free(&b);
	strbuf_release(&err);
}

TEST(compare_aa_noise)
{
	struct sample_set a, b;
	struct cmp_result r;
	struct strbuf err = STRBUF_INIT;
	load("session=1", &a);
	load("session=2", &b);
	CHECK(compare_sets(&a, &b, NULL, &r, &err) == 0);
	CHECK(r.diff_mask == 0);
	CHECK(r.npairs == 3);
	const struct cmp_row *hb2 = row_of(&r, &a, "time_s", HB2);
	CHECK(hb2 && hb2->has_noise);
	if (hb2) {
		CHECK(hb2->nf.half_width_pct > 0 && hb2->nf.half_width_pct < 3);
		CHECK(hb2->v.kind != VERDICT_WORSE && hb2->v.kind != VERDICT_BETTER);
	}
	cmp_result_free(&r);
	sample_set_free(&a);
	sample_set_free(&b);
	strbuf_release(&err);
}

TEST(compare_mixed_machines)
{
	struct sample_set a, b;
	struct cmp_result r;
	struct strbuf err = STRBUF_INIT;
	/* A holds two machines for hackbench groups=2: warned, separate rows */
	load("session=1,session=4", &a);
	load("session=3", &b);
	CHECK(compare_sets(&a, &b, NULL, &r, &err) == 0);
	int warned = 0, only = 0;
	for (size_t i = 0; i < r.warnings.nr; i++) {
		if (strstr(r.warnings.v[i], "side A mixes 2 machines (box, lab2)") &&
		    strstr(r.warnings.v[i], "machine="))
			warned = 1;
		if (strstr(r.warnings.v[i], "only in A"))
			only = 1 + !!strstr(r.warnings.v[i], " machine=lab2");
	}
	CHECK(warned);
	/* lab2 has no partner on B's machine, and the warning says which
	 * of A's series it is (A holds two machines) */
	CHECK(only == 2);
	cmp_result_free(&r);
	sample_set_free(&b);

	/* an empty side: no "only in" list of the other's series (the caller
	 * says the selector matches nothing) */
	load("session=99", &b);
	CHECK(b.nseries == 0);
	CHECK(compare_sets(&a, &b, NULL, &r, &err) == 0);
	CHECK(r.npairs == 0);
	only = 0;
	for (size_t i = 0; i < r.warnings.nr; i++)
		only += strstr(r.warnings.v[i], "only in") != NULL;
	CHECK(only == 0);
	CHECK(!(r.diff_mask & (1u << DIM_MACHINE)));
	cmp_result_free(&r);
	sample_set_free(&a);
	sample_set_free(&b);

	/* identities that do not meet: nothing compared, everything reported */
	load("session=3,session=4", &a);
	load("session=2", &b);
	CHECK(compare_sets(&a, &b, NULL, &r, &err) == 0);
	CHECK(r.npairs == 0 && r.nrows == 0);
	only = 0;
	for (size_t i = 0; i < r.warnings.nr; i++)
		only += strstr(r.warnings.v[i], "only in") != NULL;
	CHECK(only == 7);   /* 4 series of A, 3 of B */
	cmp_result_free(&r);
	sample_set_free(&a);
	sample_set_free(&b);

	/* two preempt modes on side A against a third on B: one row each,
	 * labelled, and a warning naming the key */
	load("session=1,session=3,workload=hackbench", &a);
	load("tag=vol", &b);
	CHECK(compare_sets(&a, &b, NULL, &r, &err) == 0);
	CHECK(r.diff_mask & (1u << DIM_PREEMPT));
	int several = 0;
	for (size_t i = 0; i < r.warnings.nr; i++)
		if (strstr(r.warnings.v[i], "side A holds 2 values of preempt (full, none)") &&
		    strstr(r.warnings.v[i], "preempt=VALUE"))
			several = 1;
	CHECK(several);
	CHECK(r.nrows == 2);
	int none = 0, full = 0;
	for (size_t i = 0; i < r.nrows; i++) {
		const char *l = r.pairs[r.rows[i].pair].label;
		none += strstr(l, "preempt=none vs voluntary") != NULL;
		full += strstr(l, "preempt=full vs voluntary") != NULL;
		if (strstr(l, "full"))
			CHECK(r.rows[i].v.kind == VERDICT_BETTER);
		else
			CHECK(r.rows[i].v.kind == VERDICT_WORSE);
	}
	CHECK(none == 1 && full == 1);
	cmp_result_free(&r);
	sample_set_free(&a);
	sample_set_free(&b);
	strbuf_release(&err);
}

TEST(compare_hists)
{
	struct compare_job job;
	struct strbuf err = STRBUF_INIT;
	CHECK(compare_job_run(gdb, "tag=base,workload=cyclictest", "tag=cand", NULL, 1, &job,
			      &err) == 0);
	size_t nh = 0;
	for (size_t i = 0; i < job.r.nrows; i++) {
		const struct cmp_row *row = &job.r.rows[i];
		if (row->kind != CMP_HIST)
			continue;
		nh++;
		CHECK_STR(row->metric, "latency_us");
		/* 10 runs of 0..99 merged vs 5 runs of 10..109 */
		CHECK(row->a_runs == 10 && row->b_runs == 5);
		CHECK(row->a_samples == 1000 && row->b_samples == 500);
		if (row->pct == 50) {
			CHECK_NEAR(row->ha, 49, 1e-9);
			CHECK_NEAR(row->hb, 59, 1e-9);
		}
		if (row->pct == 99)
			CHECK_NEAR(row->ha, 98, 1e-9);
	}
	CHECK(nh == 3);
	CHECK(job.r.nrows > 3 && job.r.rows[job.r.nrows - 1].kind == CMP_HIST);
	compare_job_free(&job);

	CHECK(compare_job_run(gdb, "tag=base", "nope=1", NULL, 1, &job, &err) == -1);
	CHECK_CONTAINS(err.buf, "unknown key 'nope'");
	strbuf_release(&err);
}

TEST(centre_rule)
{
	CHECK(compare_centre_for("rps", "req/s", CMP_CENTRE_AUTO) == STATS_HMEAN);
	CHECK(compare_centre_for("bogo_ops_per_s", "ops/s", CMP_CENTRE_AUTO) == STATS_HMEAN);
	CHECK(compare_centre_for("max_jops", "jOPS", CMP_CENTRE_AUTO) == STATS_HMEAN);
	CHECK(compare_centre_for("time_s", "s", CMP_CENTRE_AUTO) == STATS_MEDIAN);
	CHECK(compare_centre_for("lat_p99_us", "us", CMP_CENTRE_AUTO) == STATS_MEDIAN);
	CHECK(compare_centre_for("rps", "req/s", CMP_CENTRE_MEDIAN) == STATS_MEDIAN);
	CHECK(compare_centre_for("time_s", "s", CMP_CENTRE_MEAN) == STATS_MEAN);
}

/* labels: a cmdline that differs only by preempt= is not named beside preempt */
TEST(label_mask_cmdline_by_preempt)
{
	CHECK(cmdline_same_but_preempt("console=ttyS0 panic=-1 preempt=none",
					   "console=ttyS0  panic=-1 preempt=voluntary"));
	CHECK(cmdline_same_but_preempt("preempt=full", ""));
	CHECK(cmdline_same_but_preempt("", ""));
	CHECK(!cmdline_same_but_preempt("console=ttyS0 preempt=none", "console=ttyS1 preempt=full"));
	CHECK(!cmdline_same_but_preempt("quiet preempt=none", "preempt=none"));
	CHECK(!cmdline_same_but_preempt("nopreempt=x", "preempt=x"));
	struct sel_series sa = { 0 }, sb = { 0 };
	char none[] = "none", full[] = "full", ca[] = "console=ttyS0 preempt=none",
	     cb[] = "console=ttyS0 preempt=full", cc[] = "console=ttyS0 quiet preempt=full";
	sa.dim[DIM_PREEMPT] = none;
	sa.dim[DIM_CMDLINE] = ca;
	sb.dim[DIM_PREEMPT] = full;
	sb.dim[DIM_CMDLINE] = cb;
	struct sample_set a = { .series = &sa, .nseries = 1 }, b = { .series = &sb, .nseries = 1 };
	const struct sample_set *ab[2] = { &a, &b };
	unsigned both = (1u << DIM_PREEMPT) | (1u << DIM_CMDLINE);
	CHECK(sel_label_mask(both, ab, 2) == (1u << DIM_PREEMPT));
	/* cmdline alone is named: nothing implies it */
	CHECK(sel_label_mask(1u << DIM_CMDLINE, ab, 2) == (1u << DIM_CMDLINE));
	/* a cmdline that differs by more than the mode is named */
	sb.dim[DIM_CMDLINE] = cc;
	CHECK(sel_label_mask(both, ab, 2) == both);
}

/* a session of one boot whose runs carry seeds (run.seed) and one metric,
 * lower better; clock "real" or "virtual" */
static int64_t seeded_session(const char *tag, const char *clock, const double *v,
			      const int64_t *seed, size_t n)
{
	int64_t sid = session(tag, "2026-12-07T00:00:00Z");
	int64_t m = machine(tag, tag);
	int64_t k = kernel("6.1.0-seeds", tag, 250);
	int64_t b = boot(sid, m, k, "full");
	char *sql = xstrfmt("UPDATE boot SET clock = '%s' WHERE id = %lld", clock, (long long)b);
	exec_sql(sql);
	free(sql);
	for (size_t i = 0; i < n; i++) {
		int64_t r = ins("INSERT INTO run (session_id, boot_id, seq, round, workload, params,"
				" knobs, rep, status, started_at, seed) VALUES (?, ?, ?, 0, 'pingpong',"
				" '{}', '{}', ?, 'ok', '2026-12-07T00:00:01Z', ?)",
				"i", sid, "i", b, "i", (int64_t)gseq++, "i", (int64_t)i, "i", seed[i]);
		metric(r, "pingpong", "req_p50_us", v[i], "us", "lower");
	}
	return sid;
}

/* the sides paired by seed (docs/statistics.md "Paired by seed"): rep r of
 * A against the rep of B with the same seed, whatever their order; every
 * seed agreeing is the sign test's; a virtual clock's runs under several
 * seeds are not a deterministic source */
TEST(compare_paired_by_seed)
{
	static const double a[] = { 10, 20, 30, 40, 50, 60 }, b[] = { 66, 11, 55, 22, 44, 33 };
	static const int64_t sa[] = { 11, 12, 13, 14, 15, 16 }, sb[] = { 16, 11, 15, 12, 14, 13 };
	if (sqlite3_open(gpath, &gh) != SQLITE_OK) { /* the generator's connection, again */
		CHECK(!"sqlite3_open");
		return;
	}
	seeded_session("seedA", "real", a, sa, 6);
	seeded_session("seedB", "real", b, sb, 6);
	struct sample_set x, y;
	struct cmp_result r;
	struct strbuf err = STRBUF_INIT;
	load("tag=seedA", &x);
	load("tag=seedB", &y);
	CHECK(x.ngroups == 1 && x.groups[0].seed && x.groups[0].seed[0] == 11);
	CHECK(compare_sets(&x, &y, NULL, &r, &err) == 0);
	const struct cmp_row *row = row_of(&r, &x, "req_p50_us", NULL);
	CHECK(row && row->v.paired == 6 && row->v.sign_rule && row->v.kind == VERDICT_WORSE);
	if (row) {
		char *t = compare_verdict_text(row);
		CHECK_STR(t, "worse (every seed agrees: 6 pairs)");
		free(t);
	}
	cmp_result_free(&r);
	sample_set_free(&x);
	sample_set_free(&y);

	/* three seeds agreeing on a virtual clock: inconclusive, need 6 */
	static const double c[] = { 10, 20, 30 }, d[] = { 12, 24, 36 };
	static const int64_t s3[] = { 21, 22, 23 };
	seeded_session("seedC", "virtual", c, s3, 3);
	seeded_session("seedD", "virtual", d, s3, 3);
	load("tag=seedC", &x);
	load("tag=seedD", &y);
	CHECK(compare_sets(&x, &y, NULL, &r, &err) == 0);
	row = row_of(&r, &x, "req_p50_us", NULL);
	CHECK(row && row->v.sign_rule && row->v.kind == VERDICT_INCONCLUSIVE &&
	      row->v.reps_needed == 6 && !row->v.deterministic);
	if (row) {
		char *t = compare_verdict_text(row);
		CHECK_STR(t, "inconclusive: every seed agrees, need 6 seeds a side");
		free(t);
	}
	cmp_result_free(&r);
	sample_set_free(&x);
	sample_set_free(&y);

	/* identical values under three seeds on a virtual clock: exact data,
	   but its p is chance's (0.035), not a deterministic source's 0 */
	static const double e[] = { 10, 10, 10 }, f[] = { 12, 12, 12 };
	seeded_session("seedE", "virtual", e, s3, 3);
	seeded_session("seedF", "virtual", f, s3, 3);
	load("tag=seedE", &x);
	load("tag=seedF", &y);
	CHECK(compare_sets(&x, &y, NULL, &r, &err) == 0);
	row = row_of(&r, &x, "req_p50_us", NULL);
	CHECK(row && row->v.exact && !row->v.deterministic && row->v.p > 0.01 &&
	      row->v.kind == VERDICT_WORSE);
	cmp_result_free(&r);
	sample_set_free(&x);
	sample_set_free(&y);
	/* ... and one seed (no seeds) repeated: deterministic, as before */
	static const int64_t one[] = { 31, 31, 31 };
	seeded_session("seedG", "virtual", e, one, 3);
	seeded_session("seedH", "virtual", f, one, 3);
	sqlite3_close(gh);
	load("tag=seedG", &x);
	load("tag=seedH", &y);
	CHECK(compare_sets(&x, &y, NULL, &r, &err) == 0);
	row = row_of(&r, &x, "req_p50_us", NULL);
	CHECK(row && row->v.exact && row->v.deterministic && row->v.p == 0 && row->v.paired == 0);
	cmp_result_free(&r);
	sample_set_free(&x);
	sample_set_free(&y);
	strbuf_release(&err);
}

int main(void)
{
	generate();
	struct strbuf err = STRBUF_INIT;
	if (select_columns(gdb, &cols, &err)) {
		printf("# %s\n", err.buf);
		return 1;
	}
	strbuf_release(&err);
	RUN(parse_basic);
	RUN(parse_errors);
	RUN(load_groups);
	RUN(load_by_key);
	RUN(filter_since);
	RUN(json_label);
	RUN(compare_preempt);
	RUN(compare_aa_noise);
	RUN(compare_mixed_machines);
	RUN(compare_hists);
	RUN(centre_rule);
	RUN(label_mask_cmdline_by_preempt);
	RUN(compare_paired_by_seed);
	strvec_clear(&cols);
	db_close(gdb);
	unlink(gpath);
	char *wal = xstrfmt("%s-wal", gpath), *shm = xstrfmt("%s-shm", gpath);
	unlink(wal);
	unlink(shm);
	free(wal);
	free(shm);
	return tap_done();
}
