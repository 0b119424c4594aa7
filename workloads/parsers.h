/*
 * The output parsers of the external-tool drivers, exposed for unit tests
 * (cyclictest.c, hackbench.c, stressng.c), and rt-app's task-set builder
 * (rtapp.c).
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

/* rt-app's JSON task description for resolved params (malloc'd), or NULL */
char *rtapp_build_taskset(const json_t *params, struct strbuf *err);
/* files: {name: content} with rt-app-NAME-IDX.log logs */
int rtapp_parse_logs(const json_t *params, const json_t *files, struct metric_set *ms,
		     struct strbuf *err);
/* 1 and a message when stderr tells why rt-app failed (admission control) */
int rtapp_explain(const json_t *params, const char *stderr_text, struct strbuf *msg);

#endif
