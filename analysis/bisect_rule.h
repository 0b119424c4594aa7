/*
 * The decisions of `schedlab bisect` (docs/bisect.md), pure: which commit
 * to measure next, whether the two ends differ enough to bisect at all, and
 * whether a measured commit is like the good end, like the bad end, or
 * neither. The comparisons are analysis/verdict.c's (`compare`'s rules:
 * bootstrap CI of the change against the noise threshold) with one more
 * condition: a difference counts only when the Mann-Whitney p is below
 * the look's level: alpha_look = alpha / (max_steps * looks) (Bonferroni,
 * bisections stored before schema 13) or the exact group-sequential level
 * of the look among its step's (bisect_alpha_at, every new bisection), so
 * that the chance of any wrong classification in a whole bisection stays
 * below alpha / 2 however often it looks (stated in docs/bisect.md).
 *
 *   good  the commit differs significantly from the bad end towards the
 *         good one, and not significantly from the good end towards bad;
 *   bad   the mirror image;
 *   more  anything else (it differs from both ends, or from neither):
 *         more repetitions, and after the last look `unclear`, which is
 *         treated like a commit that cannot be measured (`skip`): the
 *         search goes on around it and it is never guessed.
 *
 * The drift guard (bisect_drifted; docs/bisect.md "Drift"): after a call,
 * the end the commit was called like is measured again beside it; when
 * that end no longer matches its first measurement, the other end is
 * measured again too, the call is made again against the ends measured
 * beside the commit, and every later midpoint is measured with fresh
 * rounds of both ends beside it.
 */
#ifndef SL_ANALYSIS_BISECT_RULE_H
#define SL_ANALYSIS_BISECT_RULE_H

#include <stddef.h>

#include "analysis/verdict.h"

enum bisect_state {
	BS_UNTESTED = 0,
	BS_GOOD,
	BS_BAD,
	BS_SKIP,     /* does not build or boot, or gave no values */
	BS_UNCLEAR,  /* like neither end after the last look */
};
const char *bisect_state_name(enum bisect_state s);

/*
 * The next commit to measure among st[0..n), where st[0] is the good end
 * and st[n-1] the bad end: lo = the last good before the first bad, hi =
 * the first bad; among the untested commits strictly between, the one
 * nearest to the middle (the lower on a tie). -1 when none is left.
 * *lo and *hi are set either way.
 */
int bisect_next(const enum bisect_state *st, size_t n, size_t *lo, size_t *hi);

/* the per-look level: alpha / (max_steps * looks), looks = the repetitions
 * a step may grow to divided by those of one round, rounded up */
double bisect_alpha_look(double alpha, int max_steps, int repetitions, int max_repetitions);

/*
 * The level of look `look` (1 .. looks) of a step. exact 0: Bonferroni,
 * bisect_alpha_look's alpha / (max_steps x looks) at every look. exact 1:
 * each step's looks share alpha / max_steps as a group-sequential design
 * (analysis/sequential.h's exact boundaries, Pocock-type spending, looks
 * at 1/looks, 2/looks, .. 1): the chance of any crossing over a step's
 * looks under no difference is alpha / max_steps as with Bonferroni, but
 * each look's level is larger, as the looks of one step share their
 * first rounds. NAN on bad arguments or no memory.
 */
double bisect_alpha_at(int exact, double alpha, int max_steps, int looks, int look);

struct bisect_cmp {
	struct verdict v;          /* B against A, compare's rules */
	int significant;           /* v is better/worse and p_mwu < alpha_look */
};

/*
 * The ends: bad against good. 0 with *dir set to VERDICT_WORSE or
 * VERDICT_BETTER (the direction of the change from good to bad) when they
 * differ significantly, 1 when not (out->v says how: its verdict, CI and
 * reps_needed), -1 on bad arguments.
 */
int bisect_judge_ends(const double *good, size_t ng, const double *bad, size_t nb,
		      const struct verdict_options *vo, double alpha_look,
		      struct bisect_cmp *out, enum verdict_kind *dir);

enum bisect_class { BC_GOOD, BC_BAD, BC_MORE };
/* a measured commit m against both ends (vs_good: m against good; vs_bad:
 * m against bad), `dir` from bisect_judge_ends; *why a static text */
int bisect_classify(const double *good, size_t ng, const double *bad, size_t nb,
		    const double *m, size_t nm, const struct verdict_options *vo,
		    double alpha_look, enum verdict_kind dir, struct bisect_cmp *vs_good,
		    struct bisect_cmp *vs_bad, enum bisect_class *cls, const char **why);

/*
 * Drift: an end measured again beside a midpoint (`fresh`) against its
 * first measurement (`first`): 1 when they no longer match, 0 when they
 * do, -1 on bad arguments. "No longer match" is compare's verdict better
 * or worse (the CI of the change excludes 0 and the change is at or
 * beyond the threshold), without the per-look level: looser than a call,
 * so that a drift large enough to make a wrong call is seldom missed (a
 * false alarm costs one more round of the other end, never a wrong call).
 */
int bisect_drifted(const double *first, size_t nf, const double *fresh, size_t nn,
		   const struct verdict_options *vo, struct bisect_cmp *out);

#endif
