/*
 * schedlab trend --metric WORKLOAD.METRIC: the history of one metric of one
 * series, one value per session (the median of its repetitions) in time
 * order, with change points from analysis/changepoint.h (E-divisive with a
 * t test, as Hunter/Otava). Refuses to mix series: when the selection holds
 * several, it lists them and exits 2. Docs: docs/analysis.md. One exception:
 * nightly sessions of one configuration whose effective preemption model
 * changed (the kernel's default mode moved, voluntary -> lazy) are one
 * trend with a break, shown with its cause; change points are sought on
 * each side of it, never across (docs/alerts.md).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/changepoint.h"
#include "analysis/stats.h"
#include "db/db.h"
#include "db/results.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/results/compare.h"
#include "harness/results/format.h"
#include "harness/results/select.h"
#include "harness/results/trend.h"

static const char usage_text[] =
	"usage: schedlab trend --metric WORKLOAD.METRIC [--where SEL] [--since DATE]\n"
	"                      [--p P] [--window W] [--db FILE] [--format table|csv|json]\n"
	"\n"
	"The history of one metric: one value per session (the median of its\n"
	"repetitions), oldest first, and the change points in it (where the mean\n"
	"shifted, by how much, with what p-value; docs/statistics.md).\n"
	"A trend is of one series (machine, kernel, preempt, HZ, SCHED_MC, cmdline,\n"
	"knobs, workload, params); if the selection holds several, they are listed\n"
	"and the command exits 2: narrow it with --where. Nightly sessions (tag\n"
	"nightly-*) of one configuration whose effective preemption model changed\n"
	"(a kernel's new default mode; kernels from git count as one; another\n"
	"kernel whose model differs, Debian's 6.1 RT to 6.12 RT, too) are one\n"
	"trend with the break shown:\n"
	"\"effective preemption model changed: voluntary -> lazy at session N\".\n"
	"\n"
	"  --metric W.M   e.g. cyclictest.lat_p99_us\n"
	"  --where SEL    key=value,... over the columns of results (as compare)\n"
	"  --since DATE   runs started at or after DATE (YYYY-MM-DD[THH:MM:SS])\n"
	"  --p P          change-point significance (default 0.001)\n"
	"  --window W     change-point window in points (default 50)\n";

/* the series that are mixed: one line each with the values that differ */
static void report_series(const struct sample_set *s, const char *metric)
{
	unsigned varies = 0;
	for (int d = 0; d < SEL_NDIMS; d++)
		for (size_t i = 1; i < s->nseries; i++)
			if (strcmp(s->series[i].dim[d], s->series[0].dim[d]))
				varies |= 1u << d;
	cmd_error("trend", "the selection holds %zu series of %s; a trend is of one series:",
		  s->nseries, metric);
	const char **params = xcalloc(s->nseries + 1, sizeof(char *));
	const char **knobs = xcalloc(s->nseries + 1, sizeof(char *));
	for (size_t i = 0; i < s->nseries; i++) {
		params[i] = s->series[i].dim[DIM_PARAMS];
		knobs[i] = s->series[i].dim[DIM_KNOBS];
	}
	size_t best = 0;
	for (size_t i = 0; i < s->nseries; i++) {
		struct strbuf sb = STRBUF_INIT;
		if (s->series[i].nsessions > s->series[best].nsessions)
			best = i;
		strbuf_addf(&sb, "  %zu: %zu session%s:", i + 1, s->series[i].nsessions,
			    s->series[i].nsessions == 1 ? "" : "s");
		for (int d = 0; d < SEL_NDIMS; d++) {
			if (!(varies & (1u << d)))
				continue;
			char *t;
			if (d == DIM_PARAMS)
				t = sel_json_label(params[i], params, s->nseries);
			else if (d == DIM_KNOBS)
				t = sel_json_label(knobs[i], knobs, s->nseries);
			else
				t = sel_series_dim_text(&s->series[i], (enum sel_dim)d);
			strbuf_addf(&sb, " %s=%.60s", sel_dim_key((enum sel_dim)d), t);
			free(t);
		}
		fprintf(stderr, "%s\n", sb.buf);
		strbuf_release(&sb);
	}
	/* a concrete suggestion: the first dimension that differs, value of the
	 * longest series */
	for (int d = 0; d < SEL_NDIMS; d++) {
		if (!(varies & (1u << d)))
			continue;
		const struct sel_series *se = &s->series[best];
		const char *key = sel_dim_key((enum sel_dim)d);
		const char *val = d == DIM_MACHINE ? se->machine
				  : d == DIM_KERNEL ? se->kernel_release
						    : se->dim[d];
		if (d == DIM_MACHINE && !*val) {
			key = "machine_id";
			val = se->dim[d];
		}
		if (d == DIM_KERNEL) {
			int same_rel = 1;
			for (size_t i = 0; i < s->nseries; i++)
				same_rel &= !strcmp(s->series[i].kernel_release, se->kernel_release);
			if (same_rel) {
				key = "config_hash";
				val = se->config_hash;
			}
		}
		cmd_error("trend", "narrow it with --where, e.g. --where '%s=%s' (series %zu)",
			  key, val, best + 1);
		break;
	}
	free(params);
	free(knobs);
}

