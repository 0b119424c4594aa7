/*
 * rtla timerlat (Debian's rtla, the 6.1 kernel's version): timer wakeup
 * latency measured by the kernel's timerlat tracer, per CPU and per
 * context: at the timer IRQ ("irq") and in the woken per-CPU real-time
 * thread ("thread", what cyclictest measures from user space).
 *
 * Runs `rtla timerlat hist -d DURATION -p PERIOD -b 1 -E HISTOGRAM_US
 * [-c CPUS] [-P f:PRIO] [-a AUTO_US]` and parses its text histogram (rtla
 * 6.1 has no JSON): a header "Index   IRQ-000   Thr-000 ..." naming one
 * column per CPU and context (CPUs without samples have none), one row per
 * non-empty 1 us bucket, then "over:", "count:", "min:", "avg:", "max:".
 * Each column becomes a linear 1 us histogram; the CPUs of a context are
 * merged into "irq_us" / "thread_us" (percentiles from the merge); samples
 * in "over:" are overflow, so a percentile there is stored censored
 * (metric_add_hist_pct), while min/avg/max are rtla's own and exact also
 * beyond the range. rtla reports whole microseconds (truncated), as
 * cyclictest does. Every count is checked against "count:"; a context
 * with no samples on a CPU (its column is there for the other context) has
 * rtla's initial min, 18446744073709551615, which is ignored.
 *
 * "auto_analysis": rtla 6.1's automatic mode (-a US; the timerlat_aa
 * analysis of rtla 6.3+ does not exist in 6.1): tracing stops when a thread
 * latency exceeds US, rtla prints "rtla timerlat hit stop tracing" and saves
 * the trace with the IRQ's stack (timerlat_trace.txt, kept with the run);
 * its text and whether it stopped are stored in schedlab-extra.json and as
 * the metric auto_stopped. A stopped run measured less than duration_s:
 * measured_s says how long. rtla looks whether the trace stopped once a
 * second and says so only when duration_s has not run out first (its
 * SIGALRM handler stops the trace too, and then it keeps quiet): with a
 * duration_s of 1-2 s on a loaded machine a hit can go unreported
 * (auto_stopped 0, no trace), so the parameter's help asks for more.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/parsers.h"
#include "workloads/workload.h"

#define TL_MAX_COLS 1024

static const struct param_spec timerlat_params[] = {
	{ "duration_s", PT_INT, "10", 1, 86400, NULL, .help = "measurement time in seconds" },
	{ "period_us", PT_INT, "1000", 100, 1000000, NULL, .help = "timerlat period (timer interval)" },
	{ "priority", PT_INT, "0", 0, 99, NULL,
	  .help = "SCHED_FIFO priority of the timerlat threads; 0 = the kernel's default (FIFO 95)" },
	{ "cpus", PT_STR, NULL, 0, 0, NULL,
	  .help = "CPU list to measure (\"0-3,6\"); default: every online CPU" },
	{ "histogram_us", PT_INT, "1000", 10, 1000000, NULL,
	  .help = "histogram range in us (1 us buckets); samples above are counted as overflow" },
	{ "auto_analysis", PT_BOOL, "false", 0, 0, NULL,
	  .help = "rtla's automatic mode (-a): stop at a thread latency above auto_threshold_us and "
	  "keep the trace with the IRQ stack (timerlat_trace.txt) and rtla's text (rtla looks once "
	  "a second: give it a duration_s of several seconds, or a hit may go unreported)" },
	{ "auto_threshold_us", PT_INT, "100", 1, 1000000, NULL,
	  .help = "the thread latency that stops the trace in automatic mode" },
	PARAM_LOAD("background load while measuring"),
	PARAM_END,
};

static int check(const json_t *p, const char *path, struct strbuf *err)
{
	return rtla_check_cpus(p, path, err);
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	(void)err;
	strvec_push(&ex->argv, "rtla");
	strvec_push(&ex->argv, "timerlat");
	strvec_push(&ex->argv, "hist");
	strvec_pushf(&ex->argv, "--duration=%lld", param_int(p, "duration_s"));
	strvec_pushf(&ex->argv, "--period=%lld", param_int(p, "period_us"));
	strvec_push(&ex->argv, "--bucket-size=1");
	strvec_pushf(&ex->argv, "--entries=%lld", param_int(p, "histogram_us"));
	const char *cpus = param_str(p, "cpus");
	if (cpus)
		strvec_pushf(&ex->argv, "--cpus=%s", cpus);
	if (param_int(p, "priority") > 0)
		strvec_pushf(&ex->argv, "--priority=f:%lld", param_int(p, "priority"));
	if (param_bool(p, "auto_analysis")) {
		strvec_pushf(&ex->argv, "--auto=%lld", param_int(p, "auto_threshold_us"));
		strvec_push(&ex->files, "timerlat_trace.txt");
	}
	/* rtla 6.1 reads the events in user space and tears its tracefs
	 * instance down at the end: under load on a slow guest (TCG) a 3 s
	 * run took 13-20 s; a kill would leave the instance behind */
	ex->timeout_s = (double)param_int(p, "duration_s") * 3 + 60;
	/* stopped early all the same (the timeout, Ctrl-C), it gets SIGINT,
	 * which it handles by tearing down; SIGTERM would end it on the spot */
	ex->stop_sigint = 1;
	ex->package = "rtla";
	return 0;
}

