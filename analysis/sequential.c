/*
 * Sequential repetitions: alpha spending over the rounds and the look at
 * one pair (sequential.h). Pure computation on top of GSL's distribution
 * functions.
 */
#include "analysis/sequential.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "analysis/stats.h"
#include "analysis/verdict.h"

#define SEQ_EXACT_MAX_LOOKS 2000

void seq_design_default(struct seq_design *d)
{
	d->min = 3;
	d->max = 30;
	d->alpha = 0.05;
	d->threshold_pct = 2;
	d->spending = SEQ_POCOCK;
	d->boundary = SEQ_EXACT;
	d->source = VERDICT_SOURCE_UNKNOWN;
}

int seq_design_check(const struct seq_design *d, const char **why)
{
	if (d->min < 2) {
		*why = "min must be at least 2 (a look needs two values a side)";
		return -1;
	}
	if (d->max < d->min) {
		*why = "max must be at least min";
		return -1;
	}
	if (!(d->alpha > 0 && d->alpha < 0.5)) {
		*why = "alpha must lie in (0, 0.5)";
		return -1;
	}
	if (!verdict_threshold_valid(d->threshold_pct)) {
		*why = "threshold_pct must be a percentage in (0, 1000), as the CLI's --threshold";
		return -1;
	}
	/* the smallest p max rounds a side can give is a complete separation's:
	 * an alpha at or below it could never decide (bisect's --alpha is
	 * refused by the same rule); a deterministic source decides by p 0 */
	if (d->source != VERDICT_SOURCE_DETERMINISTIC && d->max >= 2 &&
	    !(verdict_separation_p((size_t)d->max, (size_t)d->max) < d->alpha)) {
		*why = "alpha is at or below the smallest p max rounds a side can give "
		       "(2 / C(2 max, max)): no round could ever decide; raise alpha or max";
		return -1;
	}
	if (d->boundary == SEQ_EXACT && d->max - d->min >= SEQ_EXACT_MAX_LOOKS) {
		*why = "exact boundaries are computed for at most 2000 looks (max - min < 2000); "
		       "use \"boundaries\": \"bonferroni\" for more";
		return -1;
	}
	return 0;
}

const char *seq_boundary_name(enum seq_boundary b)
{
	return b == SEQ_BONFERRONI ? "bonferroni" : "exact";
}

const char *seq_spending_name(enum seq_spending s)
{
	return s == SEQ_OBF ? "obrien-fleming" : "pocock";
}

double seq_spent(const struct seq_design *d, double t)
{
	if (!(t > 0))
		return 0;
	if (t >= 1)
		return d->alpha;
	if (d->spending == SEQ_OBF) {
		double z = gsl_cdf_ugaussian_Qinv(d->alpha / 2);
		double s = 2 * gsl_cdf_ugaussian_Q(z / sqrt(t));
		return s < d->alpha ? s : d->alpha;
	}
	return d->alpha * log(1 + (M_E - 1) * t);
}

static double spent_fn(enum seq_spending sp, double alpha, double t)
{
	struct seq_design d = { 0 };
	d.alpha = alpha;
	d.spending = sp;
	return seq_spent(&d, t);
}

/* grid points of a continuation region: odd, Simpson's rule */
#define GRID 301

