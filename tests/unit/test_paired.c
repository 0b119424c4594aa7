/*
 * Unit tests of the sides paired by seed (analysis/verdict.c, verdict.h
 * "Paired by seed"; docs/statistics.md): the sign rule's p and the seeds
 * it needs, pairs found by seed and not by position, every seed agreeing
 * decided by the sign test or inconclusive with the seeds needed, seeds
 * that disagree left to the ordinary rules, and what pairs nothing (a
 * seed missing or twice on a side, runs without seeds).
 */
#include "analysis/verdict.h"
#include "tests/unit/tap.h"

static void opts(struct verdict_options *o, const int64_t *sa, const int64_t *sb)
{
	verdict_options_default(o, VERDICT_LOWER_IS_BETTER);
	o->resamples = 2000;
	o->seed_a = sa;
	o->seed_b = sb;
}

TEST(sign_p_and_seeds_needed)
{
	CHECK_NEAR(verdict_sign_p(1), 1.0, 1e-12);
	CHECK_NEAR(verdict_sign_p(3), 0.25, 1e-12);
	CHECK_NEAR(verdict_sign_p(5), 0.0625, 1e-12);
	CHECK_NEAR(verdict_sign_p(6), 0.03125, 1e-12);
	CHECK(verdict_sign_reps(0.05) == 6);
	CHECK(verdict_sign_reps(0.01) == 8);
}

/* six seeds, B 10% slower at every one, the seeds' own spread wide (a factor
 * of 6): unpaired the sides overlap (no verdict), paired every seed agrees */
