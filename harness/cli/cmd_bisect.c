/*
 * schedlab bisect: find the commit behind a change of one metric between a
 * good and a bad commit of a kernel from git (docs/bisect.md). This file
 * parses the options; harness/orchestrate/bisect.c walks the range and
 * analysis/bisect_rule.c decides.
 */
#include <stdio.h>
#include <string.h>

#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/orchestrate/bisect.h"
#include "harness/orchestrate/session.h"
#include "harness/results/select.h"

/* the values bisect compares: the rows of the results view, through the
 * selectors every analysis command uses */
static int where_check(void *ctx, struct db *db, const char *where, struct strbuf *err)
{
	struct selector sel;
	if (select_from_text(db, where, &sel, err))
		return -1;
	select_free(&sel);
	return 0;
}

static int values_load(void *ctx, struct db *db, const char *where, const char *wl,
		       const char *metric, const int64_t *sid, size_t n,
		       struct bisect_values *out, struct strbuf *err)
{
	struct selector sel;
	struct sample_set set;
	memset(out, 0, sizeof(*out));
	memset(&set, 0, sizeof(set));
	if (select_from_text(db, where, &sel, err))
		return -1;
	struct sel_filter f = { .workload = wl, .metric = metric, .sessions = sid,
				.nsessions = n };
	int ret = select_load(db, &sel, &f, &set, err);
	if (!ret) {
		out->ngroups = set.ngroups;
		if (set.ngroups == 1) {
			struct sel_group *g = &set.groups[0];
			out->v = xcalloc(g->n ? g->n : 1, sizeof(double));
			memcpy(out->v, g->value, g->n * sizeof(double));
			out->n = g->n;
			out->better = g->better == SEL_BETTER_HIGHER ? VERDICT_HIGHER_IS_BETTER
				      : g->better == SEL_BETTER_LOWER ? VERDICT_LOWER_IS_BETTER : 0;
			snprintf(out->unit, sizeof(out->unit), "%s", g->unit ? g->unit : "");
		}
	}
	sample_set_free(&set);
	select_free(&sel);
	return ret;
}

static const char usage_text[] =
	"usage: schedlab bisect --plan PLAN.json --good REF --bad REF --metric WORKLOAD.METRIC\n"
	"                       [--where SELECTOR] [--unit session|run] [--session-runs R]\n"
	"                       [--repetitions N] [--max-repetitions N] [--max-steps K]\n"
	"                       [--alpha A] [--threshold PCT] [--drift-guard]\n"
	"                       [--db FILE] [--quiet]\n"
	"       schedlab bisect --resume last|ID [--db FILE] [--quiet]\n"
	"\n"
	"Finds the first commit between REF good and REF bad at which WORKLOAD.METRIC\n"
	"changed. The plan's matrix.kernel is one kernel from git ({\"git\": DIR, ...});\n"
	"its ref is replaced by each commit measured. The ends are measured first and\n"
	"must differ by compare's rules (bootstrap CI beyond the threshold) with a\n"
	"Mann-Whitney p below the bisection's per-look level; then each midpoint is\n"
	"built, booted and measured and called good or bad by comparison with both\n"
	"ends. One that matches neither gets more rounds and then is `unclear`, never\n"
	"guessed; one that does not build or boot is skipped. Every run is stored as\n"
	"a session tagged bisect-ID. Ctrl-C (or a crash) leaves it resumable; the same\n"
	"command again reuses every stored measurement and build.\n"
	"  --plan FILE          the plan: target, workloads, the git kernel\n"
	"  --good REF           a commit-ish of the kernel's repository without the change\n"
	"  --bad REF            one with it (a descendant of good)\n"
	"  --metric W.M         e.g. pingpong.req_p50_us\n"
	"  --where SELECTOR     narrow the rows, e.g. preempt=full (results' columns)\n"
	"  --unit U             what one value is: `session` (default), the centre of\n"
	"                       one session's runs: on the qemu target a boot of its\n"
	"                       own, so that boot-to-boot variance is in the noise\n"
	"                       (runs of one boot are not independent); `run`, each\n"
	"                       run, for targets whose runs are independent\n"
	"  --session-runs R     runs in each session with --unit session (default 3)\n"
	"  --repetitions N      values a round: sessions (--unit session) or runs\n"
	"                       (default: 6, or more when the per-look level needs them)\n"
	"  --max-repetitions N  values a commit may get (default 3 rounds)\n"
	"  --max-steps K        commits measured between the ends (default\n"
	"                       ceil(log2(commits)) + 3)\n"
	"  --alpha A            chance of any wrong call in the whole bisection is\n"
	"                       below A/2 (default 0.05)\n"
	"  --threshold PCT      compare's noise threshold in % (default 2; symmetric:\n"
	"                       100 is a doubling or a halving)\n"
	"  --drift-guard        after each call, measure the end the commit was called\n"
	"                       like again beside it; if it no longer matches its first\n"
	"                       measurement (drift), measure the other end too, call\n"
	"                       the commit again against both, and measure both ends\n"
	"                       beside every later midpoint (one round a step more;\n"
	"                       two once drift is seen)\n"
	"  --resume S           continue bisection S (a number or \"last\")\n"
	"  --db FILE            database (default schedlab.db)\n"
	"  --quiet              no progress lines (the log still goes to stdout)\n"
	"Exit status: 0 the first bad commit found, 1 no single commit (the ends do not\n"
	"differ, or skipped/unclear commits or --max-steps leave several), 2 bad input\n"
	"or a setup error, 130 interrupted (resumable).\n";

