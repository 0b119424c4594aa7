/*
 * The report's computation (see report.h): report_build() reads everything
 * from the database (through harness/results/select.h, compare.h, trend.h
 * and db/results.h) into a struct report; the renderers turn it into one
 * HTML page with inline SVG (report_html.c) or a one-screen text summary
 * (report_summary.c) and read nothing more. Nothing here exits; errors go
 * into a strbuf.
 *
 * Scope per mode:
 *   session  the session's rows; when it holds several configurations
 *            (kernel, preempt, HZ, SCHED_MC, cmdline, knobs) the first is
 *            compared with each other one (compare_job_run, selectors
 *            "session=S,<dim>=<value>"); trends are the history of its
 *            configurations in the whole database;
 *   compare  compare_job_run(A, B); curves of both sides; trends as above;
 *   since    the rows since the date; trends only.
 * A trend follows one configuration across kernels (every dimension of the
 * series identity but the kernel), because a nightly run's kernel is what
 * changes: its change points say at which kernel a shift started.
 *
 * The trends draw from a bounded window of sessions, not the whole
 * database (report_window_pick, report.h): the sessions in scope and up
 * to o->history before and o->history after the last of them on the same
 * machines, at most o->max_points in all (thinned beyond that). Only those
 * sessions' rows are loaded (by session id, through the run table's
 * (session_id, seq) index), so the time and the page's size follow the
 * scope, not the age of the database; the page states the window
 * (r->window_text).
 *
 * The noise band of a trend is drawn per segment between change points:
 * the mean of the session values +- 2 standard deviations of them (of the
 * segment's single runs when it has fewer than 3 sessions).
 */
#include "harness/util/numfmt.h"
#include "harness/results/report.h"
#include "harness/results/format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/hist.h"
#include "analysis/stats.h"
#include "db/alert_store.h"
#include "db/culprit.h"
#include "db/results.h"

#define CONFIG_DIMS ((1u << DIM_KERNEL) | (1u << DIM_PREEMPT) | (1u << DIM_HZ) | \
		     (1u << DIM_SCHED_MC) | (1u << DIM_CMDLINE) | (1u << DIM_KNOBS) | \
		     (1u << DIM_CLOCK) | (1u << DIM_SCHED))
#define ALL_DIMS ((1u << SEL_NDIMS) - 1)
#define TREND_MASK (ALL_DIMS & ~(1u << DIM_KERNEL))

void report_options_default(struct report_options *o)
{
	memset(o, 0, sizeof(*o));
	cmp_options_default(&o->cmp);
	cp_options_default(&o->cp);
	o->max_curves = 8;
	o->max_boots = 50;
	o->history = REPORT_HISTORY_DEFAULT;
	o->max_points = REPORT_MAX_POINTS_DEFAULT;
}

/* ---- configuration labels ------------------------------------------------ */

/* dimensions of mask whose value differs among the series of the sets */
static unsigned varying_dims(const struct sample_set *const *sets, size_t nsets, unsigned mask)
{
	unsigned v = 0;
	const struct sel_series *first = NULL;
	for (size_t k = 0; k < nsets; k++)
		for (size_t i = 0; i < sets[k]->nseries; i++) {
			const struct sel_series *s = &sets[k]->series[i];
			if (!first) {
				first = s;
				continue;
			}
			for (int d = 0; d < SEL_NDIMS; d++)
				if ((mask & (1u << d)) && strcmp(s->dim[d], first->dim[d]))
					v |= 1u << d;
		}
	return v;
}

/* "preempt=full knobs: sysctl=..." for the dimensions in mask; knobs
 * labelled against every knobs value of the sets */
static char *config_label(const struct sel_series *s, unsigned mask,
			  const struct sample_set *const *sets, size_t nsets)
{
	struct strbuf sb = STRBUF_INIT;
	mask = sel_label_mask(mask, sets, nsets);
	for (int d = 0; d < SEL_NDIMS; d++) {
		if (!(mask & (1u << d)) || d == DIM_WORKLOAD || d == DIM_PARAMS)
			continue;
		if (sb.len)
			strbuf_addch(&sb, ' ');
		if (d == DIM_KNOBS) {
			size_t n = 0;
			for (size_t k = 0; k < nsets; k++)
				n += sets[k]->nseries;
			const char **all = xcalloc(n + 1, sizeof(char *));
			n = 0;
			for (size_t k = 0; k < nsets; k++)
				for (size_t i = 0; i < sets[k]->nseries; i++)
					all[n++] = sets[k]->series[i].dim[DIM_KNOBS];
			char *l = sel_json_label(s->dim[DIM_KNOBS], all, n);
			if (!strcmp(s->dim[DIM_KNOBS], "{}"))
				strbuf_addstr(&sb, "knobs={} (default)");
			else if (*l)
				strbuf_addf(&sb, "knobs: %s", l);
			else
				strbuf_addf(&sb, "knobs=%s", s->dim[DIM_KNOBS]);
			free(l);
			free(all);
			continue;
		}
		char *t = sel_series_dim_text(s, (enum sel_dim)d);
		strbuf_addf(&sb, "%s=%s", sel_dim_name((enum sel_dim)d), t);
		free(t);
	}
	if (!sb.len)
		strbuf_addstr(&sb, "all runs");
	return strbuf_detach(&sb, NULL);
}

/* label of a params value against the params of the same workload */
static char *params_label(const struct sample_set *const *sets, size_t nsets,
			  const struct sel_series *s)
{
	size_t n = 0;
	for (size_t k = 0; k < nsets; k++)
		n += sets[k]->nseries;
	const char **all = xcalloc(n + 1, sizeof(char *));
	n = 0;
	for (size_t k = 0; k < nsets; k++)
		for (size_t i = 0; i < sets[k]->nseries; i++)
			if (!strcmp(sets[k]->series[i].dim[DIM_WORKLOAD], s->dim[DIM_WORKLOAD]))
				all[n++] = sets[k]->series[i].dim[DIM_PARAMS];
	char *l = sel_json_label(s->dim[DIM_PARAMS], all, n);
	free(all);
	return l;
}

/* ---- selectors for a configuration of a session --------------------------- */

/*
 * "session=S,<key>=<value>..." for the dimensions in mask; NULL (reason in
 * why) when the text would not parse back into exactly these terms (a
 * value with ",key=" in it).
 */
