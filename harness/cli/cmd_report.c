/*
 * schedlab report: one self-contained HTML page (inline CSS, SVG and a few
 * lines of JavaScript for sorting; no network, works from file://) with the
 * A/B comparison, latency distributions, trends with change points and the
 * sysinfo of every boot involved; optionally the one-screen text summary
 * the nightly script prints. The computation and rendering are in
 * harness/results/report.c. Docs: docs/reports.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/results/report.h"

static const char usage_text[] =
	"usage: schedlab report [--db FILE] [--session S | --compare A B | --since DATE]\n"
	"                       [--out FILE.html] [--title TEXT] [--summary]\n"
	"                       [--threshold PCT] [--p P]\n"
	"\n"
	"Writes one self-contained HTML file (no network; open it from file://):\n"
	"the comparison table with verdicts (sortable), latency distributions per\n"
	"configuration from the merged histograms, per-metric trends over sessions\n"
	"with change points and noise bands, and the sysinfo of every machine and\n"
	"boot involved.\n"
	"\n"
	"  --session S    a session (number or \"last\"; the default): its\n"
	"                 configurations compared with the first one\n"
	"  --compare A B  selector A (baseline) against selector B (as compare)\n"
	"  --since DATE   everything since DATE (YYYY-MM-DD[THH:MM:SS]): trends\n"
	"  --out FILE     the HTML file (default report.html; - for stdout)\n"
	"  --title TEXT   page title (default: the scope)\n"
	"  --summary      also print the one-screen text summary to stdout:\n"
	"                 regressions, by how much, with what confidence, and the\n"
	"                 change point in the history where each starts\n"
	"  --threshold P  noise threshold of the verdicts in % (default 2)\n"
	"  --p P          change-point significance (default 0.001)\n"
	"\n"
	"Exit status: 0 written, 2 bad input (also a scope without results).\n";

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

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "session", required_argument, NULL, 'S' },
		{ "compare", required_argument, NULL, 'c' },
		{ "since", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "summary", no_argument, NULL, 'y' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "p", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_options ro;
	report_options_default(&ro);
	const char *dbpath = DEFAULT_DB, *outpath = "report.html";
	int nmodes = 0, summary = 0, c;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dbpath = optarg; break;
		case 'S':
			ro.mode = REPORT_SESSION;
			ro.session = optarg;
			nmodes++;
			break;
		case 'c':
			if (optind >= argc) {
				cmd_error("report", "--compare needs two selectors: --compare A B");
				return 2;
			}
			ro.mode = REPORT_COMPARE;
			ro.a = optarg;
			ro.b = argv[optind++];
			nmodes++;
			break;
		case 's':
			if (!valid_date(optarg)) {
				cmd_error("report", "--since %s: expected YYYY-MM-DD[THH:MM:SS]",
					  optarg);
				return 2;
			}
			ro.mode = REPORT_SINCE;
			ro.since = optarg;
			nmodes++;
			break;
		case 'o': outpath = optarg; break;
		case 't': ro.title = optarg; break;
		case 'y': summary = 1; break;
		case 'T':
			ro.cmp.threshold_pct = strtod(optarg, &end);
			if (end == optarg || *end || !(ro.cmp.threshold_pct > 0 &&
						       ro.cmp.threshold_pct < 1000)) {
				cmd_error("report", "--threshold %s: must be a percentage in (0, 1000)",
					  optarg);
				return 2;
			}
			break;
		case 'p':
			ro.cp.max_pvalue = strtod(optarg, &end);
			if (end == optarg || *end || !(ro.cp.max_pvalue > 0 && ro.cp.max_pvalue < 1)) {
				cmd_error("report", "--p %s: must be a probability in (0, 1)", optarg);
				return 2;
			}
			break;
		case 'h': fputs(usage_text, stdout); return cmd_finish(0);
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind != argc) {
		cmd_error("report", "unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (nmodes > 1) {
		cmd_error("report", "--session, --compare and --since exclude each other");
		return 2;
	}
	if (summary && !strcmp(outpath, "-")) {
		cmd_error("report", "--summary prints to stdout: give --out a file");
		return 2;
	}
	ro.dbpath = dbpath;
	struct db *db = cmd_open_db_readonly("report", dbpath);
	if (!db) {
		return 2;
	}
	struct strbuf err = STRBUF_INIT, page = STRBUF_INIT;
	struct report r;
	if (report_build(db, &ro, &r, &err)) {
		cmd_error("report", "%s", err.buf);
		strbuf_release(&err);
		db_close(db);
		return 2;
	}
	db_close(db);
	for (size_t i = 0; i < r.notes.nr; i++)
		cmd_error("report", "note: %s", r.notes.v[i]);
	report_render_html(&r, &page);
	int rc = 0;
	if (!strcmp(outpath, "-")) {
		fwrite(page.buf, 1, page.len, stdout);
	} else {
		/* write next to the target, then rename: a reader never sees half a page */
		char *tmp = xstrfmt("%s.tmp", outpath);
		FILE *f = fopen(tmp, "w");
		if (!f) {
			cmd_error("report", "%s: %m", tmp);
			rc = 2;
		} else {
			size_t w = fwrite(page.buf, 1, page.len, f);
			if (w != page.len || ferror(f) | fclose(f) || rename(tmp, outpath)) {
				cmd_error("report", "%s: write error: %m", outpath);
				unlink(tmp);
				rc = 2;
			}
		}
		free(tmp);
	}
	if (!rc && summary)
		report_render_summary(&r, stdout);
	if (!rc && strcmp(outpath, "-"))
		fprintf(stderr, "schedlab report: wrote %s (%zu comparison%s, %zu latency chart%s, "
				"%zu trend%s, %zu boot configuration%s)\n",
			outpath, r.ncmps, r.ncmps == 1 ? "" : "s", r.ndists, r.ndists == 1 ? "" : "s",
			r.ntrends, r.ntrends == 1 ? "" : "s", r.nboots, r.nboots == 1 ? "" : "s");
	report_free(&r);
	strbuf_release(&page);
	strbuf_release(&err);
	return cmd_finish(rc);
}
