/*
 * Unit tests of sequential repetitions (analysis/sequential.c): the
 * spending functions, one look, and a simulation of the whole design on
 * thousands of synthetic A/A and A/B series drawn from the noise of real
 * runs (tests/data/noise/hackbench-g2-l200-time_s.txt: 60 hackbench -g 2
 * -l 200 times on this machine, sd of log 0.12). Each series is looked at
 * after every round from min to max, as the session does, and stops at
 * the first decision. Checked: the A/A rate of a false "different" is at
 * most alpha (and a naive design that looks at 95% every round is caught
 * exceeding it, so the check can fail); the power at a stated effect; the
 * rounds used against the fixed design's max. The figures are printed as
 * TAP comments (the closing note of issue 16 quotes them). Exact data
 * (issue 38): identical repeats read off at the first look whose level
 * allows (at min for a deterministic source), and an A/A simulation on a
 * coarse grid, where repeats are identical by chance.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "analysis/sequential.h"
#include "analysis/stats.h"
#include "tests/unit/tap.h"

TEST(spending)
{
	struct seq_design d;
	seq_design_default(&d);
	CHECK(d.min == 3 && d.max == 30 && d.alpha == 0.05 && d.spending == SEQ_POCOCK);
	const char *why = NULL;
	CHECK(seq_design_check(&d, &why) == 0);
	/* Bonferroni: the looks' alphas add up to alpha exactly, each is
	 * positive */
	d.boundary = SEQ_BONFERRONI;
	for (int s = 0; s < 2; s++) {
		d.spending = s ? SEQ_OBF : SEQ_POCOCK;
		double sum = 0;
		for (int n = d.min; n <= d.max; n++) {
			double a = seq_look_alpha(&d, n);
			CHECK(a > 0);
			sum += a;
		}
		CHECK_NEAR(sum, d.alpha, 1e-12);
		CHECK(seq_look_alpha(&d, d.min - 1) == 0);
		CHECK_NEAR(seq_spent(&d, 1), d.alpha, 0);
		CHECK(seq_spent(&d, 0) == 0);
	}
	/* O'Brien-Fleming spends almost nothing early, Pocock more */
	d.spending = SEQ_OBF;
	double obf = seq_look_alpha(&d, 3);
	d.spending = SEQ_POCOCK;
	double poc = seq_look_alpha(&d, 3);
	CHECK(obf < 1e-6 && poc > 0.005);
	/* Pocock-type at t = 1/2: alpha ln(1 + (e - 1) / 2) */
	CHECK_NEAR(seq_spent(&d, 0.5), 0.05 * log(1 + (M_E - 1) / 2), 1e-15);
	d.min = 1;
	CHECK(seq_design_check(&d, &why) == -1 && strstr(why, "min"));
	d.min = 5;
	d.max = 4;
	CHECK(seq_design_check(&d, &why) == -1 && strstr(why, "max"));
}

