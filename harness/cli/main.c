/*
 * schedlab: the controller's entry point and its one table of subcommands
 * (git.c / perf.c style). Each command parses its own options (its parse
 * phase); the flags in the table are the shared preconditions main sets up
 * before the work (cmd.h: CMD_DB_RO, CMD_DB_RW: the database of --db,
 * opened here once parse has checked the options, after the command's
 * before_db step if it has one, and closed here after the work).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/tlock.h"
#include "harness/util/strbuf.h"
#include "harness/targets/target.h"
#include "workloads/workload.h"

struct command {
	const char *name;
	/* the options: CMD_GO, or the exit code (a command without a
	   database does its work here and never says CMD_GO) */
	int (*parse)(int argc, char **argv, struct cmd_ctx *c);
	int (*fn)(struct cmd_ctx *c); /* the work, with what the flags ask for */
	unsigned flags;               /* CMD_* of cmd.h */
	const char *summary;
};

/* a command with a database: its parse and its work (cmd.h) */
#define DB_COMMAND(n) cmd_##n##_parse, cmd_##n
static const struct command commands[] = {
	{ "run", DB_COMMAND(run), CMD_DB_RW,
	  "run a plan (or resume a session) and store the results" },
	{ "plan", cmd_plan, NULL, 0, "validate a plan and show the expanded boots and runs" },
	{ "sysinfo", cmd_sysinfo, NULL, 0, "what a machine is and what it can switch" },
	{ "sessions", DB_COMMAND(sessions), CMD_DB_RO, "list the sessions in a database" },
	{ "query", DB_COMMAND(query), CMD_DB_RO, "run read-only SQL against a database" },
	{ "compare", DB_COMMAND(compare), CMD_DB_RO,
	  "A/B table of two selections with verdicts per metric" },
	{ "trend", DB_COMMAND(trend), CMD_DB_RO, "history of one metric with change points" },
	{ "check", DB_COMMAND(check), CMD_DB_RO,
	  "exit 1 when the candidate regressed against the baseline" },
	{ "report", DB_COMMAND(report), CMD_DB_RO,
	  "self-contained HTML report: A/B, latency curves, trends, sysinfo" },
	{ "bisect", DB_COMMAND(bisect), CMD_DB_RW,
	  "find the commit behind a change of one metric (kernels from git)" },
	{ "nightly", DB_COMMAND(nightly), CMD_DB_RW,
	  "one night of the regression robot: run, judge, alert, bisect" },
	{ "alerts", DB_COMMAND(alerts), CMD_DB_RW,
	  "the robot's alerts: list, show, ack/expect/invalid, bisect, report" },
	{ "serve", DB_COMMAND(serve), CMD_DB_RO,
	  "the store as a live site: trends, comparisons, alerts and their triage" },
	{ "export", DB_COMMAND(export), CMD_DB_RO, "rows of the results view as CSV or JSON" },
	{ "agent", cmd_agent, NULL, 0,
	  "serve the agent protocol on stdin/stdout (targets use this)" },
	{ NULL, NULL, NULL, 0, NULL },
};

/* a store at `path` for before_db to see: anything there but an empty
 * file (which opening for writing makes a new database), so that a path
 * that is no database is refused before the step */
static int has_store(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !(S_ISREG(st.st_mode) && st.st_size == 0);
}

/* run command c with what its flags ask for; its exit code. The database
 * is opened only once parse says CMD_GO: --help and refused options open
 * and create nothing */
static int run_command(const struct command *c, int argc, char **argv)
{
	struct cmd_ctx ctx = { .name = c->name, .flags = c->flags, .dbpath = DEFAULT_DB };
	int rc = c->parse(argc, argv, &ctx);
	int db = !!(ctx.flags & (CMD_DB_RO | CMD_DB_RW));
	if (rc == CMD_GO && ctx.before_db) {
		/* the store as it is, read-only, when there is one: a bad one is
		   refused before the step, and nothing is written or migrated */
		if (db && has_store(ctx.dbpath) && !cmd_db(&ctx, 1))
			rc = 2;
		else
			rc = ctx.before_db(&ctx);
		db_close(ctx.db);
		ctx.db = NULL;
	}
	if (rc == CMD_GO && db && !cmd_db(&ctx, 0))
		rc = 2;
	if (rc == CMD_GO)
		rc = c->fn ? c->fn(&ctx) : 2;
	db_close(ctx.db);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: schedlab COMMAND [ARGS]\n\n"
		   "A benchmark and regression harness for Linux preemption modes and wakeup\n"
		   "placement. Commands:\n\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\n`schedlab COMMAND --help` describes a command; `schedlab help workloads`\n"
		   "lists the workloads and their plan parameters, `schedlab help plan` the\n"
		   "plan's top-level keys and `schedlab help targets` each target's keys.\n"
		   "Exit status: 0 success, 1 a finding (failed runs), 2 bad input or usage.\n");
}

