/*
 * The output parsers of the external-tool drivers, exposed for unit tests
 * (cyclictest.c, hackbench.c, stressng.c).
 */
#ifndef SL_PARSERS_H
#define SL_PARSERS_H

#include "workloads/workload.h"

char *cyclictest_sanitize_json(const char *in);
int cyclictest_text_overflows(const char *text, long long *out, int max);
int cyclictest_parse_result(const char *json_text, const char *text, long long hist_us,
			    struct metric_set *ms, struct strbuf *err);
int hackbench_parse_text(const char *text, double *time_s);
int stressng_parse_yaml(const char *yaml, double *ops, double *ops_per_s);
int stressng_parse_text(const char *text, const char *stressor, double *ops, double *ops_per_s);

#endif
