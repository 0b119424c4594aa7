/*
 * schedlab export: the rows of the `results` view that a selector matches,
 * as CSV or JSON, for people who plot elsewhere (docs/reports.md). The
 * selector is parsed by harness/results/select.c (keys checked against the view's
 * columns, a repeated key matches any of its values) and its values are
 * bound as SQL parameters; the output goes through harness/results/format.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
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

/* the SQL for sel: one condition per distinct key, IN over its values */
static void build_sql(const struct selector *sel, const char *since, struct strbuf *sql)
{
	strbuf_addstr(sql, "SELECT * FROM results WHERE 1");
	char *done = xcalloc(sel->n + 1, 1);
	for (size_t i = 0; i < sel->n; i++) {
		if (done[i])
			continue;
		/* keys were checked against the view's columns; quote anyway */
		strbuf_addstr(sql, " AND COALESCE(CAST(\"");
		for (const char *c = sel->terms[i].key; *c; c++) {
			if (*c == '"')
				strbuf_addch(sql, '"');
			strbuf_addch(sql, *c);
		}
		strbuf_addstr(sql, "\" AS TEXT), '') IN (?");
		for (size_t j = i + 1; j < sel->n; j++)
			if (!strcmp(sel->terms[j].key, sel->terms[i].key)) {
				done[j] = 1;
				strbuf_addstr(sql, ", ?");
			}
		strbuf_addch(sql, ')');
	}
	if (since)
		strbuf_addstr(sql, " AND started_at >= ?");
	strbuf_addstr(sql, " ORDER BY session, started_at, run_id, workload, metric");
	free(done);
}

/* bind in the order build_sql placed the parameters */
static void bind_values(sqlite3_stmt *st, const struct selector *sel, const char *since)
{
	int k = 1;
	char *done = xcalloc(sel->n + 1, 1);
	for (size_t i = 0; i < sel->n; i++) {
		if (done[i])
			continue;
		sqlite3_bind_text(st, k++, sel->terms[i].value, -1, SQLITE_STATIC);
		for (size_t j = i + 1; j < sel->n; j++)
			if (!strcmp(sel->terms[j].key, sel->terms[i].key)) {
				done[j] = 1;
				sqlite3_bind_text(st, k++, sel->terms[j].value, -1, SQLITE_STATIC);
			}
	}
	if (since)
		sqlite3_bind_text(st, k++, since, -1, SQLITE_STATIC);
	free(done);
}

static int load_rows(struct db *db, const struct selector *sel, const char *since,
		     struct rowset *rs, struct strbuf *err)
{
	struct strbuf sql = STRBUF_INIT;
	build_sql(sel, since, &sql);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db_handle(db), sql.buf, -1, &st, NULL) != SQLITE_OK) {
		strbuf_addf(err, "query of results failed: %s", sqlite3_errmsg(db_handle(db)));
		strbuf_release(&sql);
		return -1;
	}
	strbuf_release(&sql);
	bind_values(st, sel, since);
	int n = sqlite3_column_count(st);
	const char **names = xcalloc((size_t)n + 1, sizeof(char *));
	const char **cells = xcalloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++)
		names[i] = sqlite3_column_name(st, i);
	rowset_init(rs, (size_t)n, names);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++)
			cells[i] = (const char *)sqlite3_column_text(st, i);
		rowset_add(rs, cells);
	}
	if (rc != SQLITE_DONE)
		strbuf_addf(err, "query of results failed: %s", sqlite3_errmsg(db_handle(db)));
	free(names);
	free(cells);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
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