static char *config_selector(struct db *db, int64_t sid, const struct sel_series *s,
			     unsigned mask, struct strbuf *why)
{
	struct strbuf sb = STRBUF_INIT;
	struct strvec keys = STRVEC_INIT, vals = STRVEC_INIT;
	strvec_push(&keys, "session");
	strvec_pushf(&vals, "%lld", (long long)sid);
	for (int d = 0; d < SEL_NDIMS; d++) {
		if (!(mask & (1u << d)))
			continue;
		if (d == DIM_KERNEL) {
			strvec_push(&keys, "kernel_release");
			strvec_push(&vals, s->kernel_release);
			strvec_push(&keys, "config_hash");
			strvec_push(&vals, s->config_hash);
			if (s->kernel_label) {
				strvec_push(&keys, "kernel_commit");
				strvec_push(&vals, s->kernel_commit);
			}
		} else {
			strvec_push(&keys, sel_dim_key((enum sel_dim)d));
			strvec_push(&vals, s->dim[d]);
		}
	}
	for (size_t i = 0; i < keys.nr; i++)
		strbuf_addf(&sb, "%s%s=%s", i ? "," : "", keys.v[i], vals.v[i]);
	struct selector sel;
	struct strbuf err = STRBUF_INIT;
	int ok = !select_from_text(db, sb.buf, &sel, &err);
	if (ok) {
		ok = sel.n == keys.nr;
		for (size_t i = 0; ok && i < sel.n; i++)
			ok = !strcmp(sel.terms[i].key, keys.v[i]) &&
			     !strcmp(sel.terms[i].value, vals.v[i]);
		select_free(&sel);
	}
	if (!ok)
		strbuf_addf(why, "cannot express configuration '%s' as a selector%s%s", sb.buf,
			    err.len ? ": " : "", err.buf);
	strbuf_release(&err);
	strvec_clear(&keys);
	strvec_clear(&vals);
	if (!ok) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

/* ---- latency curves ------------------------------------------------------ */

static void run_ids(const struct sample_set *s, size_t series, int64_t **ids, size_t *n)
{
	*ids = NULL;
	*n = 0;
	size_t alloc = 0;
	for (size_t g = 0; g < s->ngroups; g++) {
		const struct sel_group *gr = &s->groups[g];
		if (gr->series != series)
			continue;
		for (size_t k = 0; k < gr->n; k++) {
			size_t j = 0;
			while (j < *n && (*ids)[j] != gr->run_id[k])
				j++;
			if (j < *n)
				continue;
			if (*n == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				*ids = xrealloc(*ids, alloc * sizeof(int64_t));
			}
			(*ids)[(*n)++] = gr->run_id[k];
		}
	}
}

static struct report_dist *find_dist(struct report *r, const char *wl, const char *plabel,
				     const char *name, const char *unit)
{
	for (size_t i = 0; i < r->ndists; i++) {
		struct report_dist *d = &r->dists[i];
		if (!strcmp(d->workload, wl) && !strcmp(d->params_label, plabel) &&
		    !strcmp(d->name, name))
			return d;
	}
	r->dists = xrealloc(r->dists, (r->ndists + 1) * sizeof(*r->dists));
	struct report_dist *d = &r->dists[r->ndists++];
	memset(d, 0, sizeof(*d));
	d->workload = xstrdup(wl);
	d->params_label = xstrdup(plabel);
	d->name = xstrdup(name);
	d->unit = xstrdup(unit ? unit : "");
	return d;
}

/*
 * A histogram too small for its data: more than HIST_OVERFLOW_WARN of the
 * samples of a configuration beyond the range make its upper percentiles
 * bounds; the report says so near the top with what to change.
 */
static void note_overflows(struct report *r, const struct cmp_options *co)
{
	for (size_t i = 0; i < r->ndists; i++) {
		const struct report_dist *d = &r->dists[i];
		for (size_t c = 0; c < d->ncurves; c++) {
			const struct hist *h = &d->curves[c].h.h;
			double f = hist_overflow_fraction(h);
			if (!(f > HIST_OVERFLOW_WARN))
				continue;
			const char *param = co->range_param ? co->range_param(d->workload) : NULL;
			char end[40];
			fmt_num(end, sizeof(end), hist_range_end(h));
			char *advice = param ? xstrfmt("raise %s's %s", d->workload, param)
					     : xstrdup("raise the workload's histogram range");
			strvec_pushf(&r->notes,
				     "%s %s, %s: %.3g%% of %llu samples beyond the histogram range "
				     "(>= %s %s): percentiles there are only bounds; %s",
				     d->workload, d->name, d->curves[c].label, 100 * f,
				     (unsigned long long)h->total, end, d->unit, advice);
			free(advice);
		}
	}
}

static int add_curves(struct report *r, struct db *db, const struct sample_set *set, int side,
		      const struct sample_set *const *all, size_t nall, unsigned cmask,
		      size_t max_curves, struct strbuf *err)
{
	for (size_t si = 0; si < set->nseries; si++) {
		const struct sel_series *s = &set->series[si];
		int64_t *ids;
		size_t n, nh = 0;
		struct sel_hist *hs = NULL;
		run_ids(set, si, &ids, &n);
		int rc = n ? select_load_hists(db, ids, n, &hs, &nh, err) : 0;
		free(ids);
		if (rc)
			return -1;
		char *plabel = params_label(all, nall, s);
		char *clabel = config_label(s, cmask, all, nall);
		for (size_t i = 0; i < nh; i++) {
			struct report_dist *d =
				find_dist(r, s->dim[DIM_WORKLOAD], plabel, hs[i].name, hs[i].unit);
			if (d->ncurves >= max_curves) {
				d->omitted++;
				continue;
			}
			d->curves = xrealloc(d->curves, (d->ncurves + 1) * sizeof(*d->curves));
			struct report_curve *c = &d->curves[d->ncurves++];
			memset(c, 0, sizeof(*c));
			c->side = side;
			c->label = side ? xstrfmt("%c: %s", side, clabel) : xstrdup(clabel);
			c->h.name = xstrdup(hs[i].name);
			c->h.unit = xstrdup(hs[i].unit ? hs[i].unit : "");
			c->h.nruns = hs[i].nruns;
			c->h.incompatible = hs[i].incompatible;
			hist_copy(&c->h.h, &hs[i].h);
		}
		free(plabel);
		free(clabel);
		sel_hists_free(hs, nh);
	}
	return 0;
}

/* ---- trends -------------------------------------------------------------- */

struct trend_entry {
	size_t key;
	const char *workload, *metric;
	const struct sel_group **groups;
	const char **kernels;
	size_t n;
};

static int in_scope(const struct sel_series *s, const struct sample_set *const *scope,
		    size_t nscope)
{
	for (size_t k = 0; k < nscope; k++)
		for (size_t i = 0; i < scope[k]->nseries; i++)
			if (sel_series_match(&scope[k]->series[i], s, TREND_MASK))
				return 1;
	return 0;
}

/*
 * Kernels from git: a trend point whose session ran one commit of its
 * release is named "DESCRIBE (COMMIT)" instead of the release, so that the
 * report and the summary say which commit a change point starts at (and
 * report_summary.c the range of commits before it). Best effort: a database
 * error leaves the releases.
 */
static void git_point_labels(struct db *db, struct report *r, struct trend *t)
{
	int64_t *sid = xcalloc(t->np + 1, sizeof(*sid));
	const char **rel = xcalloc(t->np + 1, sizeof(*rel));
	char **label = xcalloc(t->np + 1, sizeof(*label));
	for (size_t i = 0; i < t->np; i++) {
		sid[i] = t->pt[i].session;
		rel[i] = t->pt[i].kernel;
	}
	if (!db_results_git_kernels(db, sid, rel, t->np, label))
		for (size_t i = 0; i < t->np; i++) {
			if (!label[i])
				continue;
			strvec_push(&r->kernel_labels, label[i]);
			t->pt[i].kernel = r->kernel_labels.v[r->kernel_labels.nr - 1];
			free(label[i]);
		}
	free(sid);
	free(rel);
	free(label);
}

static void segment_band(struct report_trend *rt)
{
	const struct trend *t = &rt->t;
	rt->band_lo = xcalloc(t->np + 1, sizeof(double));
	rt->band_hi = xcalloc(t->np + 1, sizeof(double));
	size_t lo = 0;
	for (size_t c = 0; c <= t->ncp; c++) {
		size_t hi = c < t->ncp ? t->cps[c].index : t->np;
		if (hi <= lo)
			continue;
		double sum = 0, ss = 0, m, sd = 0;
		for (size_t i = lo; i < hi; i++)
			sum += t->pt[i].value;
		m = sum / (double)(hi - lo);
		if (hi - lo >= 3) {
			for (size_t i = lo; i < hi; i++)
				ss += (t->pt[i].value - m) * (t->pt[i].value - m);
			sd = sqrt(ss / (double)(hi - lo - 1));
		} else {
			size_t nv = 0;
			double vs = 0, vm;
			for (size_t i = lo; i < hi; i++)
				for (size_t k = 0; k < t->pt[i].n; k++, nv++)
					vs += t->pt[i].vals[k];
			if (nv >= 2) {
				vm = vs / (double)nv;
				for (size_t i = lo; i < hi; i++)
					for (size_t k = 0; k < t->pt[i].n; k++)
						ss += (t->pt[i].vals[k] - vm) * (t->pt[i].vals[k] - vm);
				sd = sqrt(ss / (double)(nv - 1));
			}
		}
		for (size_t i = lo; i < hi; i++) {
			rt->band_lo[i] = m - 2 * sd;
			rt->band_hi[i] = m + 2 * sd;
		}
		lo = hi;
	}
}

static int trend_cmp(const void *x, const void *y)
{
	const struct report_trend *a = x, *b = y;
	int c = strcmp(a->workload, b->workload);
	if (!c)
		c = strcmp(a->metric, b->metric);
	if (!c)
		c = a->key < b->key ? -1 : a->key > b->key;
	return c;
}

static int build_trends(struct report *r, struct db *db, const struct sample_set *H,
			const struct sample_set *const *scope, size_t nscope,
			const struct cp_options *cpo, struct strbuf *err)
{
	size_t *keyrep = NULL, nkeys = 0;
	struct trend_entry *ent = NULL;
	size_t nent = 0;
	for (size_t gi = 0; gi < H->ngroups; gi++) {
		const struct sel_group *g = &H->groups[gi];
		if (g->better == SEL_BETTER_NONE)
			continue;
		const struct sel_series *s = &H->series[g->series];
		size_t k = 0;
		while (k < nkeys && !sel_series_match(&H->series[keyrep[k]], s, TREND_MASK))
			k++;
		if (k == nkeys) {
			if (scope && !in_scope(s, scope, nscope))
				continue;
			keyrep = xrealloc(keyrep, (nkeys + 1) * sizeof(size_t));
			keyrep[nkeys++] = g->series;
		}
		size_t e = 0;
		while (e < nent && !(ent[e].key == k && !strcmp(ent[e].workload, g->workload) &&
				     !strcmp(ent[e].metric, g->metric)))
			e++;
		if (e == nent) {
			ent = xrealloc(ent, (nent + 1) * sizeof(*ent));
			memset(&ent[nent], 0, sizeof(*ent));
			ent[nent].key = k;
			ent[nent].workload = g->workload;
			ent[nent].metric = g->metric;
			nent++;
		}
		ent[e].groups = xrealloc(ent[e].groups, (ent[e].n + 1) * sizeof(void *));
		ent[e].kernels = xrealloc(ent[e].kernels, (ent[e].n + 1) * sizeof(char *));
		ent[e].groups[ent[e].n] = g;
		ent[e].kernels[ent[e].n] = s->kernel_release;
		ent[e].n++;
	}
	/* configuration labels: what tells the keys apart (params aside) */
	struct sample_set keys;
	memset(&keys, 0, sizeof(keys));
	keys.series = xcalloc(nkeys + 1, sizeof(struct sel_series));
	for (size_t k = 0; k < nkeys; k++)
		keys.series[k] = H->series[keyrep[k]];
	keys.nseries = nkeys;
	const struct sample_set *kp = &keys;
	unsigned lmask = varying_dims(&kp, 1, TREND_MASK & ~((1u << DIM_WORKLOAD) | (1u << DIM_PARAMS)));
	r->trend_key_series = xcalloc(nkeys + 1, sizeof(unsigned));
	for (size_t k = 0; k < nkeys; k++) {
		char *cl = config_label(&keys.series[k], lmask, &kp, 1);
		char *pl = params_label(&kp, 1, &keys.series[k]);
		if (*pl)
			strvec_pushf(&r->configs, "%s%s%s", lmask ? cl : "", lmask ? " " : "", pl);
		else
			strvec_push(&r->configs, lmask ? cl : "");
		r->trend_key_series[k] = (unsigned)keyrep[k];
		free(cl);
		free(pl);
	}
	free(keys.series);
	int rc = 0;
	for (size_t e = 0; e < nent && !rc; e++) {
		struct trend t;
		struct strbuf why = STRBUF_INIT;
		if (trend_build(db, ent[e].groups, ent[e].kernels, ent[e].n, cpo, &t, &why)) {
			strvec_pushf(&r->notes, "trend of %s.%s: %s", ent[e].workload, ent[e].metric,
				     why.buf);
			strbuf_release(&why);
			trend_free(&t);
			continue;
		}
		strbuf_release(&why);
		if (t.np < 2) {
			trend_free(&t);
			continue;
		}
		r->trends = xrealloc(r->trends, (r->ntrends + 1) * sizeof(*r->trends));
		struct report_trend *rt = &r->trends[r->ntrends++];
		memset(rt, 0, sizeof(*rt));
		rt->workload = xstrdup(ent[e].workload);
		rt->metric = xstrdup(ent[e].metric);
		rt->unit = xstrdup(ent[e].groups[0]->unit ? ent[e].groups[0]->unit : "");
		rt->better = ent[e].groups[0]->better;
		rt->key = ent[e].key;
		rt->config = xstrdup(r->configs.v[ent[e].key]);
		rt->t = t;
		git_point_labels(db, r, &rt->t);
		segment_band(rt);
	}
	for (size_t e = 0; e < nent; e++) {
		free(ent[e].groups);
		free(ent[e].kernels);
	}
	free(ent);
	free(keyrep);
	if (r->ntrends)
		qsort(r->trends, r->ntrends, sizeof(*r->trends), trend_cmp);
	(void)err;
	return rc;
}

/* ---- the window of history the trends draw from ------------------------------ */

void report_window_pick(const unsigned char *scope, size_t n, size_t history, size_t max_points,
			unsigned char *keep, struct report_window *w)
{
	memset(w, 0, sizeof(*w));
	if (!max_points)
		max_points = REPORT_MAX_POINTS_DEFAULT;
	w->history = history;
	w->max_points = max_points;
	w->candidates = n;
	w->every = 1;
	size_t last = n;
	for (size_t i = 0; i < n; i++) {
		keep[i] = 0;
		if (scope[i]) {
			last = i;
			w->scope++;
		}
	}
	if (last == n)
		return;
	w->later = n - 1 - last;
	for (size_t i = last + 1; i < n && w->after < history; i++) {
		keep[i] = 1;
		w->after++;
	}
	for (size_t i = last + 1; i-- > 0;) {
		if (scope[i]) {
			keep[i] = 1;
			continue;
		}
		w->available++;
		if (w->before < history) {
			keep[i] = 1;
			w->before++;
		}
	}
	size_t chosen = w->scope + w->before + w->after;
	w->every = (chosen + max_points - 1) / max_points;
	if (w->every < 1)
		w->every = 1;
	size_t j = 0;
	for (size_t i = n; i-- > 0;) {
		if (!keep[i])
			continue;
		if (j++ % w->every)
			keep[i] = 0;
		else
			w->shown++;
	}
}

/* a session offered to the window: its id, the start of its first run */
struct win_entry {
	int64_t id;
	char *started_at;
	unsigned char scope;
};

struct win_list {
	struct win_entry *v;
	size_t n, alloc;
};

static void win_push(struct win_list *l, int64_t id, const char *at, int scope)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 64;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	l->v[l->n++] = (struct win_entry){ id, xstrdup(at ? at : ""), (unsigned char)scope };
}

