/*
 * cyclictest (rt-tests): wakeup latency of periodic real-time threads.
 *
 * Runs `cyclictest -q -m -p PRIO -i INTERVAL -D DURATION -h HIST
 * --json=cyclictest.json` and merges the per-thread histograms into one
 * linear 1 us histogram. Samples above the histogram's range are only
 * counted by cyclictest in its text output ("# Histogram Overflows: a b");
 * they are added as overflow so that a percentile falling there is stored
 * as a lower bound (censored, with a note: metric_add_hist_pct), never
 * silently too low. lat_max_us and lat_avg_us are cyclictest's own, exact
 * also beyond the histogram. When the text output
 * lacks the line, overflow = cycles - sum(histogram) per thread.
 *
 * Quirks tolerated: keys "cmdline:" and "rt_test_version:" with a trailing
 * colon, "avg": nan/-nan (rewritten to null before parsing), empty
 * histograms (when -h was not given).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/parsers.h"
#include "workloads/workload.h"

static const char *const policies[] = { "fifo", "rr", "other", NULL };

static const struct param_spec cyclictest_params[] = {
	{ "duration_s", PT_INT, "10", 1, 86400, NULL, .help = "measurement time in seconds" },
	{ "interval_us", PT_INT, "1000", 50, 1000000, NULL, .help = "timer interval of each thread" },
	{ "priority", PT_INT, "95", 0, 99, NULL, .help = "real-time priority of the measuring threads" },
	{ "policy", PT_ENUM, "\"fifo\"", 0, 0, policies, .help = "scheduling policy of the threads" },
	{ "threads", PT_INT, "0", 0, 4096, NULL,
	  .help = "measuring threads; 0 = one per online CPU, each pinned to its CPU" },
	{ "histogram_us", PT_INT, "10000", 10, 1000000, NULL,
	  .help = "histogram range in us (1 us buckets); samples above are counted as overflow" },
	PARAM_LOAD("background load while measuring"),
	PARAM_END,
};

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	strvec_push(&ex->argv, "cyclictest");
	strvec_push(&ex->argv, "-q");
	strvec_push(&ex->argv, "-m");
	strvec_pushf(&ex->argv, "--priority=%lld", param_int(p, "priority"));
	strvec_pushf(&ex->argv, "--policy=%s", param_str(p, "policy"));
	strvec_pushf(&ex->argv, "--interval=%lld", param_int(p, "interval_us"));
	strvec_pushf(&ex->argv, "--duration=%lld", param_int(p, "duration_s"));
	strvec_pushf(&ex->argv, "--histogram=%lld", param_int(p, "histogram_us"));
	if (param_int(p, "threads") == 0) {
		strvec_push(&ex->argv, "-t");
		strvec_push(&ex->argv, "-a");
	} else {
		strvec_pushf(&ex->argv, "--threads=%lld", param_int(p, "threads"));
	}
	strvec_push(&ex->argv, "--json=cyclictest.json");
	strvec_push(&ex->files, "cyclictest.json");
	/* cyclictest prints every bucket of its histogram when it ends, from
	   its main thread at normal priority: in a TCG guest under a hackbench
	   load 50000 buckets took 20-40 s of the run (docs/qemu.md, "RT latency
	   under TCG"), so the limit grows by 1 s per 1000 buckets */
	ex->timeout_s = (double)param_int(p, "duration_s") * 1.5 + 30 +
			(double)param_int(p, "histogram_us") / 1000;
	ex->package = "rt-tests";
	return 0;
}

/* rewrite bare nan/-nan/inf values (not valid JSON) to null */
char *cyclictest_sanitize_json(const char *in)
{
	struct strbuf sb = STRBUF_INIT;
	int in_str = 0;
	for (const char *p = in; *p; p++) {
		if (*p == '"' && (p == in || p[-1] != '\\'))
			in_str = !in_str;
		if (!in_str && (p == in || p[-1] == ':' || p[-1] == ' ')) {
			const char *q = p;
			if (*q == '-')
				q++;
			if (!strncasecmp(q, "nan", 3) || !strncasecmp(q, "inf", 3)) {
				strbuf_addstr(&sb, "null");
				p = q + 2;
				while (isalpha((unsigned char)p[1]))
					p++;
				continue;
			}
		}
		strbuf_addch(&sb, *p);
	}
	return strbuf_detach(&sb, NULL);
}

/* "# Histogram Overflows: 00006 00044" -> counts per thread; returns count or -1 */
int cyclictest_text_overflows(const char *text, long long *out, int max)
{
	const char *p = text ? strstr(text, "# Histogram Overflows:") : NULL;
	if (!p)
		return -1;
	p += strlen("# Histogram Overflows:");
	int n = 0;
	while (n < max) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			break;
		out[n++] = strtoll(p, (char **)&p, 10);
	}
	return n;
}