TEST(every_seed_agrees_decides)
{
	static const double a[] = { 10, 20, 30, 40, 50, 60 };
	static const int64_t sa[] = { 101, 102, 103, 104, 105, 106 };
	/* B in another order: paired by seed, not by position */
	static const double b[] = { 66, 11, 55, 22, 44, 33 };
	static const int64_t sb[] = { 106, 101, 105, 102, 104, 103 };
	struct verdict_options o;
	struct verdict v;
	opts(&o, NULL, NULL);
	CHECK(verdict_compare(a, 6, b, 6, &o, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && !v.sign_rule && v.paired == 0);
	opts(&o, sa, sb);
	CHECK(verdict_compare(a, 6, b, 6, &o, &v) == 0);
	CHECK(v.paired == 6 && v.sign_rule);
	CHECK(v.kind == VERDICT_WORSE);
	CHECK_NEAR(v.p, 0.03125, 1e-12);
	CHECK_NEAR(v.ci_lo_pct, 10.0, 1e-9);
	CHECK_NEAR(v.ci_hi_pct, 10.0, 1e-9);
	/* higher is better: the same pairs are better */
	o.better = VERDICT_HIGHER_IS_BETTER;
	CHECK(verdict_compare(a, 6, b, 6, &o, &v) == 0);
	CHECK(v.kind == VERDICT_BETTER && v.sign_rule);
	/* paired by position instead, the changes would disagree */
	static const int64_t pos[] = { 1, 2, 3, 4, 5, 6 };
	opts(&o, pos, pos);
	CHECK(verdict_compare(a, 6, b, 6, &o, &v) == 0);
	CHECK(v.paired == 6 && !v.sign_rule);
}

/* three seeds all agreeing: 2 * 0.5^3 = 0.25, inconclusive, need 6 */
TEST(too_few_seeds_inconclusive)
{
	static const double a[] = { 10, 20, 30 }, b[] = { 12, 24, 36 };
	static const int64_t s[] = { 7, 8, 9 };
	struct verdict_options o;
	struct verdict v;
	opts(&o, s, s);
	CHECK(verdict_compare(a, 3, b, 3, &o, &v) == 0);
	CHECK(v.sign_rule && v.paired == 3);
	CHECK(v.kind == VERDICT_INCONCLUSIVE);
	CHECK_NEAR(v.p, 0.25, 1e-12);
	CHECK(v.reps_needed == 6);
	/* five: 0.0625, still not below 0.05 */
	static const double a5[] = { 10, 20, 30, 40, 50 }, b5[] = { 12, 24, 36, 48, 60 };
	static const int64_t s5[] = { 1, 2, 3, 4, 5 };
	opts(&o, s5, s5);
	CHECK(verdict_compare(a5, 5, b5, 5, &o, &v) == 0);
	CHECK(v.kind == VERDICT_INCONCLUSIVE && v.reps_needed == 6);
}

/* four seeds agreeing, the sides fully apart: the sign test cannot decide
 * (2 * 0.5^4 = 0.125) but the ranks can (p 0.029): worse, not "need 6"
 * (t0160: real-clock runs carry seeds too, and compare said inconclusive
 * where it had said worse) */
TEST(few_seeds_ranks_decide)
{
	static const double a[] = { 10, 11, 12, 13 }, b[] = { 20, 21, 22, 23 };
	static const int64_t s[] = { 1, 2, 3, 4 };
	struct verdict_options o;
	struct verdict v;
	opts(&o, s, s);
	CHECK(verdict_compare(a, 4, b, 4, &o, &v) == 0);
	CHECK(v.kind == VERDICT_WORSE && !v.sign_rule && v.paired == 4);
	CHECK_NEAR(v.p_mwu, 0.0285714, 1e-6);
}

/* a seed whose change is within the threshold, or the other way: not every
 * seed agrees, the ordinary rules decide (never the sign test) */
TEST(seeds_disagree_ordinary_rules)
{
	static const double a[] = { 10, 20, 30, 40, 50, 60 };
	static const double b[] = { 11, 22, 33, 44, 55, 60.5 }; /* the last +0.8% */
	static const int64_t s[] = { 1, 2, 3, 4, 5, 6 };
	struct verdict_options o;
	struct verdict v;
	opts(&o, s, s);
	CHECK(verdict_compare(a, 6, b, 6, &o, &v) == 0);
	CHECK(v.paired == 6 && !v.sign_rule);
	CHECK(v.kind == VERDICT_INCONCLUSIVE);
	CHECK(isnan(v.p) || v.p == v.p_mwu);
	static const double c[] = { 11, 22, 33, 44, 55, 54 }; /* the last -10% */
	CHECK(verdict_compare(a, 6, c, 6, &o, &v) == 0);
	CHECK(!v.sign_rule && v.kind != VERDICT_WORSE && v.kind != VERDICT_BETTER);
}

/* what pairs nothing: a seed on one side only or twice on a side, no seed */
TEST(unpaired_values)
{
	static const double a[] = { 10, 20, 30, 40, 50, 60 };
	static const double b[] = { 11, 22, 33, 44, 55, 66 };
	static const int64_t sa[] = { 1, 2, 3, 4, 5, 6 };
	static const int64_t twice[] = { 1, 1, 3, 4, 5, 6 };
	static const int64_t none[] = { -1, -1, -1, -1, -1, -1 };
	static const int64_t other[] = { 1, 2, 3, 4, 5, 9 };
	struct verdict_options o;
	struct verdict v;
	opts(&o, sa, twice);
	CHECK(verdict_compare(a, 6, b, 6, &o, &v) == 0);
	CHECK(v.paired == 4 && v.sign_rule && v.kind == VERDICT_INCONCLUSIVE && v.reps_needed == 6);
	opts(&o, none, none);
	CHECK(verdict_compare(a, 6, b, 6, &o, &v) == 0);
	CHECK(v.paired == 0 && !v.sign_rule);
	opts(&o, sa, other);
	CHECK(verdict_compare(a, 6, b, 6, &o, &v) == 0);
	CHECK(v.paired == 5 && v.kind == VERDICT_INCONCLUSIVE && v.reps_needed == 6);
	/* identical repeats across seeds stay exact data, decided from the
	   values as before (the exact rule comes first) */
	static const double e[] = { 10, 10, 10, 10 }, f[] = { 12, 12, 12, 12 };
	opts(&o, sa, sa);
	CHECK(verdict_compare(e, 4, f, 4, &o, &v) == 0);
	CHECK(v.exact == VERDICT_EXACT_IDENTICAL && !v.sign_rule && v.kind == VERDICT_WORSE);
}

int main(void)
{
	RUN(sign_p_and_seeds_needed);
	RUN(every_seed_agrees_decides);
	RUN(too_few_seeds_inconclusive);
	RUN(few_seeds_ranks_decide);
	RUN(seeds_disagree_ordinary_rules);
	RUN(unpaired_values);
	return tap_done();
}
