/*
 * rtla osnoise (Debian's rtla, the 6.1 kernel's version): operating-system
 * noise on the CPUs named in the plan, for isolated-CPU work. The kernel's
 * osnoise tracer runs a busy thread per CPU for runtime_us of every
 * period_us and accounts every interruption it sees: the noise (time taken
 * from the thread), the longest single noise, and how many interferences of
 * each class (hardware, NMI, IRQ, softirq, thread) happened.
 *
 * Runs `rtla osnoise top -q -d DURATION -p PERIOD -r RUNTIME [-c CPUS]
 * [-T THRESHOLD] [-P f:PRIO]`; with -q rtla prints only the final summary,
 * still with terminal escapes: a header ("CPU Period Runtime Noise % CPU
 * Aval Max Noise Max Single HW NMI IRQ Softirq Thread", times in us) and
 * one row per CPU: "  1 #3  3000000  1234  99.95886  600  57  0  0  3012
 * 85  12". osnoise_parse_top() reads those rows; a row with another shape
 * is an error (the raw text is kept with the run either way).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/parsers.h"
#include "workloads/workload.h"

static const struct param_spec osnoise_params[] = {
	{ "duration_s", PT_INT, "10", 1, 86400, NULL, .help = "measurement time in seconds" },
	{ "cpus", PT_STR, NULL, 0, 0, NULL,
	  .help = "CPU list to measure (\"2-3\", the isolated CPUs); default: every online CPU" },
	{ "period_us", PT_INT, "1000000", 100, 10000000, NULL, .help = "osnoise period" },
	{ "runtime_us", PT_INT, "1000000", 100, 10000000, NULL,
	  .help = "busy time of the osnoise thread in each period (at most period_us)" },
	{ "threshold_us", PT_INT, "0", 0, 1000000, NULL,
	  .help = "the smallest gap counted as noise; 0 = the tracer's default (1 us)" },
	{ "priority", PT_INT, "0", 0, 99, NULL,
	  .help = "SCHED_FIFO priority of the osnoise threads; 0 = SCHED_OTHER (the default)" },
	PARAM_LOAD("background load while measuring"),
	PARAM_END,
};

static int check(const json_t *p, const char *path, struct strbuf *err)
{
	if (param_int(p, "runtime_us") > param_int(p, "period_us")) {
		strbuf_addf(err, "%s.runtime_us: %lld is longer than period_us (%lld): the osnoise "
			    "thread runs at most the whole period", path, param_int(p, "runtime_us"),
			    param_int(p, "period_us"));
		return -1;
	}
	return rtla_check_cpus(p, path, err);
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	(void)err;
	strvec_push(&ex->argv, "rtla");
	strvec_push(&ex->argv, "osnoise");
	strvec_push(&ex->argv, "top");
	strvec_push(&ex->argv, "--quiet");
	strvec_pushf(&ex->argv, "--duration=%lld", param_int(p, "duration_s"));
	strvec_pushf(&ex->argv, "--period=%lld", param_int(p, "period_us"));
	strvec_pushf(&ex->argv, "--runtime=%lld", param_int(p, "runtime_us"));
	const char *cpus = param_str(p, "cpus");
	if (cpus)
		strvec_pushf(&ex->argv, "--cpus=%s", cpus);
	if (param_int(p, "threshold_us") > 0)
		strvec_pushf(&ex->argv, "--threshold=%lld", param_int(p, "threshold_us"));
	if (param_int(p, "priority") > 0)
		strvec_pushf(&ex->argv, "--priority=f:%lld", param_int(p, "priority"));
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

/* "99.95886" -> 99.95886; -1 when not a percentage */
static int on_pct(const char *tok, double *out)
{
	char *end;
	if (!isdigit((unsigned char)tok[0]))
		return -1;
	double v = strtod(tok, &end);
	if (*end || !(v >= 0 && v <= 100))
		return -1;
	*out = v;
	return 0;
}

static int on_num(const char *tok, double *out)
{
	if (*tok == '#')
		tok++;
	if (!isdigit((unsigned char)tok[0]) || strlen(tok) > 16)
		return -1;
	char *end;
	long long v = strtoll(tok, &end, 10);
	if (*end || v < 0 || v > HIST_COUNT_MAX)
		return -1;
	*out = (double)v;
	return 0;
}

