/*
 * schedlab report: one self-contained HTML page (inline CSS, SVG and a few
 * lines of JavaScript for sorting; no network, works from file://) with the
 * A/B comparison, latency distributions, trends with change points and the
 * sysinfo of every boot involved; optionally the one-screen text summary
 * the nightly script prints. The computation and rendering are in
 * harness/results/report.c. Docs: docs/reports.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/results/report.h"
#include "harness/util/atomicfile.h"
#include "harness/util/numfmt.h"
#include "workloads/workload.h"

static const char usage_text[] =
	"usage: schedlab report [--db FILE] [--session S | --compare A B | --since DATE |\n"
	"                        --bisect ID]\n"
	"                       [--out FILE.html] [--title TEXT] [--summary]\n"
	"                       [--threshold PCT] [--p P] [--history N] [--max-points N]\n"
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
	"  --bisect ID    a bisection (number or \"last\", schedlab bisect): the range,\n"
	"                 each step's commit, verdict, effect with CI, build time,\n"
	"                 and the metric's values per step\n"
	"  --out FILE     the HTML file (default report.html; - for stdout)\n"
	"  --title TEXT   page title (default: the scope)\n"
	"  --summary      also print the one-screen text summary to stdout:\n"
	"                 regressions, by how much, with what confidence, and the\n"
	"                 change point in the history where each starts\n"
	"  --threshold P  noise threshold of the verdicts in % (default 2)\n"
	"  --p P          change-point significance (default 0.001)\n"
	"  --history N    trends: besides the sessions in scope, up to N sessions\n"
	"                 before the last of them and N after it, on the same\n"
	"                 machines (default 60; 0: the scope only)\n"
	"  --max-points N trends: at most N sessions; beyond, only every k-th is\n"
	"                 drawn, counted from the newest (default 400)\n"
	"\n"
	"Exit status: 0 written, 2 bad input (also a scope without results).\n";

/* the scope options: each of them counts, so that two exclude each other */
struct scope {
	struct report_options *ro;
	int nmodes;
	const char *bisect;
};

static int opt_session(void *ctx, const char *arg, int argc, char **argv, int *next)
{
	struct scope *sc = ctx;
	sc->ro->mode = REPORT_SESSION;
	sc->ro->session = arg;
	sc->nmodes++;
	return 0;
}

/* --compare A B: the option's argument and the next word */
static int opt_compare(void *ctx, const char *arg, int argc, char **argv, int *next)
{
	struct scope *sc = ctx;
	if (*next >= argc) {
		cmd_error("report", "--compare needs two selectors: --compare A B");
		return 2;
	}
	sc->ro->mode = REPORT_COMPARE;
	sc->ro->a = arg;
	sc->ro->b = argv[(*next)++];
	sc->nmodes++;
	return 0;
}

static int opt_bisect(void *ctx, const char *arg, int argc, char **argv, int *next)
{
	struct scope *sc = ctx;
	sc->bisect = arg;
	sc->nmodes++;
	return 0;
}

static int opt_since(void *ctx, const char *arg, int argc, char **argv, int *next)
{
	struct scope *sc = ctx;
	if (!date_arg_valid(arg)) {
		cmd_error("report", "--since %s: expected " DATE_ARG_FORMAT, arg);
		return 2;
	}
	sc->ro->mode = REPORT_SINCE;
	sc->ro->since = arg;
	sc->nmodes++;
	return 0;
}

/* the page into `outpath` ("-": stdout) through struct outfile: a regular
 * file replaced atomically keeping its mode, a symlink followed, a
 * character device written through, anything else refused; 0 or 2 after
 * the message */
static int write_page(const struct strbuf *page, const char *outpath)
{
	if (!strcmp(outpath, "-")) {
		fwrite(page->buf, 1, page->len, stdout);
		return 0;
	}
	struct strbuf err = STRBUF_INIT;
	int rc = 0;
	if (outfile_write(outpath, page->buf, page->len, &err)) {
		cmd_error("report", "%s", err.buf);
		rc = 2;
	}
	strbuf_release(&err);
	return rc;
}

static struct {
	struct report_options ro;
	const char *outpath;
	int summary;
	struct scope sc;
} args;

int cmd_report_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct report_options *ro = &args.ro;
	memset(&args, 0, sizeof(args));
	report_options_default(ro);
	ro->cmp.range_param = workload_range_param;
	args.outpath = "report.html";
	args.sc.ro = ro;
	struct scope *sc = &args.sc;
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath),
		CLI_FN("session", opt_session, sc, 1),
		CLI_FN("compare", opt_compare, sc, 1),
		CLI_FN("since", opt_since, sc, 1),
		CLI_FN("bisect", opt_bisect, sc, 1),
		CLI_STR("out", &args.outpath),
		CLI_STR("title", &ro->title),
		CLI_BOOL("summary", &args.summary),
		CLI_THRESHOLD(&ro->cmp.threshold_pct),
		CLI_PVALUE(&ro->cp.max_pvalue),
		CLI_RANGE("history", &ro->history, 0, 100000),
		CLI_RANGE("max-points", &ro->max_points, 2, 100000),
		CLI_END,
	};
	int first, prc = cli_parse("report", usage_text, opts, argc, argv, &first);
	if (prc != CLI_OK)
		return cli_parse_exit(prc);
	if (cli_no_args("report", argc, argv, first))
		return 2;
	if (sc->nmodes > 1) {
		cmd_error("report", "--session, --compare, --since and --bisect exclude each other");
		return 2;
	}
	if (args.summary && !strcmp(args.outpath, "-")) {
		cmd_error("report", "--summary prints to stdout: give --out a file");
		return 2;
	}
	ro->dbpath = ctx->dbpath;
	/* the output path is checked first: a directory, FIFO or block device
	   is refused before any work (and checked again when written) */
	struct strbuf err = STRBUF_INIT;
	if (strcmp(args.outpath, "-") && outfile_check(args.outpath, &err)) {
		cmd_error("report", "--out %s", err.buf);
		strbuf_release(&err);
		return 2;
	}
	strbuf_release(&err);
	return CMD_GO;
}

int cmd_report(struct cmd_ctx *ctx)
{
	const struct report_options *ro = &args.ro;
	const struct scope sc = args.sc;
	const char *outpath = args.outpath;
	int summary = args.summary;
	struct db *db = ctx->db;
	struct strbuf err = STRBUF_INIT, page = STRBUF_INIT;
	if (sc.bisect) {
		int rc = 2;
		if (summary)
			cmd_error("report", "--summary does not go with --bisect (the bisection's "
				  "log is its summary: schedlab bisect --resume %s)", sc.bisect);
		else if (report_bisect_html(db, sc.bisect, &page, &err))
			cmd_error("report", "%s", err.buf);
		else if (!(rc = write_page(&page, outpath)) && strcmp(outpath, "-"))
			fprintf(stderr, "schedlab report: wrote %s (bisection %s)\n", outpath,
				sc.bisect);
		strbuf_release(&err);
		strbuf_release(&page);
		return cmd_finish(rc);
	}
	struct report r;
	if (report_build(db, ro, &r, &err)) {
		cmd_error("report", "%s", err.buf);
		strbuf_release(&err);
		return 2;
	}
	for (size_t i = 0; i < r.notes.nr; i++)
		cmd_error("report", "note: %s", r.notes.v[i]);
	report_render_html(&r, &page);
	int rc = write_page(&page, outpath);
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
