/*
 * Trend series (see trend.h): points per session from loaded groups, the
 * session tags, and change points. The computation `schedlab trend` used to
 * do inline, factored out so that the report draws the same points. The
 * tags come from the data layer (db/results.h).
 */
#include "harness/results/trend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "db/results.h"

static int point_cmp(const void *x, const void *y)
{
	const struct trend_point *a = x, *b = y;
	int c = strcmp(a->started_at, b->started_at);
	if (c)
		return c;
	return a->session < b->session ? -1 : a->session > b->session;
}

/* the tags are decoration: a session whose tag cannot be read has none */
static void load_tags(struct db *db, struct trend_point *pt, size_t n)
{
	int64_t *sid = xcalloc(n + 1, sizeof(int64_t));
	char **tag = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		sid[i] = pt[i].session;
	db_results_tags(db, sid, n, tag);
	for (size_t i = 0; i < n; i++)
		pt[i].tag = tag[i];
	free(sid);
	free(tag);
}

int trend_build(struct db *db, const struct sel_group *const *groups, const char *const *kernels,
		size_t ngroups, const struct cp_options *o, struct trend *t, struct strbuf *err)
{
	memset(t, 0, sizeof(*t));
	struct trend_point *pt = NULL;
	size_t np = 0;
	for (size_t gi = 0; gi < ngroups; gi++) {
		const struct sel_group *g = groups[gi];
		for (size_t k = 0; k < g->n; k++) {
			size_t i = 0;
			while (i < np && pt[i].session != g->session[k])
				i++;
			if (i == np) {
				pt = xrealloc(pt, (np + 1) * sizeof(*pt));
				memset(&pt[np], 0, sizeof(*pt));
				pt[np].session = g->session[k];
				pt[np].started_at = g->started_at[k];
				pt[np].kernel = kernels ? kernels[gi] : NULL;
				np++;
			}
			struct trend_point *p = &pt[i];
			if (strcmp(g->started_at[k], p->started_at) < 0)
				p->started_at = g->started_at[k];
			if (p->n == p->alloc) {
				p->alloc = p->alloc ? 2 * p->alloc : 4;
				p->vals = xrealloc(p->vals, p->alloc * sizeof(double));
			}
			p->vals[p->n++] = g->value[k];
		}
	}
	if (np)
		qsort(pt, np, sizeof(*pt), point_cmp);
	double *x = xcalloc(np + 1, sizeof(double));
	t->finite = 1;
	for (size_t i = 0; i < np; i++) {
		stats_median(pt[i].vals, pt[i].n, &pt[i].value);
		x[i] = pt[i].value;
		t->finite &= isfinite(x[i]) != 0;
	}
	load_tags(db, pt, np);
	t->pt = pt;
	t->np = np;
	t->cpat = xcalloc(np + 1, sizeof(long));
	for (size_t i = 0; i < np; i++)
		t->cpat[i] = -1;
	int rc = 0;
	if (t->finite && np >= 3 && cp_detect(x, np, o, &t->cps, &t->ncp)) {
		strbuf_addstr(err, "change-point detection failed");
		rc = -1;
	}
	for (size_t k = 0; k < t->ncp; k++)
		t->cpat[t->cps[k].index] = (long)k;
	free(x);
	return rc;
}

void trend_free(struct trend *t)
{
	for (size_t i = 0; i < t->np; i++) {
		free(t->pt[i].vals);
		free(t->pt[i].tag);
	}
	free(t->pt);
	free(t->cps);
	free(t->cpat);
	memset(t, 0, sizeof(*t));
}