static int win_by_id(const void *x, const void *y)
{
	const struct win_entry *a = x, *b = y;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return strcmp(a->started_at, b->started_at);
}

static int win_by_time(const void *x, const void *y)
{
	const struct win_entry *a = x, *b = y;
	int c = strcmp(a->started_at, b->started_at);
	if (c)
		return c;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void win_clear(struct win_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].started_at);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* the sessions of the sets, each once with its earliest started_at, by id */
static void scope_sessions(const struct sample_set *const *sets, size_t nsets,
			   struct win_list *out)
{
	struct { int64_t id; const char *at; } *all = NULL;
	size_t n = 0, alloc = 0;
	for (size_t k = 0; k < nsets; k++)
		for (size_t g = 0; g < sets[k]->ngroups; g++) {
			const struct sel_group *gr = &sets[k]->groups[g];
			for (size_t i = 0; i < gr->n; i++) {
				/* rows come by session: skip repeats of the last one */
				if (n && all[n - 1].id == gr->session[i] &&
				    strcmp(all[n - 1].at, gr->started_at[i]) <= 0)
					continue;
				if (n == alloc) {
					alloc = alloc ? 2 * alloc : 256;
					all = xrealloc(all, alloc * sizeof(*all));
				}
				all[n].id = gr->session[i];
				all[n].at = gr->started_at[i];
				n++;
			}
		}
	struct win_list tmp = { 0 };
	for (size_t i = 0; i < n; i++)
		win_push(&tmp, all[i].id, all[i].at, 1);
	free(all);
	if (tmp.n)
		qsort(tmp.v, tmp.n, sizeof(*tmp.v), win_by_id);
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < tmp.n; i++)
		if (!out->n || out->v[out->n - 1].id != tmp.v[i].id)
			win_push(out, tmp.v[i].id, tmp.v[i].started_at, 1);
	win_clear(&tmp);
}