/* what the three output formats print */
struct trend_out {
	const char *metric;
	const struct sel_group *g;
	const struct sel_series *se;
	const struct trend *tr;
	const struct cp_options *cpo;
	const char *better;
	int joined;      /* several series: one configuration across model changes */
	size_t nkernels; /* joined: distinct kernels (from git) */
};

static const char *model_or_none(const char *m)
{
	return m && *m ? m : "(none)";
}

static void print_csv(const struct trend_out *t)
{
	static const char *const cols[] = { "session",	   "tag",	 "started_at",
					    "n",	   "value",	 "change_point",
					    "mean_before", "mean_after", "change_pct",
					    "magnitude",   "pvalue",	 "censored",
					    "bound" };
	const struct trend_point *pt = t->tr->pt;
	struct rowset rs;
	rowset_init(&rs, 13, cols);
	for (size_t i = 0; i < t->tr->np; i++) {
		char s[32], n[32], v[40], mb[40] = "", ma[40] = "", ch[40] = "", mg[40] = "",
					      pv[40] = "";
		snprintf(s, sizeof(s), "%lld", (long long)pt[i].session);
		snprintf(n, sizeof(n), "%zu", pt[i].n);
		snprintf(v, sizeof(v), "%.10g", pt[i].value);
		char nc[32];
		snprintf(nc, sizeof(nc), "%zu", pt[i].ncensored);
		int is_cp = t->tr->cpat[i] >= 0;
		if (is_cp) {
			const struct change_point *cp = &t->tr->cps[t->tr->cpat[i]];
			snprintf(mb, sizeof(mb), "%.10g", cp->mean_before);
			snprintf(ma, sizeof(ma), "%.10g", cp->mean_after);
			snprintf(ch, sizeof(ch), "%.6g", 100 * cp->rel_change);
			snprintf(mg, sizeof(mg), "%.6g", cp->magnitude);
			snprintf(pv, sizeof(pv), "%.6g", cp->pvalue);
		}
		const char *cells[] = { s,
					pt[i].tag,
					pt[i].started_at,
					n,
					v,
					is_cp ? "1" : "0",
					is_cp ? mb : NULL,
					is_cp ? ma : NULL,
					is_cp ? ch : NULL,
					is_cp ? mg : NULL,
					is_cp ? pv : NULL,
					nc,
					pt[i].bound ? "1" : "0" };
		rowset_add(&rs, cells);
	}
	rowset_print(&rs, FMT_CSV, stdout);
	rowset_release(&rs);
}

static void print_table_header(const struct trend_out *t)
{
	const struct sel_series *se = t->se;
	char *k = t->nkernels > 1 && trend_series_from_git(se)
			  ? xstrfmt("from git (%zu commits)", t->nkernels)
		  : t->nkernels > 1 ? trend_kernels_text(t->tr)
				    : sel_series_dim_text(se, DIM_KERNEL);
	char *m = sel_series_dim_text(se, DIM_MACHINE);
	char *pl = sel_json_label(se->dim[DIM_PARAMS], NULL, 0);
	size_t np = t->tr->np;
	printf("%s (%s, %s is better): %zu session%s\n", t->metric, t->g->unit, t->better, np,
	       np == 1 ? "" : "s");
	char *mt = t->joined ? trend_models_text(t->tr) : xstrdup(model_or_none(se->dim[DIM_PREEMPT]));
	printf("series: machine %s, kernel %s, preempt %s, hz %s, sched_mc %s\n", m, k, mt,
	       *se->dim[DIM_HZ] ? se->dim[DIM_HZ] : "?",
	       *se->dim[DIM_SCHED_MC] ? se->dim[DIM_SCHED_MC] : "?");
	free(mt);
	printf("        knobs %.80s; params %.80s\n", se->dim[DIM_KNOBS], pl);
	free(k);
	free(m);
	free(pl);
}