int seq_exact_bounds(const double *t, int K, double alpha, enum seq_spending sp, double *c)
{
	double *u = malloc(GRID * sizeof(double)), *f = malloc(GRID * sizeof(double));
	double *u2 = malloc(GRID * sizeof(double)), *f2 = malloc(GRID * sizeof(double));
	if (!u || !f || !u2 || !f2) {
		free(u);
		free(f);
		free(u2);
		free(f2);
		errno = ENOMEM;
		return -1;
	}
	/* S(t) = Z sqrt(t), a standard Brownian motion; f is the density of
	 * S(t_{k-1}) on the continuation region (mass lost at crossings),
	 * tabulated at u[0..GRID) with Simpson's weights folded in */
	int have = 0;               /* f holds a density */
	double prev_t = 0, prev_spent = 0;
	for (int k = 0; k < K; k++) {
		double sk = spent_fn(sp, alpha, t[k]), a = sk - prev_spent;
		double dt = t[k] - prev_t, sd = sqrt(dt);
		double b;
		if (!have) {
			b = a > 0 ? gsl_cdf_ugaussian_Qinv(a / 2) * sd : INFINITY;
		} else if (!(a > 0)) {
			b = INFINITY;
		} else {
			/* crossing probability is decreasing in b: bisect */
			double lo = 0, hi = 40 * sqrt(t[k]);
			for (int it = 0; it < 100; it++) {
				double mid = (lo + hi) / 2, p = 0;
				for (int i = 0; i < GRID; i++)
					p += f[i] * (gsl_cdf_ugaussian_Q((mid - u[i]) / sd) +
						     gsl_cdf_ugaussian_P((-mid - u[i]) / sd));
				if (p > a)
					lo = mid;
				else
					hi = mid;
			}
			b = (lo + hi) / 2;
		}
		c[k] = b / sqrt(t[k]);
		/* the density on the new continuation region */
		double B = isfinite(b) ? b : 12 * sqrt(t[k]) + 1;
		double h = 2 * B / (GRID - 1);
		for (int j = 0; j < GRID; j++) {
			double s = -B + h * j, v = 0;
			if (!have) {
				v = gsl_ran_ugaussian_pdf(s / sd) / sd;
			} else {
				for (int i = 0; i < GRID; i++)
					v += f[i] * gsl_ran_ugaussian_pdf((s - u[i]) / sd) / sd;
			}
			double w = (j == 0 || j == GRID - 1) ? 1 : (j % 2 ? 4 : 2);
			u2[j] = s;
			f2[j] = v * w * h / 3;
		}
		memcpy(u, u2, GRID * sizeof(double));
		memcpy(f, f2, GRID * sizeof(double));
		have = 1;
		prev_t = t[k];
		prev_spent = sk;
	}
	free(u);
	free(f);
	free(u2);
	free(f2);
	return 0;
}

/* the exact boundaries of the last few designs looked at (a session has
 * one, a simulation a few); not thread-safe */
static struct bounds_cache {
	int min, max;
	double alpha;
	enum seq_spending sp;
	double *c;                 /* c[n - min], n = min .. max */
} cache[8];
static unsigned cache_next;

static const double *exact_bounds(const struct seq_design *d)
{
	for (unsigned i = 0; i < sizeof(cache) / sizeof(cache[0]); i++)
		if (cache[i].c && cache[i].min == d->min && cache[i].max == d->max &&
		    cache[i].alpha == d->alpha && cache[i].sp == d->spending)
			return cache[i].c;
	int K = d->max - d->min + 1;
	double *t = malloc((size_t)K * sizeof(double)), *c = malloc((size_t)K * sizeof(double));
	if (!t || !c) {
		free(t);
		free(c);
		return NULL;
	}
	for (int k = 0; k < K; k++)
		t[k] = (double)(d->min + k) / d->max;
	if (seq_exact_bounds(t, K, d->alpha, d->spending, c)) {
		free(t);
		free(c);
		return NULL;
	}
	free(t);
	struct bounds_cache *e = &cache[cache_next++ % (sizeof(cache) / sizeof(cache[0]))];
	free(e->c);
	*e = (struct bounds_cache){ d->min, d->max, d->alpha, d->spending, c };
	return c;
}

/* the z boundary of look n (exact design), NAN when it cannot be had */
static double exact_z(const struct seq_design *d, int n)
{
	const double *c = exact_bounds(d);
	return c ? c[n - d->min] : NAN;
}

