/*
 * The A/B verdict for one metric, shared by `schedlab compare` (a table of
 * verdicts) and `schedlab check` (exit 1 on a `worse`). Given the samples of
 * a baseline A and a candidate B (one value per repetition), the direction
 * of the metric and a noise threshold, it computes n and the centre of each
 * side, the change of B against A in percent with a seeded percentile
 * bootstrap confidence interval, the Mann-Whitney p-value, and a verdict:
 *
 *  no change     the whole CI lies within the threshold;
 *  better/worse  the CI excludes 0 (lies entirely on one side) and the point
 *                estimate is at or beyond the threshold; better or worse
 *                depends on the metric's direction;
 *
 * The threshold is symmetric on the log ratio: a threshold of T% bounds the
 * ratio B/A by 1 + T/100 above and by 1/(1 + T/100) below, so +100% and
 * -50% (a doubling and a halving) are the same distance from no change; in
 * percent the edges are +T and -100 T / (100 + T) (2% -> -1.96%, 100% ->
 * -50%). A change exactly at an edge (to 1 part in 10^9 of the log ratio)
 * counts as beyond it (verdict_beyond). Changes are still printed in percent.
 *  inconclusive  anything else, and always when either side has fewer than
 *                2 samples (no verdict from a single sample) or the baseline
 *                centre is 0 or undefined.
 *
 * The Mann-Whitney p-value is reported beside the verdict, not part of it: with
 * the usual 3 repetitions per side its smallest possible value is 0.1.
 *
 * For an inconclusive verdict, reps_needed estimates the repetitions per side
 * needed to resolve a change of the threshold's size with a two-sided test at
 * the CI's level and power 0.8, from the observed (pooled) variance:
 *
 *     n = 2 ((z_{1-alpha/2} + z_{power}) s / delta)^2,
 *     delta = |centre_a| T / (100 + T)   (the nearer edge, the decrease)
 *
 * (the normal-approximation sample size of a two-sample comparison of means),
 * rounded up and at least one more than the larger side has now. It is an
 * estimate from a few samples, not a promise. Details: docs/statistics.md.
 *
 * Censored values (verdict_compare_censored): a value flagged censored is a
 * lower bound, the true value is >= it (a percentile beyond a histogram's
 * range). The centres, CI and tests above would treat it as exact, so with
 * any censored value on either side:
 *
 *  - when the direction is provable, i.e. one side has no censored value and
 *    every one of its values lies below every value of the other side (then
 *    every true value of the other side lies above it too): the change is a
 *    bound, change_bound +1 ("at least", computed from the recorded values)
 *    or -1 ("at most", for a decrease of the censored baseline); p is the
 *    exact two-sided p of a complete separation, 2 / C(n_A + n_B, n_A); the
 *    verdict is better/worse when that p is below 1 - level and the bound
 *    lies beyond the threshold; with too few runs for the separation to be
 *    significant (3 a side: p = 0.1) it is inconclusive with reps_needed
 *    the count per side that would be (4 a side: p = 0.029); otherwise
 *    inconclusive with `censored` set;
 *  - otherwise: inconclusive with `censored` set, no CI, no p and no
 *    reps_needed (more repetitions of values that are bounds do not help;
 *    a range that holds the data does).
 *
 * Never `no change` from bounds.
 *
 * Exact data (verdict_exact_data; docs/statistics.md "Exact and near-exact
 * data"): a guest on a virtual clock repeats itself, 11 11 11 11 against
 * 7 7 7 7, and a bootstrap or a rank test of such values only counts how
 * few there are. When every value is > 0 and each side is *exact*, its
 * repeats all identical or, with 3 or more, all but one identical (the
 * "one differing repeat": the spread of the repeats is the noise), the
 * change is read off the values themselves: the interval of every ratio
 * b_j / a_i (a point, [x, x], for identical repeats) takes the CI's place;
 *
 *  - the interval within the threshold: no change;
 *  - the interval beyond it on one side, the two sides' ranges apart by at
 *    least the wider range (a differing repeat is nearer its own side than
 *    the other): better/worse when p_exact < 1 - level, where p_exact is
 *    0 for a source the caller declares deterministic (struct
 *    verdict_options.source) and otherwise the largest chance any
 *    distribution of independent repeats, the same on both sides, gives a
 *    pattern at least this exact (a coarse grid makes identical repeats by
 *    chance; verdict_exact_p); else inconclusive with the repetitions at
 *    which it would be below;
 *  - otherwise (near-exact sides whose interval straddles an edge): the
 *    rules above.
 *
 * Sides need 2 values each (3 for one with a differing repeat), 1 when the
 * source is deterministic. v.p is the p-value a caller tests against its
 * level: p_exact for a difference read off exact data, p_sign for the
 * paired rule below, p_mwu otherwise.
 *
 * Paired by seed (struct verdict_options seed_a and seed_b; docs/statistics.md
 * "Paired by seed"): repetition r of each side ran under the same seeded
 * perturbation, so a_i and b_j of one seed are a pair (a seed that is
 * missing on a side, or that a side has twice, pairs nothing). With n >= 2
 * pairs of >= 2 seeds, values > 0 and nothing censored, when the data are
 * not exact (above) and *every seed agrees* (each pair's change b/a - 1
 * beyond the threshold, all the same way), the verdict is the sign test's:
 * p_sign = 2 * 0.5^n, the two-sided chance that n pairs of a change with
 * median 0 all share a sign; better/worse when p_sign < 1 - level, else
 * the ordinary rules' verdict when they decide unpaired (4 a side fully
 * apart: p 0.029 by ranks), else inconclusive with the seeds needed (6 for
 * 0.05: 2 * 0.5^6 = 0.031; 5 give 0.0625). The CI's place takes the range of the pairs' changes. When the
 * seeds do not all agree: the ordinary rules above (the bootstrap and rank
 * test).
 *
 * Pure computation on top of stats.c; functions return 0 or -1 (errno).
 */