static void print_table(const struct trend_out *t)
{
	const struct trend_point *pt = t->tr->pt;
	size_t np = t->tr->np, ncp = t->tr->ncp;
	print_table_header(t);
	printf("\n%8s  %-24s  %-16s %3s %12s  %s\n", "session", "started_at", "tag", "n", "value",
	       "change point");
	for (size_t i = 0; i < np; i++) {
		char v[40], mark[80] = "";
		fmt_num(v + 2, sizeof(v) - 2, pt[i].value);
		if (pt[i].bound)
			memcpy(v, ">=", 2);
		const char *vs = pt[i].bound ? v : v + 2;
		if (t->tr->cpat[i] >= 0) {
			const struct change_point *cp = &t->tr->cps[t->tr->cpat[i]];
			snprintf(mark, sizeof(mark), "<- %+.1f%% (p=%.2g)", 100 * cp->rel_change,
				 cp->pvalue);
		}
		for (size_t b = 0; b < t->tr->nbreaks; b++)
			if (t->tr->breaks[b] == i)
				snprintf(mark, sizeof(mark), "<- break: preempt %s -> %s",
					 model_or_none(pt[i - 1].model), model_or_none(pt[i].model));
		printf("%8lld  %-24.24s  %-16.16s %3zu %12s  %s\n", (long long)pt[i].session,
		       pt[i].started_at, pt[i].tag ? pt[i].tag : "", pt[i].n, vs, mark);
	}
	if (t->tr->nbound)
		printf("\n>=: %zu session%s whose median is only a lower bound (values beyond the "
		       "range the workload measures); change points are sought only between "
		       "them, never across them (docs/statistics.md)\n",
		       t->tr->nbound, t->tr->nbound == 1 ? "" : "s");
	for (size_t b = 0; b < t->tr->nbreaks; b++) {
		size_t i = t->tr->breaks[b];
		printf("%sbreak: effective preemption model changed: %s -> %s at session %lld "
		       "(%s)", b ? "" : "\n", model_or_none(pt[i - 1].model),
		       model_or_none(pt[i].model), (long long)pt[i].session, pt[i].started_at);
		if (trend_kernel_changed(t->tr, i))
			printf(", with the kernel: %s -> %s", pt[i - 1].kernel, pt[i].kernel);
		printf("\n");
	}
	if (t->tr->nbreaks)
		printf("(not a change point: change points are sought on each side of a break, "
		       "never across it)\n");
	printf("\n%zu change point%s (p < %g, window %zu)%s\n", ncp, ncp == 1 ? "" : "s",
	       t->cpo->max_pvalue, t->cpo->window ? t->cpo->window : (size_t)CP_DEFAULT_WINDOW,
	       ncp ? ":" : "");
	if (np < 3)
		printf("(fewer than 3 sessions: no change-point detection)\n");
	for (size_t i = 0; i < ncp; i++) {
		const struct change_point *cp = &t->tr->cps[i];
		char b[40], a[40];
		fmt_num(b, sizeof(b), cp->mean_before);
		fmt_num(a, sizeof(a), cp->mean_after);
		printf("  session %lld (%s): mean %s -> %s (%+.1f%%), magnitude %.3g, "
		       "p=%.2g, %zu points before, %zu after\n",
		       (long long)pt[cp->index].session, pt[cp->index].started_at, b, a,
		       100 * cp->rel_change, cp->magnitude, cp->pvalue, cp->n_before, cp->n_after);
	}
}

static struct {
	const char *metric, *where, *since;
	enum out_format fmt;
	struct cp_options cpo;
} args;

int cmd_trend_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	memset(&args, 0, sizeof(args));
	args.fmt = FMT_TABLE;
	cp_options_default(&args.cpo);
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath), CLI_STR("metric", &args.metric), CLI_STR("where", &args.where),
		CLI_SINCE(&args.since), CLI_PVALUE(&args.cpo.max_pvalue),
		CLI_RANGE("window", &args.cpo.window, 2, 100000), CLI_FORMAT(&args.fmt, 1), CLI_END,
	};
	int first, rc = cli_parse("trend", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (cli_no_args("trend", argc, argv, first))
		return 2;
	const char *metric = args.metric, *dot = metric ? strchr(metric, '.') : NULL;
	if (!metric || !dot || dot == metric || !dot[1]) {
		cmd_error("trend", "--metric WORKLOAD.METRIC is required (e.g. "
				   "cyclictest.lat_p99_us)");
		return 2;
	}
	return CMD_GO;
}

int cmd_trend(struct cmd_ctx *ctx)
{
	const char *metric = args.metric;
	enum out_format fmt = args.fmt;
	struct cp_options cpo = args.cpo;
	int rc = 0;
	/* the job (harness/results/trend_job.c), shared with serve's trend page */
	struct trend_job job;
	struct strbuf err = STRBUF_INIT;
	int jrc = trend_job_run(ctx->db, metric, args.where, args.since, &cpo, &job, &err);
	if (jrc > 0)
		report_series(&job.set, metric);
	else if (jrc < 0)
		cmd_error("trend", "%s", err.buf);
	strbuf_release(&err);
	if (jrc) {
		rc = 2;
		goto out;
	}
	if (!job.tr.finite)
		cmd_error("trend", "%s has non-finite values; no change-point detection", metric);
	struct trend_out t = {
		.metric = metric, .g = &job.set.groups[0], .se = &job.set.series[0], .tr = &job.tr,
		.cpo = &cpo, .better = job.better, .joined = job.joined, .nkernels = job.nkernels,
	};
	if (fmt == FMT_JSON) {
		json_t *doc = trend_job_json(&job, metric, &cpo);
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(doc);
	} else if (fmt == FMT_CSV) {
		print_csv(&t);
	} else {
		print_table(&t);
	}
out:
	trend_job_free(&job);
	return cmd_finish(rc);
}
