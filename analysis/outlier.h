/*
 * Which repetition of a configuration stands out: the worst value by a
 * metric's direction, and the outliers on the worse side by the median
 * absolute deviation (MAD). The evidence triggers of a plan ("evidence":
 * {"when": "worst" | "flagged"}, harness/orchestrate/evidence.c) decide
 * with these whether a configuration gets its traced run and which run it
 * stands for; the rule is written out in docs/metrics.md ("Evidence
 * triggers").
 *
 * The rule, for values x_1..x_n of one metric (n >= OUTLIER_MIN_N):
 *   m   = median(x)
 *   MAD = median(|x_i - m|), s = 1.4826 * MAD (a consistent estimate of the
 *         standard deviation for normal data, robust to the outliers
 *         themselves)
 *   x_i is an outlier when it lies on the worse side of m (above it when
 *   lower is better, below it when higher is better) by more than
 *   max(k * s, OUTLIER_MIN_REL * |m|).
 * The relative floor keeps a quantized metric whose repetitions are mostly
 * equal (MAD 0) from flagging every value that differs in its last digit.
 * Only the worse side counts: an unusually good run needs no trace.
 *
 * Pure computation, libc only: no printing, no global state.
 */
#ifndef SL_OUTLIER_H
#define SL_OUTLIER_H

#include <stddef.h>

#define OUTLIER_MIN_N 3          /* fewer values: no outlier is called */
#define OUTLIER_MAD_SCALE 1.4826 /* 1 / Phi^-1(3/4) */
#define OUTLIER_MIN_REL 0.01     /* at least 1% of |median| away */
#define OUTLIER_K_DEFAULT 3.0

struct outlier_rule {
	size_t n;                /* values looked at */
	double median, mad;      /* NAN when n is 0 */
	double limit;            /* the worse side's limit (median +- the
				    allowed deviation); NAN when n < OUTLIER_MIN_N */
};

/*
 * flag[i] = 1 for each outlier on the worse side (lower_better: above the
 * limit; else below it), 0 otherwise; the rule's figures in *r. Returns
 * how many were flagged (0 for n < OUTLIER_MIN_N), or -1 on bad input
 * (k <= 0, a NULL array with n > 0, a NAN value) or no memory.
 */
int outlier_mad(const double *x, size_t n, int lower_better, double k, unsigned char *flag,
		struct outlier_rule *r);

/* the index of the worst value (the largest when lower is better, else the
 * smallest; the first of equal ones), -1 when n is 0 */
long outlier_worst(const double *x, size_t n, int lower_better);

#endif