#ifndef SL_VERDICT_H
#define SL_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stats.h"

enum verdict_better { VERDICT_LOWER_IS_BETTER = 1, VERDICT_HIGHER_IS_BETTER = 2 };

enum verdict_kind {
	VERDICT_NO_CHANGE = 0,
	VERDICT_BETTER = 1,
	VERDICT_WORSE = 2,
	VERDICT_INCONCLUSIVE = 3,
};

#define VERDICT_DEFAULT_THRESHOLD_PCT 2.0
/* a noise threshold is a percentage in (0, VERDICT_MAX_THRESHOLD_PCT): the
 * CLI's --threshold and a plan's repetitions.threshold_pct alike, both
 * through verdict_threshold_valid */
#define VERDICT_MAX_THRESHOLD_PCT 1000.0
#define VERDICT_DEFAULT_LEVEL         0.95
#define VERDICT_DEFAULT_POWER         0.8

/* where the values come from: UNKNOWN (the default) judges exactness from
 * the values alone; DETERMINISTIC is the caller's word that repeats of one
 * configuration can only differ by what they measure (a guest on a virtual
 * clock, qemu -icount): identical repeats are then the truth, one value a
 * side is enough, and a difference read off exact data has p_exact 0 */
enum verdict_source { VERDICT_SOURCE_UNKNOWN = 0, VERDICT_SOURCE_DETERMINISTIC = 1 };

/* what exact data the values are (verdict_exact_data) */
enum verdict_exact {
	VERDICT_EXACT_NONE = 0,      /* ordinary data: the bootstrap and rank test */
	VERDICT_EXACT_IDENTICAL = 1, /* every repeat of each side identical */
	VERDICT_EXACT_NEAR = 2,      /* and on one or both sides one differing repeat */
};

