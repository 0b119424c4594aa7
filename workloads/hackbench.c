/*
 * hackbench (rt-tests): groups of senders and receivers passing messages
 * over pipes or sockets, in processes or threads; measures the time for all
 * messages to be delivered. A scheduler throughput test dominated by wakeups.
 * Also usable as background load (it then runs with a huge loop count until
 * the agent stops it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/parsers.h"
#include "workloads/workload.h"

static const char *const modes[] = { "process", "thread", NULL };
static const char *const transports[] = { "socket", "pipe", NULL };

static const struct param_spec hackbench_params[] = {
	{ "groups", PT_INT, "4", 1, 10000, NULL, .help = "sender/receiver groups" },
	{ "loops", PT_INT, "200", 1, 100000000, NULL, .help = "messages each sender sends" },
	{ "fds", PT_INT, "20", 1, 1000, NULL, .help = "senders (and receivers) per group" },
	{ "datasize", PT_INT, "100", 1, 1048576, NULL, .help = "bytes per message" },
	{ "mode", PT_ENUM, "\"process\"", 0, 0, modes, .help = "tasks are processes or threads" },
	{ "transport", PT_ENUM, "\"socket\"", 0, 0, transports, .help = "unix sockets or pipes" },
	PARAM_END,
};

static double estimate(const json_t *p)
{
	/* ~0.77 s for 4 groups x 20 fds x 200 loops measured on 2 CPUs */
	return 0.77 * (double)param_int(p, "groups") * (double)param_int(p, "fds") *
	       (double)param_int(p, "loops") / (4.0 * 20 * 200) + 0.2;
}

static void common_args(const json_t *p, struct wl_exec *ex, long long loops)
{
	/* short options: rt-tests 2.40's hackbench mis-parses some long ones
	 * ("--threads --datasize=100" fails with "--datasize requires an integer") */
	strvec_push(&ex->argv, "hackbench");
	strvec_push(&ex->argv, "-g");
	strvec_pushf(&ex->argv, "%lld", param_int(p, "groups"));
	strvec_push(&ex->argv, "-l");
	strvec_pushf(&ex->argv, "%lld", loops);
	strvec_push(&ex->argv, "-f");
	strvec_pushf(&ex->argv, "%lld", param_int(p, "fds"));
	strvec_push(&ex->argv, "-s");
	strvec_pushf(&ex->argv, "%lld", param_int(p, "datasize"));
	strvec_push(&ex->argv, !strcmp(param_str(p, "mode"), "thread") ? "-T" : "-P");
	if (!strcmp(param_str(p, "transport"), "pipe"))
		strvec_push(&ex->argv, "-p");
	ex->package = "rt-tests";
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	common_args(p, ex, param_int(p, "loops"));
	ex->timeout_s = estimate(p) * 20 + 60;
	return 0;
}

static int build_load(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	common_args(p, ex, 1000000000LL);
	return 0;
}

/* "Time: 0.769" */
int hackbench_parse_text(const char *text, double *time_s)
{
	const char *t = text ? strstr(text, "Time: ") : NULL;
	char *end;
	if (!t)
		return -1;
	*time_s = strtod(t + 6, &end);
	return end == t + 6 ? -1 : 0;
}

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	double t;
	if (hackbench_parse_text(out->out, &t)) {
		strbuf_addstr(err, "hackbench printed no \"Time:\" line");
		return -1;
	}
	metric_add(ms, "time_s", t, "s", BETTER_LOWER);
	return 0;
}

/* the metrics parse() can store ("*": any text; docs/metrics.md) */
static const char *const hackbench_metric_names[] = {
	"time_s", NULL,
};

const struct workload_ops hackbench_workload = {
	.name = "hackbench",
	.summary = "rt-tests hackbench: message passing between task groups (time to finish)",
	.tool = "hackbench",
	.package = "rt-tests",
	.primary = "time_s",
	.metrics = hackbench_metric_names,
	.params = hackbench_params,
	.can_be_load = 1,
	.estimate_s = estimate,
	.build = build,
	.build_load = build_load,
	.parse = parse,
};
