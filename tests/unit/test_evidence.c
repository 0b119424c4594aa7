/*
 * Unit tests of the evidence triggers' selection logic: the worst value
 * and the MAD outlier rule (analysis/outlier.c) and the decision over a
 * configuration's untraced runs (evidence_decide, harness/orchestrate/
 * evidence.c): which runs are worst or flagged, what is traced, skipped
 * or left waiting, and what the decision says.
 *
 * Reference figures by hand: for {10, 11, 12, 10.5, 30} the median is 11,
 * the absolute deviations {1, 0, 1, 0.5, 19} have median 1, so the
 * lower-is-better limit with k = 3 is 11 + 3 * 1.4826 * 1 = 15.4478.
 */
#include "analysis/outlier.h"
#include "harness/orchestrate/evidence.h"
#include "tests/unit/tap.h"

#define N_(a) (sizeof(a) / sizeof((a)[0]))

TEST(worst_by_direction)
{
	double x[] = { 3, 7, 1, 7, 2 };
	CHECK(outlier_worst(x, 5, 1) == 1);     /* largest, first of equal ones */
	CHECK(outlier_worst(x, 5, 0) == 2);     /* smallest */
	CHECK(outlier_worst(x, 0, 1) == -1);
	CHECK(outlier_worst(x, 1, 0) == 0);
}

TEST(mad_rule_lower_better)
{
	double x[] = { 10, 11, 12, 10.5, 30 };
	unsigned char f[5];
	struct outlier_rule r;
	CHECK(outlier_mad(x, 5, 1, 3, f, &r) == 1);
	CHECK(f[4] == 1 && !f[0] && !f[1] && !f[2] && !f[3]);
	CHECK_NEAR(r.median, 11, 1e-12);
	CHECK_NEAR(r.mad, 1, 1e-12);
	CHECK_NEAR(r.limit, 11 + 3 * 1.4826, 1e-9);
	CHECK(r.n == 5);
	/* a larger k lets it through */
	CHECK(outlier_mad(x, 5, 1, 20, f, &r) == 0);
	/* the same run is on the better side when higher is better: not flagged */
	CHECK(outlier_mad(x, 5, 0, 3, f, &r) == 0);
	CHECK_NEAR(r.limit, 11 - 3 * 1.4826, 1e-9);
}

TEST(mad_rule_higher_better)
{
	/* rps: one run far below */
	double x[] = { 1000, 1010, 990, 1005, 700, 995 };
	unsigned char f[6];
	struct outlier_rule r;
	CHECK(outlier_mad(x, 6, 0, 3, f, &r) == 1);
	CHECK(f[4] == 1);
	CHECK_NEAR(r.median, 997.5, 1e-9);
	/* deviations 2.5 12.5 7.5 7.5 297.5 2.5 -> MAD 7.5 */
	CHECK_NEAR(r.mad, 7.5, 1e-9);
	CHECK_NEAR(r.limit, 997.5 - 3 * 1.4826 * 7.5, 1e-9);
}

TEST(mad_rule_floor_and_small_n)
{
	/* mostly equal values: MAD 0, the 1% floor keeps 100.5 unflagged and
	 * flags 102 */
	double x[] = { 100, 100, 100, 100.5, 102 };
	unsigned char f[5];
	struct outlier_rule r;
	CHECK(outlier_mad(x, 5, 1, 3, f, &r) == 1);
	CHECK(f[4] && !f[3]);
	CHECK_NEAR(r.mad, 0, 1e-12);
	CHECK_NEAR(r.limit, 101, 1e-12);
	/* fewer than 3 values: the rule does not call an outlier */
	double y[] = { 1, 100 };
	CHECK(outlier_mad(y, 2, 1, 3, f, &r) == 0);
	CHECK(!f[0] && !f[1]);
	CHECK(isnan(r.limit));
	CHECK_NEAR(r.median, 50.5, 1e-12);
	/* bad input */
	CHECK(outlier_mad(x, 5, 1, 0, f, &r) == -1);
	double z[] = { 1, NAN, 2 };
	CHECK(outlier_mad(z, 3, 1, 3, f, &r) == -1);
	CHECK(outlier_mad(NULL, 0, 1, 3, NULL, &r) == 0);
}