double seq_look_alpha(const struct seq_design *d, int n)
{
	if (n < d->min)
		return 0;
	if (n > d->max)
		n = d->max;
	if (d->boundary == SEQ_EXACT) {
		double z = exact_z(d, n);
		return isfinite(z) ? 2 * gsl_cdf_ugaussian_Q(z) : isnan(z) ? NAN : 0;
	}
	double prev = n == d->min ? 0 : seq_spent(d, (double)(n - 1) / d->max);
	return seq_spent(d, (double)n / d->max) - prev;
}

/* mean and variance of log x[0..n); -1 when a value is not > 0 and finite */
static int log_moments(const double *x, const unsigned char *c, size_t n, double *m, double *v)
{
	double s = 0, ss = 0;
	for (size_t i = 0; i < n; i++) {
		if ((c && c[i]) || !(x[i] > 0) || !isfinite(x[i]))
			return -1;
		s += log(x[i]);
	}
	*m = s / (double)n;
	for (size_t i = 0; i < n; i++) {
		double e = log(x[i]) - *m;
		ss += e * e;
	}
	*v = n > 1 ? ss / (double)(n - 1) : 0;
	return 0;
}

static double pct(double log_ratio)
{
	return 100 * expm1(log_ratio);
}

/*
 * The futility stop of the exact design, at look n < max (never binding:
 * it only ever stops a pair without a decision, so it cannot raise the
 * error rates). A pair is futile when both
 *   "different" is out of reach: the conditional power under the current
 *     trend (the estimate taken as the truth, Lan-Simon-Halperin's
 *     stochastic curtailment) of crossing the last look's boundary,
 *     Phi((|z_n| / sqrt(t) - c_max) / sqrt(1 - t)), is below
 *     SEQ_FUTILITY_CP; and
 *   "equivalent" is out of reach: at max, the interval's half-width
 *     predicted from the present spread (c_max se_n sqrt(t)) would still
 *     exceed SEQ_FUTILITY_SLACK times the threshold's log half-width,
 *     so no estimate could fit inside it.
 * Looked at from SEQ_FUTILITY_FROM of the way to max on (the spread of a
 * few values is too rough to predict from). Tuned on the simulation of
 * tests/unit/test_sequential.c: no loss of power against the Bonferroni
 * design there.
 */
#define SEQ_FUTILITY_CP 0.02
#define SEQ_FUTILITY_SLACK 2.0
#define SEQ_FUTILITY_FROM 0.4

static int futile(const struct seq_design *d, int n, double diff, double se)
{
	if (n >= d->max || !(se > 0))
		return 0;
	double t = (double)n / d->max;
	if (t < SEQ_FUTILITY_FROM || n < d->min + 2)
		return 0;
	double cK = exact_z(d, d->max);
	if (!isfinite(cK))
		return 0;
	double z = fabs(diff) / se;
	double cp = gsl_cdf_ugaussian_P((z / sqrt(t) - cK) / sqrt(1 - t));
	double hw = cK * se * sqrt(t);
	return cp < SEQ_FUTILITY_CP && hw > SEQ_FUTILITY_SLACK * log1p(d->threshold_pct / 100);
}

/*
 * The look on exact data (sequential.h): 1 when it decided (or held the
 * pair back: identical repeats this few could be chance), 0 when the data
 * are not exact or their interval straddles an edge of the threshold.
 * Identical repeats at look n were identical at every earlier look, so
 * this rule can only first fire at one look: its chance under no
 * difference is at most p_exact at that look, below the look's level.
 */