int osnoise_parse_top(const char *raw, struct metric_set *ms, struct strbuf *err)
{
	static const char *const classes[] = { "hw", "nmi", "irq", "softirq", "thread" };
	char *text = rtla_strip_escapes(raw);
	size_t first = ms->nr;    /* a damaged table leaves no metric behind */
	int header = 0, ncpu = 0, ret = -1, lineno = 0;
	double runtime = 0, noise = 0, max_noise = 0, max_single = 0, worst_avail = 101;
	double counts[5] = { 0 };
	char tok[64], name[48];
	const char *line = text;
	while (*line) {
		const char *eol = strchr(line, '\n');
		const char *next = eol ? eol + 1 : line + strlen(line);
		lineno++;
		if (!header) {
			const char *h = strstr(line, "CPU Period");
			if (h && h < next)
				header = 1;
			line = next;
			continue;
		}
		const char *p = line;
		double v[12];
		int n = 0, bad = 0;
		while (n < 12 && rtla_token(&p, tok, sizeof(tok))) {
			if (n == 4 ? on_pct(tok, &v[n]) : on_num(tok, &v[n]))
				bad = 1;
			n++;
		}
		if (n == 0) {
			line = next;
			continue;
		}
		if (n != 12 || bad || rtla_token(&p, tok, sizeof(tok)) || v[0] > 65535) {
			strbuf_addf(err, "rtla osnoise output: line %d: not a CPU row (CPU #periods "
				    "runtime noise %%avail max_noise max_single hw nmi irq softirq "
				    "thread)", lineno);
			goto out;
		}
		int cpu = (int)v[0];
		runtime += v[2];
		noise += v[3];
		if (v[4] < worst_avail)
			worst_avail = v[4];
		if (v[5] > max_noise)
			max_noise = v[5];
		if (v[6] > max_single)
			max_single = v[6];
		snprintf(name, sizeof(name), "noise_max_single_cpu%d_us", cpu);
		metric_add(ms, name, v[6], "us", BETTER_LOWER);
		snprintf(name, sizeof(name), "cpu_avail_cpu%d_pct", cpu);
		metric_add(ms, name, v[4], "%", BETTER_HIGHER);
		for (int k = 0; k < 5; k++) {
			counts[k] += v[7 + k];
			snprintf(name, sizeof(name), "%s_count_cpu%d", classes[k], cpu);
			metric_add(ms, name, v[7 + k], "count", BETTER_LOWER);
		}
		ncpu++;
		line = next;
	}
	if (!header) {
		strbuf_addstr(err, "rtla osnoise output: no summary (no \"CPU Period Runtime ...\" "
			      "header)");
		goto out;
	}
	if (!ncpu || runtime <= 0) {
		strbuf_addstr(err, "rtla osnoise output: no CPU rows (the tracer ran on no CPU)");
		goto out;
	}
	metric_add(ms, "noise_max_single_us", max_single, "us", BETTER_LOWER);
	metric_add(ms, "noise_max_us", max_noise, "us", BETTER_LOWER);
	metric_add(ms, "noise_us", noise, "us", BETTER_LOWER);
	metric_add(ms, "runtime_us", runtime, "us", BETTER_NONE);
	metric_add(ms, "cpu_avail_pct", (runtime - noise) * 100.0 / runtime, "%", BETTER_HIGHER);
	metric_add(ms, "cpu_avail_min_pct", worst_avail, "%", BETTER_HIGHER);
	for (int k = 0; k < 5; k++) {
		snprintf(name, sizeof(name), "%s_count", classes[k]);
		metric_add(ms, name, counts[k], "count", BETTER_LOWER);
	}
	metric_add(ms, "cpus", ncpu, "count", BETTER_NONE);
	double d = rtla_parse_duration(text);
	if (d >= 0)
		metric_add(ms, "measured_s", d, "s", BETTER_NONE);
	ret = 0;
out:
	if (ret)
		ms->nr = first;
	free(text);
	return ret;
}

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	(void)p;
	return osnoise_parse_top(out->out, ms, err);
}

static int explain(const json_t *p, const struct wl_output *out, struct strbuf *msg)
{
	(void)p;
	return rtla_explain("osnoise", out->out, out->err, msg);
}

/* the metrics parse() can store ("*": any text; docs/metrics.md) */
static const char *const osnoise_metric_names[] = {
	"noise_max_single_us", "noise_max_us", "noise_us", "runtime_us", "cpu_avail_pct",
	"cpu_avail_min_pct", "*_count", "noise_max_single_cpu*_us", "cpu_avail_cpu*_pct",
	"*_count_cpu*", "cpus", "measured_s", NULL,
};

const struct workload_ops osnoise_workload = {
	.name = "osnoise",
	.summary = "rtla osnoise: per-CPU operating-system noise (max single noise, CPU "
		   "available, interference counts by class)",
	.tool = "rtla",
	.package = "rtla",
	.tracer = "osnoise",
	.primary = "noise_max_single_us",
	.metrics = osnoise_metric_names,
	.params = osnoise_params,
	.check = check,
	.estimate_s = rtla_estimate,
	.build = build,
	.parse = parse,
	.explain = explain,
};