/* the options, from parse to the work */
static struct bisect_args args;

int cmd_bisect_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	memset(&args, 0, sizeof(args));
	size_t reps = 0, maxreps = 0, steps = 0, sruns = 0;
	static const char *const units[] = { "session", "run", NULL };
	int unit = -1;
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath), CLI_STR("plan", &args.plan_path), CLI_STR("good", &args.good),
		CLI_STR("bad", &args.bad), CLI_STR("metric", &args.metric), CLI_STR("where", &args.where),
		CLI_RANGE("repetitions", &reps, 2, 1000),
		CLI_RANGE("max-repetitions", &maxreps, 2, 10000),
		CLI_RANGE("max-steps", &steps, 1, 1000), CLI_ONE_OF("unit", &unit, units),
		CLI_RANGE("session-runs", &sruns, 1, 1000),
		CLI_PROB_OF("alpha", &args.alpha),
		CLI_THRESHOLD(&args.threshold_pct), CLI_STR("resume", &args.resume),
		CLI_BOOL("quiet", &args.quiet), CLI_BOOL("drift-guard", &args.drift_guard), CLI_END,
	};
	int first, rc = cli_parse("bisect", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (cli_no_args("bisect", argc, argv, first))
		return 2;
	if (args.resume && (args.plan_path || args.good || args.bad || args.metric || args.where ||
			    reps || maxreps || steps || args.alpha > 0 || args.threshold_pct > 0 ||
			    unit >= 0 || sruns || args.drift_guard)) {
		cmd_error("bisect", "--resume continues a bisection as it was started; its "
			  "plan, range, metric and settings cannot change (start a new one)");
		return 2;
	}
	if (!args.resume && (!args.plan_path || !args.good || !args.bad || !args.metric)) {
		cmd_error("bisect", "a new bisection needs --plan, --good, --bad and --metric "
			  "(or --resume last)");
		fputs(usage_text, stderr);
		return 2;
	}
	if (reps && maxreps && maxreps < reps) {
		cmd_error("bisect", "--max-repetitions %zu is below --repetitions %zu", maxreps,
			  reps);
		return 2;
	}
	if (unit == 1 && sruns) {
		cmd_error("bisect", "--session-runs is for --unit session (with --unit run, "
			  "--repetitions is the runs of a round)");
		return 2;
	}
	args.unit_run = unit == 1;
	args.session_runs = (int)sruns;
	args.repetitions = (int)reps;
	args.max_repetitions = (int)maxreps;
	args.max_steps = (int)steps;
	args.abort_flag = &session_abort;
	args.values = (struct bisect_loader){ where_check, values_load, NULL };
	/* --resume continues a stored bisection: never a new file */
	ctx->db_existing = !!args.resume;
	return CMD_GO;
}

int cmd_bisect(struct cmd_ctx *ctx)
{
	args.db = ctx->db;
	args.dbpath = ctx->dbpath;
	session_install_signals();
	struct strbuf err = STRBUF_INIT;
	int rc = bisect_main(&args, &err);
	if (err.len)
		cmd_error("bisect", "%s", err.buf);
	strbuf_release(&err);
	return cmd_finish(rc);
}
