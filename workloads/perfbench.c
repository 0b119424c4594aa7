/*
 * perf bench sched (Debian's linux-perf): two workloads, one per benchmark,
 * because their parameters and their metrics differ:
 *   perf-messaging  `perf bench sched messaging -g G -l L [-t] [-p]`: groups
 *                   of 20 senders and 20 receivers (processes or threads)
 *                   passing 100-byte messages over socketpairs or pipes;
 *                   perf prints the total time only (time_s);
 *   perf-pipe       `perf bench sched pipe -l N [-T]`: two tasks (processes
 *                   or threads) passing a token back and forth over a pair
 *                   of pipes; perf prints the total time, usecs/op and
 *                   ops/sec (time_s, usecs_per_op, ops_per_s).
 * Both are parsed from perf's default output format (the "# Running
 * 'sched/NAME' benchmark:" header, then "Total time: X [sec]", and for pipe
 * "X usecs/op" and "N ops/sec"); perf's numbers are stored as it prints
 * them. Every value that reaches argv is an integer this driver formats
 * (parameters are validated ranges or enums), so none can become an option.
 * The tool is /usr/bin/perf: on Debian 12 linux-perf installs the real
 * binary there (diverting linux-base's wrapper script to perf.wrapper), so
 * the qemu target's initramfs gets the binary and its libraries.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/parsers.h"
#include "workloads/workload.h"

static const char *const modes[] = { "process", "thread", NULL };
static const char *const transports[] = { "socket", "pipe", NULL };

static const struct param_spec messaging_params[] = {
	{ "groups", PT_INT, "10", 1, 1000, NULL,
	  .help = "groups of 20 senders and 20 receivers (perf's -g)" },
	{ "loops", PT_INT, "100", 1, 100000000, NULL,
	  .help = "messages each sender sends to each receiver of its group (perf's -l)" },
	{ "mode", PT_ENUM, "\"process\"", 0, 0, modes,
	  .help = "tasks are processes or threads (perf's -t)" },
	{ "transport", PT_ENUM, "\"socket\"", 0, 0, transports,
	  .help = "socketpair() or pipe() (perf's -p)" },
	PARAM_END,
};

static const struct param_spec pipe_params[] = {
	{ "loops", PT_INT, "100000", 1, 1000000000, NULL,
	  .help = "round trips through the pipes (perf's -l)" },
	{ "mode", PT_ENUM, "\"process\"", 0, 0, modes,
	  .help = "the two tasks are processes or threads (perf's -T)" },
	PARAM_END,
};

static int threaded(const json_t *p)
{
	const char *m = param_str(p, "mode");
	return m && !strcmp(m, "thread");
}

/* perf bench sched messaging: 20 x 20 x loops messages per group; about
 * 1.2 us each measured on 2 CPUs (10 groups x 100 loops: 0.5 s), plus
 * perf's start and the tasks' creation */
static double messaging_estimate(const json_t *p)
{
	return 1.2e-6 * 400.0 * (double)param_int(p, "groups") * (double)param_int(p, "loops") +
	       0.05 * (double)param_int(p, "groups") + 0.2;
}

/* perf bench sched pipe: 2 to 46 us per round trip seen (2 CPUs, host or
 * guest); estimated at 10 */
static double pipe_estimate(const json_t *p)
{
	return 10e-6 * (double)param_int(p, "loops") + 0.2;
}

static void perf_argv(struct wl_exec *ex, const char *bench)
{
	strvec_push(&ex->argv, "perf");
	strvec_push(&ex->argv, "bench");
	strvec_push(&ex->argv, "sched");
	strvec_push(&ex->argv, bench);
	ex->package = "linux-perf";
}

static int messaging_build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	perf_argv(ex, "messaging");
	strvec_push(&ex->argv, "-g");
	strvec_pushf(&ex->argv, "%lld", param_int(p, "groups"));
	strvec_push(&ex->argv, "-l");
	strvec_pushf(&ex->argv, "%lld", param_int(p, "loops"));
	if (threaded(p))
		strvec_push(&ex->argv, "-t");
	if (!strcmp(param_str(p, "transport"), "pipe"))
		strvec_push(&ex->argv, "-p");
	ex->timeout_s = messaging_estimate(p) * 20 + 60;
	return 0;
}

static int pipe_build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	perf_argv(ex, "pipe");
	strvec_push(&ex->argv, "-l");
	strvec_pushf(&ex->argv, "%lld", param_int(p, "loops"));
	if (threaded(p))
		strvec_push(&ex->argv, "-T");
	ex->timeout_s = pipe_estimate(p) * 20 + 60;
	return 0;
}

