/*
 * schedlab sessions: the sessions in a database with their run counts
 * (read by db_sessions_summary in db/results.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "db/results.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/results/format.h"

static const char usage_text[] =
	"usage: schedlab sessions [--db FILE] [--format table|csv|json]\n"
	"\n"
	"Lists the sessions in the database: id, plan, tag, target, status, start\n"
	"time and how many runs are ok, failed, skipped or still to do.\n";

static struct {
	enum out_format fmt;
} args;

int cmd_sessions_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	args.fmt = FMT_TABLE;
	const struct cli_opt opts[] = { CLI_DB(&ctx->dbpath), CLI_FORMAT(&args.fmt, 1), CLI_END };
	int first, rc = cli_parse("sessions", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (cli_no_args("sessions", argc, argv, first))
		return 2;
	return CMD_GO;
}

int cmd_sessions(struct cmd_ctx *ctx)
{
	int rc = 0;
	struct rowset rs = { 0 };
	if (db_sessions_summary(ctx->db, rowset_collect, &rs)) {
		cmd_error("sessions", "%s", db_errmsg(ctx->db));
		rc = 2;
	} else if (!rs.nrows && args.fmt == FMT_TABLE) {
		printf("no sessions in %s\n", ctx->dbpath);
	} else {
		rowset_print(&rs, args.fmt, stdout);
	}
	rowset_release(&rs);
	return cmd_finish(rc);
}
