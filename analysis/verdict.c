/*
 * The A/B verdict for one metric (see verdict.h for the rules): centres,
 * change in percent with its bootstrap CI, Mann-Whitney p, the verdict and,
 * when it is inconclusive, the repetitions needed. Also the A/A noise floor.
 */
#include "analysis/verdict.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

void verdict_options_default(struct verdict_options *o,
			     enum verdict_better better)
{
	o->better = better;
	o->threshold_pct = VERDICT_DEFAULT_THRESHOLD_PCT;
	o->threshold_percent = 0;
	o->centre = STATS_MEDIAN;
	o->level = VERDICT_DEFAULT_LEVEL;
	o->power = VERDICT_DEFAULT_POWER;
	o->resamples = STATS_BOOT_RESAMPLES;
	o->seed = STATS_BOOT_SEED;
	o->source = VERDICT_SOURCE_UNKNOWN;
	o->draws = NULL;
	o->mwu_null = NULL;
	o->seed_a = o->seed_b = NULL;
}

const char *verdict_kind_name(enum verdict_kind k)
{
	switch (k) {
	case VERDICT_NO_CHANGE:
		return "no change";
	case VERDICT_BETTER:
		return "better";
	case VERDICT_WORSE:
		return "worse";
	case VERDICT_INCONCLUSIVE:
		return "inconclusive";
	}
	return "?";
}

double verdict_threshold_down_pct(double threshold_pct)
{
	if (!(threshold_pct > 0.0))
		return NAN;
	return -100.0 * threshold_pct / (100.0 + threshold_pct);
}

int verdict_beyond(double change_pct, double threshold_pct)
{
	if (isnan(change_pct) || !(threshold_pct > 0.0))
		return 0;
	if (change_pct <= -100.0)
		return 1;
	double edge = log1p(threshold_pct / 100.0);
	return fabs(log1p(change_pct / 100.0)) >= edge * (1.0 - 1e-9);
}

/* the threshold under o's rule: x beyond it (the edge included; the old
 * percent rule: strictly beyond +-T), and x within it (the percent rule:
 * inside [-T, +T]) */
static int o_beyond(const struct verdict_options *o, double x)
{
	if (o->threshold_percent)
		return fabs(x) > o->threshold_pct;
	return verdict_beyond(x, o->threshold_pct);
}

static int o_within(const struct verdict_options *o, double x)
{
	if (o->threshold_percent)
		return x >= -o->threshold_pct && x <= o->threshold_pct;
	return !verdict_beyond(x, o->threshold_pct);
}

size_t verdict_reps_estimate(double s, double delta, double level,
			     double power)
{
	if (!(s > 0.0) || !(delta > 0.0) || !(level > 0.0 && level < 1.0) ||
	    !(power > 0.0 && power < 1.0))
		return 0;
	double za = gsl_cdf_ugaussian_Qinv((1.0 - level) / 2.0);
	double zb = gsl_cdf_ugaussian_Qinv(1.0 - power);
	double k = (za + zb) * s / delta;
	double n = ceil(2.0 * k * k - 1e-9);
	if (!(n < 1e9))
		return (size_t)1e9;
	return n < 2.0 ? 2 : (size_t)n;
}

/* pooled sample sd of the sides that have >= 2 values; NAN if none */
static double pooled_sd(const double *a, size_t na, const double *b, size_t nb)
{
	double ss = 0.0, df = 0.0;
	if (na >= 2) {
		ss += stats_var(a, na) * (double)(na - 1);
		df += (double)(na - 1);
	}
	if (nb >= 2) {
		ss += stats_var(b, nb) * (double)(nb - 1);
		df += (double)(nb - 1);
	}
	return df > 0 ? sqrt(ss / df) : NAN;
}

