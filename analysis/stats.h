/*
 * Statistics for repeated benchmark measurements: descriptive statistics
 * (mean, median, harmonic mean for rates, standard deviation, coefficient of
 * variation, percentiles), two-sample tests (Mann-Whitney U, Welch's t,
 * Student's t), a small seeded PRNG and a percentile bootstrap of the ratio of
 * two centres (medians, means or harmonic means). verdict.c builds the A/B
 * verdict on top of this file, changepoint.c the trend detection. Every
 * definition is written out in docs/statistics.md.
 *
 * Pure computation: libc and GSL only (GSL for the normal and t
 * distributions), no printing, no global state. Conventions:
 *  - samples come in as `const double *x, size_t n` and are never modified;
 *  - functions that need no memory return the statistic as a double and NAN
 *    when it is undefined (empty sample, n < 2 for a variance, a
 *    non-positive value for a harmonic mean);
 *  - functions that allocate scratch memory or fill a result struct return
 *    0 on success and -1 on bad input or allocation failure (errno is EINVAL
 *    or ENOMEM); they free their scratch memory before returning and never
 *    keep a pointer to the caller's arrays.
 */
#ifndef SL_STATS_H
#define SL_STATS_H

#include <stddef.h>
#include <stdint.h>

/* ---- descriptive statistics ------------------------------------------- */

double stats_mean(const double *x, size_t n);
/* n / sum(1/x_i): the right mean for rates (ops/s) over runs of equal work;
 * NAN unless every x_i > 0 */
double stats_hmean(const double *x, size_t n);
/* sample variance and standard deviation, divisor n - 1 (NAN for n < 2) */
double stats_var(const double *x, size_t n);
double stats_sd(const double *x, size_t n);
/* coefficient of variation sd / |mean| (NAN for n < 2 or mean 0) */
double stats_cv(const double *x, size_t n);
double stats_min(const double *x, size_t n);
double stats_max(const double *x, size_t n);

/* percentile p in [0, 100] of an already sorted (ascending) array: linear
 * interpolation between closest ranks (Hyndman & Fan type 7, the default of
 * R's quantile() and numpy.percentile()). NAN for n == 0 or p outside. */
double stats_percentile_sorted(const double *sorted, size_t n, double p);
/* the same on an unsorted array (sorts a private copy) */
int stats_percentile(const double *x, size_t n, double p, double *out);
int stats_median(const double *x, size_t n, double *out);

/* the usual summary in one pass over a sorted copy */
struct stats_summary {
	size_t n;
	double mean, sd, cv;       /* sd, cv NAN for n < 2 */
	double hmean;              /* NAN unless every value > 0 */
	double min, p25, median, p75, p90, p95, p99, max;
};
int stats_summarize(const double *x, size_t n, struct stats_summary *s);

/* sort ascending in place (NaNs last) */
void stats_sort(double *x, size_t n);

/* ---- two-sample tests ------------------------------------------------- */

enum stats_mwu_method { STATS_MWU_EXACT = 1, STATS_MWU_NORMAL = 2, STATS_MWU_EXACT_TIES = 3 };

/*
 * Mann-Whitney U (Wilcoxon rank-sum), two-sided.
 *  u_a = #{(i,j): a_i > b_j} + 0.5 #{a_i == b_j}   (R's W, scipy's U1)
 *  u_b = na*nb - u_a
 * Exact null distribution when there are no ties and na < 50 and nb < 50
 * (the rule of R's wilcox.test): p = min(1, 2 min(P(U <= u_a), P(U >= u_a))).
 * With ties and na + nb <= STATS_MWU_TIES_EXACT_N: the exact permutation
 * distribution of the mid-rank sum given the ties (every choice of na of
 * the pooled values equally likely; coin's wilcox_test(distribution =
 * "exact")), p as above: values from a histogram (bucketed percentiles) tie
 * often, and for small samples the approximation is far off in the tail
 * (6 against 6 completely separated: 0.0022 exact, 0.005 approximated).
 * Otherwise the normal approximation with tie-corrected variance
 *  var = na nb / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1)))
 * and a continuity correction of 0.5 toward the mean; p = 1 when var == 0.
 * Needs na >= 1 and nb >= 1.
 */
struct stats_mwu {
	double u_a, u_b;
	double z;                  /* NAN for the exact method */
	double p;
	enum stats_mwu_method method;
	int ties;                  /* 1 if the pooled sample has ties */
};
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_mwu *out);
/* exact two-sided p for U = u with sizes m, n <= STATS_MWU_EXACT_MAX (no
 * ties); memory O(min(m,n)^2 max(m,n)); -1 on bad input */
#define STATS_MWU_EXACT_MAX 200
#define STATS_MWU_TIES_EXACT_N 40
int stats_mwu_exact_p(size_t m, size_t n, double u, double *p);

