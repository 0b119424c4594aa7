/*
 * The output parsers of the external-tool drivers, exposed for unit tests
 * (cyclictest.c, hackbench.c, perfbench.c, sockperf.c, stressng.c), and rt-app's
 * task-set builder (rtapp.c).
 */
#ifndef SL_PARSERS_H
#define SL_PARSERS_H

#include "workloads/workload.h"

char *cyclictest_sanitize_json(const char *in);
int cyclictest_text_overflows(const char *text, long long *out, int max);
int cyclictest_parse_result(const char *json_text, const char *text, long long hist_us,
			    struct metric_set *ms, struct strbuf *err);
int hackbench_parse_text(const char *text, double *time_s);

/* perf bench sched (perfbench.c): what perf's default format printed;
 * a value perf does not print for the benchmark is NAN */
struct perfbench_result {
	double time_s;           /* "Total time: X [sec]" */
	double usecs_per_op;     /* pipe: "X usecs/op" */
	double ops_per_s;        /* pipe: "N ops/sec" */
};
/* bench: "messaging" or "pipe"; -1 with err naming the line expected */
int perfbench_parse(const char *bench, const char *text, struct perfbench_result *r,
		    struct strbuf *err);
/* 1 and the reason when perf's output tells why it failed, else 0 */
int perfbench_explain(const char *out_text, const char *err_text, struct strbuf *msg);
/* sockperf (sockperf.c): its summary of a --full-rtt test, in us; a value
 * it did not print is NAN (std-dev, dropped) */
struct sockperf_result {
	double valid_s, sent, received, observations, dropped;
	double avg_us, stddev_us, min_us, p50_us, p90_us, p99_us, p999_us, p9999_us, max_us;
};
/* -1 with err naming the line that is missing */
int sockperf_parse_summary(const char *text, struct sockperf_result *r, struct strbuf *err);
/* every round trip of sockperf's --full-log CSV into h (log-linear, ns;
 * initialised here); -1 with err when it has no header */
int sockperf_parse_full_log(const char *csv, struct hist *h, struct strbuf *err);
int stressng_parse_yaml(const char *yaml, double *ops, double *ops_per_s);
/* 1 when s is a stress-ng stressor name (workloads/stressng.c's list) */
int stressng_known_stressor(const char *s);
int stressng_parse_text(const char *text, const char *stressor, double *ops, double *ops_per_s);

/* pgbench (pgbench.c): its report on stdout; a line it did not print is NAN */
struct pgbench_report {
	double tps;              /* "tps = X (without initial connection time)" */
	double transactions;     /* "number of transactions actually processed: N" */
	double failed;           /* "number of failed transactions: N (x%)" (pgbench 15) */
	double lat_avg_ms;       /* "latency average = X ms" */
};
int pgbench_parse_report(const char *text, struct pgbench_report *r, struct strbuf *err);
/* sl-pgbench.json (the latency histogram of the transaction log) into ms */
int pgbench_parse_result(const char *json_text, struct metric_set *ms, struct strbuf *err);
/* 1 and the reason (sl-pgbench's or pgbench's error line) from stderr, else 0 */
int pgbench_explain(const char *err_text, struct strbuf *msg);

/* rt-app's JSON task description for resolved params (malloc'd), or NULL */
char *rtapp_build_taskset(const json_t *params, struct strbuf *err);
/* files: {name: content} with rt-app-NAME-IDX.log logs */
int rtapp_parse_logs(const json_t *params, const json_t *files, struct metric_set *ms,
		     struct strbuf *err);
/* 1 and a message when stderr tells why rt-app failed (admission control) */
int rtapp_explain(const json_t *params, const char *stderr_text, struct strbuf *msg);

/* rtla (rtla.c, timerlat.c, osnoise.c) */
int rtla_check_cpus(const json_t *params, const char *path, struct strbuf *err);
/* the estimate_s of rtla timerlat and osnoise: duration_s and 1.5 s for
 * setting the tracer up and reading it back */
double rtla_estimate(const json_t *params);
/* a copy without terminal escapes (ESC [ ... final, ESC c) and CRs (malloc'd) */
char *rtla_strip_escapes(const char *in);
/* 2 and the reason when rtla's output says the kernel lacks the tracer (the
 * run is skipped), 1 and a message for another refusal it names, else 0 */
int rtla_explain(const char *tracer, const char *out, const char *err, struct strbuf *msg);
int rtla_token(const char **p, char *tok, size_t size);
/* rtla's "Duration: D HH:MM:SS" in seconds, -1 without one */
double rtla_parse_duration(const char *text);
int timerlat_parse_hist(const char *text, long long hist_us, struct metric_set *ms,
			struct strbuf *err);
json_t *timerlat_auto_result(const char *text, long long threshold_us, const char *trace);
int osnoise_parse_top(const char *text, struct metric_set *ms, struct strbuf *err);

#endif
