/*
 * Sequential repetitions: alpha spending over the rounds and the look at
 * one pair (sequential.h). Pure computation on top of GSL's distribution
 * functions.
 */
#include "analysis/sequential.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "analysis/stats.h"
#include "analysis/verdict.h"

void seq_design_default(struct seq_design *d)
{
	d->min = 3;
	d->max = 30;
	d->alpha = 0.05;
	d->threshold_pct = 2;
	d->spending = SEQ_POCOCK;
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
	if (!(d->threshold_pct > 0 && isfinite(d->threshold_pct))) {
		*why = "threshold_pct must be a positive percentage";
		return -1;
	}
	return 0;
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

double seq_look_alpha(const struct seq_design *d, int n)
{
	if (n < d->min)
		return 0;
	if (n > d->max)
		n = d->max;
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

int seq_evaluate(const struct seq_design *d, const double *a, size_t na, const double *b,
		 size_t nb, const unsigned char *ca, const unsigned char *cb, int lower_is_better,
		 struct seq_look *out)
{
	if (!d || !out || (na && !a) || (nb && !b)) {
		errno = EINVAL;
		return -1;
	}
	size_t n = na < nb ? na : nb;
	*out = (struct seq_look){ SEQ_CONTINUE, (int)n, 0, NAN, NAN, NAN, 0, NULL };
	if ((int)n < d->min) {
		out->why = "fewer rounds than min";
		return 0;
	}
	out->alpha = seq_look_alpha(d, (int)n);
	double ma, va, mb, vb;
	if (log_moments(a, ca, n, &ma, &va) || log_moments(b, cb, n, &mb, &vb)) {
		out->why = "values that are bounds, zero or negative: runs to max";
		return 0;
	}
	double diff = mb - ma;
	out->change_pct = pct(diff);
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
	return 0;
}