struct tl_col {
	int thread;            /* 0 irq, 1 thread */
	int cpu;
	struct hist h;
	long long in_hist, over, count, min, max, avg;
	int has_count, has_min, has_max, has_avg;
};

/* a count or a latency: a plain non-negative integer up to 2^53 */
static int tl_num(const char *tok, long long *out)
{
	if (!isdigit((unsigned char)tok[0]) || strlen(tok) > 16)
		return -1;
	char *end;
	long long v = strtoll(tok, &end, 10);
	if (*end || v < 0 || v > HIST_COUNT_MAX)
		return -1;
	*out = v;
	return 0;
}

/* "# Duration:   0 00:00:10" -> seconds; -1 when absent or malformed */
/* the line on which rtla says its automatic mode stopped the trace (text
 * without escapes), or NULL */
static const char *auto_hit(const char *text)
{
	const char *hit = strstr(text, "hit stop tracing");
	while (hit && hit > text && hit[-1] != '\n')
		hit--;
	return hit;
}

double rtla_parse_duration(const char *text)
{
	const char *p = text ? strstr(text, "Duration:") : NULL;
	if (!p)
		p = text ? strstr(text, "duration:") : NULL;
	int d, h, m, s;
	if (!p || sscanf(p + 9, "%d %d:%d:%d", &d, &h, &m, &s) != 4 || d < 0 || h < 0 || m < 0 ||
	    s < 0)
		return -1;
	return ((double)d * 24 + h) * 3600 + m * 60 + s;
}

static void add_ctx_metrics(struct metric_set *ms, const char *ctx, struct tl_col *cols,
			    int ncols, int thread, long long hist_us)
{
	struct hist all;
	hist_init_linear(&all, (size_t)hist_us);
	long long min = -1, max = -1;
	double wsum = 0, wn = 0;
	int any = 0;
	char name[48];
	for (int i = 0; i < ncols; i++) {
		struct tl_col *c = &cols[i];
		if (c->thread != thread || !c->count)
			continue;
		any = 1;
		hist_merge(&all, &c->h);
		if (c->has_min && (min < 0 || c->min < min))
			min = c->min;
		if (c->has_max && c->max > max)
			max = c->max;
		if (c->has_avg) {
			wsum += (double)c->avg * (double)c->count;
			wn += (double)c->count;
		}
	}
	if (!any) {
		hist_free(&all);
		return;
	}
	all.min = min >= 0 ? (double)min : NAN;
	all.max = max >= 0 ? (double)max : NAN;
	snprintf(name, sizeof(name), "%s_lat_min_us", ctx);
	metric_add(ms, name, all.min, "us", BETTER_LOWER);
	snprintf(name, sizeof(name), "%s_lat_avg_us", ctx);
	metric_add(ms, name, wn > 0 ? wsum / wn : NAN, "us", BETTER_LOWER);
	static const struct { const char *suffix; double p; } pct[] = {
		{ "p50", 50 }, { "p99", 99 }, { "p999", 99.9 },
	};
	for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		snprintf(name, sizeof(name), "%s_lat_%s_us", ctx, pct[i].suffix);
		metric_add_hist_pct(ms, name, &all, pct[i].p, 1, "us");
	}
	snprintf(name, sizeof(name), "%s_lat_max_us", ctx);
	metric_add(ms, name, all.max, "us", BETTER_LOWER);
	snprintf(name, sizeof(name), "%s_overflows", ctx);
	metric_add(ms, name, (double)all.overflow, "count", BETTER_LOWER);
	snprintf(name, sizeof(name), "%s_samples", ctx);
	metric_add(ms, name, (double)all.total, "count", BETTER_NONE);
	/* per CPU: the worst case and p99, and the histogram itself */
	for (int i = 0; i < ncols; i++) {
		struct tl_col *c = &cols[i];
		if (c->thread != thread || !c->count)
			continue;
		c->h.min = c->has_min ? (double)c->min : NAN;
		c->h.max = c->has_max ? (double)c->max : NAN;
		snprintf(name, sizeof(name), "%s_lat_p99_cpu%d_us", ctx, c->cpu);
		metric_add_hist_pct(ms, name, &c->h, 99, 1, "us");
		snprintf(name, sizeof(name), "%s_lat_max_cpu%d_us", ctx, c->cpu);
		metric_add(ms, name, c->h.max, "us", BETTER_LOWER);
		snprintf(name, sizeof(name), "%s_cpu%d_us", ctx, c->cpu);
		metric_add_hist(ms, name, "us", &c->h);
	}
	snprintf(name, sizeof(name), "%s_us", ctx);
	metric_add_hist(ms, name, "us", &all);
}

