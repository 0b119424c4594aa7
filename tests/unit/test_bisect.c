/*
 * Unit tests of the decisions of `schedlab bisect` (analysis/bisect_rule.c): the
 * choice of the next commit (midpoints, skipped and unclear commits), the
 * per-look level, the gate on the ends, the classification of a commit
 * against both ends, and a simulation of whole bisections on synthetic
 * histories with log-normal noise: the first bad commit is found, a wrong
 * one is named at most at the stated rate (alpha / 2), and ends that do not
 * differ are refused. Exact data (issue 38): a deterministic source decides
 * a step with one value a side; noisy values on a coarse grid start no
 * more bisections than alpha / 2 allows. The rates are printed as TAP
 * comments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bisect_rule.h"
#include "tests/unit/tap.h"

TEST(next_midpoint)
{
	enum bisect_state st[9] = { BS_GOOD, 0, 0, 0, 0, 0, 0, 0, BS_BAD };
	size_t lo, hi;
	CHECK(bisect_next(st, 9, &lo, &hi) == 4);
	CHECK(lo == 0 && hi == 8);
	st[4] = BS_GOOD;
	CHECK(bisect_next(st, 9, &lo, &hi) == 6);
	CHECK(lo == 4 && hi == 8);
	st[6] = BS_BAD;
	CHECK(bisect_next(st, 9, &lo, &hi) == 5);
	st[5] = BS_SKIP;                      /* skipped: nothing left between */
	CHECK(bisect_next(st, 9, &lo, &hi) == -1);
	CHECK(lo == 4 && hi == 6);
	/* a skipped midpoint: the nearest untested instead (lower on a tie) */
	enum bisect_state s2[6] = { BS_GOOD, 0, BS_SKIP, 0, 0, BS_BAD };
	CHECK(bisect_next(s2, 6, &lo, &hi) == 3);
	s2[3] = BS_UNCLEAR;
	CHECK(bisect_next(s2, 6, &lo, &hi) == 1); /* 1 and 4 are as near: the lower */
	/* adjacent ends: nothing to measure, the bad end is the first bad */
	enum bisect_state s3[2] = { BS_GOOD, BS_BAD };
	CHECK(bisect_next(s3, 2, &lo, &hi) == -1 && lo == 0 && hi == 1);
}

TEST(alpha_look)
{
	CHECK_NEAR(bisect_alpha_look(0.05, 5, 6, 18), 0.05 / 15, 1e-12);
	CHECK_NEAR(bisect_alpha_look(0.05, 5, 6, 6), 0.01, 1e-12);
	CHECK_NEAR(bisect_alpha_look(0.05, 4, 5, 12), 0.05 / 12, 1e-12); /* 3 looks */
	/* 6 a side can decide at 0.05 / 18 by complete separation, 5 cannot */
	CHECK(verdict_separation_p(6, 6) < bisect_alpha_look(0.05, 6, 6, 18));
	CHECK(verdict_separation_p(5, 5) > bisect_alpha_look(0.05, 6, 6, 18));
}

static void fill(double *v, size_t n, double centre, double spread)
{
	for (size_t i = 0; i < n; i++)
		v[i] = centre * (1 + spread * ((double)i / (n - 1) - 0.5));
}