static int options_ok(const struct verdict_options *o)
{
	return (o->better == VERDICT_LOWER_IS_BETTER ||
		o->better == VERDICT_HIGHER_IS_BETTER) &&
	       (o->source == VERDICT_SOURCE_UNKNOWN ||
		o->source == VERDICT_SOURCE_DETERMINISTIC) &&
	       o->threshold_pct > 0.0 && isfinite(o->threshold_pct) &&
	       (o->centre == STATS_MEDIAN || o->centre == STATS_MEAN ||
		o->centre == STATS_HMEAN) &&
	       o->level > 0.0 && o->level < 1.0 && o->power > 0.0 &&
	       o->power < 1.0;
}

static int all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

static void need_more(struct verdict *v, const double *a, size_t na,
		      const double *b, size_t nb,
		      const struct verdict_options *o)
{
	v->kind = VERDICT_INCONCLUSIVE;
	double s = pooled_sd(a, na, b, nb);
	/* the nearer edge of the symmetric threshold: the decrease */
	double delta = (o->threshold_percent ? o->threshold_pct
					     : -verdict_threshold_down_pct(o->threshold_pct)) /
		       100.0 * fabs(v->centre_a);
	size_t est = verdict_reps_estimate(s, delta, o->level, o->power);
	size_t have = na > nb ? na : nb;
	if (est == 0) {
		v->reps_needed = 0;
		return;
	}
	v->reps_needed = est > have ? est : have + 1;
}

int verdict_compare(const double *a, size_t na, const double *b, size_t nb,
		    const struct verdict_options *o, struct verdict *v)
{
	return verdict_compare_censored(a, NULL, na, b, NULL, nb, o, v);
}

int verdict_threshold_valid(double pct)
{
	return pct > 0 && pct < VERDICT_MAX_THRESHOLD_PCT;
}

double verdict_separation_p(size_t m, size_t n)
{
	double c = 1; /* C(m + n, m), as a double: exact enough for a p-value */
	size_t k = m < n ? m : n;
	for (size_t i = 1; i <= k; i++)
		c = c * (double)(m + n - k + i) / (double)i;
	double p = 2.0 / c;
	return p < 1 ? p : 1;
}

static size_t count_set(const unsigned char *c, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; c && i < n; i++)
		k += c[i] != 0;
	return k;
}

static double min_of(const double *x, const unsigned char *only, size_t n)
{
	double m = NAN;
	for (size_t i = 0; i < n; i++)
		if ((!only || only[i]) && (isnan(m) || x[i] < m))
			m = x[i];
	return m;
}

static double max_of(const double *x, size_t n)
{
	double m = NAN;
	for (size_t i = 0; i < n; i++)
		if (isnan(m) || x[i] > m)
			m = x[i];
	return m;
}

/* ---- exact data --------------------------------------------------------- */

/* ln of M(s, t) = s^s t^t / (s + t)^(s + t), the largest p^s (1 - p)^t
 * (0^0 = 1: M(0, t) = 1) */
static double ln_m(double s, double t)
{
	double f = 0;
	if (s > 0)
		f += s * log(s);
	if (t > 0)
		f += t * log(t);
	if (s + t > 0)
		f -= (s + t) * log(s + t);
	return f;
}

/*
 * The chance bound of one pattern: c_a, c_b identical values, oa, ob (0
 * or 1) differing ones. Derivation (docs/statistics.md): with p_x the mass
 * F gives x, the pattern's chance is at most
 *   na^oa nb^ob sum over distinct x, y (x', y') of p_x^c_a p_y^c_b (p_x' p_y')
 * and summing the differing values first (mass at most 1 - p_x - p_y), then
 * y (each term p_y at most r^(c_b - 1 + o) M(c_b - 1, o), r = 1 - p_x),
 * then x, leaves M(c_b - 1, o) M(c_a - 1, c_b + o).
 */
static double pattern_bound(size_t na, size_t nb, int oa, int ob)
{
	double ca = (double)(na - (size_t)oa), cb = (double)(nb - (size_t)ob);
	double o = oa + ob, k = (oa ? (double)na : 1) * (ob ? (double)nb : 1);
	double b1 = ln_m(cb - 1, o) + ln_m(ca - 1, cb + o);
	double b2 = ln_m(ca - 1, o) + ln_m(cb - 1, ca + o);
	return k * exp(b1 < b2 ? b1 : b2);
}