static const struct evidence_metric time_s = { "time_s", "s", 1 };
static const struct evidence_metric rps = { "rps", "", 0 };

#define OKV(id, v) { id, EVR_OK, 1, v, 0 }

TEST(decide_always)
{
	struct evidence_decision d;
	evidence_decision_init(&d);
	struct evidence_run r[] = { { 1, EVR_PENDING, 0, 0, 0 } };
	CHECK(evidence_decide(EVIDENCE_ALWAYS, 3, &time_s, r, 1, &d) == 0);
	CHECK(d.verdict == EVIDENCE_TRACE && d.of == 0 && d.why.len == 0);
	evidence_decision_release(&d);
}

TEST(decide_worst)
{
	struct evidence_decision d;
	evidence_decision_init(&d);
	struct evidence_run r[] = { OKV(11, 1.2), OKV(12, 1.9), { 13, EVR_FAILED, 0, 0, 0 },
				    OKV(14, 1.3), { 15, EVR_OTHER, 0, 0, 0 } };
	CHECK(evidence_decide(EVIDENCE_WORST, 3, &time_s, r, N_(r), &d) == 0);
	CHECK(d.verdict == EVIDENCE_TRACE);
	CHECK(d.of == 12);
	CHECK_STR(d.why.buf, "worst: run 12 has the worst time_s of its configuration's 3 "
			     "untraced runs with it: 1.9 s (lower is better; median 1.3 s); "
			     "run 13 failed");
	/* higher is better: the smallest rps */
	struct evidence_run q[] = { OKV(1, 900), OKV(2, 1000), OKV(3, 950) };
	CHECK(evidence_decide(EVIDENCE_WORST, 3, &rps, q, 3, &d) == 0);
	CHECK(d.of == 1);
	CHECK_CONTAINS(d.why.buf, "worst: run 1 has the worst rps");
	CHECK_CONTAINS(d.why.buf, ": 900 (higher is better; median 950)");
	/* nothing with a value: traced all the same, linked to a failure */
	struct evidence_run f[] = { { 7, EVR_TIMEOUT, 0, 0, 0 }, { 8, EVR_FAILED, 0, 0, 0 } };
	CHECK(evidence_decide(EVIDENCE_WORST, 3, &time_s, f, 2, &d) == 0);
	CHECK(d.verdict == EVIDENCE_TRACE && d.of == 7);
	CHECK_STR(d.why.buf, "worst: none of its configuration's 2 untraced runs gave time_s; "
			     "run 8 failed; run 7 timed out");
	evidence_decision_release(&d);
}

TEST(decide_wait)
{
	struct evidence_decision d;
	evidence_decision_init(&d);
	struct evidence_run r[] = { OKV(1, 1), { 2, EVR_PENDING, 0, 0, 0 }, OKV(3, 50),
				    { 4, EVR_PENDING, 0, 0, 0 } };
	for (int w = EVIDENCE_WORST; w <= EVIDENCE_FLAGGED; w++) {
		CHECK(evidence_decide((enum evidence_when)w, 3, &time_s, r, N_(r), &d) == 0);
		CHECK(d.verdict == EVIDENCE_WAIT);
		CHECK_CONTAINS(d.why.buf, "waiting for 2 untraced runs of its configuration still "
					  "to do (runs 2, 4)");
	}
	evidence_decision_release(&d);
}

