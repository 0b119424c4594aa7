/*
 * The decisions of `schedlab bisect`: see bisect_rule.h for the rules. Nothing
 * here touches the database or a kernel; tests/unit/test_bisect.c checks
 * the choice of the next commit, the ends' gate and the classification on
 * synthetic samples, and simulates whole bisections of noisy histories to
 * measure how often one goes wrong.
 */
#include "analysis/bisect_rule.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "analysis/sequential.h"

const char *bisect_state_name(enum bisect_state s)
{
	switch (s) {
	case BS_GOOD: return "good";
	case BS_BAD: return "bad";
	case BS_SKIP: return "skip";
	case BS_UNCLEAR: return "unclear";
	default: return "untested";
	}
}

int bisect_next(const enum bisect_state *st, size_t n, size_t *lo, size_t *hi)
{
	*lo = 0;
	*hi = n ? n - 1 : 0;
	if (n < 2)
		return -1;
	/* hi: the first bad; lo: the last good before it */
	for (size_t i = 1; i < n; i++)
		if (st[i] == BS_BAD) {
			*hi = i;
			break;
		}
	for (size_t i = 0; i < *hi; i++)
		if (st[i] == BS_GOOD)
			*lo = i;
	double mid = (*lo + *hi) / 2.0;
	int best = -1;
	double bestd = 0;
	for (size_t i = *lo + 1; i < *hi; i++) {
		if (st[i] != BS_UNTESTED)
			continue;
		double d = fabs((double)i - mid);
		if (best < 0 || d < bestd) {
			best = (int)i;
			bestd = d;
		}
	}
	return best;
}

double bisect_alpha_look(double alpha, int max_steps, int repetitions, int max_repetitions)
{
	if (max_steps < 1)
		max_steps = 1;
	if (repetitions < 1)
		repetitions = 1;
	int looks = (max_repetitions + repetitions - 1) / repetitions;
	if (looks < 1)
		looks = 1;
	return alpha / ((double)max_steps * looks);
}

double bisect_alpha_at(int exact, double alpha, int max_steps, int looks, int look)
{
	if (max_steps < 1)
		max_steps = 1;
	if (looks < 1 || look < 1 || look > looks || !(alpha > 0))
		return NAN;
	if (!exact)
		return alpha / ((double)max_steps * looks);
	double *t = malloc((size_t)looks * sizeof(double)), *c = malloc((size_t)looks * sizeof(double));
	double r = NAN;
	if (t && c) {
		for (int k = 0; k < looks; k++)
			t[k] = (double)(k + 1) / looks;
		if (!seq_exact_bounds(t, looks, alpha / max_steps, SEQ_POCOCK, c))
			r = isfinite(c[look - 1]) ? 2 * gsl_cdf_ugaussian_Q(c[look - 1]) : 0;
	}
	free(t);
	free(c);
	return r;
}

static int cmp(const double *a, size_t na, const double *b, size_t nb,
	       const struct verdict_options *vo, double alpha_look, struct bisect_cmp *out)
{
	if (verdict_compare(a, na, b, nb, vo, &out->v))
		return -1;
	out->significant = (out->v.kind == VERDICT_WORSE || out->v.kind == VERDICT_BETTER) &&
			   isfinite(out->v.p) && out->v.p < alpha_look;
	return 0;
}

int bisect_judge_ends(const double *good, size_t ng, const double *bad, size_t nb,
		      const struct verdict_options *vo, double alpha_look,
		      struct bisect_cmp *out, enum verdict_kind *dir)
{
	if (!vo || !out || !dir || alpha_look <= 0) {
		errno = EINVAL;
		return -1;
	}
	if (cmp(good, ng, bad, nb, vo, alpha_look, out))
		return -1;
	if (!out->significant)
		return 1;
	*dir = out->v.kind;
	return 0;
}

static enum verdict_kind opposite(enum verdict_kind k)
{
	return k == VERDICT_WORSE ? VERDICT_BETTER : VERDICT_WORSE;
}

int bisect_classify(const double *good, size_t ng, const double *bad, size_t nb,
		    const double *m, size_t nm, const struct verdict_options *vo,
		    double alpha_look, enum verdict_kind dir, struct bisect_cmp *vs_good,
		    struct bisect_cmp *vs_bad, enum bisect_class *cls, const char **why)
{
	if (!vo || !vs_good || !vs_bad || !cls || !why ||
	    (dir != VERDICT_WORSE && dir != VERDICT_BETTER)) {
		errno = EINVAL;
		return -1;
	}
	if (cmp(good, ng, m, nm, vo, alpha_look, vs_good) ||
	    cmp(bad, nb, m, nm, vo, alpha_look, vs_bad))
		return -1;
	/* towards bad: m moved from good the way bad did; towards good: m
	 * moved from bad the way back */
	int to_bad = vs_good->significant && vs_good->v.kind == dir;
	int to_good = vs_bad->significant && vs_bad->v.kind == opposite(dir);
	if (to_good && !to_bad) {
		*cls = BC_GOOD;
		*why = "differs from bad towards good, not from good towards bad";
	} else if (to_bad && !to_good) {
		*cls = BC_BAD;
		*why = "differs from good towards bad, not from bad towards good";
	} else if (to_good && to_bad) {
		*cls = BC_MORE;
		*why = "differs from both ends (between them)";
	} else {
		*cls = BC_MORE;
		*why = "differs significantly from neither end";
	}
	return 0;
}

int bisect_drifted(const double *first, size_t nf, const double *fresh, size_t nn,
		   const struct verdict_options *vo, struct bisect_cmp *out)
{
	if (!vo || !out) {
		errno = EINVAL;
		return -1;
	}
	if (verdict_compare(first, nf, fresh, nn, vo, &out->v))
		return -1;
	out->significant = out->v.kind == VERDICT_WORSE || out->v.kind == VERDICT_BETTER;
	return out->significant;
}
