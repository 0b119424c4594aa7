/*
 * schedlab sessions: the sessions in a database with their run counts.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/results/format.h"

static const char usage_text[] =
	"usage: schedlab sessions [--db FILE] [--format table|csv|json]\n"
	"\n"
	"Lists the sessions in the database: id, plan, tag, target, status, start\n"
	"time and how many runs are ok, failed, skipped or still to do.\n";

int cmd_sessions(int argc, char **argv)
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
			if (parse_format("sessions", optarg, &fmt, 1))
				return 2;
			break;
		case 'h': fputs(usage_text, stdout); return cmd_finish(0);
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind != argc) {
		cmd_error("sessions", "unexpected argument '%s'", argv[optind]);
		return 2;
	}
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
	int rc = 0;
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