int timerlat_parse_hist(const char *raw, long long hist_us, struct metric_set *ms,
			struct strbuf *err)
{
	if (hist_us < 1 || hist_us > 10000000) {
		strbuf_addf(err, "rtla timerlat: histogram range %lld us out of [1, 10^7]", hist_us);
		return -1;
	}
	char *text = rtla_strip_escapes(raw);
	struct tl_col *cols = xcalloc(TL_MAX_COLS, sizeof(*cols));
	int ncols = -1, ret = -1, lineno = 0;
	char tok[64];
	const char *line = text;
	while (*line) {
		const char *eol = strchr(line, '\n');
		const char *next = eol ? eol + 1 : line + strlen(line);
		const char *p = line;
		lineno++;
		if (!rtla_token(&p, tok, sizeof(tok))) {
			line = next;
			continue;
		}
		if (!strcmp(tok, "Index")) {
			if (ncols >= 0) {
				strbuf_addf(err, "rtla timerlat output: line %d: a second header", lineno);
				goto out;
			}
			ncols = 0;
			while (rtla_token(&p, tok, sizeof(tok))) {
				int thread;
				if (!strncmp(tok, "IRQ-", 4))
					thread = 0;
				else if (!strncmp(tok, "Thr-", 4))
					thread = 1;
				else {
					strbuf_addf(err, "rtla timerlat output: line %d: unknown column "
						    "\"%s\" (expected IRQ-NNN or Thr-NNN)", lineno, tok);
					goto out;
				}
				long long cpu;
				if (tl_num(tok + 4, &cpu) || cpu > 65535 || ncols == TL_MAX_COLS) {
					strbuf_addf(err, "rtla timerlat output: line %d: bad column \"%s\"",
						    lineno, tok);
					goto out;
				}
				struct tl_col *c = &cols[ncols++];
				c->thread = thread;
				c->cpu = (int)cpu;
				hist_init_linear(&c->h, (size_t)hist_us);
			}
			line = next;
			continue;
		}
		if (ncols < 0) { /* before the header: "# RTLA timerlat histogram", ... */
			line = next;
			continue;
		}
		enum { ROW_BUCKET, ROW_OVER, ROW_COUNT, ROW_MIN, ROW_AVG, ROW_MAX } kind;
		long long bucket = 0;
		if (!strcmp(tok, "over:"))
			kind = ROW_OVER;
		else if (!strcmp(tok, "count:"))
			kind = ROW_COUNT;
		else if (!strcmp(tok, "min:"))
			kind = ROW_MIN;
		else if (!strcmp(tok, "avg:"))
			kind = ROW_AVG;
		else if (!strcmp(tok, "max:"))
			kind = ROW_MAX;
		else if (!tl_num(tok, &bucket))
			kind = ROW_BUCKET;
		else { /* rtla's messages after the table ("rtla timerlat hit stop tracing") */
			line = next;
			continue;
		}
		for (int i = 0; i < ncols; i++) {
			struct tl_col *c = &cols[i];
			long long v = 0;
			if (!rtla_token(&p, tok, sizeof(tok))) {
				strbuf_addf(err, "rtla timerlat output: line %d: %d values for %d "
					    "columns", lineno, i, ncols);
				goto out;
			}
			if (kind == ROW_AVG && !strcmp(tok, "-"))
				continue;
			/* a context without samples on a CPU whose other context
			 * has some (automatic mode stops early): rtla prints its
			 * untouched min, ULLONG_MAX, and a max of 0; ignored */
			if ((kind == ROW_MIN || kind == ROW_MAX || kind == ROW_AVG) && c->has_count &&
			    !c->count && tok[strspn(tok, "0123456789")] == 0)
				continue;
			if (tl_num(tok, &v)) {
				strbuf_addf(err, "rtla timerlat output: line %d: \"%s\" is not a "
					    "count (0 to 2^53)", lineno, tok);
				goto out;
			}
			switch (kind) {
			case ROW_BUCKET:
				if (__builtin_add_overflow(c->in_hist, v, &c->in_hist) ||
				    c->in_hist > HIST_COUNT_MAX) {
					strbuf_addf(err, "rtla timerlat output: line %d: more than 2^53 "
						    "samples", lineno);
					goto out;
				}
				if (bucket < hist_us)
					hist_record_n(&c->h, (uint64_t)bucket, (uint64_t)v);
				else
					hist_add_overflow(&c->h, (uint64_t)v);
				break;
			case ROW_OVER:
				c->over = v;
				hist_add_overflow(&c->h, (uint64_t)v);
				break;
			case ROW_COUNT: c->count = v; c->has_count = 1; break;
			case ROW_MIN: c->min = v; c->has_min = 1; break;
			case ROW_AVG: c->avg = v; c->has_avg = 1; break;
			case ROW_MAX: c->max = v; c->has_max = 1; break;
			}
		}
		if (rtla_token(&p, tok, sizeof(tok))) {
			strbuf_addf(err, "rtla timerlat output: line %d: more values than the %d "
				    "columns", lineno, ncols);
			goto out;
		}
		line = next;
	}
	if (ncols < 0) {
		strbuf_addstr(err, "rtla timerlat output: no histogram (no \"Index IRQ-000 ...\" "
			      "header)");
		goto out;
	}
	int samples = 0;
	for (int i = 0; i < ncols; i++) {
		struct tl_col *c = &cols[i];
		if (!c->has_count) {
			strbuf_addstr(err, "rtla timerlat output: no \"count:\" row");
			goto out;
		}
		if (c->count != c->in_hist + c->over) {
			strbuf_addf(err, "rtla timerlat output: %s-%03d: count %lld but the "
				    "histogram holds %lld (+%lld over)", c->thread ? "Thr" : "IRQ",
				    c->cpu, c->count, c->in_hist, c->over);
			goto out;
		}
		samples += c->count > 0;
	}
	if (!samples && !auto_hit(text)) {
		strbuf_addstr(err, "rtla timerlat output: no samples on any CPU");
		goto out;
	}
	/* automatic mode may stop at its threshold before a sample is in the
	 * histogram (a 1 us threshold in a loaded TCG guest): no latency
	 * metrics then, the stop itself is what it measured */
	if (samples) {
		add_ctx_metrics(ms, "irq", cols, ncols, 0, hist_us);
		add_ctx_metrics(ms, "thread", cols, ncols, 1, hist_us);
	}
	double d = rtla_parse_duration(text);
	if (d >= 0)
		metric_add(ms, "measured_s", d, "s", BETTER_NONE);
	ret = 0;
out:
	for (int i = 0; i < TL_MAX_COLS; i++)
		hist_free(&cols[i].h);
	free(cols);
	free(text);
	return ret;
}

