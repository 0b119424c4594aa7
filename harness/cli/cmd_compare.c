/*
 * schedlab compare A B: an A/B table of every (workload, metric) present on
 * both sides, with centres, change in % and its bootstrap 95% CI, the
 * Mann-Whitney p and a verdict, plus percentiles of merged latency
 * histograms and, for an A/A pair, the noise floor. The computation is in
 * harness/results/compare.c; this file parses options and formats (table, csv,
 * json). Docs: docs/analysis.md.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/results/compare.h"
#include "workloads/workload.h"
#include "harness/results/format.h"

static const char usage_text[] =
	"usage: schedlab compare A B [--db FILE] [--metric M] [--threshold PCT]\n"
	"                        [--centre auto|median|mean|hmean] [--format table|csv|json]\n"
	"\n"
	"Compares the runs selected by A (baseline) with those selected by B. A and B\n"
	"are selectors: key=value pairs joined by commas over the columns of the\n"
	"results view, e.g. preempt=full,workload=pingpong or session=12 or\n"
	"tag=nightly-2026-12-01; a key given twice matches either value.\n"
	"\n"
	"For every workload and metric on both sides: n, the centre of A and B\n"
	"(median; harmonic mean for rates), the change in % with a bootstrap 95%\n"
	"confidence interval, the Mann-Whitney p and a verdict: better, worse,\n"
	"no change (CI within the threshold) or inconclusive with the repetitions\n"
	"needed. Latency histograms are merged per side and compared at p50, p99\n"
	"and p99.9. Series (machine, kernel, preempt, HZ, SCHED_MC, cmdline, knobs,\n"
	"workload, params) are never pooled: what differs between A and B is\n"
	"compared, everything else must match and is reported row by row.\n"
	"\n"
	"  --metric M        only metric M (NAME or WORKLOAD.NAME; a histogram name\n"
	"                    such as latency_us gives its merged percentiles)\n"
	"  --threshold PCT   noise threshold in % (default 2), symmetric on the ratio:\n"
	"                    T bounds B/A by 1+T/100 and 1/(1+T/100) (100: x2 or /2)\n"
	"  --centre C        auto (default: hmean for rates, median otherwise),\n"
	"                    median, mean or hmean\n"
	"Exit status: 0 compared, 2 bad input or nothing in common.\n";

static void fmt_pct(char *buf, size_t n, double v)
{
	if (!isfinite(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%+.1f%%", v);
}

static void fmt_ci(char *buf, size_t n, double lo, double hi)
{
	if (!isfinite(lo) || !isfinite(hi))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "[%+.1f, %+.1f]", lo, hi);
}

static char *row_metric_name(const struct cmp_row *row)
{
	if (row->kind == CMP_HIST) {
		if (row->pct == 99.9)
			return xstrfmt("%s p99.9", row->metric);
		return xstrfmt("%s p%.0f", row->metric, row->pct);
	}
	return xstrdup(row->metric);
}

static const char *const csv_cols[] = {
	"workload", "series", "metric", "kind", "unit", "better", "centre", "n_a", "n_b", "a",
	"b", "change_pct", "ci_lo_pct", "ci_hi_pct", "p", "verdict", "reps_needed",
	"noise_floor_pct", "censored_a", "censored_b", "bound", "change_bound",
};
#define NCSV (sizeof(csv_cols) / sizeof(csv_cols[0]))

static const char *better_name(enum sel_better b)
{
	return b == SEL_BETTER_LOWER ? "lower" : b == SEL_BETTER_HIGHER ? "higher" : "none";
}

static void cell_num(char *buf, size_t n, double v)
{
	if (!isfinite(v))
		buf[0] = 0;
	else
		snprintf(buf, n, "%.10g", v);
}

static void print_csv(const struct compare_job *job, FILE *out)
{
	struct rowset rs;
	rowset_init(&rs, NCSV, csv_cols);
	for (size_t i = 0; i < job->r.nrows; i++) {
		const struct cmp_row *row = &job->r.rows[i];
		char na[32], nb[32], a[40], b[40], ch[40], lo[40], hi[40], p[40], reps[32], nf[40];
		char ca[32] = "", cb[32] = "", bd[40] = "";
		char *name = row_metric_name(row), *verdict = compare_verdict_text(row);
		int hist = row->kind == CMP_HIST;
		snprintf(na, sizeof(na), "%zu", hist ? row->a_runs : row->v.n_a);
		snprintf(nb, sizeof(nb), "%zu", hist ? row->b_runs : row->v.n_b);
		cell_num(a, sizeof(a), hist ? row->ha : row->v.centre_a);
		cell_num(b, sizeof(b), hist ? row->hb : row->v.centre_b);
		cell_num(ch, sizeof(ch), row->change_pct);
		cell_num(lo, sizeof(lo), hist ? NAN : row->v.ci_lo_pct);
		cell_num(hi, sizeof(hi), hist ? NAN : row->v.ci_hi_pct);
		cell_num(p, sizeof(p), hist ? NAN : row->v.p);
		reps[0] = 0;
		if (!hist && row->has_verdict && row->v.kind == VERDICT_INCONCLUSIVE &&
		    row->v.reps_needed)
			snprintf(reps, sizeof(reps), "%zu", row->v.reps_needed);
		cell_num(nf, sizeof(nf), row->has_noise ? row->nf.half_width_pct : NAN);
		if (!hist) {
			snprintf(ca, sizeof(ca), "%zu", row->v.censored_a);
			snprintf(cb, sizeof(cb), "%zu", row->v.censored_b);
			cell_num(bd, sizeof(bd), row->v.bound);
		}
		const char *cbound = hist || !row->v.change_bound ? ""
				     : row->v.change_bound > 0 ? "at_least" : "at_most";
		const char *cells[NCSV] = {
			row->workload, job->r.pairs[row->pair].label, name,
			hist ? "histogram" : "metric", row->unit, better_name(row->better),
			hist ? "merged" : compare_centre_name(row->centre), na, nb, a, b, ch, lo, hi,
			p, verdict, reps, nf, ca, cb, bd, cbound,
		};
		for (size_t k = 0; k < NCSV; k++)
			if (cells[k] && !*cells[k] && k >= 9)
				cells[k] = NULL;
		rowset_add(&rs, cells);
		free(name);
		free(verdict);
	}
	rowset_print(&rs, FMT_CSV, out);
	rowset_release(&rs);
}

static void print_json(const struct compare_job *job, const char *sa, const char *sb,
		       FILE *out)
{
	/* the document of harness/results/compare_json.c, also serve's compare page */
	json_t *doc = compare_job_json(job, sa, sb);
	json_dumpf(doc, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	fputc('\n', out);
	json_decref(doc);
}

