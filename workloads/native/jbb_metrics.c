/*
 * SPECjbb2015 metric arithmetic (max-jOPS, per-SLA jOPS, critical-jOPS) over
 * an RT-curve step list; the definitions are in jbb.h and docs/workloads-native.md.
 */
#include "workloads/native/jbb_metrics.h"

#include <math.h>

const double jbb_sla_ms[JBB_NSLA] = { 10, 25, 50, 75, 100 };

int jbb_step_pass(double injected, double achieved, double tolerance_pct)
{
	if (!(injected > 0))
		return 0;
	return achieved >= injected * (1.0 - tolerance_pct / 100.0);
}

double jbb_geomean(const double *v, size_t n)
{
	if (!n)
		return 0;
	double s = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] > 0))
			return 0;
		s += log(v[i]);
	}
	return exp(s / (double)n);
}

void jbb_summarise(const struct jbb_step *steps, size_t n, struct jbb_result *r)
{
	r->max_jops = 0;
	r->critical_jops = 0;
	r->passed = 0;
	r->failed = 0;
	for (int k = 0; k < JBB_NSLA; k++)
		r->sla_jops[k] = 0;
	for (size_t i = 0; i < n; i++) {
		if (!steps[i].ok) {
			r->failed = 1;
			break;
		}
		r->passed++;
		r->max_jops = steps[i].ir;
		for (int k = 0; k < JBB_NSLA; k++)
			if (steps[i].p99_ms <= jbb_sla_ms[k] && steps[i].ir > r->sla_jops[k])
				r->sla_jops[k] = steps[i].ir;
	}
	r->critical_jops = jbb_geomean(r->sla_jops, JBB_NSLA);
}