struct verdict_options {
	enum verdict_better better;
	double threshold_pct;      /* noise threshold in %, > 0 (default 2),
				    * symmetric on the log ratio */
	int threshold_percent;     /* 1: the rule before thresholds were
				    * symmetric, kept for bisections stored
				    * then: no change when the CI lies in
				    * [-T, +T] %, beyond when |change| > T;
				    * 0 (default): symmetric */
	enum stats_centre centre;  /* STATS_MEDIAN (default), STATS_HMEAN for
				    * rates of equal work, or STATS_MEAN */
	double level;              /* CI level (default 0.95) */
	double power;              /* for reps_needed (default 0.8) */
	unsigned resamples;        /* bootstrap resamples (default 10000) */
	uint64_t seed;             /* bootstrap seed (default STATS_BOOT_SEED) */
	enum verdict_source source; /* default VERDICT_SOURCE_UNKNOWN */
	const struct stats_boot_draws *draws; /* the bootstrap's indices kept
				    * (stats_boot_draws_new) for these sizes,
				    * resamples and seed: the same interval,
				    * faster; NULL (default) draws them */
	const struct stats_mwu_null *mwu_null; /* the rank test's exact null
				    * distribution kept (stats_mwu_null_new) for
				    * these sizes: the same p; NULL (default)
				    * computes it */
	const int64_t *seed_a, *seed_b; /* the seed of each value (run.seed; < 0:
				    * none): the sides paired by seed; NULL
				    * (default): not paired */
};
void verdict_options_default(struct verdict_options *o,
			     enum verdict_better better);

struct verdict {
	enum verdict_kind kind;
	const char *reason;        /* static text: why this verdict */
	int insufficient;          /* 1: fewer than 2 samples on a side */
	size_t n_a, n_b;
	double centre_a, centre_b; /* NAN if undefined */
	double change_pct;         /* 100 (centre_b / centre_a - 1) */
	double ci_lo_pct, ci_hi_pct; /* bootstrap CI of change_pct; NAN if none */
	double p_mwu;              /* two-sided; NAN if not computed */
	int mwu_exact;             /* 1: exact distribution, 0: normal approx. */
	size_t reps_needed;        /* inconclusive only: per side; 0 unknown */
	double threshold_pct, level;
	/* censored values (verdict_compare_censored) */
	size_t censored_a, censored_b;  /* values that are lower bounds, per side */
	double bound;              /* the smallest of them (NAN when none) */
	int change_bound;          /* +1: change_pct is a lower bound of the change
				    * ("at least"), -1: an upper bound ("at most"),
				    * 0: an estimate */
	int censored;              /* 1: inconclusive because values are bounds */
	/* exact data: the verdict was read off the values (ci_lo_pct, ci_hi_pct
	 * hold every ratio b_j / a_i); NONE: the bootstrap and rank test */
	enum verdict_exact exact;
	int deterministic;         /* the options' source was DETERMINISTIC */
	size_t paired;             /* pairs by seed (0: not paired) */
	int sign_rule;             /* 1: the verdict is the paired sign test's
				    * (every seed agrees), v.p its p_sign */
	double p;                  /* the p-value to test: p_exact for a difference
				    * read off exact data, else p_mwu (NAN if none) */
};

/* o NULL: defaults with lower-is-better. Fails only on bad arguments or
 * memory; every statistical outcome, "not enough data" included, is a
 * verdict. */
int verdict_compare(const double *a, size_t na, const double *b, size_t nb,
		    const struct verdict_options *o, struct verdict *v);

/* the same with censored values: ca[i] != 0 when a[i] is a lower bound
 * (ca, cb NULL: none); see the rules at the top */
int verdict_compare_censored(const double *a, const unsigned char *ca, size_t na,
			     const double *b, const unsigned char *cb, size_t nb,
			     const struct verdict_options *o, struct verdict *v);

/* the exact two-sided p of a complete separation of samples of m and n
 * values: min(1, 2 / C(m + n, m)) */
double verdict_separation_p(size_t m, size_t n);

/* 1 when pct is a valid noise threshold: 0 < pct < VERDICT_MAX_THRESHOLD_PCT
 * (NAN and infinities are not) */
int verdict_threshold_valid(double pct);