/* automatic mode: whether rtla stopped at the threshold, and its text from
 * "rtla timerlat hit stop tracing" on (auto_hit) */
json_t *timerlat_auto_result(const char *raw, long long threshold_us, const char *trace)
{
	char *text = rtla_strip_escapes(raw);
	const char *hit = auto_hit(text);
	json_t *o = json_pack("{s:I,s:b,s:s,s:b}", "threshold_us", (json_int_t)threshold_us,
			      "stopped", hit != NULL, "text", hit ? hit : "", "trace_kept",
			      trace != NULL);
	free(text);
	return o;
}

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	if (timerlat_parse_hist(out->out, param_int(p, "histogram_us"), ms, err))
		return -1;
	if (param_bool(p, "auto_analysis")) {
		const char *trace = json_string_value(json_object_get(out->files,
								      "timerlat_trace.txt"));
		json_t *a = timerlat_auto_result(out->out, param_int(p, "auto_threshold_us"), trace);
		metric_add(ms, "auto_stopped", json_is_true(json_object_get(a, "stopped")), "count",
			   BETTER_LOWER);
		ms->extra = json_pack("{s:s,s:o}", "tool", "rtla timerlat", "auto_analysis", a);
	}
	return 0;
}

static int explain(const json_t *p, const struct wl_output *out, struct strbuf *msg)
{
	(void)p;
	return rtla_explain("timerlat", out->out, out->err, msg);
}

/* the metrics parse() can store ("*": any text; docs/metrics.md) */
static const char *const timerlat_metric_names[] = {
	"*_lat_min_us", "*_lat_avg_us", "*_lat_p50_us", "*_lat_p99_us", "*_lat_p999_us",
	"*_lat_max_us", "*_lat_p99_cpu*_us", "*_lat_max_cpu*_us", "*_overflows", "*_samples",
	"measured_s", "auto_stopped", NULL,
};

const struct workload_ops timerlat_workload = {
	.name = "timerlat",
	.summary = "rtla timerlat: timer IRQ and thread wakeup latency per CPU from the kernel's "
		   "timerlat tracer",
	.tool = "rtla",
	.package = "rtla",
	.tracer = "timerlat",
	.primary = "thread_lat_p99_us",
	.metrics = timerlat_metric_names,
	.params = timerlat_params,
	.range_param = "histogram_us",
	.check = check,
	.estimate_s = rtla_estimate,
	.build = build,
	.parse = parse,
	.explain = explain,
};