/* the line of text starting with `key` after leading blanks, or NULL */
static const char *find_line(const char *text, const char *key)
{
	size_t n = strlen(key);
	for (const char *l = text; l && *l;) {
		const char *s = l + strspn(l, " \t");
		if (!strncmp(s, key, n))
			return s;
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return NULL;
}

/* a finite non-negative number at s (after blanks) followed by blanks and
 * `suffix`; 0 and the text after the suffix in *after, else -1 */
static int number_then(const char *s, const char *suffix, double *v, const char **after)
{
	char *end;
	s += strspn(s, " \t");
	if (!(*s >= '0' && *s <= '9'))
		return -1; /* strtod would skip a newline, take a sign, "inf", "nan" */
	*v = strtod(s, &end);
	if (end == s || !isfinite(*v))
		return -1;
	end += strspn(end, " \t");
	if (strncmp(end, suffix, strlen(suffix)))
		return -1;
	*after = end + strlen(suffix);
	return 0;
}

/* a line "<number> <suffix>" and nothing else (usecs/op, ops/sec) in text */
static int number_line(const char *text, const char *suffix, double *v)
{
	const char *after;
	for (const char *l = text; l && *l;) {
		if (!number_then(l, suffix, v, &after) && strspn(after, " \t\r") ==
		    (size_t)(strchrnul(after, '\n') - after))
			return 0;
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return -1;
}

int perfbench_parse(const char *bench, const char *text, struct perfbench_result *r,
		    struct strbuf *err)
{
	char header[64];
	double v;
	const char *l, *after;

	memset(r, 0, sizeof(*r));
	r->time_s = r->usecs_per_op = r->ops_per_s = NAN;
	snprintf(header, sizeof(header), "# Running 'sched/%s' benchmark:", bench);
	if (!text || !find_line(text, header)) {
		strbuf_addf(err, "perf bench sched %s: no \"%s\" line in its output (expected "
			    "perf's default format)", bench, header);
		return -1;
	}
	l = find_line(text, "Total time:");
	if (!l || number_then(l + strlen("Total time:"), "[sec]", &v, &after)) {
		strbuf_addf(err, "perf bench sched %s: no \"Total time: <seconds> [sec]\" line "
			    "in its output", bench);
		return -1;
	}
	r->time_s = v;
	if (strcmp(bench, "pipe"))
		return 0;
	if (number_line(text, "usecs/op", &r->usecs_per_op) ||
	    number_line(text, "ops/sec", &r->ops_per_s)) {
		strbuf_addf(err, "perf bench sched pipe: no \"<number> usecs/op\" and "
			    "\"<number> ops/sec\" lines after its \"Total time:\"");
		return -1;
	}
	return 0;
}

static int messaging_parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
			   struct strbuf *err)
{
	struct perfbench_result r;
	if (perfbench_parse("messaging", out->out, &r, err))
		return -1;
	metric_add(ms, "time_s", r.time_s, "s", BETTER_LOWER);
	return 0;
}

static int pipe_parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		      struct strbuf *err)
{
	struct perfbench_result r;
	if (perfbench_parse("pipe", out->out, &r, err))
		return -1;
	metric_add(ms, "time_s", r.time_s, "s", BETTER_LOWER);
	metric_add(ms, "usecs_per_op", r.usecs_per_op, "us", BETTER_LOWER);
	metric_add(ms, "ops_per_s", r.ops_per_s, "ops/s", BETTER_HIGHER);
	return 0;
}

int perfbench_explain(const char *out_text, const char *err_text, struct strbuf *msg)
{
	const char *texts[] = { err_text, out_text };
	for (int i = 0; i < 2; i++) {
		const char *t = texts[i];
		if (!t)
			continue;
		/* linux-base's /usr/bin/perf wrapper without a linux-perf for the
		 * running kernel: "E: linux-perf-X.Y is not installed." */
		if (strstr(t, "is not installed") && strstr(t, "linux-perf")) {
			strbuf_addstr(msg, "perf is Debian's wrapper script and found no perf for "
				      "the running kernel (install the Debian package linux-perf "
				      "for it)");
			return 1;
		}
		if (strstr(t, "Too many open files")) {
			strbuf_addstr(msg, "perf bench ran out of file descriptors (fewer groups, "
				      "or a higher `ulimit -n`)");
			return 1;
		}
		if (strstr(t, "Unknown collection") || strstr(t, "Unknown benchmark")) {
			strbuf_addstr(msg, "this perf has no `perf bench sched` benchmark of that "
				      "name (Debian 12's linux-perf 6.1 has messaging and pipe)");
			return 1;
		}
	}
	return 0;
}

static int explain(const json_t *p, const struct wl_output *out, struct strbuf *msg)
{
	return perfbench_explain(out->out, out->err, msg);
}

/* the metrics parse() can store (docs/metrics.md) */
static const char *const messaging_metric_names[] = { "time_s", NULL };
static const char *const pipe_metric_names[] = { "time_s", "usecs_per_op", "ops_per_s", NULL };

const struct workload_ops perf_messaging_workload = {
	.name = "perf-messaging",
	.summary = "perf bench sched messaging: groups of tasks passing messages (total time)",
	.tool = "perf",
	.package = "linux-perf",
	.primary = "time_s",
	.metrics = messaging_metric_names,
	.params = messaging_params,
	.estimate_s = messaging_estimate,
	.build = messaging_build,
	.parse = messaging_parse,
	.explain = explain,
};

const struct workload_ops perf_pipe_workload = {
	.name = "perf-pipe",
	.summary = "perf bench sched pipe: two tasks ping-ponging over pipes (usecs/op)",
	.tool = "perf",
	.package = "linux-perf",
	.primary = "usecs_per_op",
	.metrics = pipe_metric_names,
	.params = pipe_params,
	.estimate_s = pipe_estimate,
	.build = pipe_build,
	.parse = pipe_parse,
	.explain = explain,
};