/* ---- table ------------------------------------------------------------ */

#define TCOLS 8
struct trow {
	char *c[TCOLS];
};

static void print_block(FILE *out, struct trow *tr, size_t n)
{
	static const char *const head[TCOLS] = { "metric", "n A/B", "A", "B",
						 "change", "95% CI", "p", "verdict" };
	static const int right[TCOLS] = { 0, 1, 1, 1, 1, 0, 1, 0 };
	size_t w[TCOLS];
	for (int k = 0; k < TCOLS; k++) {
		w[k] = strlen(head[k]);
		for (size_t i = 0; i < n; i++)
			if (strlen(tr[i].c[k]) > w[k])
				w[k] = strlen(tr[i].c[k]);
	}
	size_t total = 0;
	for (int k = 0; k < TCOLS; k++)
		total += w[k] + 2;
	const char *sep = total > 100 ? " " : "  ";
	for (int k = 0; k < TCOLS; k++)
		fprintf(out, "%s%*s%s", k ? sep : "  ",
			k == TCOLS - 1 ? 0 : right[k] ? (int)w[k] : -(int)w[k], head[k],
			k == TCOLS - 1 ? "\n" : "");
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < TCOLS; k++) {
			if (k == TCOLS - 1)
				fprintf(out, "%s%s\n", *tr[i].c[k] ? sep : "", tr[i].c[k]);
			else
				fprintf(out, "%s%*s", k ? sep : "  ",
					right[k] ? (int)w[k] : -(int)w[k], tr[i].c[k]);
		}
}

