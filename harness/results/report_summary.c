/*
 * The report's one-screen text summary (report_render_summary; see
 * report.h), the part of a report the nightly script prints: per A/B, the
 * regressions with their confidence and the change point in the history
 * where each starts, then the verdict counts. Renders a struct report that
 * report_build() (report.c) computed.
 */
#include "harness/results/report.h"
#include "harness/results/format.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* ---- the text summary ----------------------------------------------------------------- */

/* the commit of a trend point's kernel label "DESCRIBE (COMMIT)" (a kernel
 * from git, report.c), into c (41 bytes); 0 when it has none */
static int label_commit(const char *label, char *c)
{
	size_t n = label ? strlen(label) : 0;
	if (n < 43 || label[n - 1] != ')' || label[n - 42] != '(')
		return 0;
	for (size_t i = n - 41; i < n - 1; i++)
		if (!isxdigit((unsigned char)label[i]))
			return 0;
	memcpy(c, label + n - 41, 40);
	c[40] = 0;
	return 1;
}

size_t report_render_summary(const struct report *r, FILE *out)
{
	size_t nworse = 0;
	for (size_t c = 0; c < r->ncmps; c++) {
		const struct report_cmp *rc = &r->cmps[c];
		const struct cmp_result *res = &rc->job.r;
		size_t count[4] = { 0, 0, 0, 0 }, n = 0;
		fprintf(out, "baseline:  %s\ncandidate: %s\n", rc->label_a, rc->label_b);
		if (res->diff_mask) {
			fprintf(out, "compared:");
			for (int d = 0; d < SEL_NDIMS; d++)
				if (res->label_mask & (1u << d))
					fprintf(out, " %s", sel_dim_name((enum sel_dim)d));
			fputc('\n', out);
		}
		for (size_t i = 0; i < res->nrows; i++) {
			const struct cmp_row *row = &res->rows[i];
			if (row->kind != CMP_METRIC || !row->has_verdict)
				continue;
			n++;
			count[row->v.kind]++;
			if (row->v.censored_a || row->v.censored_b) {
				/* bounds: the verdict text carries the reason and advice */
				char *t = compare_verdict_text(row);
				const char *label = res->pairs[row->pair].label;
				fprintf(out, "  %s.%s%s%s%s: %s\n", row->workload, row->metric,
					*label ? " (" : "", label, *label ? ")" : "", t);
				free(t);
				nworse += row->v.kind == VERDICT_WORSE;
				continue;
			}
			if (row->v.kind != VERDICT_WORSE)
				continue;
			if (count[VERDICT_WORSE] == 1)
				fprintf(out, "\nREGRESSIONS:\n");
			nworse++;
			char a[40], b[40], p[40];
			fmt_num(a, sizeof(a), row->v.centre_a);
			fmt_num(b, sizeof(b), row->v.centre_b);
			compare_p_text(p, sizeof(p), row);
			const char *label = res->pairs[row->pair].label;
			fprintf(out, "  %s.%s%s%s%s: %s -> %s %s, %+.1f%% (%s %+.1f..%+.1f%%, "
				     "%s%s, n=%zu/%zu)\n",
				row->workload, row->metric, *label ? " (" : "", label,
				*label ? ")" : "", a, b, row->unit, row->v.change_pct,
				row->v.exact ? "exact data," : "95% CI", row->v.ci_lo_pct,
				row->v.ci_hi_pct, strcmp(p, "exact") ? "p=" : "", p, row->v.n_a,
				row->v.n_b);
			const struct report_trend *t =
				report_trend_for(r, &rc->job.b.series[res->pairs[row->pair].b], row->workload,
					  row->metric);
			const struct change_point *cp = NULL;
			for (size_t k = 0; t && k < t->t.ncp; k++)
				if (report_worse_dir(t->better, t->t.cps[k].rel_change) == 1)
					cp = &t->t.cps[k];
			if (cp) {
				const struct trend_point *p = &t->t.pt[cp->index];
				fprintf(out, "      starts at change point: session %lld%s%s%s, %.10s, "
					     "kernel %s: mean %g -> %g (%+.1f%%, p=%.2g)\n",
					(long long)p->session, p->tag ? " (" : "", p->tag ? p->tag : "",
					p->tag ? ")" : "", p->started_at, p->kernel ? p->kernel : "?",
					cp->mean_before, cp->mean_after, 100 * cp->rel_change,
					cp->pvalue);
				/* kernels from git: the commits between the last
				 * point before the change and the first after it
				 * (`git rev-list GOOD..BAD` holds the culprit) */
				char good[41], bad[41];
				if (cp->index > 0 && label_commit(t->t.pt[cp->index - 1].kernel, good) &&
				    label_commit(p->kernel, bad) && strcmp(good, bad))
					fprintf(out, "      commit range: good %.12s .. bad %.12s\n", good,
						bad);
			} else if (t) {
				fprintf(out, "      no worse change point in its history of %zu "
					     "sessions\n",
					t->t.np);
			} else {
				fprintf(out, "      no history (fewer than 2 sessions)\n");
			}
		}
		fprintf(out, "%s: %zu metrics, %zu worse, %zu better, %zu no change, "
			     "%zu inconclusive (threshold %g%%)\n",
			count[VERDICT_WORSE] ? "\nREGRESSION" : "ok", n, count[VERDICT_WORSE], count[VERDICT_BETTER],
			count[VERDICT_NO_CHANGE], count[VERDICT_INCONCLUSIVE], res->threshold_pct);
	}
	if (!r->ncmps)
		fprintf(out, "no comparison in scope (%s)\n", r->scope);
	return nworse;
}
