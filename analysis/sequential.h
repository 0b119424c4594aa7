/*
 * Sequential repetitions: when to stop giving a pair of configurations more
 * rounds (plan "repetitions": {"min", "max", "until": "decided"}). Pure
 * computation; the session (harness/orchestrate/seqrun.c) feeds it the
 * values stored so far after every interleaved round.
 *
 * The design is a group-sequential one with alpha spending (Lan-DeMets):
 * the looks are the rounds n = min .. max, the information fraction
 * t = n / max, and the spending function says how much of the error rate
 * alpha may have been used by t: Pocock-type alpha * ln(1 + (e - 1) t)
 * (the default: spends evenly, stops early) or O'Brien-Fleming-type
 * 2 - 2 Phi(z_{alpha/2} / sqrt t) (spends almost nothing early, keeps the
 * last look close to the fixed design). How look n's level follows
 * (enum seq_boundary): exact group-sequential boundaries (the default: a
 * first crossing at look n has exactly the spending increment as its
 * chance under no effect, computed by recursive numerical integration and
 * cached per design; with a futility stop), or Bonferroni's 1 - alpha_n,
 * alpha_n = spent(t_n) - spent(t_{n-1}) (the first look gets everything
 * spent up to it; the design of plans stored before: valid whatever the
 * correlation between looks, but conservative).
 *
 * A look: the Welch confidence interval at that level of the difference
 * of mean log values (the log ratio of geometric means), in percent:
 *   CI excludes 0, the estimate is at or beyond the threshold and the
 *     Mann-Whitney p of the n values a side is below alpha -> different
 *     (better / worse by the metric's direction), as verdict.h rule 4 with
 *     the rank test compare applies (so never before 4 rounds);
 *   CI within the threshold -> equivalent, as rule 3 (the threshold is
 *     symmetric on the log ratio, as verdict.h's: T% bounds the ratio by
 *     1 + T/100 and 1/(1 + T/100), any T > 0);
 *   exact design only: neither decision in reach by max -> futile (stop
 *     undecided; see sequential.c's futile());
 *   otherwise continue (until max rounds).
 * Values <= 0 or non-finite, and censored values (bounds), are never
 * decided: such a pair runs to max.
 *
 * Exact data (verdict.h, verdict_exact_data): when the n values of each side
 * are identical, or all but one identical, the look reads the change off
 * them, the interval of every ratio b_j / a_i in place of the Welch
 * interval: within the threshold -> equivalent; beyond it, the sides apart
 * and p_exact below the look's level -> different; beyond it but p_exact
 * not yet below -> continue (identical repeats this few could be chance).
 * With the design's source DETERMINISTIC p_exact is 0, so such a pair is
 * decided at the first look, at min; with the source unknown at the first
 * look whose level p_exact is below (5 rounds for the default 3..30 at
 * alpha 0.05, where the rank test alone waits for 6). Details:
 * docs/statistics.md.
 */
#ifndef SL_SEQUENTIAL_H
#define SL_SEQUENTIAL_H

#include <stddef.h>

#include "analysis/verdict.h"

enum seq_spending { SEQ_POCOCK = 0, SEQ_OBF = 1 };

/*
 * How a look's level follows from the spending function:
 *   SEQ_BONFERRONI  look n at alpha_n = spent(t_n) - spent(t_{n-1}) (the
 *                   design of plans stored before "boundaries" existed);
 *   SEQ_EXACT       exact group-sequential boundaries: the z boundary c_n of
 *                   each look is solved so that the chance of a first
 *                   crossing at look n, for a statistic with independent
 *                   increments under no effect, is exactly that increment
 *                   (recursive numerical integration, Armitage-McPherson-
 *                   Rowe); look n is at the nominal level 2 Q(c_n), far
 *                   larger than alpha_n because the looks are correlated.
 *                   With it, a futility stop: a pair that can reach neither
 *                   decision by max (see seq_evaluate) stops undecided.
 */
enum seq_boundary { SEQ_BONFERRONI = 0, SEQ_EXACT = 1 };

struct seq_design {
	int min, max;              /* rounds: first look at min, the last at max */
	double alpha;              /* overall error rate, default 0.05 */
	double threshold_pct;      /* noise threshold, default 2 */
	enum seq_spending spending;
	enum seq_boundary boundary; /* default SEQ_EXACT */
	enum verdict_source source; /* default VERDICT_SOURCE_UNKNOWN */
};
void seq_design_default(struct seq_design *d);
/* 0, or -1 with a message (static) in *why */
int seq_design_check(const struct seq_design *d, const char **why);
const char *seq_spending_name(enum seq_spending s);
const char *seq_boundary_name(enum seq_boundary b);

/* cumulative alpha spent by information fraction t in [0, 1] */
double seq_spent(const struct seq_design *d, double t);
/* the two-sided (nominal) error rate of the look after n rounds (0 before
 * min); NAN when the exact boundaries cannot be computed (out of memory) */
double seq_look_alpha(const struct seq_design *d, int n);

/*
 * Exact two-sided boundaries (z scale) for K looks at the information
 * fractions t[0..K) (increasing, t[K-1] = 1), spending `alpha` with the
 * spending function `sp`: c[k] such that a standard Brownian motion in
 * information time, seen at the t[k], first leaves (-c_k sqrt t_k,
 * c_k sqrt t_k) at look k with probability spent(t_k) - spent(t_{k-1}).
 * c[k] is INFINITY for a look that spends nothing. 0, or -1 (ENOMEM).
 * seq_look_alpha caches these per design.
 */
int seq_exact_bounds(const double *t, int K, double alpha, enum seq_spending sp, double *c);

enum seq_decision { SEQ_CONTINUE = 0, SEQ_DIFFERENT, SEQ_EQUIVALENT, SEQ_FUTILE };

struct seq_look {
	enum seq_decision decision;
	int n;                     /* rounds looked at: min(n_a, n_b) */
	double alpha;              /* of this look */
	double change_pct;         /* 100 (geomean_b / geomean_a - 1) */
	double lo_pct, hi_pct;     /* its CI at 1 - alpha */
	int worse;                 /* SEQ_DIFFERENT: 1 worse, 0 better */
	const char *why;           /* a short reason for CONTINUE and FUTILE */
	enum verdict_exact exact;  /* read off exact data: lo_pct, hi_pct hold
				    * every ratio b_j / a_i */
	double p_exact;            /* its p (verdict_exact_data), NAN if none */
};

/*
 * Look at A and B (the first n values of each, n = min(na, nb)); censored
 * (may be NULL) flags bounds. lower_is_better gives the direction. Fails
 * (-1) only on bad arguments.
 */
int seq_evaluate(const struct seq_design *d, const double *a, size_t na, const double *b,
		 size_t nb, const unsigned char *ca, const unsigned char *cb, int lower_is_better,
		 struct seq_look *out);

#endif