double verdict_exact_p(size_t na, size_t nb, int odd)
{
	if (na < 1 || nb < 1 || odd < 0 || odd > 2)
		return NAN;
	double sum = 0;
	for (int oa = 0; oa <= 1; oa++)
		for (int ob = 0; ob <= 1; ob++) {
			/* a differing repeat needs 2 identical ones beside it */
			if (oa + ob > odd || (oa && na < 3) || (ob && nb < 3))
				continue;
			sum += pattern_bound(na, nb, oa, ob);
		}
	double sep = verdict_separation_p(na, nb);
	return sum < sep ? sum : sep;
}

size_t verdict_exact_reps(double alpha)
{
	if (!(alpha > 0))
		return 0;
	for (size_t n = 2; n < 1000; n++)
		if (verdict_exact_p(n, n, 0) < alpha)
			return n;
	return 1000;
}

/* one side: 0 identical, 1 one differing repeat (n >= 3), -1 neither; its
 * min and max */
static int side_shape(const double *x, size_t n, double *lo, double *hi)
{
	*lo = *hi = x[0];
	for (size_t i = 1; i < n; i++) {
		if (x[i] < *lo)
			*lo = x[i];
		if (x[i] > *hi)
			*hi = x[i];
	}
	if (*lo == *hi)
		return 0;
	if (n < 3)
		return -1;
	/* the mode is x[0] or, when x[0] is the differing one, x[1] */
	for (size_t m = 0; m < 2; m++) {
		size_t same = 0;
		for (size_t i = 0; i < n; i++)
			same += x[i] == x[m];
		if (same == n - 1)
			return 1;
	}
	return -1;
}

int verdict_exact_data(const double *a, size_t na, const double *b, size_t nb,
		       enum verdict_source source, struct verdict_exact_data *e)
{
	if (!e || (na && !a) || (nb && !b)) {
		errno = EINVAL;
		return -1;
	}
	*e = (struct verdict_exact_data){ VERDICT_EXACT_NONE, 0, NAN, NAN, 0, NAN };
	size_t least = source == VERDICT_SOURCE_DETERMINISTIC ? 1 : 2;
	if (na < least || nb < least)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (!(a[i] > 0) || !isfinite(a[i]))
			return 0;
	for (size_t i = 0; i < nb; i++)
		if (!(b[i] > 0) || !isfinite(b[i]))
			return 0;
	double alo, ahi, blo, bhi;
	int sa = side_shape(a, na, &alo, &ahi), sb = side_shape(b, nb, &blo, &bhi);
	if (sa < 0 || sb < 0)
		return 0;
	e->odd = sa + sb;
	e->kind = e->odd ? VERDICT_EXACT_NEAR : VERDICT_EXACT_IDENTICAL;
	e->lo_pct = 100.0 * (blo / ahi - 1.0);
	e->hi_pct = 100.0 * (bhi / alo - 1.0);
	double gap = blo > ahi ? blo - ahi : alo > bhi ? alo - bhi : 0;
	double wide = ahi - alo > bhi - blo ? ahi - alo : bhi - blo;
	e->apart = gap > 0 && gap >= wide;
	e->p = source == VERDICT_SOURCE_DETERMINISTIC ? 0.0 : verdict_exact_p(na, nb, e->odd);
	return 0;
}

/*
 * The verdict read off exact data (verdict.h): 1 when it is made (v
 * filled), 0 when the data are not exact or their interval straddles an
 * edge (the ordinary rules then).
 */
