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

/*
 * The median of values some of which are lower bounds is exact when no
 * bound can move into or below the middle: every bound lies above the
 * middle order statistics (its true value is higher still). Ranked by
 * value, a bound sorting after equal exact values, the median is a bound
 * when one of the lower n/2 + 1 ranks holds a bound.
 */
static int median_is_bound(const struct trend_point *p)
{
	if (!p->ncensored)
		return 0;
	size_t upper = p->n / 2; /* the upper middle rank */
	for (size_t i = 0; i < p->n; i++) {
		if (!p->cens[i])
			continue;
		size_t rank = 0; /* values ranked before this bound */
		for (size_t j = 0; j < p->n; j++)
			if (j != i && (p->vals[j] < p->vals[i] ||
				       (p->vals[j] == p->vals[i] && (!p->cens[j] || j < i))))
				rank++;
		if (rank <= upper)
			return 1;
	}
	return 0;
}

int trend_build(struct db *db, const struct sel_group *const *groups, const char *const *kernels,
		size_t ngroups, const struct cp_options *o, struct trend *t, struct strbuf *err)
{
	return trend_build_models(db, groups, kernels, NULL, ngroups, o, t, err);
}

/* change points of each segment between breaks, indexes of the whole */
static int detect_segments(struct trend *t, const double *x, const unsigned char *bound,
			   const struct cp_options *o)
{
	size_t start = 0;
	for (size_t b = 0; b <= t->nbreaks; b++) {
		size_t end = b < t->nbreaks ? t->breaks[b] : t->np;
		struct change_point *cps = NULL;
		size_t n = 0;
		if (end - start >= 3 &&
		    cp_detect_censored(x + start, t->nbound ? bound + start : NULL, end - start, o,
				       &cps, &n))
			return -1;
		if (n) {
			t->cps = xrealloc(t->cps, (t->ncp + n) * sizeof(*t->cps));
			for (size_t k = 0; k < n; k++) {
				cps[k].index += start;
				t->cps[t->ncp++] = cps[k];
			}
		}
		free(cps);
		start = end;
	}
	return 0;
}

int trend_build_models(struct db *db, const struct sel_group *const *groups,
		       const char *const *kernels, const char *const *models, size_t ngroups,
		       const struct cp_options *o, struct trend *t, struct strbuf *err)
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
				pt[np].model = models ? models[gi] : NULL;
				np++;
			}
			struct trend_point *p = &pt[i];
			if (strcmp(g->started_at[k], p->started_at) < 0)
				p->started_at = g->started_at[k];
			if (p->n == p->alloc) {
				p->alloc = p->alloc ? 2 * p->alloc : 4;
				p->vals = xrealloc(p->vals, p->alloc * sizeof(double));
				p->cens = xrealloc(p->cens, p->alloc);
			}
			p->cens[p->n] = g->censored && g->censored[k];
			p->ncensored += p->cens[p->n];
			p->vals[p->n++] = g->value[k];
		}
	}
	if (np)
		qsort(pt, np, sizeof(*pt), point_cmp);
	double *x = xcalloc(np + 1, sizeof(double));
	unsigned char *bound = xcalloc(np + 1, 1);
	t->finite = 1;
	for (size_t i = 0; i < np; i++) {
		stats_median(pt[i].vals, pt[i].n, &pt[i].value);
		pt[i].bound = median_is_bound(&pt[i]);
		bound[i] = (unsigned char)pt[i].bound;
		t->nbound += bound[i];
		x[i] = pt[i].value;
		t->finite &= bound[i] || isfinite(x[i]);
	}
	load_tags(db, pt, np);
	t->pt = pt;
	t->np = np;
	t->cpat = xcalloc(np + 1, sizeof(long));
	for (size_t i = 0; i < np; i++)
		t->cpat[i] = -1;
	for (size_t i = 1; models && i < np; i++)
		if (strcmp(pt[i].model ? pt[i].model : "", pt[i - 1].model ? pt[i - 1].model : "")) {
			t->breaks = xrealloc(t->breaks, (t->nbreaks + 1) * sizeof(*t->breaks));
			t->breaks[t->nbreaks++] = i;
		}
	int rc = 0;
	if (t->finite && np >= 3 && detect_segments(t, x, bound, o)) {
		strbuf_addstr(err, "change-point detection failed");
		rc = -1;
	}
	for (size_t k = 0; k < t->ncp; k++)
		t->cpat[t->cps[k].index] = (long)k;
	free(x);
	free(bound);
	return rc;
}

void trend_free(struct trend *t)
{
	for (size_t i = 0; i < t->np; i++) {
		free(t->pt[i].vals);
		free(t->pt[i].cens);
		free(t->pt[i].tag);
	}
	free(t->pt);
	free(t->cps);
	free(t->cpat);
	free(t->breaks);
	memset(t, 0, sizeof(*t));
}
