/*
 * schedlab export: the rows of the `results` view that a selector matches,
 * as CSV or JSON, for people who plot elsewhere (docs/reports.md). The
 * selector is parsed by harness/results/select.c (keys checked against the view's
 * columns, a repeated key matches any of its values), the rows come from
 * the data layer (db/results.h, values bound as SQL parameters) and the
 * output goes through harness/results/format.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/results.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/results/format.h"
#include "harness/results/select.h"
#include "harness/util/atomicfile.h"
#include "harness/util/strbuf.h"

static const char usage_text[] =
	"usage: schedlab export [--db FILE] [--where SEL] [--since DATE]\n"
	"                       [--format csv|json] [--out FILE]\n"
	"\n"
	"Writes the rows of the results view (one per metric value, every column;\n"
	"docs/schema.md) that SEL selects, ordered by session, run and metric.\n"
	"\n"
	"  --where SEL    key=value,... over the columns of results (as compare);\n"
	"                 a key given twice matches either value; default: all\n"
	"  --since DATE   runs started at or after DATE (YYYY-MM-DD[THH:MM:SS])\n"
	"  --format F     csv (default; RFC 4180, a header line) or json\n"
	"                 ({\"schedlab_format\":1,\"columns\":[...],\"rows\":[[...]]})\n"
	"  --out FILE     write to FILE instead of stdout\n"
	"\n"
	"Exit status: 0 written (also when nothing matched), 2 bad input or an\n"
	"unwritable file.\n";

static int load_rows(struct db *db, const struct selector *sel, const char *since,
		     struct rowset *rs, struct strbuf *err)
{
	struct sel_filter f = { .since = since };
	struct db_where w;
	select_where(sel, &f, &w);
	int rc = db_results_export(db, &w, rowset_collect, rs);
	select_where_free(&w);
	if (rc)
		strbuf_addstr(err, db_errmsg(db));
	return rc ? -1 : 0;
}

static struct {
	const char *where, *since, *outpath;
	enum out_format fmt;
} args;

int cmd_export_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	memset(&args, 0, sizeof(args));
	args.fmt = FMT_CSV;
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath), CLI_STR("where", &args.where), CLI_SINCE(&args.since),
		CLI_FORMAT_OF(&args.fmt, FMT_ALLOW(FMT_CSV) | FMT_ALLOW(FMT_JSON)),
		CLI_STR("out", &args.outpath), CLI_END,
	};
	int first, rc = cli_parse("export", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (cli_no_args("export", argc, argv, first))
		return 2;
	struct strbuf err = STRBUF_INIT;
	if (args.outpath && outfile_check(args.outpath, &err)) {
		cmd_error("export", "--out %s", err.buf);
		strbuf_release(&err);
		return 2;
	}
	strbuf_release(&err);
	return CMD_GO;
}

int cmd_export(struct cmd_ctx *ctx)
{
	const char *where = args.where, *since = args.since, *outpath = args.outpath;
	enum out_format fmt = args.fmt;
	struct db *db = ctx->db;
	struct strbuf err = STRBUF_INIT;
	struct selector sel;
	struct rowset rs;
	memset(&rs, 0, sizeof(rs));
	int rc = 0;
	if (select_from_text(db, where, &sel, &err)) {
		cmd_error("export", "--where: %s", err.buf);
		rc = 2;
		goto out;
	}
	if (load_rows(db, &sel, since, &rs, &err)) {
		cmd_error("export", "%s", err.buf);
		select_free(&sel);
		rc = 2;
		goto out;
	}
	select_free(&sel);
	if (!rs.nrows)
		cmd_error("export", "warning: no results match%s%s", where ? " " : "",
			  where ? where : "");
	if (outpath) {
		/* a regular file replaced atomically (mode kept), a symlink
		   followed, a device written through, anything else refused */
		struct outfile of;
		if (outfile_open(&of, outpath, &err)) {
			cmd_error("export", "%s", err.buf);
			rc = 2;
			goto out;
		}
		rowset_print(&rs, fmt, of.fp);
		if (outfile_commit(&of, &err)) {
			cmd_error("export", "%s", err.buf);
			rc = 2;
		}
	} else {
		rowset_print(&rs, fmt, stdout);
	}
out:
	rowset_release(&rs);
	strbuf_release(&err);
	return cmd_finish(rc);
}
