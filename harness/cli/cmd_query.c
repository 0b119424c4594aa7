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

static const char usage_text[] =
	"usage: schedlab query SQL [--db FILE] [--format table|csv|json]\n"
	"\n"
	"Runs SQL against the database opened read-only and prints the rows.\n"
	"The `results` view has one row per metric value:\n"
	"  session, tag, run_id, started_at, target, machine, kernel_release, hz,\n"
	"  sched_mc, preempt, cmdline, knobs, workload, params, rep, metric, value,\n"
	"  unit, better (+ run_workload, config_hash, preempt_build, boot, plan,\n"
	"  machine_id, note)\n"
	"Example:\n"
	"  schedlab query \"SELECT preempt, metric, avg(value) FROM results\n"
	"                  WHERE workload = 'cyclictest' GROUP BY 1, 2\"\n";

int cmd_query(int argc, char **argv)
{
	const char *dbpath = DEFAULT_DB;
	enum out_format fmt = FMT_TABLE;
	const struct cli_opt opts[] = { CLI_DB(&dbpath), CLI_FORMAT(&fmt, 1), CLI_END };
	int first, rc = cli_parse("query", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (first != argc - 1) {
		cmd_error("query", "expected one SQL statement (quote it)");
		fputs(usage_text, stderr);
		return 2;
	}
	struct db *db = cmd_open_db_readonly("query", dbpath);
	if (!db) {
		return 2;
	}
	struct rowset rs;
	rs.ncols = 0;
	if (db_query(db, argv[first], rowset_collect, &rs)) {
		cmd_error("query", "%s", db_errmsg(db));
		rc = 2;
	} else if (rs.ncols) {
		rowset_print(&rs, fmt, stdout);
		rowset_release(&rs);
	} else if (fmt == FMT_TABLE) {
		printf("(no rows)\n");
	} else if (fmt == FMT_JSON) {
		printf("{\"schedlab_format\": 1, \"columns\": [], \"rows\": []}\n");
	}
	db_close(db);
	return cmd_finish(rc);
}