/*
 * The exact null distribution of U depends on the sizes only: kept once
 * (stats_mwu_null_new: m, n < 50, as the exact test without ties; NULL with
 * errno EINVAL otherwise, ENOMEM), stats_mann_whitney_kept uses it instead
 * of computing it again, the same p bit for bit (null NULL or made for
 * other sizes: as stats_mann_whitney). Read only once made.
 */
struct stats_mwu_null;
struct stats_mwu_null *stats_mwu_null_new(size_t m, size_t n);
void stats_mwu_null_free(struct stats_mwu_null *z);
int stats_mann_whitney_kept(const double *a, size_t na, const double *b, size_t nb,
			    const struct stats_mwu_null *null, struct stats_mwu *out);

/*
 * Two-sample t tests, two-sided, difference mean_a - mean_b.
 *  Welch:   t = d / sqrt(va/na + vb/nb), df by Welch-Satterthwaite.
 *  Student: pooled variance ((na-1)va + (nb-1)vb) / (na+nb-2),
 *           df = na + nb - 2 (a side of one value contributes 0).
 * Sample variances (divisor n - 1). When the standard error is zero, t is
 * +-INFINITY and p = 0 if the means differ, t = 0 and p = 1 if they do not.
 * Welch needs na, nb >= 2; Student needs na, nb >= 1 and na + nb >= 3.
 */
struct stats_ttest {
	double mean_a, mean_b;
	double t, df, p;
};
int stats_welch_t(const double *a, size_t na, const double *b, size_t nb,
		  struct stats_ttest *out);
int stats_student_t(const double *a, size_t na, const double *b, size_t nb,
		    struct stats_ttest *out);

/* ---- seeded PRNG ------------------------------------------------------ */

/* analysis/rng.h's generator (xoshiro256**), seeded with `seed` */
struct stats_rng {
	uint64_t s[4];
};
void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);
/* uniform integer in [0, bound), unbiased (rejection); bound > 0 */
uint64_t stats_rng_below(struct stats_rng *r, uint64_t bound);
/* uniform double in [0, 1) with 53 random bits */
double stats_rng_uniform(struct stats_rng *r);

/* ---- bootstrap -------------------------------------------------------- */

enum stats_centre { STATS_MEDIAN = 1, STATS_MEAN = 2, STATS_HMEAN = 3 };

/* centre of a sample (median, mean or harmonic mean); NAN if undefined;
 * -1 only when the median's scratch copy cannot be allocated */
int stats_centre(const double *x, size_t n, enum stats_centre c, double *out);

#define STATS_BOOT_RESAMPLES 10000
#define STATS_BOOT_SEED      1

/*
 * Percentile bootstrap confidence interval of centre(b) / centre(a).
 * Each resample draws na indices into a (uniform, with replacement) and then
 * nb indices into b from one stats_rng seeded with `seed`, and computes the
 * ratio of the centres. Resamples whose ratio is not finite (centre(a) == 0)
 * are dropped; if fewer than half survive the call fails (EDOM). The interval
 * is [q((1-level)/2), q((1+level)/2)] of the sorted ratios (type 7
 * percentiles). `estimate` is the ratio on the original samples. Same inputs
 * and seed, same interval. resamples 0 means STATS_BOOT_RESAMPLES.
 */
struct stats_boot_ci {
	double estimate;
	double lo, hi;
	double level;
	unsigned resamples;        /* requested */
	unsigned valid;            /* finite ratios used for the interval */
	uint64_t seed;
};
int stats_bootstrap_ratio(const double *a, size_t na, const double *b,
			  size_t nb, enum stats_centre c, unsigned resamples,
			  double level, uint64_t seed,
			  struct stats_boot_ci *out);

/*
 * The indices a bootstrap draws depend on na, nb, resamples and seed only,
 * not on the values: many metrics compared at once (every metric of a
 * series has the same runs) draw the same ones. stats_boot_draws_new keeps
 * them (2 bytes a draw: resamples x (na + nb), 1.2 MB for 10,000 resamples
 * of 30 a side; NULL with errno ERANGE beyond 65,535 a side or 64 MB, or
 * ENOMEM); stats_bootstrap_ratio_drawn replays them instead of drawing,
 * the same interval bit for bit (draws NULL, or made for other sizes, seed
 * or resamples: it draws, as stats_bootstrap_ratio). A draws object is
 * read only once made: threads may share it.
 */
struct stats_boot_draws;
struct stats_boot_draws *stats_boot_draws_new(size_t na, size_t nb, unsigned resamples,
					      uint64_t seed);
void stats_boot_draws_free(struct stats_boot_draws *d);
int stats_bootstrap_ratio_drawn(const double *a, size_t na, const double *b,
				size_t nb, enum stats_centre c, unsigned resamples,
				double level, uint64_t seed,
				const struct stats_boot_draws *draws,
				struct stats_boot_ci *out);

#endif