TEST(one_look)
{
	struct seq_design d;
	seq_design_default(&d);
	d.max = 10;
	struct seq_look l;
	const double a[] = { 100, 101, 99, 100.5, 99.5 };
	const double b[] = { 120, 121, 119, 120.5, 119.5 };
	const double c[] = { 100.2, 100.9, 99.1, 100.4, 99.6 };
	/* fewer than min: continue */
	CHECK(seq_evaluate(&d, a, 2, b, 5, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_CONTINUE && l.n == 2);
	/* +20%, tight: worse (lower is better), better (higher is better) */
	CHECK(seq_evaluate(&d, a, 5, b, 5, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_DIFFERENT && l.worse == 1 && l.n == 5);
	CHECK(l.change_pct > 19 && l.change_pct < 21 && l.lo_pct > 2);
	CHECK(seq_evaluate(&d, a, 5, b, 5, NULL, NULL, 0, &l) == 0);
	CHECK(l.decision == SEQ_DIFFERENT && l.worse == 0);
	/* the same within 0.1%: equivalent */
	CHECK(seq_evaluate(&d, a, 5, c, 5, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_EQUIVALENT && l.lo_pct >= -2 && l.hi_pct <= 2);
	/* a bound never decides */
	const unsigned char cb[] = { 0, 0, 1, 0, 0 };
	CHECK(seq_evaluate(&d, a, 5, b, 5, NULL, cb, 1, &l) == 0);
	CHECK(l.decision == SEQ_CONTINUE && strstr(l.why, "bounds"));
	/* nor a zero */
	const double z[] = { 0, 1, 1, 1, 1 };
	CHECK(seq_evaluate(&d, z, 5, b, 5, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_CONTINUE);
	/* identical constant sides: a zero-width interval at 0, equivalent */
	CHECK(seq_evaluate(&d, a, 5, a, 5, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_EQUIVALENT && l.change_pct == 0);
	CHECK(seq_evaluate(NULL, a, 5, a, 5, NULL, NULL, 1, &l) == -1);
}

/* exact data (issue 38): read off at the first look that may, and at min
 * for a deterministic source */
TEST(exact_look)
{
	struct seq_design d;
	seq_design_default(&d);   /* 3..30, alpha 0.05, exact boundaries */
	struct seq_look l;
	const double a[] = { 11, 11, 11, 11, 11 }, b[] = { 7, 7, 7, 7, 7 };
	const double a1[] = { 11, 11, 11, 12, 11 }, c[] = { 11.05, 11.05, 11.05, 11.05, 11.05 };
	/* identical repeats: p_exact 0.035 at 3 a side, 0.0084 at 4, above
	 * those looks' levels (0.0079, 0.0050): more rounds; 0.0021 at 5 is
	 * below 0.0050: different (the rank test alone would wait for 6) */
	CHECK(seq_evaluate(&d, a, 3, b, 3, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_CONTINUE && l.exact == VERDICT_EXACT_IDENTICAL);
	CHECK(strstr(l.why, "by chance") && l.p_exact > l.alpha);
	CHECK(seq_evaluate(&d, a, 4, b, 4, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_CONTINUE && l.exact && l.p_exact > l.alpha);
	CHECK(seq_evaluate(&d, a, 5, b, 5, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_DIFFERENT && l.worse == 0 && l.exact && l.p_exact < l.alpha);
	CHECK(l.lo_pct == l.hi_pct && isfinite(l.lo_pct) && isfinite(l.change_pct));
	/* higher is better: worse */
	CHECK(seq_evaluate(&d, a, 5, b, 5, NULL, NULL, 0, &l) == 0);
	CHECK(l.decision == SEQ_DIFFERENT && l.worse == 1);
	/* within the threshold: equivalent at min */
	CHECK(seq_evaluate(&d, a, 3, c, 3, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_EQUIVALENT && l.exact && l.n == 3);
	/* one differing repeat: p_exact 0.018 at 4 (not yet), 0.0042 at 5
	 * (below 0.0050) */
	CHECK(seq_evaluate(&d, a1, 4, b, 4, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_CONTINUE && l.exact == VERDICT_EXACT_NEAR);
	CHECK(seq_evaluate(&d, a1, 5, b, 5, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_DIFFERENT && l.exact == VERDICT_EXACT_NEAR);
	/* a deterministic source: decided at min, a differing repeat too */
	d.source = VERDICT_SOURCE_DETERMINISTIC;
	CHECK(seq_evaluate(&d, a, 3, b, 3, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_DIFFERENT && l.n == 3 && l.p_exact == 0);
	CHECK(seq_evaluate(&d, a1 + 1, 3, b, 3, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_DIFFERENT && l.exact == VERDICT_EXACT_NEAR);
	d.min = 2;
	CHECK(seq_evaluate(&d, a, 2, b, 2, NULL, NULL, 1, &l) == 0);
	CHECK(l.decision == SEQ_DIFFERENT && l.n == 2);
	/* a repeat in the other side's range is not exact: the Welch look */
	const double in[] = { 11, 11, 11, 7, 11 };
	d.min = 3;
	CHECK(seq_evaluate(&d, in, 5, b, 5, NULL, NULL, 1, &l) == 0);
	CHECK(!l.exact);
}

/* ---- the simulation -------------------------------------------------------- */

static double *noise;          /* log residuals of the real runs */
static size_t nnoise;

static int load_noise(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/noise/hackbench-g2-l200-time_s.txt", testdata_dir());
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	double v, sum = 0;
	while (fscanf(f, "%lf", &v) == 1 && v > 0) {
		noise = realloc(noise, (nnoise + 1) * sizeof(double));
		noise[nnoise++] = log(v);
		sum += log(v);
	}
	fclose(f);
	for (size_t i = 0; i < nnoise; i++)
		noise[i] -= sum / (double)nnoise;
	return nnoise >= 30 ? 0 : -1;
}

struct sim_result {
	double rate_different, rate_equivalent, rate_undecided, mean_rounds;
	double rate_worse;
};

/* nsim series of A and B (B = A's level x (1 + effect)), noise drawn from
 * the real residuals scaled by `scale`; a look per round from min to max
 * (naive: every look at alpha instead of the spent share). Deterministic:
 * the PRNG is seeded with `seed`, so both designs see the same series. */
static void simulate(const struct seq_design *d, double effect, double scale, int nsim,
		     int naive, uint64_t seed, struct sim_result *out)
{
	struct stats_rng r;
	stats_rng_seed(&r, seed);
	double *a = calloc((size_t)d->max, sizeof(double)), *b = calloc((size_t)d->max, sizeof(double));
	size_t ndiff = 0, nequiv = 0, nworse = 0;
	double rounds = 0;
	for (int s = 0; s < nsim; s++) {
		int stop = d->max;
		for (int n = 0; n < d->max; n++) {
			a[n] = exp(scale * noise[stats_rng_below(&r, nnoise)]);
			b[n] = (1 + effect) * exp(scale * noise[stats_rng_below(&r, nnoise)]);
		}
		for (int n = d->min; n <= d->max; n++) {
			struct seq_look l;
			struct seq_design dd = *d;
			if (naive) {
				/* every look at the full alpha: what repeated looks
				 * without spending do */
				dd.min = n;
				dd.max = n;
			}
			seq_evaluate(&dd, a, (size_t)n, b, (size_t)n, NULL, NULL, 1, &l);
			if (l.decision == SEQ_CONTINUE)
				continue;
			stop = n;
			ndiff += l.decision == SEQ_DIFFERENT;
			nworse += l.decision == SEQ_DIFFERENT && l.worse;
			nequiv += l.decision == SEQ_EQUIVALENT;
			break;
		}
		rounds += stop;
	}
	out->rate_different = (double)ndiff / nsim;
	out->rate_worse = (double)nworse / nsim;
	out->rate_equivalent = (double)nequiv / nsim;
	out->rate_undecided = 1 - out->rate_different - out->rate_equivalent;
	out->mean_rounds = rounds / nsim;
	free(a);
	free(b);
}

static void report(const char *what, const struct seq_design *d, const struct sim_result *s)
{
	printf("# %-44s different %5.3f equivalent %5.3f undecided %5.3f; rounds %5.2f of %d"
	       " (%.0f%% saved)\n",
	       what, s->rate_different, s->rate_equivalent, s->rate_undecided, s->mean_rounds,
	       d->max, 100 * (1 - s->mean_rounds / d->max));
}

#define NSIM 4000

/* the exact boundaries against published ones: Lan-DeMets Pocock-type
 * spending, 5 equally spaced looks, two-sided 0.05 (Jennison & Turnbull,
 * gsDesign's sfLDPocock: 2.438, 2.427, 2.410, 2.397, 2.386); one look is
 * the fixed design's 1.960; O'Brien-Fleming-type's first look is
 * z_{alpha/2} / sqrt(t) exactly (all of the spending up to it) and the
 * boundaries fall from there */
TEST(exact_bounds)
{
	const double t5[] = { 0.2, 0.4, 0.6, 0.8, 1.0 }, poc[] = { 2.438, 2.427, 2.410, 2.397, 2.386 };
	double c[5];
	CHECK(seq_exact_bounds(t5, 5, 0.05, SEQ_POCOCK, c) == 0);
	for (int k = 0; k < 5; k++)
		CHECK_NEAR(c[k], poc[k], 0.0015);
	printf("# Pocock-type, 5 looks: %.4f %.4f %.4f %.4f %.4f\n", c[0], c[1], c[2], c[3], c[4]);
	const double t1[] = { 1.0 };
	CHECK(seq_exact_bounds(t1, 1, 0.05, SEQ_POCOCK, c) == 0);
	CHECK_NEAR(c[0], 1.95996, 1e-4);
	CHECK(seq_exact_bounds(t5, 5, 0.05, SEQ_OBF, c) == 0);
	printf("# O'Brien-Fleming-type, 5 looks: %.4f %.4f %.4f %.4f %.4f\n", c[0], c[1], c[2],
	       c[3], c[4]);
	CHECK_NEAR(c[0], 1.959964 / sqrt(0.2), 1e-4);
	for (int k = 1; k < 5; k++)
		CHECK(c[k] < c[k - 1] && c[k] > 1.96);
	/* the default design's looks: exact far above Bonferroni's at the end */
	struct seq_design d;
	seq_design_default(&d);
	CHECK(d.boundary == SEQ_EXACT);
	double ex = seq_look_alpha(&d, d.max);
	d.boundary = SEQ_BONFERRONI;
	double bo = seq_look_alpha(&d, d.max);
	printf("# the last of looks 3..30 at alpha 0.05: exact %.4f (%.2f%%), Bonferroni %.4f "
	       "(%.2f%%)\n", ex, 100 * (1 - ex), bo, 100 * (1 - bo));
	CHECK(ex > 4 * bo);
	/* exactness: a Brownian motion seen at the looks leaves the
	 * boundaries with probability alpha (Monte Carlo, 20000 paths: within
	 * 4 standard errors) */
	struct seq_design e;
	seq_design_default(&e);
	struct stats_rng r;
	stats_rng_seed(&r, 5);
	int cross = 0, paths = 20000;
	for (int p = 0; p < paths; p++) {
		double s = 0;
		for (int n = 1; n <= e.max; n++) {
			/* a standard normal from two uniforms (Box-Muller) */
			double u1 = (stats_rng_below(&r, 1u << 30) + 0.5) / (double)(1u << 30);
			double u2 = (stats_rng_below(&r, 1u << 30) + 0.5) / (double)(1u << 30);
			s += sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
			if (n < e.min)
				continue;
			double z = gsl_cdf_ugaussian_Qinv(seq_look_alpha(&e, n) / 2);
			if (fabs(s) / sqrt(n) >= z) {
				cross++;
				break;
			}
		}
	}
	double rate = (double)cross / paths, se = sqrt(0.05 * 0.95 / paths);
	printf("# exact Pocock-type boundaries, looks 3..30: a null Brownian motion crosses "
	       "%.4f of %d paths (alpha 0.05)\n", rate, paths);
	CHECK(fabs(rate - 0.05) < 4 * se);
}

struct sim_case {
	const char *name;
	double effect, scale;
	uint64_t seed;
};

static const struct sim_case cases[] = {
	{ "real noise, A/A", 0, 1, 11 },
	{ "real noise, B +5%", 0.05, 1, 16 },
	{ "real noise, B +20%", 0.20, 1, 12 },
	{ "noise / 10, A/A", 0, 0.1, 13 },
	{ "noise / 10, B +5%", 0.05, 0.1, 14 },
	{ "noise / 10, B +2% (at threshold)", 0.02, 0.1, 15 },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/*
 * Both designs on the same series, side by side. Checked for every case
 * and both designs: the false "different" rate (A/A) at most alpha, a
 * call in the wrong direction at most alpha / 2, "equivalent" for a true
 * change at the threshold at most alpha / 2 (each plus 2 Monte-Carlo
 * standard errors of the rate at alpha: 0.0069 for 4000 series); the
 * exact design's power (rate of "different" for a real effect) no lower
 * than Bonferroni's (less 2 standard errors of the difference), its
 * "equivalent" for A/A no lower either; and the saving: at least 30%
 * fewer mean rounds in the A/A and +5% cases with the real noise.
 */
TEST(simulation)
{
	CHECK(load_noise() == 0);
	if (!nnoise)
		return;
	struct seq_design d;
	seq_design_default(&d);   /* min 3, max 30, alpha 0.05, threshold 2% */
	struct sim_result s[NCASES][2];
	char what[128];
	for (size_t k = 0; k < NCASES; k++)
		for (int bd = 0; bd < 2; bd++) {
			d.boundary = bd ? SEQ_EXACT : SEQ_BONFERRONI;
			snprintf(what, sizeof(what), "%s, %s:", seq_boundary_name(d.boundary),
				 cases[k].name);
			simulate(&d, cases[k].effect, cases[k].scale, NSIM, 0, cases[k].seed, &s[k][bd]);
			report(what, &d, &s[k][bd]);
		}
	double mc = 2 * sqrt(d.alpha * (1 - d.alpha) / NSIM);
	printf("# %d series a case, looks 3..30, alpha %.2f, threshold %.0f%%, Pocock-type "
	       "spending\n", NSIM, d.alpha, d.threshold_pct);
	printf("# | case | Bonferroni: different / equivalent / undecided, rounds | exact: "
	       "different / equivalent / undecided, rounds | rounds saved |\n");
	for (size_t k = 0; k < NCASES; k++) {
		const struct sim_result *b = &s[k][0], *e = &s[k][1];
		printf("# | %s | %.3f / %.3f / %.3f, %.1f | %.3f / %.3f / %.3f, %.1f | %.0f%% |\n",
		       cases[k].name, b->rate_different, b->rate_equivalent, b->rate_undecided,
		       b->mean_rounds, e->rate_different, e->rate_equivalent, e->rate_undecided,
		       e->mean_rounds, 100 * (1 - e->mean_rounds / b->mean_rounds));
		for (int bd = 0; bd < 2; bd++) {
			const struct sim_result *x = &s[k][bd];
			if (cases[k].effect == 0)
				CHECK(x->rate_different <= d.alpha + mc);
			else
				CHECK(x->rate_different - x->rate_worse <= d.alpha / 2 + mc);
			if (cases[k].effect == 0.02)
				CHECK(x->rate_equivalent <= d.alpha / 2 + mc);
		}
		double pse = sqrt((b->rate_different * (1 - b->rate_different) +
				   e->rate_different * (1 - e->rate_different)) / NSIM);
		if (cases[k].effect > 0)
			CHECK(e->rate_different >= b->rate_different - 2 * pse);
		else
			CHECK(e->rate_equivalent >= b->rate_equivalent - 2 * pse);
	}
	/* the saving the design is for */
	CHECK(s[0][1].mean_rounds <= 0.7 * s[0][0].mean_rounds);
	CHECK(s[1][1].mean_rounds <= 0.7 * s[1][0].mean_rounds);
	/* and never more rounds */
	for (size_t k = 0; k < NCASES; k++)
		CHECK(s[k][1].mean_rounds <= s[k][0].mean_rounds + 0.05);
	/* power where it was already there */
	CHECK(s[2][1].rate_different >= 0.8 && s[4][1].rate_different >= 0.95);
	CHECK(s[3][1].rate_equivalent >= 0.8);
	/* the negative control: looking at 95% after every round finds a
	 * "difference" in A/A far more often than alpha */
	simulate(&d, 0, 1, NSIM, 1, 11, &s[0][0]);
	report("naive (95% at every look), real noise, A/A:", &d, &s[0][0]);
	CHECK(s[0][0].rate_different > d.alpha + mc);
	/* the fixed design: one look at max */
	struct seq_design f = d;
	f.min = f.max;
	simulate(&f, 0, 1, NSIM, 0, 11, &s[0][0]);
	report("fixed 30 rounds, real noise, A/A:", &f, &s[0][0]);
	simulate(&f, 0.20, 1, NSIM, 0, 12, &s[0][0]);
	report("fixed 30 rounds, real noise, B +20%:", &f, &s[0][0]);
	free(noise);
}

/*
 * The dangerous case for exact data: noisy values on a coarse grid, where
 * repeats are identical by chance. A/A, normal values of sd s grid steps
 * rounded to the grid around 10.5 steps (two grid values equally likely,
 * 10% apart: beyond the threshold) or 10.0; the default design (3..30,
 * exact boundaries). The false "different" rate must stay within alpha.
 */
TEST(grid_simulation)
{
	struct seq_design d;
	seq_design_default(&d);
	static const double sds[] = { 0.1, 0.3, 1.0 }, means[] = { 10.5, 10.0 };
	const int nsim = 1000;
	double mc = 2 * sqrt(d.alpha * (1 - d.alpha) / nsim);
	struct stats_rng r;
	stats_rng_seed(&r, 38);
	double a[30], b[30];
	for (size_t m = 0; m < 2; m++)
		for (size_t k = 0; k < 3; k++) {
			int diff = 0, diff_exact = 0, equiv = 0;
			double rounds = 0;
			for (int s = 0; s < nsim; s++) {
				for (int n = 0; n < d.max; n++) {
					double u1 = 1 - stats_rng_uniform(&r), u2 = stats_rng_uniform(&r);
					double u3 = 1 - stats_rng_uniform(&r), u4 = stats_rng_uniform(&r);
					a[n] = round(means[m] + sds[k] * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
					b[n] = round(means[m] + sds[k] * sqrt(-2 * log(u3)) * cos(2 * M_PI * u4));
				}
				int stop = d.max;
				for (int n = d.min; n <= d.max; n++) {
					struct seq_look l;
					seq_evaluate(&d, a, (size_t)n, b, (size_t)n, NULL, NULL, 1, &l);
					if (l.decision == SEQ_CONTINUE)
						continue;
					diff += l.decision == SEQ_DIFFERENT;
					diff_exact += l.decision == SEQ_DIFFERENT && l.exact;
					equiv += l.decision == SEQ_EQUIVALENT;
					stop = n;
					break;
				}
				rounds += stop;
			}
			printf("# grid A/A, mean %4.1f, sd %.1f: different %.4f (read off exact data "
			       "%.4f), equivalent %.3f, rounds %.1f\n", means[m], sds[k],
			       (double)diff / nsim, (double)diff_exact / nsim, (double)equiv / nsim,
			       rounds / nsim);
			CHECK((double)diff / nsim <= d.alpha + mc);
		}
}

int main(void)
{
	RUN(spending);
	RUN(one_look);
	RUN(exact_look);
	RUN(grid_simulation);
	RUN(exact_bounds);
	RUN(simulation);
	return tap_done();
}