static int history_row(void *ctx, int64_t id, const char *started_at)
{
	win_push(ctx, id, started_at, 0);
	return 0;
}

static void window_sentence(struct report *r, const struct report_options *o)
{
	const struct report_window *w = &r->window;
	struct strbuf sb = STRBUF_INIT;
	if (o->mode == REPORT_SINCE)
		strbuf_addf(&sb, "Trends draw on the %zu session%s since %s", w->scope,
			    w->scope == 1 ? "" : "s", o->since);
	else
		strbuf_addf(&sb, "Trends draw on the %zu session%s in scope, the %zu before the last "
				 "of them and the %zu after it (at most %zu each: --history; of %zu "
				 "and %zu such sessions on the same machines)",
			    w->scope, w->scope == 1 ? "" : "s", w->before, w->after, w->history,
			    w->available, w->later);
	if (w->every > 1)
		strbuf_addf(&sb, "; of these %zu sessions only one in %zu is drawn (the newest and "
				 "every %zu before it), %zu in all, to stay within %zu points a trend "
				 "(--max-points)",
			    w->scope + w->before + w->after, w->every, w->every, w->shown,
			    w->max_points);
	strbuf_addch(&sb, '.');
	r->window_text = strbuf_detach(&sb, NULL);
	if (w->every > 1)
		strvec_pushf(&r->notes, "trends: only one session in %zu of the %zu in their window "
					"is drawn (--max-points %zu)",
			     w->every, w->scope + w->before + w->after, w->max_points);
}