/* what the notes below the blocks need: which kinds of row were printed */
struct table_notes {
	int any_inc, any_noise, any_censored;
};

/* the lines above the blocks: the selectors, what differs, the kernels from
 * git, how centre and change are read */
static void print_table_head(const struct compare_job *job, const char *sa, const char *sb,
			     FILE *out)
{
	const struct cmp_result *r = &job->r;
	fprintf(out, "A: %s\nB: %s\n", sa, sb);
	if (!r->diff_mask) {
		fprintf(out, "A and B are the same configuration (A/A)\n");
	} else {
		fprintf(out, "compared:");
		int first = 1;
		for (int d = 0; d < SEL_NDIMS; d++)
			if (r->label_mask & (1u << d)) {
				fprintf(out, "%s %s", first ? "" : ",", sel_dim_name(d));
				first = 0;
			}
		fputc('\n', out);
	}
	/* kernels from git of one release (and config) are one kernel to the
	 * pairing; say which commits the sides ran */
	const char *la = job->a.nseries ? job->a.series[0].kernel_label : NULL;
	const char *lb = job->b.nseries ? job->b.series[0].kernel_label : NULL;
	if ((la || lb) && !(r->diff_mask & (1u << DIM_KERNEL)) && (!la || !lb || strcmp(la, lb)))
		fprintf(out, "kernels from git: A %s, B %s\n", la ? la : "(several or none)",
			lb ? lb : "(several or none)");
	/* the guest's clock, when a side's is not the real one (docs/virtual-time.md):
	 * a virtual clock's values are instructions, read as exact data */
	for (int side = 0; side < 2; side++) {
		const struct sample_set *s = side ? &job->b : &job->a;
		const char *c = s->nseries ? s->series[0].dim[DIM_CLOCK] : NULL;
		for (size_t i = 1; c && i < s->nseries; i++)
			if (strcmp(s->series[i].dim[DIM_CLOCK], c))
				c = "mixed";
		if (c && strcmp(c, "real")) {
			const char *ca = job->a.nseries ? job->a.series[0].dim[DIM_CLOCK] : "-";
			const char *cb = job->b.nseries ? job->b.series[0].dim[DIM_CLOCK] : "-";
			if (!strcmp(ca, cb))
				fprintf(out, "clock: %s on both sides (it counts instructions: "
					     "exact data are decided from the values)\n", ca);
			else
				fprintf(out, "clock: A %s; B %s (not one time base)\n", ca, cb);
			break;
		}
	}
	/* the emulator, when the sides ran on another (or on several): a series
	 * of one qemu is not another's (docs/virtual-time.md) */
	const char *qa = job->a.nseries ? job->a.series[0].dim[DIM_QEMU] : "";
	const char *qb = job->b.nseries ? job->b.series[0].dim[DIM_QEMU] : "";
	for (size_t i = 1; i < job->a.nseries; i++)
		if (strcmp(job->a.series[i].dim[DIM_QEMU], qa))
			qa = "several";
	for (size_t i = 1; i < job->b.nseries; i++)
		if (strcmp(job->b.series[i].dim[DIM_QEMU], qb))
			qb = "several";
	if (strcmp(qa, qb) || !strcmp(qa, "several"))
		fprintf(out, "qemu: A %s; B %s (not one emulator)\n", *qa ? qa : "none",
			*qb ? qb : "none");
	fprintf(out, "centre: median, harmonic mean (*) for rates; change = B/A - 1; "
		     "noise threshold %g%%\n",
		r->threshold_pct);
}

/* a metric row's verdict cell (a bound's reason and advice go below the
 * block, the repetitions' meaning too: noted in *tn) */
static char *verdict_cell(const struct cmp_row *row, struct table_notes *tn)
{
	if (row->has_verdict && (row->v.censored_a || row->v.censored_b)) {
		tn->any_censored = 1;
		return row->v.kind == VERDICT_INCONCLUSIVE
			       ? xstrdup("inconclusive (bound) [c]")
			       : xstrfmt("%s (bound)", verdict_kind_name(row->v.kind));
	}
	if (row->has_verdict && row->v.kind == VERDICT_INCONCLUSIVE && row->v.reps_needed) {
		tn->any_inc = 1;
		return row->v.reps_needed > 1000
			       ? xstrdup("inconclusive (>1000 reps)")
			       : xstrfmt("inconclusive (~%zu reps)", row->v.reps_needed);
	}
	return compare_verdict_text(row);
}

