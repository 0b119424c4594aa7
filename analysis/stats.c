/*
 * Statistics for repeated benchmark measurements: the implementation of
 * stats.h. Descriptive statistics, Mann-Whitney U (exact distribution by
 * dynamic programming over rank positions, normal approximation with tie
 * correction otherwise), Welch's and Student's t (p-values from GSL), the
 * xoshiro256** PRNG and the percentile bootstrap of a ratio of centres.
 * Definitions and their references: docs/statistics.md.
 */
#include "analysis/stats.h"

#include "analysis/rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

/* ---- descriptive statistics ------------------------------------------- */

double stats_mean(const double *x, size_t n)
{
	if (!x || n == 0)
		return NAN;
	/* compensated summation keeps long series of similar values exact */
	double s = 0.0, c = 0.0;
	for (size_t i = 0; i < n; i++) {
		double y = x[i] - c;
		double t = s + y;
		c = (t - s) - y;
		s = t;
	}
	return s / (double)n;
}

double stats_hmean(const double *x, size_t n)
{
	if (!x || n == 0)
		return NAN;
	double s = 0.0;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0.0) || !isfinite(x[i]))
			return NAN;
		s += 1.0 / x[i];
	}
	return (double)n / s;
}

double stats_var(const double *x, size_t n)
{
	if (!x || n < 2)
		return NAN;
	double m = stats_mean(x, n), ss = 0.0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	return ss / (double)(n - 1);
}

double stats_sd(const double *x, size_t n)
{
	return sqrt(stats_var(x, n));
}

double stats_cv(const double *x, size_t n)
{
	double m = stats_mean(x, n);
	if (n < 2 || m == 0.0)
		return NAN;
	return stats_sd(x, n) / fabs(m);
}

double stats_min(const double *x, size_t n)
{
	if (!x || n == 0)
		return NAN;
	double v = x[0];
	for (size_t i = 1; i < n; i++)
		if (x[i] < v)
			v = x[i];
	return v;
}

double stats_max(const double *x, size_t n)
{
	if (!x || n == 0)
		return NAN;
	double v = x[0];
	for (size_t i = 1; i < n; i++)
		if (x[i] > v)
			v = x[i];
	return v;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return (a > b) - (a < b);
}

void stats_sort(double *x, size_t n)
{
	if (x && n > 1)
		qsort(x, n, sizeof(*x), cmp_double);
}