/*
 * The set the trends are built from (*H): the window's sessions, loaded by
 * id into r->history; in since mode, when the window keeps every session
 * of the scope, the scope's own set.
 */
static int load_history(struct report *r, struct db *db, const struct report_options *o,
			const struct sample_set *const *scope, size_t nscope,
			const struct sample_set **H, struct strbuf *err)
{
	struct win_list sc, all = { 0 };
	scope_sessions(scope, nscope, &sc);
	if (o->mode != REPORT_SINCE) {
		int64_t *ids = xcalloc(sc.n + 1, sizeof(int64_t));
		for (size_t i = 0; i < sc.n; i++)
			ids[i] = sc.v[i].id;
		int rc = db_results_session_history(db, ids, sc.n, history_row, &all);
		free(ids);
		if (rc) {
			strbuf_addstr(err, db_errmsg(db));
			win_clear(&sc);
			win_clear(&all);
			return -1;
		}
		/* mark the scope's sessions; add those the query did not return */
		for (size_t i = 0; i < all.n; i++) {
			size_t lo = 0, hi = sc.n;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (sc.v[mid].id < all.v[i].id)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < sc.n && sc.v[lo].id == all.v[i].id) {
				all.v[i].scope = 1;
				sc.v[lo].scope = 2; /* seen */
			}
		}
		for (size_t i = 0; i < sc.n; i++)
			if (sc.v[i].scope != 2)
				win_push(&all, sc.v[i].id, sc.v[i].started_at, 1);
		win_clear(&sc);
	} else {
		all = sc;
	}
	if (all.n)
		qsort(all.v, all.n, sizeof(*all.v), win_by_time);
	unsigned char *in = xcalloc(all.n + 1, 1), *keep = xcalloc(all.n + 1, 1);
	for (size_t i = 0; i < all.n; i++)
		in[i] = all.v[i].scope;
	report_window_pick(in, all.n, o->history, o->max_points, keep, &r->window);
	window_sentence(r, o);
	int rc = 0;
	if (o->mode == REPORT_SINCE && r->window.every == 1) {
		*H = &r->scope_set;
	} else {
		int64_t *ids = xcalloc(r->window.shown + 1, sizeof(int64_t));
		size_t n = 0;
		for (size_t i = 0; i < all.n; i++)
			if (keep[i])
				ids[n++] = all.v[i].id;
		struct selector none = { 0, NULL };
		struct sel_filter f = { .sessions = ids, .nsessions = n };
		rc = select_load(db, &none, &f, &r->history, err);
		if (!rc) {
			r->history_loaded = 1;
			*H = &r->history;
		}
		free(ids);
	}
	free(in);
	free(keep);
	win_clear(&all);
	return rc;
}

/* ---- sessions and boots ------------------------------------------------------ */

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

static void add_unique(int64_t **v, size_t *n, size_t *alloc, int64_t x)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == x)
			return;
	if (*n == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 16;
		*v = xrealloc(*v, *alloc * sizeof(int64_t));
	}
	(*v)[(*n)++] = x;
}

static int add_session(void *ctx, const struct db_session_info *in)
{
	struct report *r = ctx;
	struct report_session *s = &r->sessions[r->nsessions++];
	s->id = in->id;
	s->name = dup_or_null(in->name);
	s->tag = dup_or_null(in->tag);
	s->target = dup_or_null(in->target);
	s->version = dup_or_null(in->version);
	s->status = dup_or_null(in->status);
	s->started_at = dup_or_null(in->started_at);
	s->finished_at = dup_or_null(in->finished_at);
	s->plan_path = dup_or_null(in->plan_path);
	return 0;
}

static int load_sessions(struct report *r, struct db *db, const struct sample_set *const *sets,
			 size_t nsets, struct strbuf *err)
{
	int64_t *ids = NULL;
	size_t n = 0, alloc = 0;
	for (size_t k = 0; k < nsets; k++)
		for (size_t g = 0; g < sets[k]->ngroups; g++)
			for (size_t i = 0; i < sets[k]->groups[g].n; i++)
				add_unique(&ids, &n, &alloc, sets[k]->groups[g].session[i]);
	if (n)
		qsort(ids, n, sizeof(int64_t), cmp_i64);
	r->sessions = xcalloc(n + 1, sizeof(*r->sessions));
	int rc = db_results_sessions(db, ids, n, add_session, r);
	if (rc)
		strbuf_addstr(err, db_errmsg(db));
	free(ids);
	return rc ? -1 : 0;
}

static int session_in_scope(const struct report *r, int64_t sid)
{
	for (size_t i = 0; i < r->nsessions; i++)
		if (r->sessions[i].id == sid)
			return 1;
	return 0;
}

/* the robot's alerts of the plans in scope (docs/alerts.md) */
static int load_alerts(struct report *r, struct db *db, struct strbuf *err)
{
	for (size_t i = 0; i < r->nsessions; i++) {
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = r->sessions[k].name && r->sessions[i].name &&
			       !strcmp(r->sessions[k].name, r->sessions[i].name);
		if (seen || !r->sessions[i].name)
			continue;
		struct db_alert *al;
		size_t n;
		struct db_alert_filter f = { .status = -1, .plan = r->sessions[i].name };
		if (db_alerts_list(db, &f, &al, &n)) {
			/* a database no nightly ever wrote to may not have the tables
			   when opened read-only: no alerts */
			if (strstr(db_errmsg(db), "no such table"))
				return 0;
			strbuf_addstr(err, db_errmsg(db));
			return -1;
		}
		for (size_t k = 0; k < n; k++) {
			if (!alert_state_open(al[k].status) && !session_in_scope(r, al[k].bad_session) &&
			    !session_in_scope(r, al[k].fixed_session))
				continue;
			struct db_alert_group g;
			memset(&g, 0, sizeof(g));
			db_alert_group_get(db, al[k].group_id, &g);
			r->alerts = xrealloc(r->alerts, (r->nalerts + 1) * sizeof(*r->alerts));
			struct report_alert *a = &r->alerts[r->nalerts++];
			a->id = al[k].id;
			a->group_id = al[k].group_id;
			a->bad_session = al[k].bad_session;
			a->fixed_session = al[k].fixed_session;
			a->status = xstrdup(alert_state_name(al[k].status));
			a->kind = xstrdup(al[k].kind);
			a->metric = xstrfmt("%s.%s", al[k].workload, al[k].metric);
			a->series = xstrdup(al[k].series_label ? al[k].series_label : "");
			struct db_culprit c;
			if (!db_culprit_decode(g.culprit, &c)) {
				a->culprit = xstrfmt("%.12s", c.commit);
				db_culprit_free(&c);
			} else {
				a->culprit = xstrdup("");
			}
			a->range = xstrdup(g.range_key ? g.range_key : "");
			a->change_pct = al[k].change_pct;
			a->ci_lo = al[k].ci_lo;
			a->ci_hi = al[k].ci_hi;
			a->p = al[k].p;
			db_alert_group_free(&g);
		}
		db_alerts_free(al, n);
	}
	return 0;
}