TEST(ends_and_classes)
{
	struct verdict_options vo;
	verdict_options_default(&vo, VERDICT_LOWER_IS_BETTER);
	double g[6], b[6], m[6];
	fill(g, 6, 50, 0.02);
	fill(b, 6, 450, 0.02);
	struct bisect_cmp x, vg, vb;
	enum verdict_kind dir = VERDICT_NO_CHANGE;
	double al = bisect_alpha_look(0.05, 5, 6, 18);
	CHECK(bisect_judge_ends(g, 6, b, 6, &vo, al, &x, &dir) == 0);
	CHECK(dir == VERDICT_WORSE);
	CHECK(x.significant && x.v.change_pct > 700);
	/* the same ends: refused, with the verdict saying why */
	CHECK(bisect_judge_ends(g, 6, g, 6, &vo, al, &x, &dir) == 1);
	CHECK(!x.significant);
	/* a bad end that is better (higher is worse here: a speed-up) */
	CHECK(bisect_judge_ends(b, 6, g, 6, &vo, al, &x, &dir) == 0 && dir == VERDICT_BETTER);

	enum bisect_class cls;
	const char *why;
	fill(m, 6, 50.3, 0.02);
	CHECK(bisect_classify(g, 6, b, 6, m, 6, &vo, al, VERDICT_WORSE, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_GOOD);
	fill(m, 6, 452, 0.02);
	CHECK(bisect_classify(g, 6, b, 6, m, 6, &vo, al, VERDICT_WORSE, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_BAD);
	CHECK_CONTAINS(why, "towards bad");
	/* halfway: differs from both, never guessed */
	fill(m, 6, 250, 0.02);
	CHECK(bisect_classify(g, 6, b, 6, m, 6, &vo, al, VERDICT_WORSE, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_MORE);
	CHECK_CONTAINS(why, "both");
	/* too few values to tell anything: more */
	CHECK(bisect_classify(g, 6, b, 6, m, 1, &vo, al, VERDICT_WORSE, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_MORE);
	/* better than good is still good (the change is not there) */
	fill(m, 6, 30, 0.02);
	CHECK(bisect_classify(g, 6, b, 6, m, 6, &vo, al, VERDICT_WORSE, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_GOOD);
	/* a level that complete separation of 6 cannot reach: more */
	fill(m, 6, 452, 0.02);
	CHECK(bisect_classify(g, 6, b, 6, m, 6, &vo, 0.001, VERDICT_WORSE, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_MORE);
	CHECK(bisect_classify(g, 6, b, 6, m, 6, &vo, al, VERDICT_NO_CHANGE, &vg, &vb, &cls, &why) == -1);

	/* a threshold of 100% (symmetric on the ratio): bad at 2.5 x good; a
	 * commit at good's level is -60% from bad, beyond the -50% edge, so it
	 * is called good (with the old percent rule it could never be) */
	vo.threshold_pct = 100;
	fill(b, 6, 125, 0.02);
	CHECK(bisect_judge_ends(g, 6, b, 6, &vo, al, &x, &dir) == 0 && dir == VERDICT_WORSE);
	fill(m, 6, 50.3, 0.02);
	CHECK(bisect_classify(g, 6, b, 6, m, 6, &vo, al, VERDICT_WORSE, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_GOOD);
	vo.threshold_percent = 1;
	CHECK(bisect_classify(g, 6, b, 6, m, 6, &vo, al, VERDICT_WORSE, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_MORE);
}

/* ---- simulation ------------------------------------------------------- */

static unsigned long long rng = 88172645463325252ULL;
static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

struct simc {
	double v[64];
	size_t n;
	double boot;            /* the boot effect of the session being measured */
};

/* the noise of a measurement: a value is 100 * effect * exp(sd_boot * z1)
 * * exp(sd_run * z2), z1 drawn once per session (one boot), z2 per run.
 * session_runs 0: the unit is a run, a round one session of `reps` runs;
 * > 0: the unit is a session of that many runs (its median), a round
 * `reps` sessions (harness/orchestrate/bisect.c's --unit) */
struct sim_noise {
	double sd_boot, sd_run;
	int session_runs;
	double grid;            /* > 0: every value rounded to a multiple of it */
};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* `rounds` rounds of `reps` values of commit i of a history whose first
 * bad commit is fb (effect: factor) */
static void sim_measure(struct simc *c, size_t i, size_t fb, double factor,
			const struct sim_noise *z, int rounds, int reps)
{
	double base = 100 * (i >= fb ? factor : 1);
	while (c->n < (size_t)(rounds * reps) && c->n < 64) {
		if (z->session_runs == 0) {
			if (c->n % (size_t)reps == 0)
				c->boot = exp(z->sd_boot * gauss());
			c->v[c->n++] = base * c->boot * exp(z->sd_run * gauss());
			if (z->grid > 0)
				c->v[c->n - 1] = z->grid * round(c->v[c->n - 1] / z->grid);
		} else {
			double boot = exp(z->sd_boot * gauss()), r[32];
			int k = z->session_runs < 32 ? z->session_runs : 32;
			for (int j = 0; j < k; j++)
				r[j] = base * boot * exp(z->sd_run * gauss());
			qsort(r, (size_t)k, sizeof(double), cmp_dbl);
			c->v[c->n++] = k % 2 ? r[k / 2] : (r[k / 2 - 1] + r[k / 2]) / 2;
		}
	}
}

/* the levels of the looks: sim_exact 0 Bonferroni (bisect_alpha_look), 1
 * exact group-sequential (bisect_alpha_at); sim_rounds counts every round
 * of every commit measured */
static int sim_exact;
static long sim_rounds;

static double sim_level(double alpha, int maxsteps, int reps, int maxreps, int look)
{
	int looks = (maxreps + reps - 1) / reps;
	if (!sim_exact)
		return bisect_alpha_look(alpha, maxsteps, reps, maxreps);
	/* the exact levels, computed once per design (as bisect.c does) */
	static double c_alpha, c_level[16];
	static int c_steps, c_looks;
	if (looks > 15)
		return bisect_alpha_at(1, alpha, maxsteps, looks, look);
	if (c_alpha != alpha || c_steps != maxsteps || c_looks != looks) {
		for (int k = 1; k <= looks; k++)
			c_level[k] = bisect_alpha_at(1, alpha, maxsteps, looks, k);
		c_alpha = alpha;
		c_steps = maxsteps;
		c_looks = looks;
	}
	return c_level[look];
}

/* one bisection as harness/orchestrate/bisect.c walks it; the first bad
 * commit found, -1 refused, -2 ambiguous */
static int sim_bisect_z(size_t n, size_t fb, double factor, const struct sim_noise *z, int reps,
			int maxreps, int maxsteps, double alpha, const struct verdict_options *vo,
			int *measured)
{
	struct simc *c = calloc(n, sizeof(*c));
	enum bisect_state *st = calloc(n, sizeof(*st));
	int looks = (maxreps + reps - 1) / reps;
	struct bisect_cmp x, vg, vb;
	enum verdict_kind dir = VERDICT_NO_CHANGE;
	int r = -1, ok = 1;
	for (int look = 1; look <= looks; look++) {
		double al = sim_level(alpha, maxsteps, reps, maxreps, look);
		sim_measure(&c[0], 0, fb, factor, z, look, reps);
		sim_measure(&c[n - 1], n - 1, fb, factor, z, look, reps);
		sim_rounds += 2;
		ok = bisect_judge_ends(c[0].v, look * reps, c[n - 1].v, look * reps, vo, al, &x, &dir);
		if (ok == 0)
			break;
	}
	if (ok)
		goto out;
	st[0] = BS_GOOD;
	st[n - 1] = BS_BAD;
	size_t lo, hi;
	int m, steps = 0;
	while ((m = bisect_next(st, n, &lo, &hi)) >= 0 && steps < maxsteps) {
		steps++;
		enum bisect_class cls = BC_MORE;
		const char *why;
		for (int look = 1; look <= looks && cls == BC_MORE; look++) {
			double al = sim_level(alpha, maxsteps, reps, maxreps, look);
			sim_rounds += 1 + (c[0].n < (size_t)(look * reps)) + (c[n - 1].n < (size_t)(look * reps));
			sim_measure(&c[m], (size_t)m, fb, factor, z, look, reps);
			sim_measure(&c[0], 0, fb, factor, z, look, reps);
			sim_measure(&c[n - 1], n - 1, fb, factor, z, look, reps);
			size_t k = (size_t)(look * reps);
			bisect_classify(c[0].v, k, c[n - 1].v, k, c[m].v, k, vo, al, dir, &vg, &vb,
					&cls, &why);
		}
		st[m] = cls == BC_GOOD ? BS_GOOD : cls == BC_BAD ? BS_BAD : BS_UNCLEAR;
	}
	bisect_next(st, n, &lo, &hi);
	r = hi == lo + 1 ? (int)hi : -2;
	*measured += steps;
out:
	free(c);
	free(st);
	return r;
}

/* runs independent of each other (no boot effect) */
static int sim_bisect(size_t n, size_t fb, double factor, double sd, int reps, int maxreps,
		      int maxsteps, double alpha, const struct verdict_options *vo, int *measured)
{
	struct sim_noise z = { 0, sd, 0, 0 };
	return sim_bisect_z(n, fb, factor, &z, reps, maxreps, maxsteps, alpha, vo, measured);
}

TEST(simulated_bisections)
{
	struct verdict_options vo;
	verdict_options_default(&vo, VERDICT_LOWER_IS_BETTER);
	vo.resamples = 1000;   /* the rule, not the CI's last digit, is tested */
	const size_t n = 8;    /* good, 6 between, bad */
	const int reps = 6, maxreps = 18, maxsteps = 6;
	const double alpha = 0.05;
	int sims = 150, found = 0, wrong = 0, ambiguous = 0, refused = 0, measured = 0;
	/* a clear regression (+30%) under 8% noise, at every position */
	for (int s = 0; s < sims; s++) {
		size_t fb = 1 + (size_t)s % (n - 1);
		int r = sim_bisect(n, fb, 1.30, 0.08, reps, maxreps, maxsteps, alpha, &vo, &measured);
		if (r == (int)fb)
			found++;
		else if (r >= 0)
			wrong++;
		else if (r == -2)
			ambiguous++;
		else
			refused++;
	}
	printf("# A/B (+30%%, noise sd 8%%, %zu commits): %d of %d found, %d wrong, %d "
	       "ambiguous, %d refused; %.2f commits measured between the ends on average\n",
	       n - 1, found, sims, wrong, ambiguous, refused, (double)measured / sims);
	CHECK(found >= sims * 9 / 10);
	CHECK(wrong <= sims * alpha);
	/* no change at all: the ends are refused (a false start is a wrong
	 * call: at most alpha / 2 of the time) */
	int starts = 0;
	for (int s = 0; s < sims; s++)
		starts += sim_bisect(n, n, 1.0, 0.08, reps, maxreps, maxsteps, alpha, &vo,
				     &measured) != -1;
	printf("# A/A (no change, noise sd 8%%): %d of %d bisections started\n", starts, sims);
	CHECK(starts <= sims * alpha);
	/* a level that ignores the number of looks calls more commits wrong
	 * under heavy noise and a small effect: the check above can fail */
	int wrong_naive = 0, wrong_ok = 0, m2 = 0;
	for (int s = 0; s < sims; s++) {
		size_t fb = 1 + (size_t)s % (n - 1);
		int r1 = sim_bisect(n, fb, 1.06, 0.10, 3, 9, maxsteps, 0.05 * 6 * 3 * 4, &vo, &m2);
		int r2 = sim_bisect(n, fb, 1.06, 0.10, 3, 9, maxsteps, alpha, &vo, &m2);
		wrong_naive += r1 >= 0 && r1 != (int)fb;
		wrong_ok += r2 >= 0 && r2 != (int)fb;
	}
	printf("# small effect (+6%%, noise 10%%, 3 a round): wrong first bad %d of %d with "
	       "the bisection's level, %d with 0.2 a look\n", wrong_ok, sims, wrong_naive);
	CHECK(wrong_ok <= sims * alpha);
	CHECK(wrong_naive > wrong_ok);
}

/* Runs of one boot share that boot's effect (seen under TCG: two boots of
 * one kernel +72% apart, p=0.00075 over 18 runs a side). With each run a
 * value, an unchanged pair of ends looks different most of the time; with
 * each session's median a value, the bisection's error bound holds again. */
TEST(boot_to_boot_variance)
{
	struct verdict_options vo;
	verdict_options_default(&vo, VERDICT_LOWER_IS_BETTER);
	vo.resamples = 1000;
	vo.threshold_pct = 10;
	const size_t n = 8;
	const int maxsteps = 6;
	const double alpha = 0.05;
	const int sims = 150;
	struct sim_noise per_run = { 0.25, 0.05, 0, 0 }, per_session = { 0.25, 0.05, 3, 0 };
	int starts_run = 0, starts_session = 0, m = 0;
	for (int s = 0; s < sims; s++) {
		starts_run += sim_bisect_z(n, n, 1.0, &per_run, 6, 18, maxsteps, alpha, &vo, &m) != -1;
		starts_session += sim_bisect_z(n, n, 1.0, &per_session, 6, 18, maxsteps, alpha, &vo,
					       &m) != -1;
	}
	printf("# A/A with a boot effect (sd 25%% a boot, 5%% a run): %d of %d bisections "
	       "started with a run as the unit, %d with a session's median\n", starts_run, sims,
	       starts_session);
	CHECK(starts_session <= sims * alpha);
	CHECK(starts_run > sims * alpha * 4);
	/* a regression (x3) at every position: found with sessions as the unit */
	int found = 0, wrong = 0, other = 0;
	m = 0;
	for (int s = 0; s < sims; s++) {
		size_t fb = 1 + (size_t)s % (n - 1);
		int r = sim_bisect_z(n, fb, 3.0, &per_session, 6, 18, maxsteps, alpha, &vo, &m);
		found += r == (int)fb;
		wrong += r >= 0 && r != (int)fb;
		other += r < 0;
	}
	printf("# A/B (x3) with that boot effect, a session's median the unit: %d of %d found, "
	       "%d wrong, %d refused or ambiguous; %.2f commits measured on average\n", found,
	       sims, wrong, other, (double)m / sims);
	CHECK(found >= sims * 9 / 10);
	CHECK(wrong <= sims * alpha);
}

/*
 * The levels of a step's looks: Bonferroni (alpha / (steps x looks) at
 * each) against exact group-sequential levels (the step's alpha / steps
 * shared by its looks as analysis/sequential.h's exact Pocock-type
 * boundaries), on the same histories (the xorshift stream restarted for
 * each rule). Cases where a step needs several looks: a small effect under
 * heavy noise, 3 values a round, 9 at most; and A/A ends. Checked: no more
 * wrong first bad commits and false starts than alpha / 2 allows, for both;
 * the exact levels find at least as many (the rounds are printed: a
 * bisection that starts or goes on where Bonferroni's stopped measures
 * more).
 */
TEST(exact_looks)
{
	struct verdict_options vo;
	verdict_options_default(&vo, VERDICT_LOWER_IS_BETTER);
	vo.resamples = 500;
	const size_t n = 8;
	const int sims = 120, maxsteps = 6;
	const double alpha = 0.05;
	printf("# levels of the looks (3 looks a step, %d steps, alpha %.2f): Bonferroni %.4g "
	       "each; exact %.4g, %.4g, %.4g\n", maxsteps, alpha,
	       bisect_alpha_look(alpha, maxsteps, 3, 9), bisect_alpha_at(1, alpha, maxsteps, 3, 1),
	       bisect_alpha_at(1, alpha, maxsteps, 3, 2), bisect_alpha_at(1, alpha, maxsteps, 3, 3));
	CHECK(bisect_alpha_at(0, alpha, maxsteps, 3, 2) == bisect_alpha_look(alpha, maxsteps, 3, 9));
	for (int k = 1; k <= 3; k++)
		CHECK(bisect_alpha_at(1, alpha, maxsteps, 3, k) > bisect_alpha_look(alpha, maxsteps, 3, 9));
	struct { const char *name; double factor, sd; int reps, maxreps; } cs[] = {
		{ "+15%, noise 10%, 3 a round, at most 9", 1.15, 0.10, 3, 9 },
		{ "+10%, noise 8%, 4 a round, at most 12", 1.10, 0.08, 4, 12 },
		{ "A/A, noise 10%, 4 a round, at most 12", 1.00, 0.10, 4, 12 },
	};
	printf("# | case | rule | found | wrong | ambiguous or refused | rounds a bisection |\n");
	for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		int found[2], wrong[2], other[2];
		double rounds[2];
		for (int e = 0; e < 2; e++) {
			sim_exact = e;
			sim_rounds = 0;
			rng = 88172645463325252ULL + k;
			int m = 0;
			found[e] = wrong[e] = other[e] = 0;
			for (int s = 0; s < sims; s++) {
				size_t fb = cs[k].factor == 1 ? n : 1 + (size_t)s % (n - 1);
				int r = sim_bisect(n, fb, cs[k].factor, cs[k].sd, cs[k].reps,
						   cs[k].maxreps, maxsteps, alpha, &vo, &m);
				if (cs[k].factor == 1) {
					/* A/A: any start is a wrong call */
					wrong[e] += r != -1;
					other[e] += r == -1;
				} else {
					found[e] += r == (int)fb;
					wrong[e] += r >= 0 && r != (int)fb;
					other[e] += r < 0;
				}
			}
			rounds[e] = (double)sim_rounds / sims;
			printf("# | %s | %s | %d | %d | %d | %.2f |\n", cs[k].name,
			       e ? "exact" : "Bonferroni", found[e], wrong[e], other[e], rounds[e]);
			CHECK(wrong[e] <= sims * alpha / 2 + 2 * sqrt(sims * alpha / 2));
		}
		CHECK(found[1] >= found[0]);
	}
	sim_exact = 0;
}

/* ---- drift ------------------------------------------------------------ */

/* a value measured at round T of the bisection (T counts every round of
 * any commit): the commit's level x exp(drift T) x log-normal noise */
struct dsim {
	double drift, sd;
	int T;
};

static void dround(struct dsim *z, double level, int reps, double *v, size_t *n)
{
	for (int i = 0; i < reps && *n < 64; i++)
		v[(*n)++] = level * exp(z->drift * z->T + z->sd * gauss());
	z->T++;
}

struct dresult {
	int wrong, found, other;
	double rounds, guard_rounds;
	int drift_seen;
};

/*
 * One bisection as harness/orchestrate/bisect.c walks it, with a slow
 * trend (drift per round) and the drift guard on or off (bisect_rule.h):
 * after a call, a fresh round of the end the commit was called like; if it
 * no longer matches the end's first measurement, a fresh round of the
 * other end, the call made again against both fresh rounds, and from then
 * on fresh rounds of both ends beside every look of every midpoint.
 */
static int sim_drift(size_t n, size_t fb, double factor, struct dsim *z, int reps, int maxreps,
		     int maxsteps, double alpha, const struct verdict_options *vo, int guard,
		     struct dresult *res)
{
	double base[2][64], fresh[2][64], mv[64];
	size_t nb[2] = { 0, 0 }, nfr[2];
	enum bisect_state st[16] = { 0 };
	int looks = (maxreps + reps - 1) / reps;
	double al = bisect_alpha_look(alpha, maxsteps, reps, maxreps);
	double lvl[2] = { 100, 100 * factor };
	struct bisect_cmp x, vg, vb, dc;
	enum verdict_kind dir = VERDICT_NO_CHANGE;
	int ok = 1, drift_mode = 0, extra = 0;
	z->T = 0;
	for (int look = 1; look <= looks && ok; look++) {
		dround(z, lvl[0], reps, base[0], &nb[0]);
		dround(z, lvl[1], reps, base[1], &nb[1]);
		ok = bisect_judge_ends(base[0], nb[0], base[1], nb[1], vo, al, &x, &dir);
	}
	if (ok) {
		res->other++;
		res->rounds += z->T;
		return -1;
	}
	st[0] = BS_GOOD;
	st[n - 1] = BS_BAD;
	size_t lo, hi;
	int m, steps = 0;
	while ((m = bisect_next(st, n, &lo, &hi)) >= 0 && steps < maxsteps) {
		steps++;
		double level = (size_t)m >= fb ? lvl[1] : lvl[0];
		size_t nm = 0;
		nfr[0] = nfr[1] = 0;
		enum bisect_class cls = BC_MORE;
		const char *why;
		for (int look = 1; look <= looks && cls == BC_MORE; look++) {
			dround(z, level, reps, mv, &nm);
			if (!drift_mode) {
				while (nb[0] < (size_t)(look * reps))
					dround(z, lvl[0], reps, base[0], &nb[0]);
				while (nb[1] < (size_t)(look * reps))
					dround(z, lvl[1], reps, base[1], &nb[1]);
				bisect_classify(base[0], (size_t)(look * reps), base[1],
						(size_t)(look * reps), mv, nm, vo, al, dir, &vg, &vb,
						&cls, &why);
			} else {
				dround(z, lvl[0], reps, fresh[0], &nfr[0]);
				dround(z, lvl[1], reps, fresh[1], &nfr[1]);
				extra += 2;
				bisect_classify(fresh[0], nfr[0], fresh[1], nfr[1], mv, nm, vo, al, dir,
						&vg, &vb, &cls, &why);
			}
		}
		if (guard && !drift_mode && cls != BC_MORE) {
			int e = cls == BC_GOOD ? 0 : 1;
			dround(z, lvl[e], reps, fresh[e], &nfr[e]);
			extra++;
			if (bisect_drifted(base[e], nb[e], fresh[e], nfr[e], vo, &dc) == 1) {
				drift_mode = 1;
				res->drift_seen++;
				dround(z, lvl[1 - e], reps, fresh[1 - e], &nfr[1 - e]);
				extra++;
				bisect_classify(fresh[0], nfr[0], fresh[1], nfr[1], mv, nm, vo, al, dir,
						&vg, &vb, &cls, &why);
			}
		}
		st[m] = cls == BC_GOOD ? BS_GOOD : cls == BC_BAD ? BS_BAD : BS_UNCLEAR;
	}
	bisect_next(st, n, &lo, &hi);
	int r = hi == lo + 1 ? (int)hi : -2;
	res->rounds += z->T;
	res->guard_rounds += extra;
	if (r == (int)fb)
		res->found++;
	else if (r >= 0)
		res->wrong++;
	else
		res->other++;
	return r;
}

/*
 * A slow trend across the bisection (the machine gets slower, or faster,
 * by a fixed share every round measured) makes a midpoint measured late
 * look like the other end: with the guard off, wrong first bad commits
 * well beyond alpha / 2; with it on, back within it, at the cost of the
 * rounds printed. Without drift the guard costs one round a step and
 * changes nothing else. Deterministic (a fixed xorshift seed).
 */
TEST(drift_guard)
{
	struct verdict_options vo;
	verdict_options_default(&vo, VERDICT_LOWER_IS_BETTER);
	vo.resamples = 500;
	vo.threshold_pct = 10;
	const size_t n = 8;
	const int reps = 6, maxreps = 18, maxsteps = 6, sims = 140;
	const double alpha = 0.05, factor = 1.25, drifts[] = { 0, 0.02, -0.02, 0.04 };
	rng = 88172645463325252ULL;
	printf("# drift: %zu commits, first bad at every position, +%.0f%% effect, noise sd "
	       "5%%, threshold %.0f%%, %d a round, %d bisections a row\n", n - 1,
	       100 * (factor - 1), vo.threshold_pct, reps, sims);
	printf("# | drift a round | guard | found | wrong | unclear or refused | rounds "
	       "(guard's) | drift seen |\n");
	int wrong[4][2];
	for (size_t d = 0; d < sizeof(drifts) / sizeof(drifts[0]); d++)
		for (int g = 0; g < 2; g++) {
			struct dresult r = { 0 };
			struct dsim z = { drifts[d], 0.05, 0 };
			for (int s = 0; s < sims; s++) {
				size_t fb = 1 + (size_t)s % (n - 1);
				sim_drift(n, fb, factor, &z, reps, maxreps, maxsteps, alpha, &vo, g, &r);
			}
			wrong[d][g] = r.wrong;
			printf("# | %+.0f%% | %s | %d | %d | %d | %.2f (%.2f) | %d |\n",
			       100 * drifts[d], g ? "on" : "off", r.found, r.wrong, r.other,
			       r.rounds / sims, r.guard_rounds / sims, r.drift_seen);
		}
	/* without drift: no wrong call either way */
	CHECK(wrong[0][0] <= sims * alpha / 2 && wrong[0][1] <= sims * alpha / 2);
	/* with drift: the guard keeps the wrong-commit rate within alpha / 2 (plus
	 * 2 Monte-Carlo standard errors), and without it the rate is beyond: the
	 * check can fail */
	double mc = 2 * sqrt(alpha / 2 * (1 - alpha / 2) / sims) * sims;
	for (size_t d = 1; d < 4; d++)
		CHECK(wrong[d][1] <= sims * alpha / 2 + mc);
	CHECK(wrong[3][0] > sims * alpha / 2 + mc);
}

/*
 * Exact data (issue 38): a deterministic source decides a step with one
 * value a side; identical repeats of unknown source decide at the first
 * round of the default 6; noisy values on a coarse grid (identical by
 * chance) start no more bisections than alpha / 2 allows.
 */
TEST(exact_data)
{
	struct verdict_options vo;
	verdict_options_default(&vo, VERDICT_LOWER_IS_BETTER);
	vo.resamples = 500;
	vo.source = VERDICT_SOURCE_DETERMINISTIC;
	const double g[] = { 7 }, b[] = { 11 }, mg[] = { 7 }, mb[] = { 11 }, mid[] = { 9 };
	double al = bisect_alpha_at(1, 0.05, 6, 3, 1);
	struct bisect_cmp x, vg, vb;
	enum verdict_kind dir = VERDICT_NO_CHANGE;
	enum bisect_class cls;
	const char *why;
	CHECK(bisect_judge_ends(g, 1, b, 1, &vo, al, &x, &dir) == 0 && dir == VERDICT_WORSE);
	CHECK(x.significant && x.v.exact && x.v.p == 0);
	CHECK(bisect_classify(g, 1, b, 1, mb, 1, &vo, al, dir, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_BAD);
	CHECK(bisect_classify(g, 1, b, 1, mg, 1, &vo, al, dir, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_GOOD);
	CHECK(bisect_classify(g, 1, b, 1, mid, 1, &vo, al, dir, &vg, &vb, &cls, &why) == 0);
	CHECK(cls == BC_MORE);
	/* the drift check reads exact data too: 7 against 7 has not drifted */
	CHECK(bisect_drifted(g, 1, mg, 1, &vo, &x) == 0);
	CHECK(bisect_drifted(g, 1, mid, 1, &vo, &x) == 1);
	/* unknown source: one value a side is never a decision */
	vo.source = VERDICT_SOURCE_UNKNOWN;
	CHECK(bisect_judge_ends(g, 1, b, 1, &vo, al, &x, &dir) == 1 && !x.v.exact);

	/* whole bisections of exact histories (+30%, no noise), first bad at
	 * every position: a deterministic source, one value a round, decides
	 * every step at its first round */
	const size_t n = 8;
	struct sim_noise none = { 0, 0, 0, 0 };
	int found = 0, m = 0, sims = 7;
	long rounds0 = sim_rounds;
	vo.source = VERDICT_SOURCE_DETERMINISTIC;
	sim_exact = 1;
	for (int s = 0; s < sims; s++) {
		size_t fb = 1 + (size_t)s % (n - 1);
		found += sim_bisect_z(n, fb, 1.30, &none, 1, 3, 6, 0.05, &vo, &m) == (int)fb;
	}
	long rounds = sim_rounds - rounds0;
	printf("# exact +30%%, deterministic, 1 value a round: %d of %d found, %ld rounds "
	       "for %d steps (one a step and two for the ends)\n", found, sims, rounds, m);
	CHECK(found == sims && rounds == 2 * sims + m);
	/* unknown source, the default round of 6: p_exact 0.0005 passes the
	 * first look's level */
	vo.source = VERDICT_SOURCE_UNKNOWN;
	found = m = 0;
	rounds0 = sim_rounds;
	for (int s = 0; s < sims; s++) {
		size_t fb = 1 + (size_t)s % (n - 1);
		found += sim_bisect_z(n, fb, 1.30, &none, 6, 18, 6, 0.05, &vo, &m) == (int)fb;
	}
	rounds = sim_rounds - rounds0;
	printf("# exact +30%%, unknown source, 6 values a round: %d of %d found, %ld rounds for "
	       "%d steps\n", found, sims, rounds, m);
	CHECK(found == sims && rounds == 2 * sims + m);
	/* A/A on a coarse grid: values of 100 with noise sd 0.1% rounded to a
	 * grid on which 100 lies halfway (99.8 and 100.2 about equally likely,
	 * more than the 0.2% threshold apart: identical repeats by chance), 3 a
	 * round, 9 at most */
	struct sim_noise grid = { 0, 0.001, 0, 100 / 250.5 };
	int starts = 0, sims2 = 300;
	vo.threshold_pct = 0.2;
	for (int s = 0; s < sims2; s++)
		starts += sim_bisect_z(n, n, 1.0, &grid, 3, 9, 6, 0.05, &vo, &m) != -1;
	printf("# A/A on a coarse grid, 3 a round: %d of %d bisections started\n", starts,
	       sims2);
	CHECK(starts <= sims2 * 0.05 / 2 + 2 * sqrt(sims2 * 0.025 * 0.975));
	sim_exact = 0;
}

int main(void)
{
	RUN(next_midpoint);
	RUN(alpha_look);
	RUN(ends_and_classes);
	RUN(simulated_bisections);
	RUN(boot_to_boot_variance);
	RUN(exact_looks);
	RUN(drift_guard);
	RUN(exact_data);
	return tap_done();
}