static int exact_verdict(const double *a, size_t na, const double *b, size_t nb,
			 const struct verdict_options *o, struct verdict *v)
{
	struct verdict_exact_data e;
	if (verdict_exact_data(a, na, b, nb, o->source, &e) || e.kind == VERDICT_EXACT_NONE)
		return 0;
	int up = e.lo_pct > 0 && o_beyond(o, e.lo_pct) && e.apart;
	int down = e.hi_pct < 0 && o_beyond(o, e.hi_pct) && e.apart;
	int within = o_within(o, e.lo_pct) && o_within(o, e.hi_pct);
	if (!up && !down && !within)
		return 0;
	v->exact = e.kind;
	v->insufficient = 0;
	v->ci_lo_pct = e.lo_pct;
	v->ci_hi_pct = e.hi_pct;
	v->reps_needed = 0;
	if (within) {
		v->kind = VERDICT_NO_CHANGE;
		v->reason = e.kind == VERDICT_EXACT_IDENTICAL
				    ? "exact data (identical repeats): the change is within the "
				      "noise threshold"
				    : "near-exact data (one differing repeat): every ratio of the "
				      "repeats is within the noise threshold";
		return 1;
	}
	v->p = e.p;
	if (e.p < 1.0 - o->level) {
		int lower_better = o->better == VERDICT_LOWER_IS_BETTER;
		v->kind = (up == lower_better) ? VERDICT_WORSE : VERDICT_BETTER;
		v->reason = e.kind == VERDICT_EXACT_IDENTICAL
				    ? "exact data (identical repeats): the change is beyond the "
				      "noise threshold"
				    : "near-exact data (one differing repeat): every ratio of the "
				      "repeats is beyond the noise threshold";
		return 1;
	}
	/* identical repeats this few could be chance (a grid of two values) */
	v->kind = VERDICT_INCONCLUSIVE;
	v->reason = "exact data beyond the noise threshold, but this few repeats could be "
		    "identical by chance";
	size_t need = verdict_exact_reps(1.0 - o->level), have = na > nb ? na : nb;
	v->reps_needed = need > have ? need : have + 1;
	return 1;
}

double verdict_sign_p(size_t n)
{
	double p = 2.0 * pow(0.5, (double)n);
	return p < 1.0 ? p : 1.0;
}

size_t verdict_sign_reps(double alpha)
{
	size_t n = 1;
	while (n < 200 && !(verdict_sign_p(n) < alpha))
		n++;
	return n;
}

/* the changes in percent of the pairs by seed into pct (na of room); their
 * number, 0 when fewer than 2 pairs or a paired value is not > 0 */
static size_t seed_pairs(const double *a, size_t na, const double *b, size_t nb,
			 const struct verdict_options *o, double *pct)
{
	size_t n = 0;
	for (size_t i = 0; i < na; i++) {
		int64_t s = o->seed_a[i];
		size_t ja = 0, jb = 0, at = 0;
		if (s < 0)
			continue;
		for (size_t k = 0; k < na; k++)
			ja += o->seed_a[k] == s;
		for (size_t k = 0; k < nb; k++)
			if (o->seed_b[k] == s) {
				jb++;
				at = k;
			}
		if (ja != 1 || jb != 1)
			continue;
		if (!(a[i] > 0) || !(b[at] > 0))
			return 0;
		pct[n++] = 100.0 * (b[at] / a[i] - 1.0);
	}
	return n >= 2 ? n : 0;
}

/*
 * The paired rule (verdict.h "Paired by seed"): 1 when every seed agrees
 * and v is the sign test's verdict; 0 (v->paired set) for the ordinary
 * rules.
 */
static int paired_verdict(const double *a, size_t na, const double *b, size_t nb,
			  const struct verdict_options *o, struct verdict *v)
{
	if (!o->seed_a || !o->seed_b || !na || !nb)
		return 0;
	double *pct = malloc(na * sizeof(*pct));
	if (!pct)
		return 0;
	size_t n = seed_pairs(a, na, b, nb, o, pct);
	v->paired = n;
	int up = n > 0, down = n > 0;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t k = 0; k < n; k++) {
		up &= pct[k] > 0 && o_beyond(o, pct[k]);
		down &= pct[k] < 0 && o_beyond(o, pct[k]);
		lo = pct[k] < lo ? pct[k] : lo;
		hi = pct[k] > hi ? pct[k] : hi;
	}
	free(pct);
	if (!up && !down)
		return 0;
	v->sign_rule = 1;
	v->insufficient = 0;
	v->ci_lo_pct = lo;
	v->ci_hi_pct = hi;
	v->p = verdict_sign_p(n);
	v->reps_needed = 0;
	if (v->p < 1.0 - o->level) {
		int lower_better = o->better == VERDICT_LOWER_IS_BETTER;
		v->kind = (up == lower_better) ? VERDICT_WORSE : VERDICT_BETTER;
		v->reason = "paired by seed: every seed's change is beyond the noise threshold, "
			    "the same way (sign test)";
		return 1;
	}
	v->kind = VERDICT_INCONCLUSIVE;
	v->reason = "paired by seed: every seed agrees, but this few seeds could agree by "
		    "chance (sign test)";
	size_t need = verdict_sign_reps(1.0 - o->level);
	v->reps_needed = need > n ? need : n + 1;
	return 1;
}