/* the state of load_boots() while the boot rows come: boots with the same
 * machine and sysinfo (boot_id aside) are grouped */
struct boots_ctx {
	struct report *r;
	size_t nb, max_boots;
	char **keys;          /* per group: machine + sysinfo */
	int64_t *lastsid;     /* per group: the session of its last boot */
	struct strbuf *txt;   /* per group: "session 3: boot 7, 8; ..." */
};

static int add_boot(void *ctx, const struct db_boot_info *in)
{
	struct boots_ctx *bc = ctx;
	struct report *r = bc->r;
	int64_t sid = in->session_id;
	const char *si = in->sysinfo;
	const char *mach = in->machine;
	json_t *j = si ? json_loads(si, 0, NULL) : NULL;
	if (!j)
		j = json_object();
	json_t *copy = json_deep_copy(j);
	json_object_del(copy, "boot_id");
	char *dump = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(copy);
	char *clock = in->clock && !strcmp(in->clock, "virtual")
		? xstrfmt("virtual, shift %d", in->clock_shift) : NULL;
	char *key = xstrfmt("%s\n%s\n%s", mach ? mach : "", dump ? dump : "",
			    clock ? clock : "real");
	free(dump);
	size_t g = 0;
	while (g < r->nboots && strcmp(bc->keys[g], key))
		g++;
	if (g == r->nboots) {
		if (r->nboots >= bc->max_boots) {
			r->boots_omitted++;
			free(key);
			free(clock);
			json_decref(j);
			return 0;
		}
		if (!r->boots)
			r->boots = xcalloc(bc->nb + 1, sizeof(*r->boots));
		struct report_boot *b = &r->boots[r->nboots];
		bc->keys[r->nboots++] = key;
		key = NULL;
		b->machine = xstrdup(mach ? mach : "(unknown machine)");
		b->sysinfo = j;
		j = NULL;
		b->method = dup_or_null(in->method);
		b->accel = dup_or_null(in->accel);
		b->clock = clock;
		clock = NULL;
		b->qemu = dup_or_null(in->qemu_version);
		b->status = dup_or_null(in->status);
		b->first_at = dup_or_null(in->booted_at);
		strbuf_init(&bc->txt[g], 64);
	}
	free(key);
	free(clock);
	json_decref(j);
	struct report_boot *b = &r->boots[g];
	if (!b->nboots || bc->lastsid[g] != sid)
		strbuf_addf(&bc->txt[g], "%ssession %lld: boot %lld", b->nboots ? "; " : "",
			    (long long)sid, (long long)in->id);
	else
		strbuf_addf(&bc->txt[g], ", %lld", (long long)in->id);
	bc->lastsid[g] = sid;
	b->nboots++;
	return 0;
}

static int load_boots(struct report *r, struct db *db, const struct sample_set *const *sets,
		      size_t nsets, size_t max_boots, struct strbuf *err)
{
	int64_t *runs = NULL, *boots = NULL;
	size_t nr = 0, ar = 0, nb = 0;
	for (size_t k = 0; k < nsets; k++)
		for (size_t g = 0; g < sets[k]->ngroups; g++)
			for (size_t i = 0; i < sets[k]->groups[g].n; i++)
				add_unique(&runs, &nr, &ar, sets[k]->groups[g].run_id[i]);
	if (db_results_run_boots(db, runs, nr, &boots, &nb)) {
		strbuf_addstr(err, db_errmsg(db));
		free(runs);
		return -1;
	}
	struct boots_ctx bc = {
		.r = r,
		.nb = nb,
		.max_boots = max_boots,
		.keys = xcalloc(nb + 1, sizeof(char *)),
		.lastsid = xcalloc(nb + 1, sizeof(int64_t)),
		.txt = xcalloc(nb + 1, sizeof(struct strbuf)),
	};
	int rc = db_results_boots(db, boots, nb, add_boot, &bc);
	if (rc)
		strbuf_addstr(err, db_errmsg(db));
	for (size_t g = 0; g < r->nboots; g++)
		r->boots[g].boots = strbuf_detach(&bc.txt[g], NULL);
	for (size_t g = 0; g < nb; g++) {
		free(bc.keys[g]);
		if (g >= r->nboots)
			strbuf_release(&bc.txt[g]);
	}
	free(bc.keys);
	free(bc.txt);
	free(bc.lastsid);
	free(runs);
	free(boots);
	return rc ? -1 : 0;
}

/* ---- build ----------------------------------------------------------------- */

/* the trace summaries of the traced runs ("evidence" in their params) on
 * either side of comparison c, in run order per side */
