/*
 * schedlab check --baseline SEL --candidate SEL: the nightly regression
 * gate. Runs the comparison of `schedlab compare` (harness/results/compare.c) and
 * exits 1 when a metric is `worse` (bootstrap CI of the change excludes 0
 * and the change is beyond the noise threshold), printing one line per
 * regression; 0 otherwise, or 4 with --require-decided when metrics stay
 * inconclusive (named with the repetitions that would decide them).
 * Refuses (exit 2) to judge with fewer than 3 repetitions on a side.
 * Docs: docs/analysis.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/results/format.h"
#include "harness/results/compare.h"
#include "workloads/workload.h"

/* --require-decided: nothing regressed, but metrics stayed inconclusive
 * (0 ok, 1 regression and 2 bad input are taken; 3 is nightly's runs
 * failed) */
#define CHECK_EXIT_UNDECIDED 4

static const char usage_text[] =
	"usage: schedlab check --baseline SEL --candidate SEL [--threshold PCT]\n"
	"                      [--metric M] [--db FILE]\n"
	"\n"
	"Compares the candidate runs with the baseline runs (selectors as in\n"
	"`schedlab compare`: key=value,... over the columns of results) and exits 1\n"
	"when a metric got worse beyond the noise threshold with significance: the\n"
	"bootstrap 95% CI of the change lies entirely on the worse side of 0 and the\n"
	"change exceeds the threshold. Prints one line per regression:\n"
	"  workload.metric: baseline CENTRE, candidate CENTRE, change +X% [lo, hi], p=P\n"
	"A metric with values that are only bounds (a percentile beyond its histogram's\n"
	"range) is judged only when the direction is provable, and printed with its\n"
	"verdict either way: `worse, at least +X%` or `inconclusive: beyond the\n"
	"histogram range (...); raise ...` (docs/statistics.md). Metrics left\n"
	"inconclusive are named on one line with the repetitions a side that would\n"
	"resolve them; the summary line comes last.\n"
	"\n"
	"  --threshold PCT   noise threshold in % (default 2), symmetric on the ratio:\n"
	"                    T bounds B/A by 1+T/100 and 1/(1+T/100) (100: x2 or /2)\n"
	"  --metric M        only metric M (NAME or WORKLOAD.NAME)\n"
	"  --require-decided a metric left inconclusive is not a pass: exit 4 (and\n"
	"                    name every such metric) when nothing regressed\n"
	"Exit status: 0 no regression, 1 regression, 2 bad input, nothing to compare\n"
	"or fewer than 3 repetitions on a side, 4 (with --require-decided) no\n"
	"regression but metrics left inconclusive.\n";

/* the inconclusive metrics whose repetitions could decide them (not bounds),
 * the nearest to a decision first: a gate that passed without judging them
 * says so, and what it would take */
static int by_need(const void *x, const void *y)
{
	const struct cmp_row *a = *(const struct cmp_row *const *)x;
	const struct cmp_row *b = *(const struct cmp_row *const *)y;
	return a->v.reps_needed < b->v.reps_needed ? -1 : a->v.reps_needed > b->v.reps_needed;
}

/* at most `most` of them named (0: all) */
static void say_undecided(const struct compare_job *job, double threshold_pct, size_t most)
{
	const struct cmp_row **u = xcalloc(job->r.nrows + 1, sizeof(*u));
	size_t n = 0;
	for (size_t i = 0; i < job->r.nrows; i++) {
		const struct cmp_row *row = &job->r.rows[i];
		if (row->kind == CMP_METRIC && row->has_verdict &&
		    row->v.kind == VERDICT_INCONCLUSIVE && !row->v.censored_a &&
		    !row->v.censored_b && row->v.reps_needed > 0)
			u[n++] = row;
	}
	if (n) {
		qsort(u, n, sizeof(*u), by_need);
		printf("inconclusive, about this many repetitions a side would resolve a %g%% "
		       "change:", threshold_pct);
		size_t shown = most && n > most ? most : n;
		for (size_t i = 0; i < shown; i++) {
			const char *label = job->r.pairs[u[i]->pair].label;
			printf("%s %s.%s%s%s%s ~%zu", i ? "," : "", u[i]->workload, u[i]->metric,
			       *label ? " (" : "", label, *label ? ")" : "", u[i]->v.reps_needed);
		}
		if (n > shown)
			printf(" and %zu more (schedlab compare lists them)", n - shown);
		putchar('\n');
	}
	free(u);
}

static struct {
	const char *base, *cand;
	int require_decided;
	struct cmp_options o;
} args;