static int exact_look(const struct seq_design *d, const double *a, const double *b, size_t n,
		      int lower_is_better, struct seq_look *out)
{
	struct verdict_exact_data e;
	if (verdict_exact_data(a, n, b, n, d->source, &e) || e.kind == VERDICT_EXACT_NONE)
		return 0;
	double thr = d->threshold_pct;
	int within = !verdict_beyond(e.lo_pct, thr) && !verdict_beyond(e.hi_pct, thr);
	int up = e.lo_pct > 0 && verdict_beyond(e.lo_pct, thr) && e.apart;
	int down = e.hi_pct < 0 && verdict_beyond(e.hi_pct, thr) && e.apart;
	if (!within && !up && !down)
		return 0;
	out->exact = e.kind;
	out->p_exact = e.p;
	out->lo_pct = e.lo_pct;
	out->hi_pct = e.hi_pct;
	if (within) {
		out->decision = SEQ_EQUIVALENT;
		return 1;
	}
	if (e.p < out->alpha) {
		out->decision = SEQ_DIFFERENT;
		out->worse = up == (lower_is_better != 0);
		return 1;
	}
	out->why = "exact data, but this few repeats could be identical by chance";
	return 1;
}

int seq_evaluate(const struct seq_design *d, const double *a, size_t na, const double *b,
		 size_t nb, const unsigned char *ca, const unsigned char *cb, int lower_is_better,
		 struct seq_look *out)
{
	if (!d || !out || (na && !a) || (nb && !b)) {
		errno = EINVAL;
		return -1;
	}
	size_t n = na < nb ? na : nb;
	*out = (struct seq_look){ SEQ_CONTINUE, (int)n, 0, NAN, NAN, NAN, 0, NULL,
				  VERDICT_EXACT_NONE, NAN };
	if ((int)n < d->min) {
		out->why = "fewer rounds than min";
		return 0;
	}
	out->alpha = seq_look_alpha(d, (int)n);
	if (!(out->alpha >= 0)) {
		errno = ENOMEM;
		return -1;
	}
	double ma, va, mb, vb;
	if (log_moments(a, ca, n, &ma, &va) || log_moments(b, cb, n, &mb, &vb)) {
		out->why = "values that are bounds, zero or negative: runs to max";
		return 0;
	}
	double diff = mb - ma;
	out->change_pct = pct(diff);
	if (exact_look(d, a, b, n, lower_is_better, out))
		return 0;
	double sa = va / (double)n, sb = vb / (double)n, se = sqrt(sa + sb);
	double half = 0;
	if (se > 0) {
		/* Welch-Satterthwaite degrees of freedom */
		double df = (sa + sb) * (sa + sb) /
			    (sa * sa / (double)(n - 1) + sb * sb / (double)(n - 1));
		half = gsl_cdf_tdist_Qinv(out->alpha / 2, df) * se;
	}
	out->lo_pct = pct(diff - half);
	out->hi_pct = pct(diff + half);
	double thr = d->threshold_pct;
	/* the threshold is symmetric on the log ratio (verdict.h) */
	if (!verdict_beyond(out->lo_pct, thr) && !verdict_beyond(out->hi_pct, thr)) {
		out->decision = SEQ_EQUIVALENT;
		return 0;
	}
	int beyond = verdict_beyond(out->change_pct, thr);
	int up = out->lo_pct > 0 && out->change_pct > 0 && beyond;
	int down = out->hi_pct < 0 && out->change_pct < 0 && beyond;
	if (up || down) {
		/* compare's verdict also wants the rank test: a separation of
		 * this few values must be significant on its own (3 a side
		 * never is: p >= 0.1), else compare would say inconclusive on
		 * the very runs the design stopped at */
		struct stats_mwu m;
		if (stats_mann_whitney(a, n, b, n, &m) || !(m.p < d->alpha)) {
			out->why = "the rank test is not yet significant";
			return 0;
		}
		out->decision = SEQ_DIFFERENT;
		out->worse = up == (lower_is_better != 0);
		return 0;
	}
	out->why = "the interval reaches across the threshold";
	if (d->boundary == SEQ_EXACT && futile(d, (int)n, diff, se)) {
		out->decision = SEQ_FUTILE;
		out->why = "neither decision can be reached by max";
	}
	return 0;
}