/*
 * Both sides have >= 2 values and at least one is censored: a verdict only
 * when the direction is provable (see verdict.h).
 */
static void censored_verdict(const double *a, size_t na, const double *b, size_t nb,
			     const struct verdict_options *o, struct verdict *v)
{
	v->kind = VERDICT_INCONCLUSIVE;
	v->censored = 1;
	v->p_mwu = NAN;
	v->mwu_exact = 0;
	v->reps_needed = 0;
	v->ci_lo_pct = v->ci_hi_pct = NAN;
	double change = v->change_pct;
	v->change_pct = NAN;
	/* B above A: A exact, every B (exact or bound) above every A */
	int up = v->censored_a == 0 && min_of(b, NULL, nb) > max_of(a, na);
	/* B below A: B exact, every A above every B */
	int down = v->censored_b == 0 && min_of(a, NULL, na) > max_of(b, nb);
	if ((!up && !down) || !isfinite(change) || !(v->centre_a > 0) || !(v->centre_b >= 0)) {
		v->reason = "values beyond the measurable range (lower bounds): the direction "
			    "of the change is not provable";
		return;
	}
	v->change_pct = change;
	v->change_bound = up ? 1 : -1;
	v->p_mwu = verdict_separation_p(na, nb);
	v->mwu_exact = 1;
	if (v->p_mwu >= 1.0 - o->level) {
		/* a separation of this few values happens by chance too often:
		 * the same count per side that would make it significant */
		size_t n = na > nb ? na : nb;
		while (verdict_separation_p(n, n) >= 1.0 - o->level && n < 1000)
			n++;
		v->reps_needed = n;
		v->reason = "every value of one side lies beyond the other's, but with this "
			    "few runs a separation is not significant (values beyond the "
			    "measurable range)";
		return;
	}
	if ((up && change > 0 && o_beyond(o, change)) || (down && change < 0 && o_beyond(o, change))) {
		int lower_better = o->better == VERDICT_LOWER_IS_BETTER;
		v->kind = (up == lower_better) ? VERDICT_WORSE : VERDICT_BETTER;
		v->censored = 0;
		v->reason = "every value of one side lies beyond every value of the other; "
			    "the change is a bound (values beyond the measurable range)";
		return;
	}
	v->reason = "the direction is provable but the change, a bound, is within the "
		    "noise threshold (values beyond the measurable range)";
}

static int compare_censored(const double *a, const unsigned char *ca, size_t na,
			    const double *b, const unsigned char *cb, size_t nb,
			    const struct verdict_options *o, struct verdict *v);

int verdict_compare_censored(const double *a, const unsigned char *ca, size_t na,
			     const double *b, const unsigned char *cb, size_t nb,
			     const struct verdict_options *o, struct verdict *v)
{
	if (!v) {
		errno = EINVAL;
		return -1;
	}
	int rc = compare_censored(a, ca, na, b, cb, nb, o, v);
	/* the p-value to test: the rank test's, unless read off exact data or
	   the paired sign rule's */
	if (!rc && !v->sign_rule && !(v->exact && (v->kind != VERDICT_NO_CHANGE)))
		v->p = v->p_mwu;
	return rc;
}

