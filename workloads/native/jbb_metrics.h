/*
 * SPECjbb2015-style metric arithmetic, kept pure (no I/O, no threads) so that
 * it is unit tested on its own; bin/sl-jbb is its only user.
 *
 * A run is a list of RT-curve steps, each at an injection rate (IR, jOPS) that
 * is a percentage of the high-bound injection rate (HBIR). A step passes when
 * the rate the backend achieved is within the tolerance of the rate actually
 * injected. The metrics follow SPECjbb2015's definitions:
 *
 *   max_jops       IR of the last passing step before the first failing step
 *                  (0 when the first step already failed);
 *   sla_<S>ms_jops the highest IR among the passing steps up to max_jops
 *                  whose p99 response time is at most S ms (S = 10, 25, 50,
 *                  75, 100); 0 when no such step was measured;
 *   critical_jops  the geometric mean of the five SLA values (0 when one of
 *                  them is 0, since a geometric mean with a zero is zero).
 *
 * Worked example (tests/unit/test_native.c): SLA values 4774, 7442, 9643,
 * 11833, 13791 give critical_jops = exp(mean(ln v)) = 8902.1 -> 8902.
 */
#ifndef SL_JBB_METRICS_H
#define SL_JBB_METRICS_H

#include <stddef.h>

#define JBB_NSLA 5
extern const double jbb_sla_ms[JBB_NSLA];     /* 10, 25, 50, 75, 100 */

struct jbb_step {
	double pct;          /* of HBIR */
	double ir;           /* nominal injection rate of the step, jOPS */
	double injected;     /* requests injected in the measurement window, per second */
	double achieved;     /* requests completed in the measurement window, per second */
	double p99_ms;       /* p99 response time from the scheduled send time */
	int ok;              /* filled by jbb_step_pass() or by the caller */
};

struct jbb_result {
	double max_jops;
	double sla_jops[JBB_NSLA];
	double critical_jops;
	size_t passed;       /* passing steps before the first failure */
	int failed;          /* a failing step was seen (the ramp reached its end) */
};

/* 1 when achieved >= injected * (1 - tolerance_pct/100), else 0. A step with
 * nothing injected fails (there is nothing to judge it by). */
int jbb_step_pass(double injected, double achieved, double tolerance_pct);

/* geometric mean of n values; 0 when any is <= 0 or n == 0 */
double jbb_geomean(const double *v, size_t n);

/* the SPECjbb metrics from a step curve in ramp order (uses steps[i].ok) */
void jbb_summarise(const struct jbb_step *steps, size_t n, struct jbb_result *r);

#endif