double stats_percentile_sorted(const double *sorted, size_t n, double p)
{
	if (!sorted || n == 0 || !(p >= 0.0 && p <= 100.0))
		return NAN;
	double h = (double)(n - 1) * p / 100.0;
	size_t lo = (size_t)floor(h);
	if (lo >= n - 1)
		return sorted[n - 1];
	double frac = h - (double)lo;
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

static double *sorted_copy(const double *x, size_t n)
{
	double *c = malloc(n * sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(c, x, n * sizeof(*c));
	stats_sort(c, n);
	return c;
}

int stats_percentile(const double *x, size_t n, double p, double *out)
{
	if (!x || n == 0 || !out || !(p >= 0.0 && p <= 100.0)) {
		errno = EINVAL;
		return -1;
	}
	double *c = sorted_copy(x, n);
	if (!c)
		return -1;
	*out = stats_percentile_sorted(c, n, p);
	free(c);
	return 0;
}

int stats_median(const double *x, size_t n, double *out)
{
	return stats_percentile(x, n, 50.0, out);
}

int stats_summarize(const double *x, size_t n, struct stats_summary *s)
{
	if (!x || n == 0 || !s) {
		errno = EINVAL;
		return -1;
	}
	double *c = sorted_copy(x, n);
	if (!c)
		return -1;
	s->n = n;
	s->mean = stats_mean(x, n);
	s->sd = stats_sd(x, n);
	s->cv = stats_cv(x, n);
	s->hmean = stats_hmean(x, n);
	s->min = c[0];
	s->max = c[n - 1];
	s->p25 = stats_percentile_sorted(c, n, 25);
	s->median = stats_percentile_sorted(c, n, 50);
	s->p75 = stats_percentile_sorted(c, n, 75);
	s->p90 = stats_percentile_sorted(c, n, 90);
	s->p95 = stats_percentile_sorted(c, n, 95);
	s->p99 = stats_percentile_sorted(c, n, 99);
	free(c);
	return 0;
}

/* ---- Mann-Whitney U --------------------------------------------------- */

/* samples at or above this size (either side) use the normal approximation */
#define MWU_EXACT_LIMIT 50

/*
 * Null distribution of U for sizes m, n without ties. Every arrangement of
 * the pooled sample is a choice of the m positions (1..m+n) that hold the
 * first sample; an element of it at position k that is the j-th chosen one
 * has k - j elements of the second sample below it and adds k - j to U.
 * cnt[j][u] counts the j-subsets of the positions seen so far with partial U
 * equal to u; only additions, so the counts stay exact enough in doubles
 * (C(98, 49) ~ 2.5e28 has no cancellation to suffer from).
 * Returns the m*n+1 frequencies of U = 0..m*n (malloc'd) or NULL.
 */
static double *mwu_null_counts(size_t m, size_t n)
{
	if (m > n) { /* U's null distribution is the same for (n, m): fewer rows */
		size_t t = m;
		m = n;
		n = t;
	}
	size_t umax = m * n, w = umax + 1;
	double *cnt = calloc((m + 1) * w, sizeof(*cnt));
	if (!cnt) {
		errno = ENOMEM;
		return NULL;
	}
	cnt[0] = 1.0;
	for (size_t k = 1; k <= m + n; k++) {
		size_t jmax = k < m ? k : m;
		for (size_t j = jmax; j >= 1; j--) {
			if (k - j > n)
				break; /* smaller j have even more below */
			size_t shift = k - j;
			double *to = cnt + j * w, *from = cnt + (j - 1) * w;
			size_t top = j * n; /* largest partial U with j chosen */
			for (size_t u = top + 1; u-- > shift;)
				to[u] += from[u - shift];
		}
	}
	double *res = malloc(w * sizeof(*res));
	if (res)
		memcpy(res, cnt + m * w, w * sizeof(*res));
	else
		errno = ENOMEM;
	free(cnt);
	return res;
}

/* p from the m*n+1 null frequencies f of U, at u */
static double mwu_p_of(const double *f, size_t umax, double u)
{
	double total = 0.0, le = 0.0, ge = 0.0;
	for (size_t k = 0; k <= umax; k++) {
		total += f[k];
		if ((double)k <= u + 1e-9)
			le += f[k];
		if ((double)k >= u - 1e-9)
			ge += f[k];
	}
	double pv = 2.0 * fmin(le, ge) / total;
	return pv > 1.0 ? 1.0 : pv;
}

int stats_mwu_exact_p(size_t m, size_t n, double u, double *p)
{
	if (m == 0 || n == 0 || !p || m > STATS_MWU_EXACT_MAX ||
	    n > STATS_MWU_EXACT_MAX ||
	    !(u >= 0 && u <= (double)(m * n))) {
		errno = EINVAL;
		return -1;
	}
	double *f = mwu_null_counts(m, n);
	if (!f)
		return -1;
	*p = mwu_p_of(f, m * n, u);
	free(f);
	return 0;
}

struct stats_mwu_null {
	size_t m, n;
	double *f;   /* mwu_null_counts(m, n) */
};

struct stats_mwu_null *stats_mwu_null_new(size_t m, size_t n)
{
	if (m == 0 || n == 0 || m >= MWU_EXACT_LIMIT || n >= MWU_EXACT_LIMIT) {
		errno = EINVAL;
		return NULL;
	}
	struct stats_mwu_null *z = malloc(sizeof(*z));
	double *f = z ? mwu_null_counts(m, n) : NULL;
	if (!f) {
		free(z);
		errno = ENOMEM;
		return NULL;
	}
	*z = (struct stats_mwu_null){ m, n, f };
	return z;
}

void stats_mwu_null_free(struct stats_mwu_null *z)
{
	if (z)
		free(z->f);
	free(z);
}

/*
 * The exact permutation p of a rank sum with ties: r2[0..N) the doubled
 * mid-ranks of the pooled sample, s2 the doubled rank sum of the first
 * sample (m values). cnt[j][s] counts the j-subsets of the values seen so
 * far whose doubled ranks sum to s (sums up to N(N+1), so O(N m N^2)
 * additions: 40 values, ~1.3 million). All C(N, m) choices are equally
 * likely under the null; p = min(1, 2 min(P(S <= s2), P(S >= s2))).
 */
static int mwu_exact_ties_p(const unsigned *r2, size_t N, size_t m, unsigned long s2, double *p)
{
	size_t w = N * (N + 1) + 1;
	double *cnt = calloc((m + 1) * w, sizeof(*cnt));
	if (!cnt) {
		errno = ENOMEM;
		return -1;
	}
	cnt[0] = 1.0;
	for (size_t i = 0; i < N; i++) {
		size_t jmax = i + 1 < m ? i + 1 : m;
		for (size_t j = jmax; j >= 1; j--) {
			double *to = cnt + j * w, *from = cnt + (j - 1) * w;
			for (size_t s = w; s-- > r2[i];)
				to[s] += from[s - r2[i]];
		}
	}
	double total = 0.0, le = 0.0, ge = 0.0;
	const double *f = cnt + m * w;
	for (size_t s = 0; s < w; s++) {
		total += f[s];
		if (s <= s2)
			le += f[s];
		if (s >= s2)
			ge += f[s];
	}
	free(cnt);
	double pv = total > 0 ? 2.0 * fmin(le, ge) / total : 1.0;
	*p = pv > 1.0 ? 1.0 : pv;
	return 0;
}

struct tagged {
	double v;
	int grp; /* 0 = a, 1 = b */
};

static int cmp_tagged(const void *pa, const void *pb)
{
	const struct tagged *a = pa, *b = pb;
	return (a->v > b->v) - (a->v < b->v);
}

static int has_nan(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (isnan(x[i]))
			return 1;
	return 0;
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_mwu *out)
{
	return stats_mann_whitney_kept(a, na, b, nb, NULL, out);
}

int stats_mann_whitney_kept(const double *a, size_t na, const double *b, size_t nb,
			    const struct stats_mwu_null *null, struct stats_mwu *out)
{
	if (!a || !b || !out || na == 0 || nb == 0 || has_nan(a, na) ||
	    has_nan(b, nb)) {
		errno = EINVAL;
		return -1;
	}
	size_t N = na + nb;
	struct tagged *t = malloc(N * sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < na; i++)
		t[i] = (struct tagged){ a[i], 0 };
	for (size_t i = 0; i < nb; i++)
		t[na + i] = (struct tagged){ b[i], 1 };
	qsort(t, N, sizeof(*t), cmp_tagged);

	/* mid-ranks (doubled: integers, kept for the exact test with ties);
	 * tie term sum(t^3 - t) */
	double rank_a = 0.0, tie_term = 0.0;
	unsigned *r2 = malloc(N * sizeof(*r2));
	if (!r2) {
		free(t);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < N;) {
		size_t j = i + 1;
		while (j < N && t[j].v == t[i].v)
			j++;
		double mid = ((double)(i + 1) + (double)j) / 2.0;
		for (size_t k = i; k < j; k++) {
			r2[k] = (unsigned)(i + 1 + j);
			if (t[k].grp == 0)
				rank_a += mid;
		}
		double g = (double)(j - i);
		tie_term += g * g * g - g;
		i = j;
	}
	free(t);

	double mn = (double)na * (double)nb;
	out->u_a = rank_a - (double)na * ((double)na + 1.0) / 2.0;
	out->u_b = mn - out->u_a;
	out->ties = tie_term > 0.0;

	if (!out->ties && na < MWU_EXACT_LIMIT && nb < MWU_EXACT_LIMIT) {
		free(r2);
		out->method = STATS_MWU_EXACT;
		out->z = NAN;
		if (null && null->m == na && null->n == nb) {
			if (!(out->u_a >= 0 && out->u_a <= (double)(na * nb))) {
				errno = EINVAL;
				return -1;
			}
			out->p = mwu_p_of(null->f, na * nb, out->u_a);
			return 0;
		}
		return stats_mwu_exact_p(na, nb, out->u_a, &out->p);
	}
	if (out->ties && N <= STATS_MWU_TIES_EXACT_N) {
		out->method = STATS_MWU_EXACT_TIES;
		out->z = NAN;
		int rc = mwu_exact_ties_p(r2, N, na, (unsigned long)llround(2.0 * rank_a), &out->p);
		free(r2);
		return rc;
	}
	free(r2);

	out->method = STATS_MWU_NORMAL;
	double dN = (double)N;
	double var = mn / 12.0 * ((dN + 1.0) - tie_term / (dN * (dN - 1.0)));
	if (!(var > 0.0)) {
		out->z = 0.0;
		out->p = 1.0;
		return 0;
	}
	double d = out->u_a - mn / 2.0;
	double corr = d > 0 ? 0.5 : (d < 0 ? -0.5 : 0.0);
	out->z = (d - corr) / sqrt(var);
	double p = 2.0 * gsl_cdf_ugaussian_Q(fabs(out->z));
	out->p = p > 1.0 ? 1.0 : p;
	return 0;
}

/* ---- t tests ---------------------------------------------------------- */

static void t_finish(struct stats_ttest *o, double diff, double se, double df)
{
	o->df = df;
	if (!(se > 0.0)) {
		if (diff == 0.0) {
			o->t = 0.0;
			o->p = 1.0;
		} else {
			o->t = diff > 0 ? INFINITY : -INFINITY;
			o->p = 0.0;
		}
		return;
	}
	o->t = diff / se;
	double p = 2.0 * gsl_cdf_tdist_Q(fabs(o->t), df);
	o->p = p > 1.0 ? 1.0 : p;
}

int stats_welch_t(const double *a, size_t na, const double *b, size_t nb,
		  struct stats_ttest *out)
{
	if (!a || !b || !out || na < 2 || nb < 2) {
		errno = EINVAL;
		return -1;
	}
	out->mean_a = stats_mean(a, na);
	out->mean_b = stats_mean(b, nb);
	double qa = stats_var(a, na) / (double)na;
	double qb = stats_var(b, nb) / (double)nb;
	double se2 = qa + qb;
	double df = NAN;
	if (se2 > 0.0)
		df = se2 * se2 / (qa * qa / (double)(na - 1) +
				  qb * qb / (double)(nb - 1));
	t_finish(out, out->mean_a - out->mean_b, sqrt(se2), df);
	return 0;
}

int stats_student_t(const double *a, size_t na, const double *b, size_t nb,
		    struct stats_ttest *out)
{
	if (!a || !b || !out || na < 1 || nb < 1 || na + nb < 3) {
		errno = EINVAL;
		return -1;
	}
	out->mean_a = stats_mean(a, na);
	out->mean_b = stats_mean(b, nb);
	double ssa = na > 1 ? stats_var(a, na) * (double)(na - 1) : 0.0;
	double ssb = nb > 1 ? stats_var(b, nb) * (double)(nb - 1) : 0.0;
	double df = (double)(na + nb - 2);
	double sp2 = (ssa + ssb) / df;
	double se = sqrt(sp2 * (1.0 / (double)na + 1.0 / (double)nb));
	t_finish(out, out->mean_a - out->mean_b, se, df);
	return 0;
}

/* ---- PRNG (analysis/rng.c) ------------------------------------------ */

void stats_rng_seed(struct stats_rng *r, uint64_t seed)
{
	rng_fill(r->s, seed);
}

uint64_t stats_rng_next(struct stats_rng *r)
{
	return rng_next(r->s);
}

/* draws below bound, given threshold = (2^64 mod bound): the values below it
 * are rejected so that every residue is equally likely */
static inline uint64_t rng_below_t(struct stats_rng *r, uint64_t bound, uint64_t threshold)
{
	for (;;) {
		uint64_t v = stats_rng_next(r);
		if (v >= threshold)
			return v % bound;
	}
}

uint64_t stats_rng_below(struct stats_rng *r, uint64_t bound)
{
	if (bound <= 1)
		return 0;
	return rng_below_t(r, bound, (0 - bound) % bound);
}

double stats_rng_uniform(struct stats_rng *r)
{
	return (double)(stats_rng_next(r) >> 11) * 0x1.0p-53;
}

/* ---- bootstrap -------------------------------------------------------- */

/* centre of buf[0..n), which may be reordered */
static double centre_inplace(double *buf, size_t n, enum stats_centre c)
{
	switch (c) {
	case STATS_MEDIAN:
		stats_sort(buf, n);
		return stats_percentile_sorted(buf, n, 50.0);
	case STATS_MEAN:
		return stats_mean(buf, n);
	case STATS_HMEAN:
		return stats_hmean(buf, n);
	}
	return NAN;
}

static int centre_ok(enum stats_centre c)
{
	return c == STATS_MEDIAN || c == STATS_MEAN || c == STATS_HMEAN;
}

int stats_centre(const double *x, size_t n, enum stats_centre c, double *out)
{
	if (!x || !out || !centre_ok(c)) {
		errno = EINVAL;
		return -1;
	}
	if (n == 0) {
		*out = NAN;
		return 0;
	}
	if (c != STATS_MEDIAN) {
		*out = c == STATS_MEAN ? stats_mean(x, n) : stats_hmean(x, n);
		return 0;
	}
	return stats_median(x, n, out);
}

/* the k-th smallest of a[0..n) (0-based), partially reordering a: Hoare
 * selection with a median-of-three pivot, O(n) expected */
static double select_kth(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2;
		/* median of three into a[mid] */
		if (a[mid] < a[lo]) { double t = a[mid]; a[mid] = a[lo]; a[lo] = t; }
		if (a[hi] < a[lo]) { double t = a[hi]; a[hi] = a[lo]; a[lo] = t; }
		if (a[hi] < a[mid]) { double t = a[hi]; a[hi] = a[mid]; a[mid] = t; }
		double pivot = a[mid];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				double t = a[i];
				a[i] = a[j];
				a[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return a[k];
	}
	return a[k];
}

/* stats_percentile_sorted's value (type 7) without sorting: the order
 * statistics floor(h) and floor(h) + 1 by selection */
static double percentile_select(double *a, size_t n, double p)
{
	if (n == 0 || !(p >= 0.0 && p <= 100.0))
		return NAN;
	double h = (double)(n - 1) * p / 100.0;
	size_t lo = (size_t)floor(h);
	if (lo >= n - 1)
		return select_kth(a, n, n - 1);
	double vlo = select_kth(a, n, lo);
	/* after selection everything right of lo is >= vlo: its minimum is the next */
	double vhi = a[lo + 1];
	for (size_t i = lo + 2; i < n; i++)
		if (a[i] < vhi)
			vhi = a[i];
	return vlo + (h - (double)lo) * (vhi - vlo);
}

/* the indices of resample after resample: per resample na below na (none
 * when na is 1), then nb below nb */
struct stats_boot_draws {
	size_t na, nb;
	unsigned resamples;
	uint64_t seed;
	uint16_t *idx;
	/* up to 255 a side: per resample how often each index of a (na of
	 * them, none when na is 1) then of b was drawn; else NULL */
	uint8_t *cnt;
};

#define BOOT_DRAWS_MAX_N     65535u
#define BOOT_DRAWS_MAX_BYTES ((size_t)64 << 20)

/* what draws the indices of a resample: the stream, or a kept one */
struct drawer {
	struct stats_rng rng;
	uint64_t n[2], thr[2];  /* sizes and stats_rng_below's rejection thresholds */
	const uint16_t *p;      /* the kept draws, or NULL */
};

static void drawer_init(struct drawer *d, size_t na, size_t nb, uint64_t seed,
			const struct stats_boot_draws *kept)
{
	stats_rng_seed(&d->rng, seed);
	d->n[0] = na;
	d->n[1] = nb;
	d->thr[0] = (0 - (uint64_t)na) % (uint64_t)na;
	d->thr[1] = (0 - (uint64_t)nb) % (uint64_t)nb;
	d->p = kept ? kept->idx : NULL;
}

static inline size_t draw(struct drawer *d, int k)
{
	if (d->p)
		return *d->p++;
	return (size_t)rng_below_t(&d->rng, d->n[k], d->thr[k]);
}

struct stats_boot_draws *stats_boot_draws_new(size_t na, size_t nb, unsigned resamples,
					      uint64_t seed)
{
	if (resamples == 0)
		resamples = STATS_BOOT_RESAMPLES;
	if (na == 0 || nb == 0) {
		errno = EINVAL;
		return NULL;
	}
	size_t da = na > 1 ? na : 0, db = nb > 1 ? nb : 0, per = da + db;
	if (na > BOOT_DRAWS_MAX_N || nb > BOOT_DRAWS_MAX_N ||
	    (per && resamples > BOOT_DRAWS_MAX_BYTES / sizeof(uint16_t) / per)) {
		errno = ERANGE;
		return NULL;
	}
	struct stats_boot_draws *d = malloc(sizeof(*d));
	uint16_t *idx = malloc((size_t)resamples * per * sizeof(uint16_t) + 1);
	if (!d || !idx) {
		free(d);
		free(idx);
		errno = ENOMEM;
		return NULL;
	}
	*d = (struct stats_boot_draws){ na, nb, resamples, seed, idx, NULL };
	struct drawer dr;
	drawer_init(&dr, na, nb, seed, NULL);
	uint16_t *p = idx;
	for (unsigned r = 0; r < resamples; r++) {
		for (size_t i = 0; i < da; i++)
			*p++ = (uint16_t)draw(&dr, 0);
		for (size_t i = 0; i < db; i++)
			*p++ = (uint16_t)draw(&dr, 1);
	}
	/* the counts (a count is at most n): a median reads them in the
	 * sample's sorted order, none drawn again */
	if (na <= UINT8_MAX && nb <= UINT8_MAX && per)
		d->cnt = calloc((size_t)resamples * per, 1);
	for (size_t r = 0; d->cnt && r < resamples; r++) {
		const uint16_t *ix = idx + r * per;
		uint8_t *c = d->cnt + r * per;
		for (size_t i = 0; i < da; i++)
			c[ix[i]]++;
		for (size_t i = da; i < per; i++)
			c[da + ix[i]]++;
	}
	return d;
}

void stats_boot_draws_free(struct stats_boot_draws *d)
{
	if (d) {
		free(d->idx);
		free(d->cnt);
	}
	free(d);
}

/* sift x down from the root of heap h[0..n): a max-heap (dir 1) or a
 * min-heap (dir -1) */
static void heap_replace_top(double *h, size_t n, double x, int dir)
{
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && (dir > 0 ? h[c + 1] > h[c] : h[c + 1] < h[c]))
			c++;
		if (dir > 0 ? !(h[c] > x) : !(h[c] < x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void heap_push(double *h, size_t n, double x, int dir)
{
	size_t i = n;
	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (dir > 0 ? !(x > h[up]) : !(x < h[up]))
			break;
		h[i] = h[up];
		i = up;
	}
	h[i] = x;
}

/*
 * The two tail percentiles of a bootstrap (type 7, the same values as
 * percentile_select: order statistics are order statistics) in one pass:
 * a max-heap keeps the k smallest values seen, a min-heap the m largest,
 * and a value enters only when it beats a heap's top (a few per cent of
 * them), instead of two selections over every ratio. For tails of at most
 * an eighth each; otherwise percentile_select twice.
 */
static void tail_percentiles(double *a, size_t n, double plo, double phi, double *lo_out,
			     double *hi_out)
{
	double hlo = (double)(n - 1) * plo / 100.0, hhi = (double)(n - 1) * phi / 100.0;
	size_t klo = (size_t)floor(hlo), khi = (size_t)floor(hhi);
	if (n < 64 || !(plo >= 0.0 && phi <= 100.0 && plo <= phi) || klo + 2 > n / 8 ||
	    khi + 1 >= n || n - khi > n / 8) {
		*lo_out = percentile_select(a, n, plo);
		*hi_out = percentile_select(a, n, phi);
		return;
	}
	size_t k = klo + 2, m = n - khi;   /* order statistics klo, klo + 1; khi, khi + 1 */
	double *small = malloc((k + m) * sizeof(double));
	if (!small) {
		*lo_out = percentile_select(a, n, plo);
		*hi_out = percentile_select(a, n, phi);
		return;
	}
	double *large = small + k;
	size_t ns = 0, nl = 0;
	for (size_t i = 0; i < n; i++) {
		double x = a[i];
		if (ns < k)
			heap_push(small, ns++, x, 1);
		else if (x < small[0])
			heap_replace_top(small, k, x, 1);
		if (nl < m)
			heap_push(large, nl++, x, -1);
		else if (x > large[0])
			heap_replace_top(large, m, x, -1);
	}
	/* the top is the last of the k smallest (klo + 1); the larger child
	 * of the root the one before it (klo); likewise khi and khi + 1 */
	double vlo_hi = small[0], vlo = small[1], vhi = large[0], vhi_hi = large[1];
	if (k > 2 && small[2] > vlo)
		vlo = small[2];
	if (m > 2 && large[2] < vhi_hi)
		vhi_hi = large[2];
	*lo_out = vlo + (hlo - (double)klo) * (vlo_hi - vlo);
	*hi_out = vhi + (hhi - (double)khi) * (vhi_hi - vhi);
	free(small);
}

int stats_bootstrap_ratio(const double *a, size_t na, const double *b,
			  size_t nb, enum stats_centre c, unsigned resamples,
			  double level, uint64_t seed,
			  struct stats_boot_ci *out)
{
	return stats_bootstrap_ratio_drawn(a, na, b, nb, c, resamples, level, seed, NULL, out);
}

/* all of x[0..n) positive and finite: a harmonic mean of any resample */
static int all_pos_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(x[i] > 0.0) || !isfinite(x[i]))
			return 0;
	return 1;
}

/* one side of a bootstrap: its values and what its resamples' centres are
 * computed from */
struct boot_side {
	const double *x;
	size_t n;
	double *sorted;   /* the median: the values sorted, */
	size_t *order;    /* the index of each sorted position, */
	size_t *rank;     /* each value's position among them (ties by index), */
	size_t *count;    /* a resample's draws of each position (BOOT_BLOCK x n) */
	double *inv;      /* a harmonic mean of positive values: 1 / x */
};

/* resamples computed side by side from kept draws: their sums and counts
 * are independent, so the CPU overlaps them (each one's own arithmetic, in
 * its own order, unchanged) */
#define BOOT_BLOCK 4

/* the median (percentile type 7 at 50%) of a resample of q whose draws of
 * each sorted position are count[0..n): order statistics lo and lo + 1,
 * the first positions whose running count passes lo and lo + 1 (the
 * number of positions at or below each: no branch to mispredict) */
static double median_of_counts(const struct boot_side *q, const size_t *count)
{
	double h = (double)(q->n - 1) / 2.0;
	size_t lo = (size_t)floor(h), seen = 0, at_lo = 0, at_hi = 0;
	for (size_t pos = 0; pos < q->n; pos++) {
		seen += count[pos];
		at_lo += seen <= lo;
		at_hi += seen <= lo + 1;
	}
	double vlo = q->sorted[at_lo];
	if (lo + 1 >= q->n)
		return vlo;
	return vlo + (h - (double)lo) * (q->sorted[at_hi] - vlo);
}

/* the centre of one resample of q (n > 1), its indices from dr */
static double resample_centre(struct boot_side *q, int k, enum stats_centre c,
			      struct drawer *dr, double *buf)
{
	if (q->inv) {
		double s = 0.0;
		for (size_t i = 0; i < q->n; i++)
			s += q->inv[draw(dr, k)];
		return (double)q->n / s;
	}
	if (c != STATS_MEDIAN) {
		for (size_t i = 0; i < q->n; i++)
			buf[i] = q->x[draw(dr, k)];
		return centre_inplace(buf, q->n, c);
	}
	memset(q->count, 0, q->n * sizeof(size_t));
	for (size_t i = 0; i < q->n; i++)
		q->count[q->rank[draw(dr, k)]]++;
	return median_of_counts(q, q->count);
}

/* the medians of BOOT_BLOCK resamples of q from how often each index was
 * drawn, k[0..BOOT_BLOCK): median_of_counts with each sorted position's
 * count read through order[] */
static void block_medians(const struct boot_side *q, const uint8_t *const *k, double *cen)
{
	size_t n = q->n;
	double h = (double)(n - 1) / 2.0;
	size_t lo = (size_t)floor(h), lo1 = lo + 1;
	size_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t l0 = 0, l1 = 0, l2 = 0, l3 = 0, h0 = 0, h1 = 0, h2 = 0, h3 = 0;
	for (size_t pos = 0; pos < n; pos++) {
		size_t i = q->order[pos];
		s0 += k[0][i];
		s1 += k[1][i];
		s2 += k[2][i];
		s3 += k[3][i];
		l0 += s0 <= lo;
		l1 += s1 <= lo;
		l2 += s2 <= lo;
		l3 += s3 <= lo;
		h0 += s0 <= lo1;
		h1 += s1 <= lo1;
		h2 += s2 <= lo1;
		h3 += s3 <= lo1;
	}
	const size_t at_lo[BOOT_BLOCK] = { l0, l1, l2, l3 }, at_hi[BOOT_BLOCK] = { h0, h1, h2, h3 };
	for (int b = 0; b < BOOT_BLOCK; b++) {
		double vlo = q->sorted[at_lo[b]];
		cen[b] = lo1 >= n ? vlo : vlo + (h - (double)lo) * (q->sorted[at_hi[b]] - vlo);
	}
}

/* the centres of BOOT_BLOCK resamples of q (n > 1, harmonic mean of
 * positive values or median) whose indices are p[0..BOOT_BLOCK) and, when
 * kept, their counts k (else NULL) */
static void block_centres(struct boot_side *q, const uint16_t *const *p,
			  const uint8_t *const *k, double *cen)
{
	size_t n = q->n;
	if (!q->inv && k) {
		block_medians(q, k, cen);
		return;
	}
	if (q->inv) {
		double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
		for (size_t i = 0; i < n; i++) {
			s0 += q->inv[p[0][i]];
			s1 += q->inv[p[1][i]];
			s2 += q->inv[p[2][i]];
			s3 += q->inv[p[3][i]];
		}
		cen[0] = (double)n / s0;
		cen[1] = (double)n / s1;
		cen[2] = (double)n / s2;
		cen[3] = (double)n / s3;
		return;
	}
	size_t *c0 = q->count, *c1 = c0 + n, *c2 = c1 + n, *c3 = c2 + n;
	memset(q->count, 0, BOOT_BLOCK * n * sizeof(size_t));
	for (size_t i = 0; i < n; i++) {
		c0[q->rank[p[0][i]]]++;
		c1[q->rank[p[1][i]]]++;
		c2[q->rank[p[2][i]]]++;
		c3[q->rank[p[3][i]]]++;
	}
	for (int b = 0; b < BOOT_BLOCK; b++)
		cen[b] = median_of_counts(q, q->count + (size_t)b * n);
}

int stats_bootstrap_ratio_drawn(const double *a, size_t na, const double *b,
				size_t nb, enum stats_centre c, unsigned resamples,
				double level, uint64_t seed,
				const struct stats_boot_draws *draws,
				struct stats_boot_ci *out)
{
	if (!a || !b || !out || na == 0 || nb == 0 || !centre_ok(c) ||
	    !(level > 0.0 && level < 1.0)) {
		errno = EINVAL;
		return -1;
	}
	if (resamples == 0)
		resamples = STATS_BOOT_RESAMPLES;
	if (draws && (draws->na != na || draws->nb != nb || draws->resamples != resamples ||
		      draws->seed != seed))
		draws = NULL;
	double ca, cb;
	if (stats_centre(a, na, c, &ca) || stats_centre(b, nb, c, &cb))
		return -1;

	/*
	 * Medians of resamples without sorting each resample: the samples are
	 * sorted once, a resample only counts how often each rank was drawn,
	 * and the median is read off the cumulative counts. The random stream
	 * and the multiset of each resample are exactly those of drawing values
	 * and sorting them, so the interval is bit-identical, in O(n) a resample
	 * instead of O(n log n). Harmonic means add the reciprocals, computed
	 * once, in the order drawn (stats_hmean's sum, the same bits).
	 */
	struct boot_side sd[2] = { { a, na, NULL, NULL, NULL, NULL, NULL },
				   { b, nb, NULL, NULL, NULL, NULL, NULL } };
	size_t nmax = na > nb ? na : nb;
	double *buf = malloc(nmax * sizeof(*buf));
	double *ratios = malloc((size_t)resamples * sizeof(*ratios));
	int oom = !buf || !ratios;
	for (int k = 0; k < 2 && !oom && c == STATS_HMEAN; k++) {
		struct boot_side *q = &sd[k];
		if (!all_pos_finite(q->x, q->n))
			continue;
		q->inv = malloc(q->n * sizeof(double));
		if (!q->inv) {
			oom = 1;
			break;
		}
		for (size_t i = 0; i < q->n; i++)
			q->inv[i] = 1.0 / q->x[i];
	}
	for (int k = 0; k < 2 && !oom && c == STATS_MEDIAN; k++) {
		struct boot_side *q = &sd[k];
		q->sorted = malloc(q->n * sizeof(double));
		q->order = malloc(q->n * sizeof(size_t));
		q->rank = malloc(q->n * sizeof(size_t));
		q->count = malloc(BOOT_BLOCK * q->n * sizeof(size_t));
		if (!q->sorted || !q->order || !q->rank || !q->count) {
			oom = 1;
			break;
		}
		/* rank of each original element (ties broken by position) */
		for (size_t i = 0; i < q->n; i++)
			q->rank[i] = i;
		for (size_t i = 1; i < q->n; i++) { /* insertion sort of indices: n is small */
			size_t v = q->rank[i], j = i;
			while (j > 0 && q->x[q->rank[j - 1]] > q->x[v]) {
				q->rank[j] = q->rank[j - 1];
				j--;
			}
			q->rank[j] = v;
		}
		for (size_t r = 0; r < q->n; r++)
			q->sorted[r] = q->x[q->rank[r]];
		/* rank[] now maps sorted position -> index: keep it in order[],
		 * and index -> sorted position in rank[] */
		memcpy(q->order, q->rank, q->n * sizeof(size_t));
		for (size_t r = 0; r < q->n; r++)
			q->rank[q->order[r]] = r;
	}
	if (oom) {
		for (int k = 0; k < 2; k++) {
			free(sd[k].sorted);
			free(sd[k].order);
			free(sd[k].rank);
			free(sd[k].count);
			free(sd[k].inv);
		}
		free(buf);
		free(ratios);
		errno = ENOMEM;
		return -1;
	}
	struct drawer dr;
	drawer_init(&dr, na, nb, seed, draws);
	unsigned valid = 0, r = 0;
	/* kept draws: BOOT_BLOCK resamples at a time, where the centre allows */
	size_t da = na > 1 ? na : 0, per = da + (nb > 1 ? nb : 0);
	for (; draws && resamples - r >= BOOT_BLOCK; r += BOOT_BLOCK) {
		double cen[2][BOOT_BLOCK];
		for (int k = 0; k < 2; k++) {
			struct boot_side *q = &sd[k];
			if (q->n <= 1) {
				for (int j = 0; j < BOOT_BLOCK; j++)
					cen[k][j] = q->x[0];
				continue;
			}
			const uint16_t *p[BOOT_BLOCK];
			const uint8_t *kc[BOOT_BLOCK];
			for (int j = 0; j < BOOT_BLOCK; j++) {
				size_t at = (size_t)(r + (unsigned)j) * per + (k ? da : 0);
				p[j] = draws->idx + at;
				kc[j] = draws->cnt ? draws->cnt + at : NULL;
			}
			if (q->inv || c == STATS_MEDIAN) {
				block_centres(q, p, draws->cnt ? kc : NULL, cen[k]);
				continue;
			}
			for (int j = 0; j < BOOT_BLOCK; j++) {
				dr.p = p[j];
				cen[k][j] = resample_centre(q, k, c, &dr, buf);
			}
		}
		for (int j = 0; j < BOOT_BLOCK; j++) {
			double q = cen[1][j] / cen[0][j];
			if (isfinite(q))
				ratios[valid++] = q;
		}
	}
	if (draws)
		dr.p = draws->idx + (size_t)r * per;
	for (; r < resamples; r++) {
		double cen[2];
		for (int k = 0; k < 2; k++)
			cen[k] = sd[k].n <= 1 ? sd[k].x[0] : resample_centre(&sd[k], k, c, &dr, buf);
		double q = cen[1] / cen[0];
		if (isfinite(q))
			ratios[valid++] = q;
	}
	free(buf);
	for (int k = 0; k < 2; k++) {
		free(sd[k].sorted);
		free(sd[k].order);
		free(sd[k].rank);
		free(sd[k].count);
		free(sd[k].inv);
	}

	out->estimate = cb / ca;
	out->level = level;
	out->resamples = resamples;
	out->valid = valid;
	out->seed = seed;
	if (valid == 0 || (double)valid < 0.5 * (double)resamples) {
		out->lo = out->hi = NAN;
		free(ratios);
		errno = EDOM;
		return -1;
	}
	tail_percentiles(ratios, valid, 50.0 * (1.0 - level), 50.0 * (1.0 + level), &out->lo,
			 &out->hi);
	free(ratios);
	return 0;
}
