/*
 * schedlab query: read-only SQL against a database (the `results` view is
 * the documented interface; docs/schema.md). The database is opened with
 * SQLITE_OPEN_READONLY, so no statement can change it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
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
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dbpath = DEFAULT_DB;
	enum out_format fmt = FMT_TABLE;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dbpath = optarg; break;
		case 'f':
			if (parse_format("query", optarg, &fmt, 1))
				return 2;
			break;
		case 'h': fputs(usage_text, stdout); return cmd_finish(0);
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
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
	int rc = 0;
	if (db_query(db, argv[optind], rowset_collect, &rs)) {
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