/* the cells of one row of a block */
static void fill_trow(struct trow *t, const struct cmp_row *row, struct table_notes *tn)
{
	char buf[64];
	int hist = row->kind == CMP_HIST;
	char *name = row_metric_name(row);
	t->c[0] = hist || row->centre != STATS_HMEAN ? name : xstrfmt("%s*", name);
	if (t->c[0] != name)
		free(name);
	t->c[1] = hist ? xstrfmt("%zur/%zur", row->a_runs, row->b_runs)
		       : xstrfmt("%zu/%zu", row->v.n_a, row->v.n_b);
	int bound_a = hist ? row->ha_overflow : row->v.censored_a > 0;
	int bound_b = hist ? row->hb_overflow : row->v.censored_b > 0;
	fmt_num(buf, sizeof(buf), hist ? row->ha : row->v.centre_a);
	t->c[2] = xstrfmt("%s%s", bound_a ? ">=" : "", buf);
	fmt_num(buf, sizeof(buf), hist ? row->hb : row->v.centre_b);
	t->c[3] = xstrfmt("%s%s", bound_b ? ">=" : "", buf);
	fmt_pct(buf, sizeof(buf), row->change_pct);
	t->c[4] = xstrfmt("%s%s", hist || !row->v.change_bound ? ""
				  : row->v.change_bound > 0 ? ">=" : "<=", buf);
	if (hist) {
		t->c[5] = xstrdup("(merged histograms)");
		t->c[6] = xstrdup("-");
		t->c[7] = xstrdup("");
	} else {
		fmt_ci(buf, sizeof(buf), row->v.ci_lo_pct, row->v.ci_hi_pct);
		t->c[5] = xstrdup(buf);
		compare_p_text(buf, sizeof(buf), row);
		t->c[6] = xstrdup(buf);
		t->c[7] = verdict_cell(row, tn);
	}
	tn->any_noise |= row->has_noise;
}

/* one block per pair of series: its title line and its rows */
static void print_table_blocks(const struct cmp_result *r, FILE *out, struct table_notes *tn)
{
	struct trow *tr = xcalloc(r->nrows + 1, sizeof(*tr));
	for (size_t i = 0; i < r->nrows;) {
		size_t p = r->rows[i].pair, n = 0, j = i;
		for (; j < r->nrows && r->rows[j].pair == p; j++, n++)
			fill_trow(&tr[n], &r->rows[j], tn);
		const struct cmp_pair *pp = &r->pairs[p];
		fprintf(out, "\n%s%s%.90s\n", pp->workload, *pp->label ? ": " : "", pp->label);
		print_block(out, tr, n);
		for (size_t k = 0; k < n; k++)
			for (int c = 0; c < TCOLS; c++)
				free(tr[k].c[c]);
		i = j;
	}
	free(tr);
}

/* below the blocks: every value that is only a bound, with its verdict's text */
static void print_bound_notes(const struct cmp_result *r, FILE *out)
{
	fprintf(out, "\nvalues that are only bounds (>=: beyond the range a workload "
		     "measures, docs/statistics.md):\n");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		if (row->kind != CMP_METRIC || !row->has_verdict ||
		    !(row->v.censored_a || row->v.censored_b))
			continue;
		char *t = compare_verdict_text(row);
		fprintf(out, "  %s.%s: %s\n", row->workload, row->metric, t);
		free(t);
	}
}