static int compare_censored(const double *a, const unsigned char *ca, size_t na,
			    const double *b, const unsigned char *cb, size_t nb,
			    const struct verdict_options *o, struct verdict *v)
{
	struct verdict_options def;
	if (!o) {
		verdict_options_default(&def, VERDICT_LOWER_IS_BETTER);
		o = &def;
	}
	if (!v || (na && !a) || (nb && !b) || !options_ok(o) ||
	    !all_finite(a, na) || !all_finite(b, nb)) {
		errno = EINVAL;
		return -1;
	}
	memset(v, 0, sizeof(*v));
	v->n_a = na;
	v->n_b = nb;
	v->deterministic = o->source == VERDICT_SOURCE_DETERMINISTIC;
	v->p = NAN;
	v->censored_a = count_set(ca, na);
	v->censored_b = count_set(cb, nb);
	v->bound = NAN;
	if (v->censored_a)
		v->bound = min_of(a, ca, na);
	if (v->censored_b) {
		double mb = min_of(b, cb, nb);
		if (isnan(v->bound) || mb < v->bound)
			v->bound = mb;
	}
	v->threshold_pct = o->threshold_pct;
	v->level = o->level;
	v->centre_a = v->centre_b = NAN;
	v->change_pct = v->ci_lo_pct = v->ci_hi_pct = v->p_mwu = NAN;
	v->kind = VERDICT_INCONCLUSIVE;

	if (na && stats_centre(a, na, o->centre, &v->centre_a))
		return -1;
	if (nb && stats_centre(b, nb, o->centre, &v->centre_b))
		return -1;
	if (isfinite(v->centre_a) && isfinite(v->centre_b) && v->centre_a != 0)
		v->change_pct = 100.0 * (v->centre_b / v->centre_a - 1.0);
	if (na && nb && !v->censored_a && !v->censored_b) {
		struct stats_mwu m;
		if (stats_mann_whitney_kept(a, na, b, nb, o->mwu_null, &m))
			return -1;
		v->p_mwu = m.p;
		v->mwu_exact = m.method != STATS_MWU_NORMAL;
	}

	/* exact data: read off the values (a deterministic source's single
	 * values too) */
	if (!v->censored_a && !v->censored_b && exact_verdict(a, na, b, nb, o, v))
		return 0;
	/* paired by seed, every seed agreeing: the sign test; when it has too
	   few seeds to decide, the ordinary rules unpaired may still (4 a
	   side fully apart: p 0.029 by ranks; t0160's real-clock runs carry
	   seeds too), else its "need N seeds" stands */
	if (!v->censored_a && !v->censored_b && paired_verdict(a, na, b, nb, o, v)) {
		if (v->kind != VERDICT_INCONCLUSIVE)
			return 0;
		struct verdict_options un = *o;
		struct verdict plain;
		un.seed_a = un.seed_b = NULL;
		if (compare_censored(a, ca, na, b, cb, nb, &un, &plain) == 0 &&
		    (plain.kind == VERDICT_BETTER || plain.kind == VERDICT_WORSE)) {
			plain.paired = v->paired;
			*v = plain;
		}
		return 0;
	}
	if (na < 2 || nb < 2) {
		v->insufficient = 1;
		v->reason = "fewer than 2 samples on a side";
		if (v->censored_a || v->censored_b)
			v->change_pct = NAN; /* of bounds: not an estimate */
		need_more(v, a, na, b, nb, o);
		if (v->reps_needed < 2)
			v->reps_needed = 2;
		return 0;
	}
	if (v->censored_a || v->censored_b) {
		censored_verdict(a, na, b, nb, o, v);
		return 0;
	}
	if (!isfinite(v->centre_a) || !isfinite(v->centre_b) ||
	    v->centre_a == 0.0) {
		v->reason = o->centre == STATS_HMEAN
				    ? "harmonic mean undefined (a value <= 0) "
				      "or baseline centre zero"
				    : "baseline centre is zero";
		return 0;
	}

	struct stats_boot_ci ci;
	if (stats_bootstrap_ratio_drawn(a, na, b, nb, o->centre, o->resamples,
					o->level, o->seed, o->draws, &ci)) {
		if (errno == ENOMEM)
			return -1;
		v->reason = "bootstrap ratio undefined";
		return 0;
	}
	v->ci_lo_pct = 100.0 * (ci.lo - 1.0);
	v->ci_hi_pct = 100.0 * (ci.hi - 1.0);

	/* both ends within the (symmetric) threshold: the whole CI is */
	if (o_within(o, v->ci_lo_pct) && o_within(o, v->ci_hi_pct)) {
		v->kind = VERDICT_NO_CHANGE;
		v->reason = "confidence interval inside the noise threshold";
		return 0;
	}
	int beyond = o_beyond(o, v->change_pct);
	int up = v->ci_lo_pct > 0.0 && v->change_pct > 0.0 && beyond;
	int down = v->ci_hi_pct < 0.0 && v->change_pct < 0.0 && beyond;
	if (up || down) {
		int lower_better = o->better == VERDICT_LOWER_IS_BETTER;
		v->kind = (up == lower_better) ? VERDICT_WORSE : VERDICT_BETTER;
		v->reason = "confidence interval excludes 0, change beyond "
			    "the noise threshold";
		return 0;
	}
	v->reason = (v->ci_lo_pct > 0.0 || v->ci_hi_pct < 0.0)
			    ? "change within the noise threshold but the "
			      "confidence interval reaches beyond it"
			    : "confidence interval includes 0 and reaches "
			      "beyond the noise threshold";
	need_more(v, a, na, b, nb, o);
	return 0;
}

