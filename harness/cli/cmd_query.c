/*
 * schedlab query: read-only SQL against a database (the `results` view is
 * the documented interface; docs/schema.md). The database is opened with
 * SQLITE_OPEN_READONLY, so no statement can change it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/results/format.h"
#include "harness/util/strbuf.h"

static const char usage_text[] =
	"usage: schedlab query SQL [--db FILE] [--format table|csv|json]\n"
	"\n"
	"Runs SQL against the database opened read-only and prints the rows.\n"
	"Several statements (separated by ;) print one table or CSV block each,\n"
	"separated by an empty line (when one fails, the blocks before it and\n"
	"the error); --format json takes one.\n"
	"The `results` view has one row per metric value:\n"
	"  session, tag, run_id, started_at, target, machine, kernel_release, hz,\n"
	"  sched_mc, preempt, cmdline, knobs, workload, params, rep, metric, value,\n"
	"  unit, better (+ run_workload, config_hash, preempt_build, boot, plan,\n"
	"  machine_id, note)\n"
	"Example:\n"
	"  schedlab query \"SELECT preempt, metric, avg(value) FROM results\n"
	"                  WHERE workload = 'cyclictest' GROUP BY 1, 2\"\n";

/* one rowset per statement that returns columns, each as wide as its own */
struct result_sets {
	struct rowset *set;
	size_t n;
};

static int collect_sets(void *ctx, int ncols, const char *const *names,
			const char *const *values)
{
	struct result_sets *rs = ctx;
	if (!values) {
		rs->set = xrealloc(rs->set, (rs->n + 1) * sizeof(*rs->set));
		rowset_init(&rs->set[rs->n++], (size_t)ncols, names);
		return 0;
	}
	rowset_add(&rs->set[rs->n - 1], values);
	return 0;
}

static void print_sets(const struct result_sets *rs, enum out_format fmt)
{
	for (size_t i = 0; i < rs->n; i++) {
		if (i)
			putchar('\n');
		if (!rs->set[i].nrows && fmt == FMT_TABLE)
			printf("(no rows)\n");
		else
			rowset_print(&rs->set[i], fmt, stdout);
	}
}

static struct {
	enum out_format fmt;
	const char *sql;
} args;

int cmd_query_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	args.fmt = FMT_TABLE;
	const struct cli_opt opts[] = { CLI_DB(&ctx->dbpath), CLI_FORMAT(&args.fmt, 1), CLI_END };
	int first, rc = cli_parse("query", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (first != argc - 1) {
		cmd_error("query", "expected one SQL statement (quote it)");
		fputs(usage_text, stderr);
		return 2;
	}
	args.sql = argv[first];
	return CMD_GO;
}

int cmd_query(struct cmd_ctx *ctx)
{
	enum out_format fmt = args.fmt;
	int rc = 0;
	struct result_sets rs = { 0 };
	if (db_query(ctx->db, args.sql, collect_sets, &rs)) {
		/* what the statements before the failing one returned, as the
		   sqlite3 shell does (json is one statement's, all or nothing) */
		if (fmt != FMT_JSON)
			print_sets(&rs, fmt);
		fflush(stdout);
		cmd_error("query", "%s", db_errmsg(ctx->db));
		rc = 2;
	} else if (rs.n > 1 && fmt == FMT_JSON) {
		cmd_error("query", "%zu statements return rows; --format json takes one "
			  "(use table or csv, or one query per call)", rs.n);
		rc = 2;
	} else if (!rs.n) {
		if (fmt == FMT_TABLE)
			printf("(no rows)\n");
		else if (fmt == FMT_JSON)
			printf("{\"schedlab_format\": 1, \"columns\": [], \"rows\": []}\n");
	} else {
		print_sets(&rs, fmt);
	}
	for (size_t i = 0; i < rs.n; i++)
		rowset_release(&rs.set[i]);
	free(rs.set);
	return cmd_finish(rc);
}