/* below the blocks: the A/A noise floor of every row that has one */
static void print_noise_floor(const struct cmp_result *r, FILE *out)
{
	int w = 6;
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].has_noise) {
			int l = (int)(strlen(r->rows[i].workload) + strlen(r->rows[i].metric) + 1);
			if (l > w)
				w = l < 50 ? l : 50;
		}
	fprintf(out, "\nnoise floor (A/A): a threshold below the CI half-width cannot be "
		     "resolved\n  %-*s %7s %7s %7s %10s\n",
		w, "metric", "cv A", "cv B", "cv all", "half-width");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		if (!row->has_noise)
			continue;
		char *name = xstrfmt("%s.%s", row->workload, row->metric);
		char c[4][32];
		double v[4] = { 100 * row->nf.cv_a, 100 * row->nf.cv_b, 100 * row->nf.cv_all,
				row->nf.half_width_pct };
		for (int k = 0; k < 4; k++)
			if (isfinite(v[k]))
				snprintf(c[k], sizeof(c[k]), "%.1f%%", v[k]);
			else
				snprintf(c[k], sizeof(c[k]), "-");
		fprintf(out, "  %-*.50s %7s %7s %7s %10s\n", w, name, c[0], c[1], c[2], c[3]);
		free(name);
	}
}

static void print_table(const struct compare_job *job, const char *sa, const char *sb,
			FILE *out)
{
	const struct cmp_result *r = &job->r;
	struct table_notes tn = { 0, 0, 0 };
	print_table_head(job, sa, sb, out);
	print_table_blocks(r, out, &tn);
	if (tn.any_inc)
		fprintf(out, "\ninconclusive (~N reps): need about N repetitions per side to "
			     "resolve a %g%% change\n",
			r->threshold_pct);
	if (tn.any_censored)
		print_bound_notes(r, out);
	if (tn.any_noise)
		print_noise_floor(r, out);
}

static struct {
	enum out_format fmt;
	struct cmp_options o;
	const char *sa, *sb;
} args;

int cmd_compare_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	/* in the order of enum cmp_centre_mode */
	static const char *const centres[] = { "auto", "median", "mean", "hmean", NULL };
	struct cmp_options *o = &args.o;
	args.fmt = FMT_TABLE;
	cmp_options_default(o);
	o->range_param = workload_range_param;
	int centre = CMP_CENTRE_AUTO;
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath), CLI_STR("metric", &o->metric), CLI_THRESHOLD(&o->threshold_pct),
		CLI_ONE_OF("centre", &centre, centres), CLI_FORMAT(&args.fmt, 1), CLI_END,
	};
	int first, prc = cli_parse("compare", usage_text, opts, argc, argv, &first);
	if (prc != CLI_OK)
		return cli_parse_exit(prc);
	o->centre = (enum cmp_centre_mode)centre;
	if (argc - first != 2) {
		cmd_error("compare", "expected two selectors A and B, got %d", argc - first);
		fputs(usage_text, stderr);
		return 2;
	}
	args.sa = argv[first];
	args.sb = argv[first + 1];
	/* an empty selector would select every result */
	for (int i = 0; i < 2; i++) {
		const char *s = i ? args.sb : args.sa;
		if (!s[strspn(s, " \t")]) {
			cmd_error("compare", "selector %s is empty: it would select every result "
				  "(give key=value terms, e.g. tag=a)", i ? "B" : "A");
			return 2;
		}
	}
	return CMD_GO;
}

int cmd_compare(struct cmd_ctx *ctx)
{
	const char *sa = args.sa, *sb = args.sb;
	const struct cmp_options *o = &args.o;
	enum out_format fmt = args.fmt;
	struct compare_job job;
	if (cmd_compare_job(ctx, sa, sb, o, 1, &job))
		return 2;
	int rc = 0;
	if (!job.a.nrows || !job.b.nrows) {
		cmd_error("compare", "selector %s matches no results", !job.a.nrows ? sa : sb);
		rc = 2;
	} else if (!job.r.nrows) {
		cmd_error("compare", "A and B have no (workload, metric) in common%s",
			  o->metric ? " for --metric" : "; see the warnings above");
		rc = 2;
	} else if (fmt == FMT_JSON) {
		print_json(&job, sa, sb, stdout);
	} else if (fmt == FMT_CSV) {
		print_csv(&job, stdout);
	} else {
		print_table(&job, sa, sb, stdout);
	}
	compare_job_free(&job);
	return cmd_finish(rc);
}