/* the coefficients of variation of each side and of both together */
static int noise_cvs(const double *a, size_t na, const double *b, size_t nb,
		     struct noise_floor *nf)
{
	memset(nf, 0, sizeof(*nf));
	nf->n_a = na;
	nf->n_b = nb;
	nf->cv_a = stats_cv(a, na);
	nf->cv_b = stats_cv(b, nb);
	double *all = malloc((na + nb) * sizeof(*all));
	if (!all) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(all, a, na * sizeof(*all));
	memcpy(all + na, b, nb * sizeof(*all));
	nf->cv_all = stats_cv(all, na + nb);
	free(all);
	return 0;
}

int verdict_noise_floor_from(const double *a, size_t na, const double *b, size_t nb,
			     const struct verdict *v, struct noise_floor *nf)
{
	if (!a || !b || !v || !nf || na < 2 || nb < 2 || isnan(v->ci_lo_pct)) {
		errno = EINVAL;
		return -1;
	}
	if (noise_cvs(a, na, b, nb, nf))
		return -1;
	nf->ratio = 1.0 + v->change_pct / 100.0;
	nf->ci_lo = 1.0 + v->ci_lo_pct / 100.0;
	nf->ci_hi = 1.0 + v->ci_hi_pct / 100.0;
	nf->half_width_pct = (v->ci_hi_pct - v->ci_lo_pct) / 2.0;
	return 0;
}

int verdict_noise_floor(const double *a, size_t na, const double *b,
			size_t nb, const struct verdict_options *o,
			struct noise_floor *nf)
{
	struct verdict_options def;
	if (!o) {
		verdict_options_default(&def, VERDICT_LOWER_IS_BETTER);
		o = &def;
	}
	if (!a || !b || !nf || na < 2 || nb < 2 || !options_ok(o) ||
	    !all_finite(a, na) || !all_finite(b, nb)) {
		errno = EINVAL;
		return -1;
	}
	if (noise_cvs(a, na, b, nb, nf))
		return -1;
	struct stats_boot_ci ci;
	if (stats_bootstrap_ratio_drawn(a, na, b, nb, o->centre, o->resamples,
					o->level, o->seed, o->draws, &ci))
		return -1;
	nf->ratio = ci.estimate;
	nf->ci_lo = ci.lo;
	nf->ci_hi = ci.hi;
	nf->half_width_pct = 100.0 * (ci.hi - ci.lo) / 2.0;
	return 0;
}
