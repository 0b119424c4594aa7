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
 * last look close to the fixed design). Look n is taken at the level
 * 1 - alpha_n, alpha_n = spent(t_n) - spent(t_{n-1}) (the first look gets
 * everything spent up to it). By Bonferroni over the looks the chance of
 * any false decision in the whole sequence is at most alpha, whatever the
 * correlation between looks: conservative, simple and valid for any
 * stopping pattern.
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
 *   otherwise continue (until max rounds).
 * Values <= 0 or non-finite, and censored values (bounds), are never
 * decided: such a pair runs to max. Details: docs/statistics.md.
 */
#ifndef SL_SEQUENTIAL_H
#define SL_SEQUENTIAL_H

#include <stddef.h>

enum seq_spending { SEQ_POCOCK = 0, SEQ_OBF = 1 };

struct seq_design {
	int min, max;              /* rounds: first look at min, the last at max */
	double alpha;              /* overall error rate, default 0.05 */
	double threshold_pct;      /* noise threshold, default 2 */
	enum seq_spending spending;
};
void seq_design_default(struct seq_design *d);
/* 0, or -1 with a message (static) in *why */
int seq_design_check(const struct seq_design *d, const char **why);
const char *seq_spending_name(enum seq_spending s);

/* cumulative alpha spent by information fraction t in [0, 1] */
double seq_spent(const struct seq_design *d, double t);
/* the two-sided error rate of the look after n rounds (0 before min) */
double seq_look_alpha(const struct seq_design *d, int n);

enum seq_decision { SEQ_CONTINUE = 0, SEQ_DIFFERENT, SEQ_EQUIVALENT };

struct seq_look {
	enum seq_decision decision;
	int n;                     /* rounds looked at: min(n_a, n_b) */
	double alpha;              /* of this look */
	double change_pct;         /* 100 (geomean_b / geomean_a - 1) */
	double lo_pct, hi_pct;     /* its CI at 1 - alpha */
	int worse;                 /* SEQ_DIFFERENT: 1 worse, 0 better */
	const char *why;           /* a short reason for CONTINUE */
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