static int add_traces(struct report *r, struct db *db, const struct report_cmp *c,
		      struct strbuf *err)
{
	for (int side = 0; side < 2; side++) {
		const struct sample_set *s = side ? &c->job.b : &c->job.a;
		int64_t *ids = NULL;
		const char **wl = NULL;
		size_t n = 0;
		for (size_t g = 0; g < s->ngroups; g++) {
			const struct sel_group *gr = &s->groups[g];
			if (!strstr(s->series[gr->series].dim[DIM_PARAMS], "\"evidence\":"))
				continue;
			for (size_t k = 0; k < gr->n; k++) {
				size_t j = 0;
				while (j < n && ids[j] != gr->run_id[k])
					j++;
				if (j < n)
					continue;
				ids = xrealloc(ids, (n + 1) * sizeof(*ids));
				wl = xrealloc(wl, (n + 1) * sizeof(*wl));
				ids[n] = gr->run_id[k];
				wl[n++] = gr->workload;
			}
		}
		char **sum = xcalloc(n + 1, sizeof(char *));
		int rc = n ? db_results_trace_summaries(db, ids, n, sum) : 0;
		if (rc)
			strbuf_addf(err, "database: %s", db_errmsg(db));
		for (size_t i = 0; i < n; i++) {
			json_t *j = sum[i] ? json_loads(sum[i], 0, NULL) : NULL;
			if (j && !rc) {
				r->traces = xrealloc(r->traces, (r->ntraces + 1) * sizeof(*r->traces));
				r->traces[r->ntraces].label = xstrfmt("%s vs %s: %s: %s, run %lld",
					c->label_a, c->label_b, side ? "B" : "A", wl[i], (long long)ids[i]);
				r->traces[r->ntraces++].summary = j;
			} else {
				json_decref(j);
			}
			free(sum[i]);
		}
		free(sum);
		free(ids);
		free(wl);
		if (rc)
			return -1;
	}
	return 0;
}

static int add_cmp(struct report *r, struct db *db, const char *a, const char *b,
		   const char *la, const char *lb, const struct cmp_options *o, struct strbuf *err)
{
	r->cmps = xrealloc(r->cmps, (r->ncmps + 1) * sizeof(*r->cmps));
	struct report_cmp *c = &r->cmps[r->ncmps];
	memset(c, 0, sizeof(*c));
	if (compare_job_run(db, a, b, o, 1, &c->job, err))
		return -1;
	c->a = xstrdup(a);
	c->b = xstrdup(b);
	c->label_a = xstrdup(la ? la : a);
	c->label_b = xstrdup(lb ? lb : b);
	r->ncmps++;
	for (size_t i = 0; i < c->job.r.warnings.nr; i++)
		strvec_pushf(&r->notes, "%s vs %s: %s", c->label_a, c->label_b,
			     c->job.r.warnings.v[i]);
	return add_traces(r, db, c, err);
}

static int preempt_rank(const char *p)
{
	static const char *const order[] = { "none", "voluntary", "full", "lazy", "laziest", "rt",
					     "rt-lazy", "rt-laziest", NULL };
	for (int i = 0; order[i]; i++)
		if (!strcmp(p, order[i]))
			return i;
	return 99;
}

/* the order of configurations: indexes into set's series, compared on the
 * dimensions of mask (qsort_r context) */
struct config_order {
	const struct sample_set *set;
	unsigned mask;
};

static int config_cmp(const void *x, const void *y, void *ctx)
{
	const struct config_order *co = ctx;
	const struct sel_series *a = &co->set->series[*(const size_t *)x];
	const struct sel_series *b = &co->set->series[*(const size_t *)y];
	for (int d = 0; d < SEL_NDIMS; d++) {
		if (!(co->mask & (1u << d)))
			continue;
		int c = 0;
		if (d == DIM_PREEMPT)
			c = preempt_rank(a->dim[d]) - preempt_rank(b->dim[d]);
		else if (d == DIM_KNOBS)
			c = (strcmp(b->dim[d], "{}") == 0) - (strcmp(a->dim[d], "{}") == 0);
		if (!c)
			c = strcmp(a->dim[d], b->dim[d]);
		if (c)
			return c;
	}
	return 0;
}

static int build_session(struct report *r, struct db *db, const struct report_options *o,
			 struct strbuf *err)
{
	int64_t sid = db_session_resolve(db, o->session ? o->session : "last");
	if (sid < 0) {
		strbuf_addf(err, "--session %s: %s", o->session ? o->session : "last",
			    db_errmsg(db));
		return -1;
	}
	char *text = xstrfmt("session=%lld", (long long)sid);
	struct selector sel;
	int rc = select_from_text(db, text, &sel, err);
	if (!rc) {
		rc = select_load(db, &sel, NULL, &r->scope_set, err);
		select_free(&sel);
	}
	free(text);
	if (rc)
		return -1;
	if (!r->scope_set.nrows) {
		strbuf_addf(err, "session %lld has no results (no run finished ok)", (long long)sid);
		return -1;
	}
	const struct sample_set *sp = &r->scope_set;
	unsigned m = varying_dims(&sp, 1, CONFIG_DIMS);
	/* distinct configurations, first one the baseline */
	size_t *rep = xcalloc(r->scope_set.nseries + 1, sizeof(size_t)), nrep = 0;
	for (size_t i = 0; m && i < r->scope_set.nseries; i++) {
		size_t k = 0;
		while (k < nrep && !sel_series_match(&r->scope_set.series[rep[k]],
						     &r->scope_set.series[i], m))
			k++;
		if (k == nrep)
			rep[nrep++] = i;
	}
	/* baseline first: default knobs, the least preemptive mode, then text order */
	struct config_order co = { .set = &r->scope_set, .mask = m };
	if (nrep > 1)
		qsort_r(rep, nrep, sizeof(size_t), config_cmp, &co);
	char *base = NULL, *blabel = NULL;
	struct strbuf why = STRBUF_INIT;
	/* a cmdline that differs only by preempt= adds nothing to a selector
	 * that names preempt (the same runs, read twice the mode) */
	unsigned sm = sel_label_mask(m, &sp, 1);
	if (nrep > 1) {
		base = config_selector(db, sid, &r->scope_set.series[rep[0]], sm, &why);
		blabel = config_label(&r->scope_set.series[rep[0]], m, &sp, 1);
	}
	for (size_t k = 1; base && k < nrep; k++) {
		char *cand = config_selector(db, sid, &r->scope_set.series[rep[k]], sm, &why);
		char *clabel = config_label(&r->scope_set.series[rep[k]], m, &sp, 1);
		if (cand && add_cmp(r, db, base, cand, blabel, clabel, &o->cmp, err)) {
			free(cand);
			free(clabel);
			rc = -1;
			break;
		}
		free(cand);
		free(clabel);
	}
	if (why.len)
		strvec_push(&r->notes, why.buf);
	if (nrep <= 1)
		strvec_push(&r->notes, "the session holds one configuration: no A/B comparison "
				       "(use --compare A B)");
	strbuf_release(&why);
	free(base);
	free(blabel);
	free(rep);
	if (rc)
		return -1;
	r->title = o->title ? xstrdup(o->title) : NULL;
	r->scope = xstrfmt("session %lld", (long long)sid);
	return 0;
}