static void help_workloads(void)
{
	struct strbuf sb = STRBUF_INIT;
	for (const struct workload_ops *const *w = workload_all(); *w; w++) {
		strbuf_addf(&sb, "%s: %s\n  tool: %s", (*w)->name, (*w)->summary, (*w)->tool);
		for (const char *const *t = (*w)->also_tools; t && *t; t++)
			strbuf_addf(&sb, ", running %s", *t);
		strbuf_addf(&sb, " (Debian package %s)%s\n", (*w)->package,
			    (*w)->can_be_load ? "; usable as \"load\"" : "");
		if ((*w)->targets) {
			strbuf_addstr(&sb, "  targets:");
			for (const char *const *t = (*w)->targets; *t; t++)
				strbuf_addf(&sb, "%s %s", t == (*w)->targets ? "" : ",", *t);
			strbuf_addstr(&sb, " only\n");
		}
		params_describe((*w)->params, &sb);
		strbuf_addch(&sb, '\n');
	}
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
}

/* `schedlab help plan|targets [NAME] [--markdown]`: the option tables the
 * plan's top level and each target are checked with; --markdown writes
 * them as the docs' tables (tests/unit/test_opts.c compares the two) */
static int help_options(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	int md = argc > 3 && !strcmp(argv[argc - 1], "--markdown");
	const char *name = argc > 3 + md ? argv[3] : NULL;
	if (argc > 4 + md) {
		fprintf(stderr, "schedlab: help %s takes [NAME] [--markdown]\n", argv[2]);
		return 2;
	}
	if (!strcmp(argv[2], "plan")) {
		if (name) {
			fprintf(stderr, "schedlab: help plan takes [--markdown]\n");
			return 2;
		}
		if (!md)
			strbuf_addstr(&sb, "the plan's top level (docs/plan-format.md):\n");
		(md ? params_markdown : params_describe)(plan_options, &sb);
	} else {
		const struct target_ops *one = name ? target_find(name) : NULL;
		if (name && !one) {
			fprintf(stderr, "schedlab: help targets %s: unknown target (valid: %s)\n", name,
				target_names());
			return 2;
		}
		for (const struct target_ops *const *t = target_all(); *t; t++) {
			if (one && *t != one)
				continue;
			if (!md)
				strbuf_addf(&sb, "%s target (%s):\n", (*t)->name, (*t)->doc);
			(md ? params_markdown : params_describe)((*t)->options, &sb);
			if (!md || !one)
				strbuf_addch(&sb, '\n');
		}
	}
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
	return cmd_finish(0);
}

int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	/* a target lock handed down by the parent (nightly -> run) goes no
	   further than this process: not to the agent, a workload, a hook */
	tlock_seal_inherited();
	if (workload_check_registry(&err) || target_check_registry(&err)) {
		fprintf(stderr, "schedlab: internal error: %s\n", err.buf);
		return 2;
	}
	strbuf_release(&err);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		usage(stdout);
		return cmd_finish(0);
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("schedlab %s\n", SCHEDLAB_VERSION);
		return cmd_finish(0);
	}
	if (!strcmp(name, "help")) {
		if (argc < 3) {
			usage(stdout);
			return cmd_finish(0);
		}
		if (!strcmp(argv[2], "workloads")) {
			help_workloads();
			return cmd_finish(0);
		}
		if (!strcmp(argv[2], "plan") || !strcmp(argv[2], "targets"))
			return help_options(argc, argv);
		for (const struct command *c = commands; c->name; c++)
			if (!strcmp(c->name, argv[2])) {
				char *av[] = { argv[2], "--help", NULL };
				return run_command(c, 2, av);
			}
		fprintf(stderr, "schedlab: no help for '%s'\n", argv[2]);
		return 2;
	}
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return run_command(c, argc - 1, argv + 1);
	fprintf(stderr, "schedlab: '%s' is not a command (valid:", name);
	for (const struct command *c = commands; c->name; c++)
		fprintf(stderr, " %s", c->name);
	fprintf(stderr, "); see schedlab --help\n");
	return 2;
}