int cyclictest_parse_result(const char *json_text, const char *text, long long hist_us,
			    struct metric_set *ms, struct strbuf *err)
{
	char *clean = cyclictest_sanitize_json(json_text);
	json_error_t jerr;
	json_t *j = json_loads(clean, 0, &jerr);
	free(clean);
	if (!j) {
		strbuf_addf(err, "cyclictest JSON: line %d column %d: %s", jerr.line, jerr.column,
			    jerr.text);
		return -1;
	}
	json_t *threads = json_object_get(j, "thread");
	if (!json_is_object(threads) || !json_object_size(threads)) {
		strbuf_addstr(err, "cyclictest JSON: no \"thread\" results");
		json_decref(j);
		return -1;
	}
	long long ovf_text[4096];
	int n_ovf = cyclictest_text_overflows(text, ovf_text, 4096);
	struct hist h;
	hist_init_linear(&h, (size_t)hist_us);
	double min = NAN, max = NAN, avg_sum = 0, cycles_sum = 0;
	int any_hist = 0;
	/* cyclictest writes "histogram": {} both without -h and with every
	 * sample beyond the range; the latter is told by its command line or
	 * by the text's "# Histogram Overflows:" line */
	json_t *cl = json_object_get(j, "cmdline:");
	if (!cl)
		cl = json_object_get(j, "cmdline");
	int hist_run = n_ovf > 0 ||
		       (json_is_string(cl) && strstr(json_string_value(cl), "--histogram"));
	const char *key;
	json_t *t;
	json_object_foreach(threads, key, t) {
		long tid = strtol(key, NULL, 10);
		json_t *cy = json_object_get(t, "cycles");
		double cycles = json_number_value(cy);
		/* counts are untrusted: exact in a double and far from overflow */
		if (cy && (!json_is_number(cy) || !(cycles >= 0 && cycles <= HIST_COUNT_MAX))) {
			strbuf_addf(err, "cyclictest JSON: thread %s: cycles %g out of range "
				    "(0 to 2^53)", key, cycles);
			json_decref(j);
			hist_free(&h);
			return -1;
		}
		json_t *mn = json_object_get(t, "min"), *mx = json_object_get(t, "max"),
		       *av = json_object_get(t, "avg");
		if (json_is_number(mn) && (isnan(min) || json_number_value(mn) < min))
			min = json_number_value(mn);
		if (json_is_number(mx) && (isnan(max) || json_number_value(mx) > max))
			max = json_number_value(mx);
		if (json_is_number(av) && cycles > 0) {
			avg_sum += json_number_value(av) * cycles;
			cycles_sum += cycles;
		}
		json_t *hj = json_object_get(t, "histogram");
		/* an empty histogram is one whose samples all lie beyond its
		 * range (cyclictest then writes "histogram": {}): overflow */
		if (json_is_object(hj) && hist_run)
			any_hist = 1;
		const char *bk;
		json_t *bv;
		long long in_hist = 0;
		json_object_foreach(hj, bk, bv) {
			long long b = strtoll(bk, NULL, 10), c = json_integer_value(bv);
			if (b < 0 || c < 0)
				continue;
			if (c > HIST_COUNT_MAX || __builtin_add_overflow(in_hist, c, &in_hist) ||
			    in_hist > HIST_COUNT_MAX) {
				strbuf_addf(err, "cyclictest JSON: thread %s: histogram count %lld for "
					    "%s us makes more than 2^53 samples", key, c, bk);
				json_decref(j);
				hist_free(&h);
				return -1;
			}
			hist_record_n(&h, (uint64_t)b, (uint64_t)c);
			any_hist = 1;
		}
		long long ovf;
		if (n_ovf > 0 && tid >= 0 && tid < n_ovf) {
			ovf = ovf_text[tid];
			if (ovf < 0 || ovf > HIST_COUNT_MAX) {
				strbuf_addf(err, "cyclictest output: thread %s: %lld overflows is out "
					    "of range (0 to 2^53)", key, ovf);
				json_decref(j);
				hist_free(&h);
				return -1;
			}
		}
		else
			ovf = (long long)cycles - in_hist;
		if (ovf > 0 && any_hist)
			hist_add_overflow(&h, (uint64_t)ovf);
	}
	json_decref(j);
	if (!any_hist) {
		hist_free(&h);
		strbuf_addstr(err, "cyclictest JSON: the threads have no histogram (run without -h?)");
		return -1;
	}
	h.min = min;
	h.max = max;
	metric_add(ms, "lat_min_us", min, "us", BETTER_LOWER);
	metric_add(ms, "lat_avg_us", cycles_sum > 0 ? avg_sum / cycles_sum : NAN, "us",
		   BETTER_LOWER);
	static const struct { const char *name; double p; } pct[] = {
		{ "lat_p50_us", 50 }, { "lat_p99_us", 99 }, { "lat_p999_us", 99.9 },
	};
	for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		metric_add_hist_pct(ms, pct[i].name, &h, pct[i].p, 1, "us");
	metric_add(ms, "lat_max_us", max, "us", BETTER_LOWER);
	metric_add(ms, "overflows", (double)h.overflow, "count", BETTER_LOWER);
	metric_add(ms, "samples", (double)h.total, "count", BETTER_NONE);
	metric_add_hist(ms, "latency_us", "us", &h);
	return 0;
}

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	const char *js = json_string_value(json_object_get(out->files, "cyclictest.json"));
	if (!js) {
		strbuf_addstr(err, "cyclictest wrote no JSON result");
		return -1;
	}
	return cyclictest_parse_result(js, out->out, param_int(p, "histogram_us"), ms, err);
}

/* the metrics parse() can store ("*": any text; docs/metrics.md) */
static const char *const cyclictest_metric_names[] = {
	"lat_min_us", "lat_avg_us", "lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_max_us",
	"overflows", "samples", NULL,
};

const struct workload_ops cyclictest_workload = {
	.name = "cyclictest",
	.summary = "rt-tests cyclictest: timer wakeup latency of real-time threads",
	.tool = "cyclictest",
	.package = "rt-tests",
	.primary = "lat_p99_us",
	.metrics = cyclictest_metric_names,
	.params = cyclictest_params,
	.range_param = "histogram_us",
	.estimate_s = wl_estimate_duration,
	.build = build,
	.parse = parse,
};