/* the lower edge of a symmetric threshold in percent: -100 T / (100 + T)
 * (the change whose ratio is 1 / (1 + T/100)); NAN unless T > 0 */
double verdict_threshold_down_pct(double threshold_pct);

/* 1 when a change of change_pct lies at or beyond a symmetric threshold of
 * threshold_pct (|ln(1 + change/100)| >= ln(1 + T/100), the edge itself
 * included, to 1 part in 10^9), a change of -100% or less included; 0
 * when within it or when either is NAN */
int verdict_beyond(double change_pct, double threshold_pct);

/*
 * Exact data: are a and b exact (see the top), and what do they say. kind
 * NONE when a value is not > 0 or not finite, a side has too few values
 * (2, or 3 with a differing repeat; 1 and 3 for a deterministic source) or
 * a side has more than one differing repeat.
 */
struct verdict_exact_data {
	enum verdict_exact kind;
	int odd;                   /* differing repeats, both sides together (0..2) */
	double lo_pct, hi_pct;     /* min and max of 100 (b_j / a_i - 1) */
	int apart;                 /* the ranges apart by at least the wider range */
	double p;                  /* p_exact: 0 (deterministic), else verdict_exact_p,
				    * and never above the p of a complete separation */
};
int verdict_exact_data(const double *a, size_t na, const double *b, size_t nb,
		       enum verdict_source source, struct verdict_exact_data *e);

/*
 * The largest chance, over every distribution F (discrete ones included),
 * that na and nb independent values from F show exact sides apart with at
 * most `odd` differing repeats in all: the p-value of such a pattern when
 * nothing changed. With M(s, t) = s^s t^t / (s + t)^(s + t), the largest
 * p^s (1 - p)^t, a pattern with c_a and c_b identical values and o
 * differing ones has chance at most na^[a has one] nb^[b has one]
 * M(c_b - 1, o) M(c_a - 1, c_b + o) (and the same with a and b swapped);
 * the patterns of at most `odd` are added up. Identical sides: 0.148 for
 * 2 a side, 0.035 for 3, 0.0084 for 4, 0.0021 for 5. Also at most the p of
 * a complete separation, 2 / C(na + nb, na). NAN on sizes no pattern has.
 */
double verdict_exact_p(size_t na, size_t nb, int odd);

/* the fewest repetitions a side at which identical sides reach p_exact <
 * alpha (3 for 0.05, 4 for 0.01) */
size_t verdict_exact_reps(double alpha);

/* the paired sign rule: the two-sided p of n pairs all changed the same way
 * when the median change is 0, min(1, 2 * 0.5^n); and the fewest pairs at
 * which that is below alpha (6 for 0.05, 8 for 0.01) */
double verdict_sign_p(size_t n);
size_t verdict_sign_reps(double alpha);

/* "better", "worse", "no change", "inconclusive" */
const char *verdict_kind_name(enum verdict_kind k);

/*
 * Noise floor from an A/A pair (two sets of runs of the same configuration):
 * the coefficient of variation of each side and of both pooled, and the
 * bootstrap CI of the ratio of centres with its half-width in percent
 * (100 (hi - lo) / 2). A threshold below that half-width cannot be resolved
 * with this many repetitions. Needs >= 2 samples per side.
 */
struct noise_floor {
	size_t n_a, n_b;
	double cv_a, cv_b, cv_all;
	double ratio, ci_lo, ci_hi;     /* centre_b / centre_a and its CI */
	double half_width_pct;
};
int verdict_noise_floor(const double *a, size_t na, const double *b,
			size_t nb, const struct verdict_options *o,
			struct noise_floor *nf);

/* the same from a verdict already computed on a and b with the same options
 * (its bootstrap CI is the noise floor's CI: no second bootstrap) */
int verdict_noise_floor_from(const double *a, size_t na, const double *b, size_t nb,
			     const struct verdict *v, struct noise_floor *nf);

/* the repetitions per side formula above; 0 if s or delta is not > 0 */
size_t verdict_reps_estimate(double s, double delta, double level,
			     double power);

#endif
