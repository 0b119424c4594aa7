/*
 * Change-point detection for metric histories (`schedlab trend`, the nightly
 * report): where did the mean of a series shift, by how much, and how sure
 * are we. The method is the one Hunter / Apache Otava use on performance
 * histories, reimplemented here:
 *
 *  1. E-divisive means (Matteson & James 2014): inside a segment, the split
 *     point tau that maximises the energy divergence q(tau) between the left
 *     and right part is the candidate. Candidates of all current segments
 *     compete; the best is accepted when a two-sample Student's t test of the
 *     values between its neighbouring change points (all of them) gives
 *     p <= 10 max_p
 *     (2 max_p for max_p >= 0.05), and the search continues; the first
 *     rejected candidate ends it.
 *     (A t test instead of E-divisive's permutation test keeps it
 *     deterministic and works with a handful of points.)
 *  2. Windowed: E-divisive runs on windows of `window` points that advance
 *     by window/2 (or to the last change point found), so cost stays
 *     O(n * window^2) and a change in a long series is not masked by others.
 *  3. Merged: over the whole series, the weakest change point (largest p
 *     above max_p, else the smallest magnitude not above min_magnitude) is
 *     removed and its neighbours' statistics recomputed, until every one has
 *     p < max_p and magnitude > min_magnitude.
 *
 * Outliers and short runs: a change point needs CP_MIN_SEGMENT (3) points
 * on each side (up to its neighbouring change points or the series' ends,
 * not counting an outlier), else p = 1; an outlier is a side's value
 * farthest from the side's median when it lies more than CP_OUTLIER_SDS
 * (5) sds from the rest of its side (sd pooled from both sides without
 * their candidates; looked for from CP_OUTLIER_MIN_POINTS points on) and
 * is left out of the means, sds and t test. The E-divisive q is computed
 * with values clipped to 5 robust sds (1.4826 MAD) from the segment's
 * median. A single outlier (one disturbed night) is thus never reported,
 * as a change point nor as a pair of opposite ones around it, and does not
 * hide a real step by inflating the variance of its side.
 *
 * The p-value is taken at the split that maximises the divergence, so it
 * overstates significance (no correction for the choice of split): on pure
 * Gaussian noise the defaults report a change point in about 1% of 50-point
 * series and 8% of 200-point series, often as a pair of opposite change
 * points around a short run of a few points (a blip).
 *
 * Deterministic: no random numbers. Details and differences from Hunter in
 * docs/statistics.md. Pure computation (libc, GSL via stats.c); functions
 * return 0 or -1 (errno EINVAL / ENOMEM).
 */
#ifndef SL_CHANGEPOINT_H
#define SL_CHANGEPOINT_H

#include <stddef.h>

#define CP_DEFAULT_WINDOW    50
#define CP_DEFAULT_PVALUE    0.001
#define CP_DEFAULT_MAGNITUDE 0.0
/* fewest points on each side of a change point */
#define CP_MIN_SEGMENT       3
/* outliers (one per side at most, see cp_stats) lie farther than this many
 * sds from the rest of their side; looked for from this many points on */
#define CP_OUTLIER_SDS        5.0
#define CP_OUTLIER_MIN_POINTS 10

struct cp_options {
	size_t window;        /* >= 2; 0 means CP_DEFAULT_WINDOW */
	double max_pvalue;    /* in (0, 1) */
	double min_magnitude; /* >= 0, relative (0.05 = 5%) */
};
void cp_options_default(struct cp_options *o);

/* a shift of the mean between x[index-1] and x[index] */
struct change_point {
	size_t index;         /* first point of the new regime, 0 < index < n */
	size_t n_before;      /* points back to the previous change point */
	size_t n_after;       /* points up to the next change point */
	double mean_before, mean_after;
	double sd_before, sd_after;  /* sample sd; 0 for a single point */
	double rel_change;    /* mean_after / mean_before - 1 (NAN if before 0) */
	double magnitude;     /* max(|after/before - 1|, |before/after - 1|) */
	double pvalue;        /* Student's t, two-sided */
};

/*
 * Change points of x[0..n) with options o (NULL: defaults). On success *out
 * is a malloc'd array of *nout change points in increasing index order (NULL
 * when there are none); the caller frees it. Needs finite values.
 */
int cp_detect(const double *x, size_t n, const struct cp_options *o,
	      struct change_point **out, size_t *nout);

/*
 * The same for a series some of whose points are only lower bounds
 * (censored[i] != 0: the true value is >= x[i], e.g. a percentile beyond a
 * histogram's range): change points are not sought in censored stretches
 * nor across them. Each maximal stretch of uncensored points is searched
 * on its own (cp_detect, indexes shifted to the whole series; n_before and
 * n_after count within the stretch); censored points are never a side of a
 * change point, and their values need not be finite. censored NULL:
 * cp_detect.
 */
int cp_detect_censored(const double *x, const unsigned char *censored, size_t n,
		       const struct cp_options *o, struct change_point **out, size_t *nout);

/*
 * The building blocks, exposed for tests and other callers.
 * cp_edivisive: E-divisive with the t-test stop rule (threshold max_p) on
 * the whole of x[0..n), no windows, no merging; *idx malloc'd, sorted.
 */
int cp_edivisive(const double *x, size_t n, double max_p, size_t **idx,
		 size_t *nidx);
/* q(tau) for tau = 0..n-1 of x[0..n) into q (caller's array of n) */
void cp_qhat(const double *x, size_t n, double *q);
/* statistics of a change at `index` between segment bounds [lo, hi): p = 1
 * when a side has fewer than CP_MIN_SEGMENT points; outliers (above) are
 * left out of the means, sds and Student's t test, not of n_before/after */
int cp_stats(const double *x, size_t lo, size_t index, size_t hi,
	     struct change_point *cp);

#endif
