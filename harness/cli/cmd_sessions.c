/*
 * schedlab sessions: the sessions in a database with their run counts.
 */
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/results/format.h"

static const char usage_text[] =
	"usage: schedlab sessions [--db FILE] [--format table|csv|json]\n"
	"\n"
	"Lists the sessions in the database: id, plan, tag, target, status, start\n"
	"time and how many runs are ok, failed, skipped or still to do.\n";

int cmd_sessions(int argc, char **argv)
{
	const char *dbpath = DEFAULT_DB;
	enum out_format fmt = FMT_TABLE;
	const struct cli_opt opts[] = { CLI_DB(&dbpath), CLI_FORMAT(&fmt, 1), CLI_END };
	int first, rc = cli_parse("sessions", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (cli_no_args("sessions", argc, argv, first))
		return 2;
	struct db *db = cmd_open_db_readonly("sessions", dbpath);
	if (!db) {
		return 2;
	}
	static const char sql[] =
		"SELECT s.id AS session, s.name AS plan, s.tag, s.target, s.status,"
		" s.started_at,"
		" (SELECT count(*) FROM run r WHERE r.session_id = s.id AND r.status = 'ok') AS ok,"
		" (SELECT count(*) FROM run r WHERE r.session_id = s.id"
		"   AND r.status IN ('failed','timeout')) AS failed,"
		" (SELECT count(*) FROM run r WHERE r.session_id = s.id AND r.status = 'skipped') AS skipped,"
		" (SELECT count(*) FROM run r WHERE r.session_id = s.id"
		"   AND r.status IN ('planned','running','interrupted')) AS todo"
		" FROM session s ORDER BY s.id";
	struct rowset rs;
	rs.ncols = 0;
	if (db_query(db, sql, rowset_collect, &rs)) {
		cmd_error("sessions", "%s", db_errmsg(db));
		rc = 2;
	} else if (!rs.ncols) {
		if (fmt == FMT_TABLE)
			printf("no sessions in %s\n", dbpath);
		else {
			static const char *const cols[] = { "session", "plan", "tag", "target", "status",
							    "started_at", "ok", "failed", "skipped",
							    "todo" };
			rowset_init(&rs, 10, cols);
			rowset_print(&rs, fmt, stdout);
			rowset_release(&rs);
		}
	} else {
		rowset_print(&rs, fmt, stdout);
		rowset_release(&rs);
	}
	db_close(db);
	return cmd_finish(rc);
}
