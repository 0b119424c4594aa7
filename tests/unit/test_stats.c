/*
 * Unit tests of the statistics library (analysis/stats.c), change-point
 * detection (analysis/changepoint.c) and the A/B verdict (analysis/verdict.c).
 *
 * Reference values were computed independently of this code: exact
 * Mann-Whitney p-values by enumerating every assignment of the pooled sample
 * (and by the classic recursion f(u;m,n) = f(u-n;m-1,n) + f(u;m,n-1) in exact
 * integers for larger sizes), t-test p-values by numerical integration of the
 * t density, all in a small python3 script; the R and scipy documentation
 * examples (Hollander & Wolfe's data in ?wilcox.test; the scipy
 * mannwhitneyu example; Wikipedia's Welch example 1) agree with them.
 * Synthetic series come from the library's own seeded PRNG, so every run
 * sees the same numbers.
 */
#include "analysis/changepoint.h"
#include "analysis/stats.h"
#include "analysis/verdict.h"
#include "tests/unit/tap.h"

#include <errno.h>
#include <stdint.h>

#define N_(a) (sizeof(a) / sizeof((a)[0]))

/* normal deviates by Box-Muller from the library's PRNG */
static double gauss(struct stats_rng *r)
{
	double u1 = 1.0 - stats_rng_uniform(r), u2 = stats_rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static void fill_normal(struct stats_rng *r, double *x, size_t n, double mu,
			double sd)
{
	for (size_t i = 0; i < n; i++)
		x[i] = mu + sd * gauss(r);
}

/* ---- descriptive ------------------------------------------------------ */

TEST(descriptive)
{
	const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	CHECK_NEAR(stats_mean(x, N_(x)), 5.0, 1e-12);
	CHECK_NEAR(stats_var(x, N_(x)), 32.0 / 7.0, 1e-12);
	CHECK_NEAR(stats_sd(x, N_(x)), sqrt(32.0 / 7.0), 1e-12);
	CHECK_NEAR(stats_cv(x, N_(x)), sqrt(32.0 / 7.0) / 5.0, 1e-12);
	CHECK_NEAR(stats_min(x, N_(x)), 2, 0);
	CHECK_NEAR(stats_max(x, N_(x)), 9, 0);
	const double r[] = { 1, 2, 4 };
	CHECK_NEAR(stats_hmean(r, 3), 3.0 / 1.75, 1e-12);
	const double bad[] = { 1, 0, 4 };
	CHECK(isnan(stats_hmean(bad, 3)));
	CHECK(isnan(stats_mean(x, 0)));
	CHECK(isnan(stats_sd(x, 1)));
	const double z[] = { -1, 1 };
	CHECK(isnan(stats_cv(z, 2)));
}

TEST(percentiles)
{
	/* type 7 (numpy.percentile default): h = (n-1) p / 100 */
	const double x[] = { 50, 15, 40, 20, 35 };
	double v;
	CHECK(stats_percentile(x, 5, 40, &v) == 0);
	CHECK_NEAR(v, 29.0, 1e-12);
	CHECK(stats_percentile(x, 5, 0, &v) == 0);
	CHECK_NEAR(v, 15.0, 0);
	CHECK(stats_percentile(x, 5, 100, &v) == 0);
	CHECK_NEAR(v, 50.0, 0);
	CHECK(stats_percentile(x, 5, 90, &v) == 0);
	CHECK_NEAR(v, 46.0, 1e-12);
	CHECK(stats_median(x, 5, &v) == 0);
	CHECK_NEAR(v, 35.0, 0);
	const double e[] = { 4, 1, 3, 2 };
	CHECK(stats_median(e, 4, &v) == 0);
	CHECK_NEAR(v, 2.5, 1e-12);
	CHECK(stats_percentile(x, 5, 101, &v) == -1);
	CHECK(stats_percentile(x, 0, 50, &v) == -1);

	struct stats_summary s;
	CHECK(stats_summarize(x, 5, &s) == 0);
	CHECK(s.n == 5);
	CHECK_NEAR(s.median, 35, 0);
	CHECK_NEAR(s.p25, 20, 0);
	CHECK_NEAR(s.p75, 40, 0);
	CHECK_NEAR(s.mean, 32, 1e-12);
	CHECK_NEAR(s.min, 15, 0);
	CHECK_NEAR(s.max, 50, 0);
	CHECK_NEAR(s.p99, 49.6, 1e-12);
}

/* ---- Mann-Whitney ----------------------------------------------------- */

TEST(mwu_exact)
{
	struct stats_mwu m;
	/* Hollander & Wolfe (R ?wilcox.test): W = 35; the example's one-sided
	 * p = 0.1272, two-sided by enumeration 0.254412254412 */
	const double x[] = { 0.80, 0.83, 1.89, 1.04, 1.45,
			     1.38, 1.91, 1.64, 0.73, 1.46 };
	const double y[] = { 1.15, 0.88, 0.90, 0.74, 1.21 };
	CHECK(stats_mann_whitney(x, N_(x), y, N_(y), &m) == 0);
	CHECK(m.method == STATS_MWU_EXACT);
	CHECK(!m.ties);
	CHECK_NEAR(m.u_a, 35, 0);
	CHECK_NEAR(m.u_b, 15, 0);
	CHECK_NEAR(m.p, 0.2544122544122544, 1e-12);

	/* scipy's mannwhitneyu example: U1 = 17, p = 0.1111111 */
	const double males[] = { 19, 22, 16, 29, 24 };
	const double females[] = { 20, 11, 17, 12 };
	CHECK(stats_mann_whitney(males, 5, females, 4, &m) == 0);
	CHECK_NEAR(m.u_a, 17, 0);
	CHECK_NEAR(m.p, 0.1111111111111111, 1e-12);

	/* complete separation 3 vs 3: 2/20 */
	const double a3[] = { 1, 2, 3 }, b3[] = { 4, 5, 6 };
	CHECK(stats_mann_whitney(a3, 3, b3, 3, &m) == 0);
	CHECK_NEAR(m.u_a, 0, 0);
	CHECK_NEAR(m.p, 0.1, 1e-12);
	CHECK(stats_mann_whitney(b3, 3, a3, 3, &m) == 0);
	CHECK_NEAR(m.u_a, 9, 0);
	CHECK_NEAR(m.p, 0.1, 1e-12);

	/* the null distribution against the integer recursion */
	double p;
	CHECK(stats_mwu_exact_p(7, 9, 10, &p) == 0);
	CHECK_NEAR(p, 0.022902097902097903, 1e-12);
	CHECK(stats_mwu_exact_p(20, 25, 150, &p) == 0);
	CHECK_NEAR(p, 0.021974668358089276, 1e-10);
	CHECK(stats_mwu_exact_p(49, 49, 900, &p) == 0);
	CHECK_NEAR(p, 0.03261772705174852, 1e-10);
	CHECK(stats_mwu_exact_p(12, 1, 0, &p) == 0);
	CHECK_NEAR(p, 2.0 / 13.0, 1e-12);
	CHECK(stats_mwu_exact_p(1, 12, 12, &p) == 0);
	CHECK_NEAR(p, 2.0 / 13.0, 1e-12);
	CHECK(stats_mwu_exact_p(25, 20, 350, &p) == 0); /* mn - 150 */
	CHECK_NEAR(p, 0.021974668358089276, 1e-10);
	CHECK(stats_mwu_exact_p(201, 2, 1, &p) == -1);
	CHECK(stats_mwu_exact_p(3, 3, 4.5, &p) == 0);
	CHECK_NEAR(p, 1.0, 0);
}

TEST(mwu_ties_exact)
{
	struct stats_mwu m;
	/* ties in a small pooled sample: the exact permutation distribution of
	 * the mid-rank sum (24310 choices of 8 of 17 enumerated in Python:
	 * rank sum 43.5, p = 0.005183052241875772); the normal approximation
	 * gave 0.006373 */
	const double a[] = { 1, 2, 2, 3, 3, 3, 4, 5 };
	const double b[] = { 3, 4, 4, 5, 5, 6, 7, 7, 8 };
	CHECK(stats_mann_whitney(a, N_(a), b, N_(b), &m) == 0);
	CHECK(m.method == STATS_MWU_EXACT_TIES);
	CHECK(m.ties);
	CHECK_NEAR(m.u_a, 7.5, 0);
	CHECK_NEAR(m.p, 0.005183052241875772, 1e-12);
	/* 6 against 6 completely separated, ties inside one side (bucketed
	 * percentiles): 2/924, as without ties */
	const double c[] = { 135, 140, 120, 100, 150, 160 };
	const double d[] = { 4374, 4374, 4374, 4407, 4374, 4407 };
	CHECK(stats_mann_whitney(c, 6, d, 6, &m) == 0);
	CHECK(m.method == STATS_MWU_EXACT_TIES);
	CHECK_NEAR(m.p, 2.0 / 924.0, 1e-12);
	CHECK(stats_mann_whitney(d, 6, c, 6, &m) == 0);
	CHECK_NEAR(m.p, 2.0 / 924.0, 1e-12);
}

TEST(mwu_normal)
{
	struct stats_mwu m;
	/* ties in a pooled sample above STATS_MWU_TIES_EXACT_N: the normal
	 * approximation (the sample above repeated three times: U = 67.5,
	 * tie-corrected variance, continuity 0.5) */
	double a[24], b[27];
	const double a0[] = { 1, 2, 2, 3, 3, 3, 4, 5 };
	const double b0[] = { 3, 4, 4, 5, 5, 6, 7, 7, 8 };
	for (int r = 0; r < 3; r++) {
		memcpy(a + 8 * r, a0, sizeof(a0));
		memcpy(b + 9 * r, b0, sizeof(b0));
	}
	CHECK(stats_mann_whitney(a, N_(a), b, N_(b), &m) == 0);
	CHECK(m.method == STATS_MWU_NORMAL);
	CHECK(m.ties);
	CHECK_NEAR(m.u_a, 67.5, 0);
	{
		/* the formula, from the counts of each value: 1:3 2:6 3:12 4:9 5:9
		 * 6:3 7:6 8:3 */
		const double tc[] = { 3, 6, 12, 9, 9, 3, 6, 3 };
		double tt = 0, NN = 51, mn = 24.0 * 27.0;
		for (int i = 0; i < 8; i++)
			tt += tc[i] * tc[i] * tc[i] - tc[i];
		double var = mn / 12.0 * ((NN + 1) - tt / (NN * (NN - 1)));
		double z = (67.5 - mn / 2 + 0.5) / sqrt(var);
		CHECK_NEAR(m.z, z, 1e-12);
		CHECK_NEAR(m.p, erfc(fabs(z) / sqrt(2.0)), 1e-12);
	}

	/* all values tied: no evidence at all */
	const double c[] = { 5, 5, 5 };
	CHECK(stats_mann_whitney(c, 3, c, 3, &m) == 0);
	CHECK_NEAR(m.p, 1.0, 0);

	/* large samples use the approximation without ties too; the scipy
	 * example's asymptotic p (0.11134688653314) is the same formula */
	double big_a[60], big_b[60];
	for (int i = 0; i < 60; i++) {
		big_a[i] = 2 * i;
		big_b[i] = 2 * i + 1 + 20;
	}
	CHECK(stats_mann_whitney(big_a, 60, big_b, 60, &m) == 0);
	CHECK(m.method == STATS_MWU_NORMAL);
	CHECK(!m.ties);
	/* u_a = sum over a_i of #b below = sum_i max(0, i - 10) */
	CHECK_NEAR(m.u_a, 1225, 0);
	double var = 3600.0 / 12.0 * 121.0;
	double z = (1225.0 - 1800.0 + 0.5) / sqrt(var);
	CHECK_NEAR(m.z, z, 1e-12);
	CHECK_NEAR(m.p, erfc(fabs(z) / sqrt(2.0)), 1e-12);

	const double one[] = { 1 };
	CHECK(stats_mann_whitney(one, 0, one, 1, &m) == -1);
}

/* ---- t tests ---------------------------------------------------------- */

TEST(t_tests)
{
	struct stats_ttest t;
	/* by hand: means 3 and 7, variances 2.5 and 14, se^2 = 0.5 + 7/3 */
	const double a[] = { 1, 2, 3, 4, 5 };
	const double b[] = { 2, 4, 6, 8, 10, 12 };
	CHECK(stats_welch_t(a, 5, b, 6, &t) == 0);
	CHECK_NEAR(t.mean_a, 3, 1e-12);
	CHECK_NEAR(t.mean_b, 7, 1e-12);
	CHECK_NEAR(t.t, -4.0 / sqrt(0.5 + 7.0 / 3.0), 1e-12);
	CHECK_NEAR(t.t, -2.3763541031440183, 1e-12);
	CHECK_NEAR(t.df, 6.9722557297949335, 1e-10);
	CHECK_NEAR(t.p, 0.04928433820672915, 1e-8);

	CHECK(stats_student_t(a, 5, b, 6, &t) == 0);
	CHECK_NEAR(t.t, -2.215646837627989, 1e-12);
	CHECK_NEAR(t.df, 9, 0);
	CHECK_NEAR(t.p, 0.05394592050940736, 1e-8);

	/* Wikipedia's Welch example 1: t = -2.46, df = 24.99, p = 0.021 */
	const double w1[] = { 27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
			      21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4 };
	const double w2[] = { 27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
			      24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4 };
	CHECK(stats_welch_t(w1, 15, w2, 15, &t) == 0);
	CHECK_NEAR(t.t, -2.45535639828601, 1e-10);
	CHECK_NEAR(t.df, 24.98852929023142, 1e-9);
	CHECK_NEAR(t.p, 0.02137800146286588, 1e-8);

	/* zero variance */
	const double c1[] = { 1, 1 }, c2[] = { 2, 2 };
	CHECK(stats_welch_t(c1, 2, c2, 2, &t) == 0);
	CHECK(t.p == 0.0 && isinf(t.t) && t.t < 0);
	CHECK(stats_welch_t(c1, 2, c1, 2, &t) == 0);
	CHECK(t.p == 1.0 && t.t == 0.0);
	CHECK(stats_welch_t(c1, 1, c2, 2, &t) == -1);
	/* Student with a single point on one side */
	const double s1[] = { 10 }, s2[] = { 1, 2, 3 };
	CHECK(stats_student_t(s1, 1, s2, 3, &t) == 0);
	/* sp^2 = 2/2 = 1, se = sqrt(1 + 1/3) */
	CHECK_NEAR(t.t, 8.0 / sqrt(4.0 / 3.0), 1e-12);
	CHECK_NEAR(t.df, 2, 0);
}

/* ---- PRNG ------------------------------------------------------------- */

TEST(rng)
{
	/* splitmix64 + xoshiro256** reference streams (python reimplementation
	 * of the published algorithms) */
	struct stats_rng r;
	stats_rng_seed(&r, 1);
	CHECK(stats_rng_next(&r) == 0xb3f2af6d0fc710c5ULL);
	CHECK(stats_rng_next(&r) == 0x853b559647364ceaULL);
	CHECK(stats_rng_next(&r) == 0x92f89756082a4514ULL);
	stats_rng_seed(&r, 42);
	CHECK(stats_rng_next(&r) == 0x15780b2e0c2ec716ULL);
	CHECK(stats_rng_next(&r) == 0x6104d9866d113a7eULL);

	/* bounded draws stay in range and hit every value */
	int seen[7] = { 0 };
	int ok = 1;
	for (int i = 0; i < 7000; i++) {
		uint64_t v = stats_rng_below(&r, 7);
		if (v >= 7)
			ok = 0;
		else
			seen[v]++;
	}
	CHECK(ok);
	for (int i = 0; i < 7; i++)
		CHECK(seen[i] > 850 && seen[i] < 1150);
	double u = stats_rng_uniform(&r);
	CHECK(u >= 0.0 && u < 1.0);
}

/* ---- bootstrap -------------------------------------------------------- */

TEST(bootstrap_deterministic)
{
	struct stats_rng r;
	stats_rng_seed(&r, 7);
	double a[25], b[25];
	fill_normal(&r, a, 25, 100, 3);
	fill_normal(&r, b, 25, 105, 3);
	struct stats_boot_ci c1, c2, c3;
	CHECK(stats_bootstrap_ratio(a, 25, b, 25, STATS_MEDIAN, 2000, 0.95, 5,
				    &c1) == 0);
	CHECK(stats_bootstrap_ratio(a, 25, b, 25, STATS_MEDIAN, 2000, 0.95, 5,
				    &c2) == 0);
	CHECK(stats_bootstrap_ratio(a, 25, b, 25, STATS_MEDIAN, 2000, 0.95, 6,
				    &c3) == 0);
	CHECK(c1.lo == c2.lo && c1.hi == c2.hi && c1.estimate == c2.estimate);
	CHECK(c1.lo != c3.lo || c1.hi != c3.hi);
	CHECK(c1.valid == 2000 && c1.resamples == 2000 && c1.seed == 5);
	CHECK(c1.lo < c1.estimate && c1.estimate < c1.hi);
	CHECK(c1.lo < 1.05 && 1.05 < c1.hi);

	/* means: the interval brackets the observed ratio */
	CHECK(stats_bootstrap_ratio(a, 25, b, 25, STATS_MEAN, 0, 0.95, 5,
				    &c1) == 0);
	CHECK(c1.resamples == STATS_BOOT_RESAMPLES);
	CHECK_NEAR(c1.estimate, stats_mean(b, 25) / stats_mean(a, 25), 1e-12);
	CHECK(c1.lo < c1.estimate && c1.estimate < c1.hi);

	/* zero baseline: no finite ratio, the call fails */
	const double z[] = { 0, 0, 0 }, o[] = { 1, 2, 3 };
	CHECK(stats_bootstrap_ratio(z, 3, o, 3, STATS_MEDIAN, 100, 0.95, 1,
				    &c1) == -1);
	CHECK(stats_bootstrap_ratio(o, 3, o, 3, STATS_MEDIAN, 100, 1.5, 1,
				    &c1) == -1);
}

TEST(bootstrap_coverage)
{
	/* 200 synthetic data sets, true ratio of medians 1.10 (normal data,
	 * median = mean): a 95% interval must cover it most of the time
	 * (percentile intervals of medians from n = 30 undercover a little) */
	struct stats_rng r;
	stats_rng_seed(&r, 2024);
	int covered = 0, covered_mean = 0;
	for (int k = 0; k < 200; k++) {
		double a[30], b[30];
		fill_normal(&r, a, 30, 100, 5);
		fill_normal(&r, b, 30, 110, 5);
		struct stats_boot_ci c;
		if (stats_bootstrap_ratio(a, 30, b, 30, STATS_MEDIAN, 1000,
					  0.95, (uint64_t)k, &c) == 0 &&
		    c.lo <= 1.10 && 1.10 <= c.hi)
			covered++;
		if (stats_bootstrap_ratio(a, 30, b, 30, STATS_MEAN, 1000, 0.95,
					  (uint64_t)k, &c) == 0 &&
		    c.lo <= 1.10 && 1.10 <= c.hi)
			covered_mean++;
	}
	printf("# bootstrap coverage: median %d/200, mean %d/200\n", covered,
	       covered_mean);
	CHECK(covered >= 176);      /* >= 88% */
	CHECK(covered_mean >= 180); /* >= 90% */
}

/* the bootstrap as its definition says (stats.h): draw na indices, then
 * nb, from one stream; the centres of the values drawn (median: sorted,
 * type 7); the ratios sorted, type 7 percentiles. What the library's
 * faster ways (rank counts, kept draws, blocks of resamples) must give bit
 * for bit */
static int boot_reference(const double *a, size_t na, const double *b, size_t nb,
			  enum stats_centre c, unsigned resamples, double level, uint64_t seed,
			  double *lo, double *hi, unsigned *valid)
{
	struct stats_rng r;
	stats_rng_seed(&r, seed);
	double *ra = malloc(na * sizeof(double)), *rb = malloc(nb * sizeof(double));
	double *q = malloc(resamples * sizeof(double));
	*valid = 0;
	for (unsigned k = 0; k < resamples; k++) {
		double cen[2];
		for (int side = 0; side < 2; side++) {
			const double *x = side ? b : a;
			size_t n = side ? nb : na;
			double *buf = side ? rb : ra;
			if (n <= 1) {
				cen[side] = x[0];
				continue;
			}
			for (size_t i = 0; i < n; i++)
				buf[i] = x[stats_rng_below(&r, n)];
			if (c == STATS_MEDIAN) {
				stats_sort(buf, n);
				cen[side] = stats_percentile_sorted(buf, n, 50);
			} else {
				cen[side] = c == STATS_MEAN ? stats_mean(buf, n) : stats_hmean(buf, n);
			}
		}
		double v = cen[1] / cen[0];
		if (isfinite(v))
			q[(*valid)++] = v;
	}
	stats_sort(q, *valid);
	*lo = stats_percentile_sorted(q, *valid, 50.0 * (1.0 - level));
	*hi = stats_percentile_sorted(q, *valid, 50.0 * (1.0 + level));
	free(ra);
	free(rb);
	free(q);
	return 0;
}

TEST(bootstrap_kept_draws)
{
	/* sizes: one value a side, two, odd and even, unequal; values with
	 * ties (a grid) and a non-positive one (no harmonic mean of it) */
	static const size_t sizes[][2] = { { 30, 31 }, { 2, 2 }, { 1, 7 }, { 8, 1 },
					   { 5, 12 }, { 25, 25 } };
	static const enum stats_centre centres[] = { STATS_MEDIAN, STATS_MEAN, STATS_HMEAN };
	static const unsigned resamples[] = { 2000, 1003 };   /* a block of 4, and not */
	struct stats_rng r;
	stats_rng_seed(&r, 42);
	int same_ref = 1, same_kept = 1, ran = 0;
	for (size_t s = 0; s < N_(sizes); s++)
		for (int data = 0; data < 3; data++) {
			size_t na = sizes[s][0], nb = sizes[s][1];
			double a[32], b[32];
			fill_normal(&r, a, na, 100, 3);
			fill_normal(&r, b, nb, 103, 3);
			for (size_t i = 0; data == 1 && i < 32; i++) {
				a[i] = floor(a[i]);   /* ties */
				b[i] = floor(b[i]);
			}
			if (data == 2)
				a[0] = -1;            /* no harmonic mean */
			for (size_t k = 0; k < N_(resamples); k++) {
				struct stats_boot_draws *d =
					stats_boot_draws_new(na, nb, resamples[k], 9);
				CHECK(d != NULL);
				for (size_t ci = 0; ci < N_(centres); ci++) {
					struct stats_boot_ci x, y;
					double lo, hi;
					unsigned valid;
					int rx = stats_bootstrap_ratio(a, na, b, nb, centres[ci],
								       resamples[k], 0.95, 9, &x);
					int ry = stats_bootstrap_ratio_drawn(a, na, b, nb, centres[ci],
									     resamples[k], 0.95, 9,
									     d, &y);
					boot_reference(a, na, b, nb, centres[ci], resamples[k], 0.95,
						       9, &lo, &hi, &valid);
					ran++;
					if (rx != ry || x.valid != y.valid ||
					    (!rx && (memcmp(&x.lo, &y.lo, sizeof(double)) ||
						     memcmp(&x.hi, &y.hi, sizeof(double)) ||
						     memcmp(&x.estimate, &y.estimate, sizeof(double)))))
						same_kept = 0;
					if (x.valid != valid ||
					    (!rx && (memcmp(&x.lo, &lo, sizeof(double)) ||
						     memcmp(&x.hi, &hi, sizeof(double)))))
						same_ref = 0;
				}
				stats_boot_draws_free(d);
			}
		}
	/* the tails read off two heaps, or by selection: every level */
	static const double levels[] = { 0.5, 0.8, 0.9, 0.99, 0.999, 0.9999 };
	static const unsigned few[] = { 63, 64, 1003, 2000 };
	for (size_t l = 0; l < N_(levels); l++)
		for (size_t k = 0; k < N_(few); k++) {
			double a[30], b[31], lo, hi;
			unsigned valid;
			fill_normal(&r, a, 30, 100, 3);
			fill_normal(&r, b, 31, 100, 3);
			struct stats_boot_ci x;
			CHECK(stats_bootstrap_ratio(a, 30, b, 31, STATS_MEDIAN, few[k], levels[l], 3,
						    &x) == 0);
			boot_reference(a, 30, b, 31, STATS_MEDIAN, few[k], levels[l], 3, &lo, &hi,
				       &valid);
			ran++;
			if (memcmp(&x.lo, &lo, sizeof(double)) || memcmp(&x.hi, &hi, sizeof(double)))
				same_ref = 0;
		}
	printf("# %d intervals compared\n", ran);
	CHECK(same_ref);
	CHECK(same_kept);

	/* draws made for other sizes, resamples or seed are not used */
	double a[10], b[10];
	fill_normal(&r, a, 10, 100, 3);
	fill_normal(&r, b, 10, 100, 3);
	struct stats_boot_draws *other = stats_boot_draws_new(10, 9, 500, 1);
	struct stats_boot_ci x, y;
	CHECK(stats_bootstrap_ratio(a, 10, b, 10, STATS_MEDIAN, 500, 0.95, 1, &x) == 0);
	CHECK(stats_bootstrap_ratio_drawn(a, 10, b, 10, STATS_MEDIAN, 500, 0.95, 1, other,
					  &y) == 0);
	CHECK(x.lo == y.lo && x.hi == y.hi);
	CHECK(stats_bootstrap_ratio_drawn(a, 10, b, 9, STATS_MEDIAN, 500, 0.95, 2, other,
					  &y) == 0);
	CHECK(stats_bootstrap_ratio(a, 10, b, 9, STATS_MEDIAN, 500, 0.95, 2, &x) == 0);
	CHECK(x.lo == y.lo && x.hi == y.hi);
	stats_boot_draws_free(other);
	stats_boot_draws_free(NULL);
	/* what cannot be kept */
	errno = 0;
	CHECK(stats_boot_draws_new(0, 3, 100, 1) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(stats_boot_draws_new(70000, 3, 100, 1) == NULL && errno == ERANGE);
	errno = 0;
	CHECK(stats_boot_draws_new(3000, 3000, 10000, 1) == NULL && errno == ERANGE);
}

TEST(mwu_kept_null)
{
	struct stats_rng r;
	stats_rng_seed(&r, 5);
	int same = 1;
	static const size_t sizes[][2] = { { 30, 31 }, { 31, 30 }, { 1, 12 }, { 49, 49 }, { 7, 9 } };
	for (size_t s = 0; s < N_(sizes); s++) {
		size_t na = sizes[s][0], nb = sizes[s][1];
		struct stats_mwu_null *z = stats_mwu_null_new(na, nb);
		CHECK(z != NULL);
		for (int k = 0; k < 5; k++) {
			double a[49], b[49];
			fill_normal(&r, a, na, 100, 3);
			fill_normal(&r, b, nb, 100 + k, 3);
			struct stats_mwu x, y;
			CHECK(stats_mann_whitney(a, na, b, nb, &x) == 0);
			CHECK(stats_mann_whitney_kept(a, na, b, nb, z, &y) == 0);
			if (memcmp(&x.p, &y.p, sizeof(double)) || x.method != y.method ||
			    x.u_a != y.u_a)
				same = 0;
		}
		stats_mwu_null_free(z);
	}
	CHECK(same);
	/* ties, or sizes of the normal approximation: not the kept null's */
	const double t[] = { 1, 2, 2, 3 }, u[] = { 2, 3, 3, 4 };
	struct stats_mwu_null *z = stats_mwu_null_new(4, 4);
	struct stats_mwu x, y;
	CHECK(stats_mann_whitney(t, 4, u, 4, &x) == 0);
	CHECK(stats_mann_whitney_kept(t, 4, u, 4, z, &y) == 0);
	CHECK(x.p == y.p && y.method == STATS_MWU_EXACT_TIES);
	stats_mwu_null_free(z);
	errno = 0;
	CHECK(stats_mwu_null_new(50, 3) == NULL && errno == EINVAL);
	CHECK(stats_mwu_null_new(0, 3) == NULL);
	stats_mwu_null_free(NULL);
}

TEST(verdict_kept)
{
	/* a verdict with the kept draws and null distribution is the verdict
	 * without them, field by field */
	struct stats_rng r;
	stats_rng_seed(&r, 77);
	double a[30], b[31];
	fill_normal(&r, a, 30, 100, 2);
	fill_normal(&r, b, 31, 101.5, 2);
	struct verdict_options o;
	verdict_options_default(&o, VERDICT_HIGHER_IS_BETTER);
	o.centre = STATS_HMEAN;
	struct verdict v1, v2;
	CHECK(verdict_compare(a, 30, b, 31, &o, &v1) == 0);
	o.draws = stats_boot_draws_new(30, 31, o.resamples, o.seed);
	o.mwu_null = stats_mwu_null_new(30, 31);
	CHECK(o.draws && o.mwu_null);
	CHECK(verdict_compare(a, 30, b, 31, &o, &v2) == 0);
	CHECK(!memcmp(&v1, &v2, sizeof(v1)));
	stats_boot_draws_free((struct stats_boot_draws *)o.draws);
	stats_mwu_null_free((struct stats_mwu_null *)o.mwu_null);
}

/* ---- change points ---------------------------------------------------- */

TEST(cp_qhat_values)
{
	/* direct O(n^3) evaluation in python */
	const double x[] = { 1, 2, 4, 3, 10, 11, 9, 12 };
	const double ref[] = { 0.0, 7.2857142857142865, 13.666666666666666,
			       17.0, 27.0, 17.0, 9.0, 7.2857142857142865 };
	double q[8];
	cp_qhat(x, 8, q);
	for (int i = 0; i < 8; i++)
		CHECK_NEAR(q[i], ref[i], 1e-9);
	size_t *idx, k;
	CHECK(cp_edivisive(x, 8, 0.01, &idx, &k) == 0);
	CHECK(k == 1 && idx && idx[0] == 4);
	free(idx);
}

TEST(cp_single_step)
{
	struct stats_rng r;
	stats_rng_seed(&r, 11);
	double x[120];
	fill_normal(&r, x, 60, 100, 1);
	fill_normal(&r, x + 60, 60, 110, 1);
	struct change_point *cp;
	size_t n;
	CHECK(cp_detect(x, 120, NULL, &cp, &n) == 0);
	CHECK(n == 1);
	if (n == 1) {
		CHECK(cp[0].index == 60);
		CHECK(cp[0].n_before == 60 && cp[0].n_after == 60);
		CHECK_NEAR(cp[0].mean_before, stats_mean(x, 60), 1e-9);
		CHECK_NEAR(cp[0].mean_after, stats_mean(x + 60, 60), 1e-9);
		CHECK_NEAR(cp[0].rel_change, 0.10, 0.01);
		CHECK_NEAR(cp[0].magnitude, 0.10, 0.01);
		CHECK(cp[0].pvalue < 1e-10);
		CHECK_NEAR(cp[0].sd_before, 1, 0.3);
	}
	free(cp);
}

static int has_index(const struct change_point *cp, size_t n, size_t index)
{
	for (size_t i = 0; i < n; i++)
		if (cp[i].index == index)
			return 1;
	return 0;
}

TEST(cp_several_steps)
{
	/* steps at 80, 150, 230 in 300 points; windows of 50 see each one */
	struct stats_rng r;
	stats_rng_seed(&r, 12);
	double x[300];
	fill_normal(&r, x, 80, 100, 2);
	fill_normal(&r, x + 80, 70, 120, 2);
	fill_normal(&r, x + 150, 80, 90, 2);
	fill_normal(&r, x + 230, 70, 105, 2);
	struct cp_options o;
	cp_options_default(&o);
	CHECK(o.window == 50 && o.max_pvalue == 0.001 && o.min_magnitude == 0);
	struct change_point *cp;
	size_t n;
	/* defaults: the three steps, exactly placed; this noise also has two
	 * ~2% wiggles in the first 80 points that pass p < 0.001 (the t test
	 * is taken at the best split, see changepoint.h) */
	CHECK(cp_detect(x, 300, &o, &cp, &n) == 0);
	CHECK(has_index(cp, n, 80) && has_index(cp, n, 150) &&
	      has_index(cp, n, 230));
	for (size_t i = 0; i < n; i++) {
		CHECK(cp[i].pvalue < 0.001);
		if (i)
			CHECK(cp[i].index > cp[i - 1].index);
		if (cp[i].index != 80 && cp[i].index != 150 &&
		    cp[i].index != 230)
			CHECK(cp[i].magnitude < 0.05);
	}
	free(cp);

	/* a 5% magnitude floor leaves only the real steps */
	o.min_magnitude = 0.05;
	CHECK(cp_detect(x, 300, &o, &cp, &n) == 0);
	CHECK(n == 3);
	if (n == 3) {
		CHECK(cp[0].index == 80);
		CHECK(cp[1].index == 150);
		CHECK(cp[2].index == 230);
		CHECK(cp[0].n_before == 80);
		CHECK(cp[1].n_before == 70 && cp[1].n_after == 80);
		CHECK_NEAR(cp[1].rel_change, -0.25, 0.01);
		CHECK_NEAR(cp[1].magnitude, 1.0 / 3.0, 0.01);
		CHECK(cp[0].pvalue < 1e-10 && cp[2].pvalue < 1e-10);
	}
	free(cp);

	/* min_magnitude 17% also drops the 105/90 step (16.7%; the step at
	 * 80 is 120/100: 20%) and the neighbour's statistics are recomputed
	 * over the merged segment */
	o.min_magnitude = 0.17;
	CHECK(cp_detect(x, 300, &o, &cp, &n) == 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(cp[0].index == 80 && cp[1].index == 150);
		CHECK(cp[1].n_after == 150);
		CHECK_NEAR(cp[1].mean_after, stats_mean(x + 150, 150), 1e-9);
	}
	free(cp);

	/* windows of 30 find the same steps */
	o.min_magnitude = 0.05;
	o.window = 30;
	CHECK(cp_detect(x, 300, &o, &cp, &n) == 0);
	CHECK(n == 3 && has_index(cp, n, 80) && has_index(cp, n, 150) &&
	      has_index(cp, n, 230));
	free(cp);
}

TEST(cp_flat)
{
	/* pure noise (cv 3%): the documented false-positive rate of the
	 * defaults is about 10% of 200-point series; allow up to 20% */
	int series = 0, total = 0;
	for (uint64_t seed = 100; seed < 200; seed++) {
		struct stats_rng r;
		stats_rng_seed(&r, seed);
		double x[200];
		fill_normal(&r, x, 200, 100, 3);
		struct change_point *cp;
		size_t n;
		CHECK(cp_detect(x, 200, NULL, &cp, &n) == 0);
		series += n > 0;
		total += (int)n;
		free(cp);
	}
	printf("# flat series with a change point: %d/100 (%d in all)\n",
	       series, total);
	CHECK(series <= 20);
	/* the first of them, with a 5% magnitude floor: nothing */
	{
		struct stats_rng r;
		stats_rng_seed(&r, 100);
		double x[200];
		fill_normal(&r, x, 200, 100, 3);
		struct cp_options o;
		cp_options_default(&o);
		o.min_magnitude = 0.05;
		struct change_point *cp;
		size_t n;
		CHECK(cp_detect(x, 200, &o, &cp, &n) == 0);
		CHECK(n == 0);
		free(cp);
	}
	/* constant series and tiny inputs */
	double c[40];
	for (int i = 0; i < 40; i++)
		c[i] = 5;
	struct change_point *cp;
	size_t n;
	CHECK(cp_detect(c, 40, NULL, &cp, &n) == 0);
	CHECK(n == 0 && cp == NULL);
	CHECK(cp_detect(c, 2, NULL, &cp, &n) == 0);
	CHECK(n == 0);
	c[3] = NAN;
	CHECK(cp_detect(c, 40, NULL, &cp, &n) == -1);
	struct cp_options bad;
	cp_options_default(&bad);
	bad.max_pvalue = 0;
	c[3] = 5;
	CHECK(cp_detect(c, 40, &bad, &cp, &n) == -1);
}

/* ---- verdicts --------------------------------------------------------- */

TEST(verdict_better_worse)
{
	struct stats_rng r;
	stats_rng_seed(&r, 21);
	double a[10], b[10];
	fill_normal(&r, a, 10, 100, 1);
	fill_normal(&r, b, 10, 90, 1);
	struct verdict_options o;
	struct verdict v;
	verdict_options_default(&o, VERDICT_LOWER_IS_BETTER);
	CHECK(verdict_compare(a, 10, b, 10, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER);
	CHECK_STR(verdict_kind_name(v.kind), "better");
	CHECK(v.n_a == 10 && v.n_b == 10);
	CHECK_NEAR(v.change_pct, -10, 1.5);
	CHECK(v.ci_lo_pct < v.change_pct && v.change_pct < v.ci_hi_pct);
	CHECK(v.ci_hi_pct < 0);
	CHECK(v.mwu_exact && v.p_mwu < 1e-4);
	CHECK(v.reps_needed == 0);

	o.better = VERDICT_HIGHER_IS_BETTER;
	CHECK(verdict_compare(a, 10, b, 10, &o, &v) == 0);
	CHECK(v.kind == VERDICT_WORSE);
	CHECK_STR(verdict_kind_name(v.kind), "worse");
	/* B slower than A, lower is better: a regression */
	o.better = VERDICT_LOWER_IS_BETTER;
	CHECK(verdict_compare(b, 10, a, 10, &o, &v) == 0);
	CHECK(v.kind == VERDICT_WORSE);
	CHECK_NEAR(v.change_pct, 11.1, 2);

	/* deterministic */
	struct verdict v2;
	CHECK(verdict_compare(b, 10, a, 10, &o, &v2) == 0);
	CHECK(v.ci_lo_pct == v2.ci_lo_pct && v.ci_hi_pct == v2.ci_hi_pct);

	/* harmonic mean of rates */
	const double ra[] = { 100, 100, 100, 100 }, rb[] = { 50, 200, 50, 200 };
	o.centre = STATS_HMEAN;
	o.better = VERDICT_HIGHER_IS_BETTER;
	CHECK(verdict_compare(ra, 4, rb, 4, &o, &v) == 0);
	CHECK_NEAR(v.centre_a, 100, 1e-12);
	CHECK_NEAR(v.centre_b, 80, 1e-12);
	CHECK_NEAR(v.change_pct, -20, 1e-9);
}

TEST(verdict_no_change)
{
	struct stats_rng r;
	stats_rng_seed(&r, 22);
	double a[20], b[20];
	fill_normal(&r, a, 20, 100, 0.3);
	fill_normal(&r, b, 20, 100.2, 0.3);
	struct verdict v;
	CHECK(verdict_compare(a, 20, b, 20, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_NO_CHANGE);
	CHECK_STR(verdict_kind_name(v.kind), "no change");
	CHECK(v.ci_lo_pct >= -2 && v.ci_hi_pct <= 2);
	CHECK_NEAR(v.threshold_pct, 2, 0);
	CHECK_NEAR(v.level, 0.95, 0);
}

TEST(verdict_inconclusive)
{
	/* noisy (cv 5%), 3 per side, true change 1%: cannot tell */
	struct stats_rng r;
	stats_rng_seed(&r, 23);
	double a[3], b[3];
	fill_normal(&r, a, 3, 100, 5);
	fill_normal(&r, b, 3, 101, 5);
	struct verdict v;
	CHECK(verdict_compare(a, 3, b, 3, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE);
	CHECK_STR(verdict_kind_name(v.kind), "inconclusive");
	CHECK(!v.insufficient);
	CHECK(v.mwu_exact && v.p_mwu >= 0.1);
	/* reps from the pooled sd of the samples */
	double s2 = (stats_var(a, 3) * 2 + stats_var(b, 3) * 2) / 4;
	/* delta: the nearer edge of the symmetric 2% threshold, 2/102 */
	size_t want = verdict_reps_estimate(sqrt(s2), 2.0 / 102.0 * v.centre_a, 0.95,
					    0.8);
	CHECK(want > 3);
	CHECK(v.reps_needed == want);

	/* the formula: 2 ((1.959964 + 0.841621) * 5 / 2)^2 = 98.11 -> 99 */
	CHECK(verdict_reps_estimate(5, 2, 0.95, 0.8) == 99);
	/* 2 ((1.959964 + 1.281552) * 1 / 1)^2 = 21.01 -> 22 at power 0.9 */
	CHECK(verdict_reps_estimate(1, 1, 0.95, 0.9) == 22);
	CHECK(verdict_reps_estimate(0, 1, 0.95, 0.8) == 0);

	/* a single sample on one side is never a verdict */
	const double one[] = { 50 }, many[] = { 100, 101, 99, 100 };
	CHECK(verdict_compare(one, 1, many, 4, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.insufficient);
	CHECK(v.reps_needed >= 2);
	CHECK(isnan(v.ci_lo_pct));
	CHECK(verdict_compare(many, 4, one, 0, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.insufficient);
	CHECK(isnan(v.p_mwu));
	/* even a huge difference with 1 vs 1 */
	const double big[] = { 1000 };
	CHECK(verdict_compare(one, 1, big, 1, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.reps_needed == 2);

	/* zero baseline */
	const double z[] = { 0, 0, 0 };
	CHECK(verdict_compare(z, 3, many, 4, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE);

	/* bad arguments */
	struct verdict_options o;
	verdict_options_default(&o, VERDICT_LOWER_IS_BETTER);
	o.threshold_pct = 0;
	CHECK(verdict_compare(many, 4, many, 4, &o, &v) == -1);
}

/* a threshold of T% is symmetric on the log ratio: the ratio B/A beyond
 * 1 + T/100 or below 1 / (1 + T/100); the edge itself counts as beyond */
TEST(verdict_symmetric_threshold)
{
	/* the edges in percent */
	CHECK_NEAR(verdict_threshold_down_pct(100), -50, 1e-12);
	CHECK_NEAR(verdict_threshold_down_pct(2), -100.0 * 2 / 102, 1e-12);
	CHECK(isnan(verdict_threshold_down_pct(0)));
	/* against 100%: a halving and a doubling are both at the edge: beyond */
	CHECK(verdict_beyond(-50, 100));
	CHECK(verdict_beyond(100, 100));
	CHECK(!verdict_beyond(-49, 100));
	CHECK(!verdict_beyond(99, 100));
	CHECK(verdict_beyond(-51, 100) && verdict_beyond(101, 100));
	CHECK(verdict_beyond(-100, 100) && verdict_beyond(-150, 100));
	/* 2%: +2% and -1.96% (1/1.02) are the edges; -2% is beyond, -1.95% not */
	CHECK(verdict_beyond(2, 2) && !verdict_beyond(1.99, 2));
	CHECK(verdict_beyond(100.0 * (1 / 1.02 - 1), 2));
	CHECK(verdict_beyond(-2, 2) && !verdict_beyond(-1.95, 2));
	CHECK(!verdict_beyond(0, 2) && !verdict_beyond(NAN, 2) && !verdict_beyond(5, NAN));

	/* verdicts: B the half of A, lower is better, threshold 100: better,
	 * the mirror image (B twice A) worse; the change printed in percent */
	const double a[] = { 100, 101, 99, 100, 100.5, 99.5, 100, 100.2 };
	double h[8], d[8], n49[8];
	for (int i = 0; i < 8; i++) {
		h[i] = a[i] * 0.45;   /* -55% */
		d[i] = a[i] * 2.2;    /* +120% */
		n49[i] = a[i] * 0.51; /* -49% */
	}
	struct verdict_options o;
	struct verdict v;
	verdict_options_default(&o, VERDICT_LOWER_IS_BETTER);
	o.threshold_pct = 100;
	CHECK(verdict_compare(a, 8, h, 8, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER);
	CHECK_NEAR(v.change_pct, -55, 1e-9);
	CHECK(verdict_compare(h, 8, a, 8, &o, &v) == 0); /* the same ratio, upwards */
	CHECK(v.kind == VERDICT_WORSE);
	CHECK(verdict_compare(a, 8, d, 8, &o, &v) == 0);
	CHECK(v.kind == VERDICT_WORSE);
	/* -49% is within 100% (the ratio 0.51 > 0.5), though its CI excludes 0:
	 * not a verdict of better */
	CHECK(verdict_compare(a, 8, n49, 8, &o, &v) == 0);
	CHECK(v.kind != VERDICT_BETTER && v.kind != VERDICT_WORSE);
	/* with a constant ratio the bootstrap CI is the point: exactly at the
	 * edge (B = A / 2) is beyond, so better */
	for (int i = 0; i < 8; i++)
		h[i] = a[i] / 2;
	CHECK(verdict_compare(a, 8, h, 8, &o, &v) == 0);
	CHECK_NEAR(v.change_pct, -50, 1e-9);
	CHECK(v.kind == VERDICT_BETTER);
	/* the old percent rule, kept for bisections stored before schema 12:
	 * a halving is inside [-100, +100] %, no change */
	o.threshold_percent = 1;
	CHECK(verdict_compare(a, 8, h, 8, &o, &v) == 0);
	CHECK(v.kind == VERDICT_NO_CHANGE);
	CHECK(verdict_compare(a, 8, d, 8, &o, &v) == 0); /* +120% > 100 */
	CHECK(v.kind == VERDICT_WORSE);
	o.threshold_percent = 0;

	/* censored: a provable decrease of a censored baseline by 60% is beyond
	 * 100% (it was never beyond -100% before) */
	const double ca[] = { 10000, 10000, 10000, 10000, 10000 };
	const unsigned char cf[] = { 1, 1, 1, 1, 1 };
	const double cb[] = { 4000, 3900, 4100, 4000, 3950 };
	CHECK(verdict_compare_censored(ca, cf, 5, cb, NULL, 5, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.change_bound == -1);
}

/* synthetic censored samples: cyclictest percentiles under TCG that fall
 * beyond a 10000 us histogram are stored as 10000, flagged */
TEST(verdict_censored_both_sides)
{
	/* the case: p99.9 is 10000 (a bound) in every run of both sides;
	 * as numbers the change is +0.0% [+0.0, +0.0], "no change" */
	const double a[] = { 10000, 10000, 10000 }, b[] = { 10000, 10000, 10000 };
	const unsigned char all[] = { 1, 1, 1 };
	struct verdict v;
	CHECK(verdict_compare(a, 3, b, 3, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_NO_CHANGE);          /* what the flagless path says */
	CHECK(verdict_compare_censored(a, all, 3, b, all, 3, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.censored);
	CHECK(v.censored_a == 3 && v.censored_b == 3);
	CHECK_NEAR(v.bound, 10000, 0);
	CHECK(isnan(v.change_pct) && isnan(v.ci_lo_pct) && isnan(v.p_mwu));
	CHECK(v.reps_needed == 0);                   /* more runs do not help */
	CHECK(v.change_bound == 0);

	/* p99: 10000 (bound) in A against exact values just below it in B: B
	 * may be better, the same or worse; as numbers it was "need ~376 reps" */
	const double a99[] = { 10000, 10000, 10000 }, b99[] = { 9017, 9800, 8700 };
	CHECK(verdict_compare_censored(a99, all, 3, b99, NULL, 3, NULL, &v) == 0);
	/* every B below every A and A censored: B lower is provable, by at
	 * least 9.8% (9017 / 10000 - 1 is an upper bound of the change) */
	CHECK(v.change_bound == -1);
	CHECK_NEAR(v.change_pct, -9.83, 1e-9);
	/* ... but 3 a side separate by chance with p = 0.1: need 4 a side */
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.censored && v.reps_needed == 4);
	const double a4[] = { 10000, 10000, 10000, 10000 }, b4[] = { 9017, 9800, 8700, 9100 };
	const unsigned char all4[] = { 1, 1, 1, 1 };
	CHECK(verdict_compare_censored(a4, all4, 4, b4, NULL, 4, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.change_bound == -1 && !v.censored);
	CHECK_NEAR(v.p_mwu, 2.0 / 70, 1e-12);

	/* one bound on one side, overlapping exact values: not provable */
	const double c1[] = { 100, 120, 10000 }, c2[] = { 110, 130, 115 };
	const unsigned char last[] = { 0, 0, 1 };
	CHECK(verdict_compare_censored(c1, last, 3, c2, NULL, 3, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.censored && v.censored_a == 1);
	CHECK(isnan(v.change_pct) && v.reps_needed == 0);
	/* censoring on both sides, each side partly: never "no change" either */
	const unsigned char first[] = { 1, 0, 0 };
	const double d1[] = { 10000, 500, 520 }, d2[] = { 10000, 505, 515 };
	CHECK(verdict_compare_censored(d1, first, 3, d2, first, 3, NULL, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.censored);
}

TEST(verdict_censored_provable)
{
	/* 8 runs a side: A exact 2000..2700 us, B beyond the 10000 us range in
	 * every run: B is worse by at least 10000 / median(A) - 1 */
	double a[8], b[8];
	unsigned char cb[8];
	for (int i = 0; i < 8; i++) {
		a[i] = 2000 + 100 * i;
		b[i] = 10000;
		cb[i] = 1;
	}
	struct verdict v;
	struct verdict_options o;
	verdict_options_default(&o, VERDICT_LOWER_IS_BETTER);
	CHECK(verdict_compare_censored(a, NULL, 8, b, cb, 8, &o, &v) == 0);
	CHECK(v.kind == VERDICT_WORSE && !v.censored);
	CHECK(v.change_bound == 1);
	CHECK_NEAR(v.change_pct, 100 * (10000 / 2350.0 - 1), 1e-9);   /* median of A: 2350 */
	/* exact p of a complete separation of 8 and 8: 2 / C(16, 8) = 2 / 12870 */
	CHECK(v.mwu_exact);
	CHECK_NEAR(v.p_mwu, 2.0 / 12870, 1e-15);
	CHECK(isnan(v.ci_lo_pct));
	/* the same for a higher-is-better metric (a rate whose bound is "at
	 * least"): better */
	o.better = VERDICT_HIGHER_IS_BETTER;
	CHECK(verdict_compare_censored(a, NULL, 8, b, cb, 8, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.change_bound == 1);
	/* swapped: the baseline is the censored side, B exact and below it:
	 * better (lower is better), a change of at most -76.5% */
	o.better = VERDICT_LOWER_IS_BETTER;
	CHECK(verdict_compare_censored(b, cb, 8, a, NULL, 8, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.change_bound == -1);
	CHECK_NEAR(v.change_pct, 100 * (2350 / 10000.0 - 1), 1e-9);
	/* a B value (exact) at or below an A value: not provable */
	b[3] = 2700;
	cb[3] = 0;
	CHECK(verdict_compare_censored(a, NULL, 8, b, cb, 8, &o, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.censored);
	/* exact B above every A is as good as a bound above it */
	b[3] = 9000;
	CHECK(verdict_compare_censored(a, NULL, 8, b, cb, 8, &o, &v) == 0);
	CHECK(v.kind == VERDICT_WORSE && v.change_bound == 1);
	/* a censored A value: A's true values are unknown above the bound */
	unsigned char ca[8] = { 0 };
	ca[7] = 1;
	CHECK(verdict_compare_censored(a, ca, 8, b, cb, 8, &o, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.censored && v.censored_a == 1);
	/* provable, but the bound is within the threshold: inconclusive */
	const double x[] = { 9950, 9960, 9970 }, y[] = { 10000, 10000, 10000 };
	const unsigned char yc[] = { 1, 1, 1 };
	CHECK(verdict_compare_censored(x, NULL, 3, y, yc, 3, &o, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.censored && v.change_bound == 1);
	CHECK(v.change_pct > 0 && v.change_pct < 2);
	/* 3 a side: the separation's p is 0.1 */
	const double lo[] = { 100, 110, 120 };
	CHECK(verdict_compare_censored(lo, NULL, 3, y, yc, 3, &o, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.reps_needed == 4);
	CHECK_NEAR(v.p_mwu, 0.1, 1e-12);
	CHECK_NEAR(verdict_separation_p(3, 3), 0.1, 1e-12);
	CHECK_NEAR(verdict_separation_p(9, 3), 2.0 / 220, 1e-15);
	CHECK_NEAR(verdict_separation_p(1, 1), 1, 0);
	/* a single sample stays insufficient, censored or not */
	CHECK(verdict_compare_censored(lo, NULL, 1, y, yc, 3, &o, &v) == 0);
	CHECK(v.insufficient && v.kind == VERDICT_INCONCLUSIVE && isnan(v.change_pct));
	/* no flag set: the same as verdict_compare */
	const unsigned char none[] = { 0, 0, 0 };
	struct verdict w;
	CHECK(verdict_compare_censored(lo, none, 3, x, none, 3, &o, &v) == 0);
	CHECK(verdict_compare(lo, 3, x, 3, &o, &w) == 0);
	CHECK(v.kind == w.kind && v.change_pct == w.change_pct && v.ci_lo_pct == w.ci_lo_pct);
	CHECK(!v.censored && v.censored_a == 0 && isnan(v.bound));
}

/* ---- exact data (docs/statistics.md "Exact and near-exact data") ----------- */

/* every number of a verdict that is defined is finite, and p within [0, 1] */
static int verdict_finite(const struct verdict *v)
{
	return isfinite(v->centre_a) && isfinite(v->centre_b) && isfinite(v->change_pct) &&
	       isfinite(v->ci_lo_pct) && isfinite(v->ci_hi_pct) && v->ci_lo_pct <= v->ci_hi_pct &&
	       v->p >= 0 && v->p <= 1 && v->p_mwu >= 0 && v->p_mwu <= 1;
}

TEST(verdict_exact_p_values)
{
	/* identical sides: max p^(n-1) (1 - p)^n, M(n - 1, n) */
	CHECK_NEAR(verdict_exact_p(2, 2, 0), 4.0 / 27, 1e-12);
	CHECK_NEAR(verdict_exact_p(3, 3, 0), 4.0 * 27 / 3125, 1e-12);
	CHECK_NEAR(verdict_exact_p(4, 4, 0), 27.0 * 256 / 823543, 1e-12);
	CHECK_NEAR(verdict_exact_p(5, 5, 0), 256.0 * 3125 / 387420489, 1e-12);
	/* the tighter of the two orders: 2 against 3 is M(1, 3) or M(2, 2) */
	CHECK_NEAR(verdict_exact_p(2, 3, 0), 1.0 / 16, 1e-12);
	CHECK_NEAR(verdict_exact_p(3, 2, 0), 1.0 / 16, 1e-12);
	/* one differing repeat adds its patterns: 4 + M(3,4) + 2 x 4 M(2,1) M(3,4) */
	double p40 = verdict_exact_p(4, 4, 0), p41 = verdict_exact_p(4, 4, 1);
	CHECK_NEAR(p41, p40 + 2 * 4 * (4.0 / 27) * p40, 1e-12);
	CHECK(verdict_exact_p(4, 4, 2) > p41);
	/* 21 against 3 (a nightly's baseline against tonight): M(20, 3),
	 * 1.4e-4, below the complete separation's 2 / C(24, 3) = 9.9e-4 */
	CHECK_NEAR(verdict_exact_p(21, 3, 0), exp(20 * log(20.0) + 3 * log(3.0) - 23 * log(23.0)),
		   1e-15);
	/* never above a complete separation's p (a side of 1, deterministic) */
	CHECK(verdict_exact_p(3, 3, 0) < verdict_separation_p(3, 3));
	CHECK_NEAR(verdict_exact_p(1, 1, 0), 1, 0);
	for (size_t n = 1; n < 30; n++)
		CHECK(verdict_exact_p(n, 3, 2) <= verdict_separation_p(n, 3));
	/* falls with n, and is below what identical repeats of a coin give:
	 * 2 (1/2)^(2n) is reached, not exceeded */
	for (size_t n = 2; n < 12; n++) {
		CHECK(verdict_exact_p(n + 1, n + 1, 0) < verdict_exact_p(n, n, 0));
		CHECK(verdict_exact_p(n, n, 0) >= 2 * pow(0.5, 2.0 * n));
	}
	CHECK(verdict_exact_reps(0.05) == 3 && verdict_exact_reps(0.01) == 4);
	CHECK(isnan(verdict_exact_p(0, 3, 0)) && isnan(verdict_exact_p(3, 3, 3)));
	/* a side of 2 has no "one differing repeat": no pattern beyond identical */
	CHECK_NEAR(verdict_exact_p(2, 2, 1), verdict_exact_p(2, 2, 0), 0);
}

/*
 * p_exact bounds the chance of the pattern under no difference for any
 * distribution: every sample of a few discrete distributions enumerated,
 * classified by verdict_exact_data itself; the chance of an exact pattern
 * apart with at most k differing repeats never exceeds verdict_exact_p(k).
 * The coin on two values reaches the bound of 2 against 3 (1/16).
 */
TEST(verdict_exact_p_bounds)
{
	static const double atoms[] = { 1, 1.05, 3, 3.1 };
	static const double dists[][4] = {
		{ 0.5, 0, 0.5, 0 },          /* a coin */
		{ 0.375, 0.125, 0.5, 0 },    /* one differing repeat's worst */
		{ 0.3, 0.2, 0.3, 0.2 },
		{ 0.45, 0.05, 0.45, 0.05 },
		{ 0.7, 0.1, 0.15, 0.05 },
		{ 0.25, 0.25, 0.25, 0.25 },
	};
	static const size_t sizes[][2] = { { 2, 3 }, { 3, 3 }, { 3, 4 }, { 4, 4 } };
	double worst = 0;
	for (size_t d = 0; d < N_(dists); d++)
		for (size_t z = 0; z < N_(sizes); z++) {
			size_t na = sizes[z][0], nb = sizes[z][1], N = na + nb, total = 1;
			for (size_t i = 0; i < N; i++)
				total *= 4;
			double p[3] = { 0, 0, 0 };
			for (size_t code = 0; code < total; code++) {
				double x[8], pr = 1;
				size_t c = code;
				for (size_t i = 0; i < N; i++, c /= 4) {
					x[i] = atoms[c % 4];
					pr *= dists[d][c % 4];
				}
				if (pr == 0)
					continue;
				struct verdict_exact_data e;
				verdict_exact_data(x, na, x + na, nb, VERDICT_SOURCE_UNKNOWN, &e);
				if (e.kind == VERDICT_EXACT_NONE || !e.apart)
					continue;
				for (int k = e.odd; k <= 2; k++)
					p[k] += pr;
			}
			for (int k = 0; k <= 2; k++) {
				double bound = verdict_exact_p(na, nb, k);
				CHECK(p[k] <= bound * (1 + 1e-9));
				if (p[k] / bound > worst)
					worst = p[k] / bound;
			}
			if (d == 0 && na == 2 && nb == 3)
				CHECK_NEAR(p[0], 1.0 / 16, 1e-12);
		}
	printf("# enumerated: the chance of the pattern reaches %.3f of p_exact at most\n", worst);
}

TEST(verdict_exact_zero_spread)
{
	const double a[] = { 11, 11, 11, 11 }, b[] = { 7, 7, 7, 7 };
	struct verdict_options o;
	struct verdict v;
	verdict_options_default(&o, VERDICT_LOWER_IS_BETTER);
	/* lat_max_us 11 x4 under none, 7 x4 under full: better, read off */
	CHECK(verdict_compare(a, 4, b, 4, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.exact == VERDICT_EXACT_IDENTICAL);
	CHECK_NEAR(v.change_pct, 100.0 * (7.0 / 11 - 1), 1e-9);
	CHECK(v.ci_lo_pct == v.ci_hi_pct && v.ci_lo_pct == v.change_pct);
	CHECK_NEAR(v.p, verdict_exact_p(4, 4, 0), 1e-15);
	CHECK_NEAR(v.p_mwu, 2.0 / 70, 1e-12); /* the rank test, reported */
	CHECK(verdict_finite(&v) && !v.insufficient && v.reps_needed == 0);
	CHECK(!v.deterministic);
	/* the other way round, and by the other direction */
	CHECK(verdict_compare(b, 4, a, 4, &o, &v) == 0);
	CHECK(v.kind == VERDICT_WORSE && v.exact);
	o.better = VERDICT_HIGHER_IS_BETTER;
	CHECK(verdict_compare(a, 4, b, 4, &o, &v) == 0);
	CHECK(v.kind == VERDICT_WORSE && v.exact);
	/* 3 a side: p 0.035, a verdict at 95% (the rank test alone: 0.1) */
	o.better = VERDICT_LOWER_IS_BETTER;
	CHECK(verdict_compare(a, 3, b, 3, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.p < 0.05 && v.p_mwu >= 0.1);
	/* 2 a side: identical by chance too often (p 0.148): how many would do */
	CHECK(verdict_compare(a, 2, b, 2, &o, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.exact && v.reps_needed == 3);
	CHECK_NEAR(v.p, 4.0 / 27, 1e-12);
	CHECK(verdict_finite(&v));
	/* a deterministic source: 2 a side decide, p 0, and so does 1 */
	o.source = VERDICT_SOURCE_DETERMINISTIC;
	CHECK(verdict_compare(a, 2, b, 2, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.p == 0 && v.deterministic);
	CHECK(verdict_compare(a, 1, b, 1, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.p == 0 && !v.insufficient && verdict_finite(&v));
	/* but a single value of unknown source is never exact */
	o.source = VERDICT_SOURCE_UNKNOWN;
	CHECK(verdict_compare(a, 1, b, 1, &o, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.insufficient && !v.exact);
	/* within the threshold: no change, also with a rate and its hmean */
	const double r1[] = { 17539.333, 17539.333, 17539.333, 17539.333 };
	const double r2[] = { 17545.667, 17545.667, 17545.667, 17545.667 };
	o.better = VERDICT_HIGHER_IS_BETTER;
	o.centre = STATS_HMEAN;
	CHECK(verdict_compare(r1, 4, r2, 4, &o, &v) == 0);
	CHECK(v.kind == VERDICT_NO_CHANGE && v.exact == VERDICT_EXACT_IDENTICAL);
	CHECK_NEAR(v.change_pct, 100 * (17545.667 / 17539.333 - 1), 1e-9);
	CHECK(verdict_finite(&v));
	/* equal values on both sides: no change at 0, [0, 0] */
	CHECK(verdict_compare(a, 3, a, 3, &o, &v) == 0);
	CHECK(v.kind == VERDICT_NO_CHANGE && v.exact && v.change_pct == 0);
	CHECK(v.ci_lo_pct == 0 && v.ci_hi_pct == 0 && v.p_mwu == 1 && verdict_finite(&v));
	/* exactly at the edge counts as beyond (+2%), inside it does not */
	const double c100[] = { 100, 100, 100 }, c102[] = { 102, 102, 102 },
		     c101[] = { 101.9, 101.9, 101.9 };
	o.centre = STATS_MEDIAN;
	o.better = VERDICT_LOWER_IS_BETTER;
	CHECK(verdict_compare(c100, 3, c102, 3, &o, &v) == 0);
	CHECK(v.kind == VERDICT_WORSE && v.exact);
	CHECK(verdict_compare(c100, 3, c101, 3, &o, &v) == 0);
	CHECK(v.kind == VERDICT_NO_CHANGE && v.exact);
	/* a value <= 0 is not exact data (no ratio): the ordinary rules */
	const double z[] = { 0, 0, 0 };
	CHECK(verdict_compare(z, 3, c100, 3, &o, &v) == 0);
	CHECK(!v.exact && v.kind == VERDICT_INCONCLUSIVE);
}

TEST(verdict_exact_one_differing)
{
	struct verdict_options o;
	struct verdict v;
	verdict_options_default(&o, VERDICT_LOWER_IS_BETTER);
	/* one repeat differs, far from the other side: still read off, the
	 * interval every ratio 7/12 .. 7/11 */
	const double a[] = { 11, 11, 11, 12 }, b[] = { 7, 7, 7, 7 };
	CHECK(verdict_compare(a, 4, b, 4, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.exact == VERDICT_EXACT_NEAR);
	CHECK_NEAR(v.ci_lo_pct, 100.0 * (7.0 / 12 - 1), 1e-9);
	CHECK_NEAR(v.ci_hi_pct, 100.0 * (7.0 / 11 - 1), 1e-9);
	CHECK_NEAR(v.p, verdict_exact_p(4, 4, 1), 1e-15);
	CHECK(v.p < 0.05 && verdict_finite(&v));
	/* the differing repeat on the other side, or on both */
	const double b2[] = { 7, 8, 7, 7 };
	CHECK(verdict_compare(a, 4, b2, 4, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.exact == VERDICT_EXACT_NEAR);
	CHECK_NEAR(v.p, verdict_exact_p(4, 4, 2), 1e-15);
	/* a repeat in the other side's range: not exact (the ordinary rules) */
	const double in[] = { 11, 11, 11, 7 };
	CHECK(verdict_compare(in, 4, b, 4, &o, &v) == 0);
	CHECK(!v.exact && v.kind != VERDICT_BETTER);
	/* a repeat nearer the other side than its own: not exact either */
	const double near[] = { 11, 11, 11, 8 };
	CHECK(verdict_compare(near, 4, b, 4, &o, &v) == 0);
	CHECK(!v.exact);
	/* two differing repeats on a side: ordinary data */
	const double two[] = { 11, 11, 12, 12 };
	CHECK(verdict_compare(two, 4, b, 4, &o, &v) == 0);
	CHECK(!v.exact && v.kind == VERDICT_BETTER && v.p == v.p_mwu);
	/* a side of 2 with two values is not near-exact */
	const double pair[] = { 11, 12 };
	CHECK(verdict_compare(pair, 2, b, 4, &o, &v) == 0);
	CHECK(!v.exact);
	/* the interval straddles the threshold: the ordinary rules decide */
	const double s1[] = { 100, 100, 100, 104 }, s2[] = { 101, 101, 101, 101 };
	CHECK(verdict_compare(s1, 4, s2, 4, &o, &v) == 0);
	CHECK(!v.exact);
	/* near-exact within the threshold: no change */
	const double w1[] = { 100, 100, 100, 100.5 }, w2[] = { 100.2, 100.2, 100.2, 100.2 };
	CHECK(verdict_compare(w1, 4, w2, 4, &o, &v) == 0);
	CHECK(v.kind == VERDICT_NO_CHANGE && v.exact == VERDICT_EXACT_NEAR && verdict_finite(&v));
	/* verdict_exact_data on its own */
	struct verdict_exact_data e;
	CHECK(verdict_exact_data(a, 4, b, 4, VERDICT_SOURCE_UNKNOWN, &e) == 0);
	CHECK(e.kind == VERDICT_EXACT_NEAR && e.odd == 1 && e.apart);
	CHECK(verdict_exact_data(in, 4, b, 4, VERDICT_SOURCE_UNKNOWN, &e) == 0);
	CHECK(e.kind == VERDICT_EXACT_NEAR && !e.apart);
	CHECK(verdict_exact_data(a, 4, b, 4, VERDICT_SOURCE_DETERMINISTIC, &e) == 0);
	CHECK(e.p == 0);
	const double nan[] = { 11, NAN, 11 };
	CHECK(verdict_exact_data(nan, 3, b, 3, VERDICT_SOURCE_UNKNOWN, &e) == 0);
	CHECK(e.kind == VERDICT_EXACT_NONE);
	CHECK(verdict_exact_data(NULL, 3, b, 3, VERDICT_SOURCE_UNKNOWN, &e) == -1);
}

/* ties in the rank and t tests: no NaN, no division by a zero spread */
TEST(ties_and_zero_spread)
{
	struct stats_mwu m;
	const double five[] = { 5, 5, 5, 5, 5, 5 };
	/* every value tied: exact with ties (N <= 40), p = 1 */
	CHECK(stats_mann_whitney(five, 3, five + 3, 3, &m) == 0);
	CHECK(m.method == STATS_MWU_EXACT_TIES && m.p == 1 && m.u_a == 4.5);
	/* and by the normal approximation (N > 40): variance 0, p = 1, z = 0 */
	double big[50];
	for (size_t i = 0; i < 50; i++)
		big[i] = 5;
	CHECK(stats_mann_whitney(big, 25, big + 25, 25, &m) == 0);
	CHECK(m.method == STATS_MWU_NORMAL && m.p == 1 && m.z == 0);
	/* two values, tied across the sides */
	const double ta[] = { 1, 2, 2, 2 }, tb[] = { 2, 2, 2, 3 };
	CHECK(stats_mann_whitney(ta, 4, tb, 4, &m) == 0);
	CHECK(m.ties && m.p > 0.2 && m.p <= 1);
	/* identical sides apart: the exact p of a complete separation */
	const double sev[] = { 7, 7, 7, 7 }, ele[] = { 11, 11, 11, 11 };
	CHECK(stats_mann_whitney(ele, 4, sev, 4, &m) == 0);
	CHECK_NEAR(m.p, 2.0 / 70, 1e-12);
	/* the t tests: t infinite and p 0 when the means differ, 0 and 1
	 * when they do not, never NaN */
	struct stats_ttest t;
	CHECK(stats_welch_t(ele, 4, sev, 4, &t) == 0);
	CHECK(isinf(t.t) && t.t > 0 && t.p == 0);
	CHECK(stats_welch_t(sev, 4, sev, 4, &t) == 0);
	CHECK(t.t == 0 && t.p == 1);
	CHECK(stats_student_t(ele, 4, sev, 4, &t) == 0);
	CHECK(isinf(t.t) && t.p == 0);
	/* verdicts on tied and constant data: every number finite */
	const double *sides[] = { sev, ele, five, ta, tb };
	const size_t ns[] = { 4, 4, 6, 4, 4 };
	struct verdict_options o;
	verdict_options_default(&o, VERDICT_LOWER_IS_BETTER);
	o.resamples = 500;
	for (int src = 0; src < 2; src++) {
		o.source = src ? VERDICT_SOURCE_DETERMINISTIC : VERDICT_SOURCE_UNKNOWN;
		for (size_t i = 0; i < 5; i++)
			for (size_t j = 0; j < 5; j++) {
				struct verdict v;
				CHECK(verdict_compare(sides[i], ns[i], sides[j], ns[j], &o, &v) == 0);
				CHECK(verdict_finite(&v));
				struct noise_floor nf;
				CHECK(verdict_noise_floor_from(sides[i], ns[i], sides[j], ns[j], &v,
							       &nf) == 0);
				CHECK(isfinite(nf.half_width_pct) && nf.half_width_pct >= 0);
			}
	}
}

/*
 * The dangerous case: noisy data on a coarse grid, where repeats are
 * identical by chance. A/A: normal values (sd s grid steps) rounded to the
 * grid around a mean of 10.5 steps (the worst: two grid values equally
 * likely, 10% apart, beyond the 2% threshold) or 10.0; a false "different"
 * is better/worse with the row's p at most 0.05 (Benjamini-Hochberg of one
 * metric, compare's most permissive case). The rates are printed; each must
 * be at most alpha (plus 2 Monte-Carlo standard errors), and the part the
 * exact rule adds at most its bound verdict_exact_p.
 */
TEST(verdict_exact_grid_simulation)
{
	static const struct { size_t na, nb; } sizes[] = { { 2, 2 }, { 3, 3 }, { 4, 4 }, { 5, 5 },
							    { 21, 3 } };
	static const double sds[] = { 0.1, 0.3, 1.0 }, means[] = { 10.5, 10.0 };
	const int nsim = 1000;
	double mc = 2 * sqrt(0.05 * 0.95 / nsim);
	struct verdict_options o;
	verdict_options_default(&o, VERDICT_LOWER_IS_BETTER);
	o.resamples = 300;
	struct stats_rng r;
	stats_rng_seed(&r, 38);
	double worst = 0, worst_cont = 0;
	printf("# grid A/A, %d data sets a case: false different (of them read off exact "
	       "data) / exact data seen\n", nsim);
	for (size_t k = 0; k < N_(sizes); k++) {
		double bound = verdict_exact_p(sizes[k].na, sizes[k].nb, 2);
		for (size_t m = 0; m < N_(means); m++)
			for (size_t s = 0; s < N_(sds); s++) {
				int fp = 0, fp_exact = 0, seen = 0, fp_cont = 0;
				for (int i = 0; i < nsim; i++) {
					double a[21], b[21], ca[21], cb[21];
					for (size_t j = 0; j < sizes[k].na; j++) {
						ca[j] = means[m] + sds[s] * gauss(&r);
						a[j] = round(ca[j]);
					}
					for (size_t j = 0; j < sizes[k].nb; j++) {
						cb[j] = means[m] + sds[s] * gauss(&r);
						b[j] = round(cb[j]);
					}
					struct verdict v;
					CHECK(verdict_compare(a, sizes[k].na, b, sizes[k].nb, &o, &v) == 0);
					int diff = (v.kind == VERDICT_BETTER || v.kind == VERDICT_WORSE) &&
						   v.p <= 0.05;
					fp += diff;
					fp_exact += diff && v.exact;
					seen += v.exact != VERDICT_EXACT_NONE;
					/* the same values before rounding: continuous */
					CHECK(verdict_compare(ca, sizes[k].na, cb, sizes[k].nb, &o, &v) == 0);
					CHECK(!v.exact);
					fp_cont += (v.kind == VERDICT_BETTER || v.kind == VERDICT_WORSE) &&
						   v.p <= 0.05;
				}
				double rate = (double)fp / nsim, rexact = (double)fp_exact / nsim;
				printf("# %2zu vs %zu, mean %4.1f, sd %.1f: %.4f (%.4f) / %.3f; "
				       "unrounded %.4f\n", sizes[k].na, sizes[k].nb, means[m], sds[s],
				       rate, rexact, (double)seen / nsim, (double)fp_cont / nsim);
				CHECK(rate <= 0.05 + mc);
				CHECK(rexact <= bound + mc);
				CHECK((double)fp_cont / nsim <= 0.05 + mc);
				if (rate > worst)
					worst = rate;
				if ((double)fp_cont / nsim > worst_cont)
					worst_cont = (double)fp_cont / nsim;
			}
	}
	printf("# worst false different: %.4f on the grid, %.4f unrounded (alpha 0.05)\n", worst,
	       worst_cont);
}

TEST(noise_floor)
{
	struct stats_rng r;
	stats_rng_seed(&r, 24);
	double a[10], b[10];
	fill_normal(&r, a, 10, 200, 2);
	fill_normal(&r, b, 10, 200, 2);
	struct noise_floor nf;
	CHECK(verdict_noise_floor(a, 10, b, 10, NULL, &nf) == 0);
	CHECK(nf.n_a == 10 && nf.n_b == 10);
	CHECK_NEAR(nf.cv_a, stats_cv(a, 10), 1e-12);
	CHECK_NEAR(nf.cv_a, 0.01, 0.006);
	CHECK_NEAR(nf.cv_all, 0.01, 0.006);
	CHECK(nf.ci_lo < nf.ratio && nf.ratio < nf.ci_hi);
	CHECK(nf.ci_lo < 1.0 && 1.0 < nf.ci_hi);
	CHECK_NEAR(nf.half_width_pct, 100 * (nf.ci_hi - nf.ci_lo) / 2, 1e-12);
	CHECK(nf.half_width_pct > 0.1 && nf.half_width_pct < 3);
	CHECK(verdict_noise_floor(a, 1, b, 10, NULL, &nf) == -1);
}

int main(void)
{
	RUN(descriptive);
	RUN(percentiles);
	RUN(mwu_exact);
	RUN(mwu_ties_exact);
	RUN(mwu_normal);
	RUN(t_tests);
	RUN(rng);
	RUN(bootstrap_deterministic);
	RUN(bootstrap_coverage);
	RUN(bootstrap_kept_draws);
	RUN(mwu_kept_null);
	RUN(verdict_kept);
	RUN(cp_qhat_values);
	RUN(cp_single_step);
	RUN(cp_several_steps);
	RUN(cp_flat);
	RUN(verdict_better_worse);
	RUN(verdict_no_change);
	RUN(verdict_inconclusive);
	RUN(verdict_symmetric_threshold);
	RUN(verdict_censored_both_sides);
	RUN(verdict_censored_provable);
	RUN(verdict_exact_p_values);
	RUN(verdict_exact_p_bounds);
	RUN(verdict_exact_zero_spread);
	RUN(verdict_exact_one_differing);
	RUN(ties_and_zero_spread);
	RUN(verdict_exact_grid_simulation);
	RUN(noise_floor);
	return tap_done();
}