int report_build(struct db *db, const struct report_options *o, struct report *r,
		 struct strbuf *err)
{
	memset(r, 0, sizeof(*r));
	r->mode = o->mode;
	r->generated_at = utc_now();
	r->dbpath = xstrdup(o->dbpath ? o->dbpath : "");
	size_t max_curves = o->max_curves ? o->max_curves : 8;
	size_t max_boots = o->max_boots ? o->max_boots : 50;
	const struct sample_set *scope[2];
	size_t nscope = 0;
	int sides = 0;
	if (o->mode == REPORT_SESSION) {
		if (build_session(r, db, o, err))
			goto fail;
		scope[nscope++] = &r->scope_set;
	} else if (o->mode == REPORT_COMPARE) {
		if (add_cmp(r, db, o->a, o->b, NULL, NULL, &o->cmp, err))
			goto fail;
		const struct compare_job *j = &r->cmps[0].job;
		if (!j->a.nrows || !j->b.nrows) {
			strbuf_addf(err, "selector %s matches no results", !j->a.nrows ? o->a : o->b);
			goto fail;
		}
		scope[nscope++] = &j->a;
		scope[nscope++] = &j->b;
		sides = 1;
		r->scope = xstrfmt("A: %s; B: %s", o->a, o->b);
	} else {
		struct selector sel = { 0, NULL };
		struct sel_filter f = { .since = o->since };
		if (select_load(db, &sel, &f, &r->scope_set, err))
			goto fail;
		if (!r->scope_set.nrows) {
			strbuf_addf(err, "no results since %s", o->since);
			goto fail;
		}
		scope[nscope++] = &r->scope_set;
		r->scope = xstrfmt("runs since %s", o->since);
	}
	if (!r->title)
		r->title = xstrdup(o->title ? o->title : r->scope);

	unsigned cmask = varying_dims(scope, nscope, CONFIG_DIMS | (1u << DIM_MACHINE));
	for (size_t k = 0; k < nscope; k++)
		if (add_curves(r, db, scope[k], sides ? (k ? 'B' : 'A') : 0, scope, nscope, cmask,
			       max_curves, err))
			goto fail;
	note_overflows(r, &o->cmp);
	if (load_sessions(r, db, scope, nscope, err) ||
	    load_boots(r, db, scope, nscope, max_boots, err) || load_alerts(r, db, err))
		goto fail;

	const struct sample_set *H = NULL;
	if (load_history(r, db, o, scope, nscope, &H, err))
		goto fail;
	if (build_trends(r, db, H, o->mode == REPORT_SINCE ? NULL : scope, nscope, &o->cp, err))
		goto fail;
	if (!r->ntrends)
		strvec_push(&r->notes, "no trends: every configuration in scope has fewer than 2 "
				       "sessions with results");
	return 0;
fail:
	report_free(r);
	return -1;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->ntraces; i++) {
		free(r->traces[i].label);
		json_decref(r->traces[i].summary);
	}
	free(r->traces);
	for (size_t i = 0; i < r->nalerts; i++) {
		struct report_alert *a = &r->alerts[i];
		free(a->status);
		free(a->kind);
		free(a->metric);
		free(a->series);
		free(a->culprit);
		free(a->range);
	}
	free(r->alerts);
	strvec_clear(&r->kernel_labels);
	free(r->title);
	free(r->scope);
	free(r->generated_at);
	free(r->dbpath);
	for (size_t i = 0; i < r->nsessions; i++) {
		struct report_session *s = &r->sessions[i];
		free(s->name);
		free(s->tag);
		free(s->target);
		free(s->version);
		free(s->status);
		free(s->started_at);
		free(s->finished_at);
		free(s->plan_path);
	}
	free(r->sessions);
	for (size_t i = 0; i < r->ncmps; i++) {
		free(r->cmps[i].a);
		free(r->cmps[i].b);
		free(r->cmps[i].label_a);
		free(r->cmps[i].label_b);
		compare_job_free(&r->cmps[i].job);
	}
	free(r->cmps);
	for (size_t i = 0; i < r->ndists; i++) {
		struct report_dist *d = &r->dists[i];
		for (size_t c = 0; c < d->ncurves; c++) {
			free(d->curves[c].label);
			free(d->curves[c].h.name);
			free(d->curves[c].h.unit);
			hist_free(&d->curves[c].h.h);
		}
		free(d->curves);
		free(d->workload);
		free(d->params_label);
		free(d->name);
		free(d->unit);
	}
	free(r->dists);
	for (size_t i = 0; i < r->ntrends; i++) {
		struct report_trend *t = &r->trends[i];
		free(t->workload);
		free(t->metric);
		free(t->unit);
		free(t->config);
		free(t->band_lo);
		free(t->band_hi);
		trend_free(&t->t);
	}
	free(r->trends);
	strvec_clear(&r->configs);
	for (size_t i = 0; i < r->nboots; i++) {
		struct report_boot *b = &r->boots[i];
		free(b->machine);
		json_decref(b->sysinfo);
		free(b->boots);
		free(b->method);
		free(b->accel);
		free(b->clock);
		free(b->qemu);
		free(b->status);
		free(b->first_at);
	}
	free(r->boots);
	strvec_clear(&r->notes);
	free(r->window_text);
	sample_set_free(&r->scope_set);
	if (r->history_loaded)
		sample_set_free(&r->history);
	free(r->trend_key_series);
	memset(r, 0, sizeof(*r));
}

/* ---- for the renderers ------------------------------------------------------------ */

int report_worse_dir(enum sel_better b, double rel)
{
	if (b == SEL_BETTER_LOWER)
		return rel > 0;
	if (b == SEL_BETTER_HIGHER)
		return rel < 0;
	return -1;
}

const struct report_trend *report_trend_for(const struct report *r,
					    const struct sel_series *s, const char *workload,
					    const char *metric)
{
	const struct sample_set *H = r->history_loaded ? &r->history : &r->scope_set;
	for (size_t i = 0; i < r->ntrends; i++) {
		const struct report_trend *t = &r->trends[i];
		if (strcmp(t->workload, workload) || strcmp(t->metric, metric))
			continue;
		if (sel_series_match(&H->series[r->trend_key_series[t->key]], s, TREND_MASK))
			return t;
	}
	return NULL;
}