int cmd_check_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	memset(&args, 0, sizeof(args));
	cmp_options_default(&args.o);
	args.o.range_param = workload_range_param;
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath), CLI_STR("baseline", &args.base),
		CLI_STR("candidate", &args.cand), CLI_THRESHOLD(&args.o.threshold_pct),
		CLI_STR("metric", &args.o.metric),
		CLI_BOOL("require-decided", &args.require_decided), CLI_END,
	};
	int first, prc = cli_parse("check", usage_text, opts, argc, argv, &first);
	if (prc != CLI_OK)
		return cli_parse_exit(prc);
	if (cli_no_args("check", argc, argv, first))
		return 2;
	if (!args.base || !args.cand) {
		cmd_error("check", "--baseline and --candidate are both required");
		fputs(usage_text, stderr);
		return 2;
	}
	return CMD_GO;
}

int cmd_check(struct cmd_ctx *ctx)
{
	const char *base = args.base, *cand = args.cand;
	int require_decided = args.require_decided;
	const struct cmp_options o = args.o;
	struct compare_job job;
	if (cmd_compare_job(ctx, base, cand, &o, 0, &job))
		return 2;

	int rc = 0;
	size_t nverdict = 0, count[4] = { 0, 0, 0, 0 }, few = 0, least = compare_min_reps(&o);
	if (!job.a.nrows || !job.b.nrows) {
		cmd_error("check", "%s selector matches no results",
			  !job.a.nrows ? "the baseline" : "the candidate");
		rc = 2;
		goto out;
	}
	for (size_t i = 0; i < job.r.nrows; i++) {
		const struct cmp_row *row = &job.r.rows[i];
		if (row->kind != CMP_METRIC || !row->has_verdict)
			continue;
		nverdict++;
		if (row->v.n_a < least || row->v.n_b < least) {
			if (few++ < 5)
				cmd_error("check", "%s.%s: %zu baseline and %zu candidate repetitions",
					  row->workload, row->metric, row->v.n_a, row->v.n_b);
		}
	}
	if (!nverdict) {
		cmd_error("check", "baseline and candidate have no metric with a direction in "
				   "common; nothing to check");
		rc = 2;
		goto out;
	}
	if (few) {
		cmd_error("check", "refusing to judge: %zu metric(s) have fewer than %d repetitions "
				   "on a side (run more repetitions)",
			  few, (int)least);
		rc = 2;
		goto out;
	}
	for (size_t i = 0; i < job.r.nrows; i++) {
		const struct cmp_row *row = &job.r.rows[i];
		if (row->kind != CMP_METRIC || !row->has_verdict)
			continue;
		count[row->v.kind]++;
		if (row->v.censored_a || row->v.censored_b) {
			/* values that are bounds: the verdict and its reason, also
			 * when inconclusive (then the advice says what would help) */
			char *t = compare_verdict_text(row);
			const char *label = job.r.pairs[row->pair].label;
			printf("%s.%s%s%s%s: %s\n", row->workload, row->metric, *label ? " (" : "",
			       label, *label ? ")" : "", t);
			free(t);
			if (row->v.kind == VERDICT_WORSE)
				rc = 1;
			continue;
		}
		if (row->v.kind != VERDICT_WORSE)
			continue;
		char a[40], b[40], p[40];
		fmt_num(a, sizeof(a), row->v.centre_a);
		fmt_num(b, sizeof(b), row->v.centre_b);
		compare_p_text(p, sizeof(p), row);
		const char *label = job.r.pairs[row->pair].label;
		const char *sp = *row->unit ? " " : "";
		printf("%s.%s%s%s%s: baseline %s%s%s, candidate %s%s%s, change %+.1f%% "
		       "[%+.1f, %+.1f], %s%s%s\n",
		       row->workload, row->metric, *label ? " (" : "", label, *label ? ")" : "", a,
		       sp, row->unit, b, sp, row->unit, row->v.change_pct, row->v.ci_lo_pct,
		       row->v.ci_hi_pct, strcmp(p, "exact") ? "p=" : "", p,
		       row->v.exact ? " (exact data)" : "");
		rc = 1;
	}
	say_undecided(&job, o.threshold_pct, require_decided ? 0 : 4);
	/* a regression is the louder finding; undecided only fails a gate
	 * that asked for every metric to be decided */
	if (!rc && require_decided && count[VERDICT_INCONCLUSIVE]) {
		cmd_error("check", "%zu metric%s left inconclusive (--require-decided): exit %d",
			  count[VERDICT_INCONCLUSIVE], count[VERDICT_INCONCLUSIVE] == 1 ? "" : "s",
			  CHECK_EXIT_UNDECIDED);
		rc = CHECK_EXIT_UNDECIDED;
	}
	printf("%s: %zu metrics, %zu worse, %zu better, %zu no change, %zu inconclusive "
	       "(threshold %g%%)\n",
	       rc == 1 ? "REGRESSION" : rc ? "UNDECIDED" : "ok", nverdict, count[VERDICT_WORSE], count[VERDICT_BETTER],
	       count[VERDICT_NO_CHANGE], count[VERDICT_INCONCLUSIVE], o.threshold_pct);
out:
	compare_job_free(&job);
	return cmd_finish(rc);
}