TEST(decide_flagged)
{
	struct evidence_decision d;
	evidence_decision_init(&d);
	/* an outlier */
	struct evidence_run r[] = { OKV(21, 10), OKV(22, 11), OKV(23, 12), OKV(24, 10.5),
				    OKV(25, 30) };
	CHECK(evidence_decide(EVIDENCE_FLAGGED, 3, &time_s, r, N_(r), &d) == 0);
	CHECK(d.verdict == EVIDENCE_TRACE && d.of == 25 && d.flagged == 1);
	CHECK_STR(d.why.buf, "flagged: run 25 (30 s) is an outlier by time_s (higher than "
			     "median 11 s + max(3 x 1.4826 x MAD 1 s, 1% of the median) = 15.45 s)");
	/* nothing flagged: skipped, with the rule and its limit */
	r[4].value = 11.5;
	CHECK(evidence_decide(EVIDENCE_FLAGGED, 3, &time_s, r, N_(r), &d) == 0);
	CHECK(d.verdict == EVIDENCE_SKIP && d.of == 0 && d.flagged == 0);
	CHECK_STR(d.why.buf, "flagged: nothing flagged among its configuration's 5 untraced runs "
			     "(none failed or timed out; no time_s beyond median 11 s + max(3 x "
			     "1.4826 x MAD 0.5 s, 1% of the median) = 13.22 s)");
	/* a smaller k (limit 11 + 0.5 x 1.4826 x 0.5 = 11.37) flags 12 and 11.5:
	   both named, the link is the most extreme */
	CHECK(evidence_decide(EVIDENCE_FLAGGED, 0.5, &time_s, r, N_(r), &d) == 0);
	CHECK(d.verdict == EVIDENCE_TRACE && d.flagged == 2 && d.of == 23);
	CHECK_CONTAINS(d.why.buf, "flagged: run 23 (12 s), run 25 (11.5 s) are outliers by time_s");
	/* a failure and an outlier: the failure is the link */
	struct evidence_run m[] = { OKV(1, 100), OKV(2, 101), { 3, EVR_FAILED, 0, 0, 0 },
				    OKV(4, 99), OKV(5, 60) };
	CHECK(evidence_decide(EVIDENCE_FLAGGED, 3, &rps, m, N_(m), &d) == 0);
	CHECK(d.verdict == EVIDENCE_TRACE && d.of == 3 && d.flagged == 2);
	CHECK_CONTAINS(d.why.buf, "flagged: run 5 (60) is an outlier by rps (lower than median "
				  "99.5 - max(");
	CHECK_CONTAINS(d.why.buf, "; run 3 failed");
	/* too few values for the rule, a timeout flags */
	struct evidence_run t[] = { OKV(1, 1), { 2, EVR_TIMEOUT, 0, 0, 0 } };
	CHECK(evidence_decide(EVIDENCE_FLAGGED, 3, &time_s, t, 2, &d) == 0);
	CHECK(d.verdict == EVIDENCE_TRACE && d.of == 2);
	CHECK_STR(d.why.buf, "flagged: run 2 timed out");
	/* ... and without one it says why the rule did not apply */
	t[1] = (struct evidence_run)OKV(2, 100);
	CHECK(evidence_decide(EVIDENCE_FLAGGED, 3, &time_s, t, 2, &d) == 0);
	CHECK(d.verdict == EVIDENCE_SKIP);
	CHECK_CONTAINS(d.why.buf, "the outlier rule needs 3 ok runs with time_s, there were 2)");
	/* runs skipped for good count for nothing */
	struct evidence_run o[] = { { 1, EVR_OTHER, 0, 0, 0 } };
	CHECK(evidence_decide(EVIDENCE_FLAGGED, 3, &time_s, o, 1, &d) == 0);
	CHECK(d.verdict == EVIDENCE_SKIP);
	CHECK(evidence_decide(EVIDENCE_FLAGGED, 3, &time_s, NULL, 0, &d) == 0);
	CHECK(d.verdict == EVIDENCE_SKIP);
	evidence_decision_release(&d);
}

int main(void)
{
	RUN(worst_by_direction);
	RUN(mad_rule_lower_better);
	RUN(mad_rule_higher_better);
	RUN(mad_rule_floor_and_small_n);
	RUN(decide_always);
	RUN(decide_worst);
	RUN(decide_wait);
	RUN(decide_flagged);
	return tap_done();
}
