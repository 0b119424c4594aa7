/*
 * schedlab export: the rows of the `results` view that a selector matches,
 * as CSV or JSON, for people who plot elsewhere (docs/reports.md). The
 * selector is parsed by harness/results/select.c (keys checked against the view's
 * columns, a repeated key matches any of its values), the rows come from
 * the data layer (db/results.h, values bound as SQL parameters) and the
 * output goes through harness/results/format.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/results.h"
#include "harness/cli/cmd.h"
#include "harness/results/format.h"
#include "harness/results/select.h"
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

/* db_results_export() callback: the header, then the rows */
static int collect(void *ctx, int ncols, const char *const *names, const char *const *values)
{
	struct rowset *rs = ctx;
	if (!values)
		rowset_init(rs, (size_t)ncols, names);
	else
		rowset_add(rs, values);
	return 0;
}

static int load_rows(struct db *db, const struct selector *sel, const char *since,
		     struct rowset *rs, struct strbuf *err)
{
	struct sel_filter f = { .since = since };
	struct db_where w;
	select_where(sel, &f, &w);
	int rc = db_results_export(db, &w, collect, rs);
	select_where_free(&w);
	if (rc)
		strbuf_addstr(err, db_errmsg(db));
	return rc ? -1 : 0;
}

static int valid_date(const char *s)
{
	for (int i = 0; i < 10; i++) {
		if (i == 4 || i == 7) {
			if (s[i] != '-')
				return 0;
		} else if (s[i] < '0' || s[i] > '9') {
			return 0;
		}
	}
	return s[10] == 0 || s[10] == 'T' || s[10] == ' ';
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "where", required_argument, NULL, 'w' },
		{ "since", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dbpath = DEFAULT_DB, *where = NULL, *since = NULL, *outpath = NULL;
	enum out_format fmt = FMT_CSV;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dbpath = optarg; break;
		case 'w': where = optarg; break;
		case 's':
			if (!valid_date(optarg)) {
				cmd_error("export", "--since %s: expected YYYY-MM-DD[THH:MM:SS]",
					  optarg);
				return 2;
			}
			since = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "csv"))
				fmt = FMT_CSV;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else {
				cmd_error("export", "--format %s: must be csv or json", optarg);
				return 2;
			}
			break;
		case 'o': outpath = optarg; break;
		case 'h': fputs(usage_text, stdout); return cmd_finish(0);
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind != argc) {
		cmd_error("export", "unexpected argument '%s'", argv[optind]);
		return 2;
	}
	struct db *db = cmd_open_db_readonly("export", dbpath);
	if (!db) {
		return 2;
	}
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
		FILE *f = fopen(outpath, "w");
		if (!f) {
			cmd_error("export", "%s: %m", outpath);
			rc = 2;
			goto out;
		}
		rowset_print(&rs, fmt, f);
		if (ferror(f) | fclose(f)) {
			cmd_error("export", "%s: write error: %m", outpath);
			rc = 2;
		}
	} else {
		rowset_print(&rs, fmt, stdout);
	}
out:
	rowset_release(&rs);
	strbuf_release(&err);
	db_close(db);
	return cmd_finish(rc);
}
