/*
 * The report (see report.h): report_build() computes everything from the
 * database into a struct report, the renderers below turn it into one HTML
 * page with inline SVG (report_render_html) or a one-screen text summary
 * (report_render_summary). Nothing here exits; errors go into a strbuf.
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
 * The noise band of a trend is drawn per segment between change points:
 * the mean of the session values +- 2 standard deviations of them (of the
 * segment's single runs when it has fewer than 3 sessions).
 */
#include "harness/results/report.h"
#include "harness/results/format.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/hist.h"
#include "analysis/stats.h"
#include "db/results.h"

#define CONFIG_DIMS ((1u << DIM_KERNEL) | (1u << DIM_PREEMPT) | (1u << DIM_HZ) | \
		     (1u << DIM_SCHED_MC) | (1u << DIM_CMDLINE) | (1u << DIM_KNOBS))
#define ALL_DIMS ((1u << SEL_NDIMS) - 1)
#define TREND_MASK (ALL_DIMS & ~(1u << DIM_KERNEL))

void report_options_default(struct report_options *o)
{
	memset(o, 0, sizeof(*o));
	cmp_options_default(&o->cmp);
	cp_options_default(&o->cp);
	o->max_curves = 8;
	o->max_boots = 50;
}

/* ---- escaping ----------------------------------------------------------- */

void report_escape(struct strbuf *sb, const char *s)
{
	if (!s)
		return;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&#39;"); break;
		case '\n':
		case '\t': strbuf_addch(sb, *p); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				strbuf_addstr(sb, "&#xFFFD;");
			else
				strbuf_addch(sb, (char)*p);
		}
	}
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
	char *key = xstrfmt("%s\n%s", mach ? mach : "", dump ? dump : "");
	free(dump);
	size_t g = 0;
	while (g < r->nboots && strcmp(bc->keys[g], key))
		g++;
	if (g == r->nboots) {
		if (r->nboots >= bc->max_boots) {
			r->boots_omitted++;
			free(key);
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
		b->status = dup_or_null(in->status);
		b->first_at = dup_or_null(in->booted_at);
		strbuf_init(&bc->txt[g], 64);
	}
	free(key);
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
	return 0;
}

static const struct sample_set *cfg_sort_set;
static unsigned cfg_sort_mask;

static int preempt_rank(const char *p)
{
	static const char *const order[] = { "none", "voluntary", "full", "lazy", "rt", NULL };
	for (int i = 0; order[i]; i++)
		if (!strcmp(p, order[i]))
			return i;
	return 99;
}

static int config_cmp(const void *x, const void *y)
{
	const struct sel_series *a = &cfg_sort_set->series[*(const size_t *)x];
	const struct sel_series *b = &cfg_sort_set->series[*(const size_t *)y];
	for (int d = 0; d < SEL_NDIMS; d++) {
		if (!(cfg_sort_mask & (1u << d)))
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
	cfg_sort_set = &r->scope_set;
	cfg_sort_mask = m;
	if (nrep > 1)
		qsort(rep, nrep, sizeof(size_t), config_cmp);
	char *base = NULL, *blabel = NULL;
	struct strbuf why = STRBUF_INIT;
	if (nrep > 1) {
		base = config_selector(db, sid, &r->scope_set.series[rep[0]], m, &why);
		blabel = config_label(&r->scope_set.series[rep[0]], m, &sp, 1);
	}
	for (size_t k = 1; base && k < nrep; k++) {
		char *cand = config_selector(db, sid, &r->scope_set.series[rep[k]], m, &why);
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

static char *now_utc(void)
{
	char buf[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}

int report_build(struct db *db, const struct report_options *o, struct report *r,
		 struct strbuf *err)
{
	memset(r, 0, sizeof(*r));
	r->mode = o->mode;
	r->generated_at = now_utc();
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
	if (load_sessions(r, db, scope, nscope, err) ||
	    load_boots(r, db, scope, nscope, max_boots, err))
		goto fail;

	const struct sample_set *H = &r->scope_set;
	if (o->mode != REPORT_SINCE) {
		struct selector all = { 0, NULL };
		if (select_load(db, &all, NULL, &r->history, err))
			goto fail;
		r->history_loaded = 1;
		H = &r->history;
	}
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
		free(b->status);
		free(b->first_at);
	}
	free(r->boots);
	strvec_clear(&r->notes);
	sample_set_free(&r->scope_set);
	if (r->history_loaded)
		sample_set_free(&r->history);
	free(r->trend_key_series);
	memset(r, 0, sizeof(*r));
}

/* ---- rendering: helpers ------------------------------------------------------ */

static void esc(struct strbuf *o, const char *s)
{
	report_escape(o, s);
}

/* escape a formatted text */
static void escf(struct strbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void escf(struct strbuf *o, const char *fmt, ...)
{
	struct strbuf t = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&t, fmt, ap);
	va_end(ap);
	report_escape(o, t.buf);
	strbuf_release(&t);
}

/* 2, 50, 1k, 20k, 5M: axis labels */
static void si_num(char *buf, size_t n, double v)
{
	static const char *const suf[] = { "", "k", "M", "G", "T" };
	int k = 0;
	while (fabs(v) >= 1000 && k < 4) {
		v /= 1000;
		k++;
	}
	snprintf(buf, n, "%g%s", v, suf[k]);
}

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
				       "#9467bd", "#8c564b", "#e377c2", "#17becf" };
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

static const char css[] =
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
	"max-width:1200px;padding:0 16px 40px;color:#222}\n"
	"h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;border-bottom:1px solid #ccc;"
	"margin-top:28px}h3{font-size:15px;margin:16px 0 6px}\n"
	".meta{color:#666}.note{background:#fff8e1;border-left:4px solid #f0b400;padding:4px 8px;"
	"margin:4px 0}#jserr{background:#fdd;padding:6px}\n"
	"table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ddd;padding:2px 6px;"
	"text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"th{background:#f4f4f4}\n"
	"table.sortable th{cursor:pointer;user-select:none}table.sortable th[data-dir=asc]::after"
	"{content:' \\25B2'}table.sortable th[data-dir=desc]::after{content:' \\25BC'}\n"
	".v-worse{background:#f8c9c4;font-weight:600}.v-better{background:#c8ebc8}"
	".v-nochange{background:#eee}.v-inconclusive{background:#fff1c2}.v-none{color:#888}\n"
	".summary{display:flex;gap:8px;flex-wrap:wrap}.summary span{padding:3px 8px;border-radius:3px}\n"
	".charts{display:flex;flex-wrap:wrap;gap:10px}.chart{border:1px solid #e3e3e3;"
	"padding:4px}.chart .t{font-weight:600;font-size:13px}.chart .s{font-size:12px;color:#666;"
	"max-width:330px;overflow-wrap:anywhere}\n"
	"svg text{font:11px system-ui,sans-serif;fill:#444}svg .grid{stroke:#eee}"
	"svg .axis{stroke:#999}svg .curve{fill:none;stroke-width:1.6}svg .band{fill:#9ecae1;"
	"fill-opacity:.35}svg .mean{stroke:#3182bd;stroke-width:1}svg .whisker{stroke:#999}"
	"svg .pt{fill:#08519c}svg .cp{stroke-width:1.5;stroke-dasharray:4 3}"
	"svg .cp-worse{stroke:#d62728}svg .cp-better{stroke:#2ca02c}svg .cp-none{stroke:#777}\n"
	"td.k{white-space:nowrap;font-weight:600}td.src{color:#777;font-size:12px}"
	"td.err{color:#a33;font-size:12px}details{margin:4px 0}code{overflow-wrap:anywhere}\n";

static const char js_head[] =
	"window.onerror=function(m,s,l,c){document.body.setAttribute('data-error',"
	"String(m)+' at '+l+':'+c);var d=document.getElementById('jserr');if(d){"
	"d.textContent='script error: '+m+' (line '+l+')';d.hidden=false;}};\n";

static const char js_tail[] =
	"(function(){\n"
	"function key(td){var v=td.getAttribute('data-sort');if(v===null)v=td.textContent;"
	"var n=parseFloat(v);return isNaN(n)?{s:v.toLowerCase()}:{n:n};}\n"
	"function cmp(a,b){if(a.n!==undefined&&b.n!==undefined)return a.n-b.n;"
	"if(a.n!==undefined)return -1;if(b.n!==undefined)return 1;"
	"return a.s<b.s?-1:a.s>b.s?1:0;}\n"
	"var tables=document.querySelectorAll('table.sortable');\n"
	"for(var t=0;t<tables.length;t++)(function(tb){\n"
	" var ths=tb.tHead.rows[0].cells;\n"
	" for(var i=0;i<ths.length;i++)(function(th,col){\n"
	"  th.addEventListener('click',function(){\n"
	"   var asc=th.getAttribute('data-dir')!=='asc';\n"
	"   for(var k=0;k<ths.length;k++)ths[k].removeAttribute('data-dir');\n"
	"   th.setAttribute('data-dir',asc?'asc':'desc');\n"
	"   var body=tb.tBodies[0],rows=Array.prototype.slice.call(body.rows);\n"
	"   rows.sort(function(x,y){var r=cmp(key(x.cells[col]),key(y.cells[col]));"
	"return asc?r:-r;});\n"
	"   for(var j=0;j<rows.length;j++)body.appendChild(rows[j]);\n"
	"  });\n"
	" })(ths[i],i);\n"
	"})(tables[t]);\n"
	"document.body.setAttribute('data-sortable-tables',String(tables.length));\n"
	"document.body.setAttribute('data-svg-charts',"
	"String(document.querySelectorAll('svg.chart-svg').length));\n"
	"document.body.dataset.ok='1';\n"
	"})();\n";

/* ---- rendering: comparison ----------------------------------------------------- */

static const char *verdict_class(const struct cmp_row *row, int *order)
{
	if (row->kind == CMP_HIST || !row->has_verdict) {
		*order = 4;
		return "v-none";
	}
	switch (row->v.kind) {
	case VERDICT_WORSE: *order = 0; return "v-worse";
	case VERDICT_BETTER: *order = 1; return "v-better";
	case VERDICT_INCONCLUSIVE: *order = 2; return "v-inconclusive";
	default: *order = 3; return "v-nochange";
	}
}

static void td_num(struct strbuf *o, double v, const char *prefix)
{
	char b[48];
	fmt_num(b, sizeof(b), v);
	if (isfinite(v))
		strbuf_addf(o, "<td class=\"n\" data-sort=\"%.10g\">%s%s</td>", v, prefix, b);
	else
		strbuf_addf(o, "<td class=\"n\" data-sort=\"\">-</td>");
}

static void td_pct(struct strbuf *o, double v)
{
	if (isfinite(v))
		strbuf_addf(o, "<td class=\"n\" data-sort=\"%.10g\">%+.1f</td>", v, v);
	else
		strbuf_addstr(o, "<td class=\"n\" data-sort=\"\">-</td>");
}

static void render_cmp(const struct report_cmp *c, struct strbuf *o)
{
	const struct cmp_result *res = &c->job.r;
	size_t count[4] = { 0, 0, 0, 0 };
	for (size_t i = 0; i < res->nrows; i++)
		if (res->rows[i].kind == CMP_METRIC && res->rows[i].has_verdict)
			count[res->rows[i].v.kind]++;
	strbuf_addstr(o, "<h3>A: ");
	esc(o, c->label_a);
	strbuf_addstr(o, " &rarr; B: ");
	esc(o, c->label_b);
	strbuf_addstr(o, "</h3>\n<p class=\"meta\">selectors: A <code>");
	esc(o, c->a);
	strbuf_addstr(o, "</code>, B <code>");
	esc(o, c->b);
	strbuf_addstr(o, "</code>; ");
	if (res->diff_mask) {
		strbuf_addstr(o, "compared:");
		for (int d = 0; d < SEL_NDIMS; d++)
			if (res->diff_mask & (1u << d))
				escf(o, " %s", sel_dim_name((enum sel_dim)d));
	} else {
		strbuf_addstr(o, "A and B are the same configuration (A/A): the noise floor column "
				 "applies");
	}
	strbuf_addf(o, "; change = B/A &minus; 1; noise threshold %g%%; 95%% bootstrap CI.</p>\n",
		    res->threshold_pct);
	strbuf_addf(o, "<div class=\"summary\"><span class=\"v-worse\">%zu worse</span>"
		       "<span class=\"v-better\">%zu better</span><span class=\"v-nochange\">%zu "
		       "no change</span><span class=\"v-inconclusive\">%zu inconclusive</span></div>\n",
		    count[VERDICT_WORSE], count[VERDICT_BETTER], count[VERDICT_NO_CHANGE],
		    count[VERDICT_INCONCLUSIVE]);
	strbuf_addstr(o, "<table class=\"sortable cmp\"><thead><tr><th>workload</th><th>series</th>"
			 "<th>metric</th><th>unit</th><th>n A/B</th><th>A</th><th>B</th>"
			 "<th>change %</th><th>95% CI</th><th>p</th><th>verdict</th>"
			 "<th>noise floor &plusmn;%</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < res->nrows; i++) {
		const struct cmp_row *row = &res->rows[i];
		int order;
		const char *cls = verdict_class(row, &order);
		char *vt = compare_verdict_text(row);
		strbuf_addf(o, "<tr class=\"%s\" data-verdict=\"%s\"><td>", cls, cls + 2);
		esc(o, row->workload);
		strbuf_addstr(o, "</td><td>");
		esc(o, res->pairs[row->pair].label);
		strbuf_addstr(o, "</td><td>");
		if (row->kind == CMP_HIST)
			escf(o, "%s p%g", row->metric, row->pct);
		else
			esc(o, row->metric);
		strbuf_addstr(o, "</td><td>");
		esc(o, row->unit);
		strbuf_addstr(o, "</td>");
		if (row->kind == CMP_HIST) {
			strbuf_addf(o, "<td class=\"n\" data-sort=\"%zu\">%zur/%zur</td>", row->a_runs,
				    row->a_runs, row->b_runs);
			td_num(o, row->ha, row->ha_overflow ? "&ge;" : "");
			td_num(o, row->hb, row->hb_overflow ? "&ge;" : "");
			td_pct(o, row->change_pct);
			strbuf_addstr(o, "<td data-sort=\"\">merged histograms</td><td data-sort=\"\">-"
					 "</td>");
		} else {
			strbuf_addf(o, "<td class=\"n\" data-sort=\"%zu\">%zu/%zu</td>", row->v.n_a,
				    row->v.n_a, row->v.n_b);
			td_num(o, row->v.centre_a, "");
			td_num(o, row->v.centre_b, "");
			td_pct(o, row->v.change_pct);
			if (isfinite(row->v.ci_lo_pct))
				strbuf_addf(o, "<td class=\"n\" data-sort=\"%.6g\">[%+.1f, %+.1f]</td>",
					    row->v.ci_lo_pct, row->v.ci_lo_pct, row->v.ci_hi_pct);
			else
				strbuf_addstr(o, "<td data-sort=\"\">-</td>");
			td_num(o, row->v.p_mwu, "");
		}
		strbuf_addf(o, "<td data-sort=\"%d\">", order);
		esc(o, vt);
		strbuf_addstr(o, "</td>");
		if (row->kind == CMP_METRIC && row->has_noise)
			td_num(o, row->nf.half_width_pct, "");
		else
			strbuf_addstr(o, "<td data-sort=\"\"></td>");
		strbuf_addstr(o, "</tr>\n");
		free(vt);
	}
	strbuf_addstr(o, "</tbody></table>\n");
}

/* ---- rendering: latency distributions --------------------------------------------- */

#define LW 580
#define LH 330
#define LML 64
#define LMR 34
#define LMT 14
#define LMB 40

static double nines(double q, double xmax)
{
	if (q >= 1)
		return xmax;
	double x = -log10(1 - q);
	return x > xmax ? xmax : x;
}

static void render_dist(const struct report_dist *d, size_t idx, struct strbuf *o)
{
	/* ranges */
	double xmax = 2, ymin = INFINITY, ymax = 0;
	for (size_t c = 0; c < d->ncurves; c++) {
		const struct hist *h = &d->curves[c].h.h;
		if (!h->total)
			continue;
		double nx = log10((double)h->total);
		if (nx > xmax)
			xmax = nx;
		for (size_t i = 0; i < h->nbuckets; i++) {
			if (!h->counts[i])
				continue;
			double v = hist_bucket_value(h, i);
			if (v > 0 && v < ymin)
				ymin = v;
			if (v > ymax)
				ymax = v;
		}
	}
	if (xmax > 6)
		xmax = 6;
	xmax = ceil(xmax);
	if (!isfinite(ymin) || ymax <= 0) {
		ymin = 1;
		ymax = 10;
	}
	double ly0 = floor(log10(ymin)), ly1 = ceil(log10(ymax));
	if (ly1 <= ly0)
		ly1 = ly0 + 1;
	ymin = pow(10, ly0);   /* data below the axis (0 us buckets) sits on it */
	const double pw = LW - LML - LMR, ph = LH - LMT - LMB;
#define XP(x) (LML + (x) / xmax * pw)
#define YP(v) (LMT + ph - (log10((v) < ymin ? ymin : (v)) - ly0) / (ly1 - ly0) * ph)
	strbuf_addstr(o, "<div class=\"chart\"><div class=\"t\">");
	escf(o, "%s %s", d->workload, d->name);
	if (*d->params_label)
		escf(o, " (%s)", d->params_label);
	strbuf_addstr(o, "</div><div class=\"s\">latency by percentile (merged runs per "
			 "configuration; x: percentile, log scale of nines)</div>\n");
	strbuf_addf(o, "<svg class=\"chart-svg dist\" id=\"dist%zu\" width=\"%d\" height=\"%d\" "
		       "viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n",
		    idx, LW, LH, LW, LH);
	/* grid and axes */
	for (int k = 0; k <= (int)xmax; k++) {
		double x = XP(k);
		char lab[32];
		if (k == 0)
			snprintf(lab, sizeof(lab), "0%%");
		else {
			snprintf(lab, sizeof(lab), "%.*f%%", k > 2 ? k - 2 : 0, 100 - pow(10, 2 - k));
		}
		strbuf_addf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>"
			       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			    x, LMT, x, LMT + ph, x, LMT + ph + 14, lab);
	}
	for (double e = ly0; e <= ly1 + 1e-9; e++)
		for (int m = 1; m < 10; m++) {
			double v = m * pow(10, e);
			if (log10(v) > ly1 + 1e-9)
				break;
			double y = YP(v);
			strbuf_addf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
				    LML, y, LML + pw, y);
			if (m == 1 || m == 2 || m == 5) {
				char lab[32];
				si_num(lab, sizeof(lab), v);
				strbuf_addf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
					    LML - 4, y + 4, lab);
			}
		}
	strbuf_addf(o, "\n<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
		       "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\"/>\n",
		    LML, LMT + ph, LML + pw, LMT + ph, LML, LMT, LML, LMT + ph);
	strbuf_addf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">percentile</text>",
		    LML + pw / 2, LH - 6);
	strbuf_addf(o, "<text transform=\"translate(14,%.1f) rotate(-90)\" text-anchor=\"middle\">",
		    LMT + ph / 2);
	escf(o, "latency (%s, log)", d->unit);
	strbuf_addstr(o, "</text>\n");
	/* curves: a step per non-empty bucket */
	for (size_t c = 0; c < d->ncurves; c++) {
		const struct report_curve *cv = &d->curves[c];
		const struct hist *h = &cv->h.h;
		const char *col = palette[c % NPALETTE];
		if (!h->total)
			continue;
		struct strbuf path = STRBUF_INIT;
		uint64_t cum = 0;
		size_t npts = 0;
		double px = 0, py = 0, lastx = 0;
		for (size_t i = 0; i < h->nbuckets; i++) {
			if (!h->counts[i])
				continue;
			double y = YP(hist_bucket_value(h, i));
			double x0 = XP(nines((double)cum / (double)h->total, xmax));
			cum += h->counts[i];
			lastx = XP(nines((double)cum / (double)h->total, xmax));
			if (!npts) {
				strbuf_addf(&path, "M%.1f %.1f", x0, y);
				px = x0;
				py = y;
				npts++;
				continue;
			}
			/* a step: along at the previous value, then up to this one */
			if (x0 - px >= 0.3) {
				strbuf_addf(&path, "L%.1f %.1f", x0, py);
				px = x0;
				npts++;
			}
			if (fabs(y - py) >= 0.3) {
				strbuf_addf(&path, "L%.1f %.1f", px, y);
				py = y;
				npts++;
			}
		}
		if (npts && lastx - px >= 0.3) {
			strbuf_addf(&path, "L%.1f %.1f", lastx, py);
			npts++;
		}
		strbuf_addf(o, "<path class=\"curve\" stroke=\"%s\" data-points=\"%zu\" "
			       "data-samples=\"%llu\" data-config=\"",
			    col, npts, (unsigned long long)h->total);
		esc(o, cv->label);
		strbuf_addf(o, "\" d=\"%s\"><title>", path.buf);
		escf(o, "%s: %zu runs, %llu samples", cv->label, cv->h.nruns,
		     (unsigned long long)h->total);
		strbuf_addstr(o, "</title></path>\n");
		strbuf_release(&path);
		static const double pcts[] = { 50, 99, 99.9 };
		for (size_t k = 0; k < 3; k++) {
			double v;
			enum hist_pct st = hist_percentile(h, pcts[k], &v);
			if (st == HIST_EMPTY || !isfinite(v))
				continue;
			strbuf_addf(o, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
				       "fill=\"%s\" data-pct=\"%g\" data-value=\"%g\"><title>",
				    XP(nines(pcts[k] / 100, xmax)), YP(v), col, pcts[k], v);
			escf(o, "%s: p%g %s%g %s", cv->label, pcts[k],
			     st == HIST_IN_OVERFLOW ? ">= " : "", v, d->unit);
			strbuf_addstr(o, "</title></circle>\n");
		}
	}
	strbuf_addstr(o, "</svg>\n<table class=\"legend\"><tr><th></th><th>configuration</th>"
			 "<th>runs</th><th>samples</th><th>p50</th><th>p99</th><th>p99.9</th>"
			 "<th>max</th><th>overflow</th></tr>\n");
	for (size_t c = 0; c < d->ncurves; c++) {
		const struct report_curve *cv = &d->curves[c];
		const struct hist *h = &cv->h.h;
		strbuf_addf(o, "<tr><td><svg width=\"18\" height=\"8\"><rect width=\"18\" "
			       "height=\"8\" fill=\"%s\"/></svg></td><td>",
			    palette[c % NPALETTE]);
		esc(o, cv->label);
		if (cv->h.incompatible)
			strbuf_addstr(o, " <em>(histograms of different geometry: first run only)</em>");
		strbuf_addf(o, "</td><td class=\"n\">%zu</td><td class=\"n\">%llu</td>", cv->h.nruns,
			    (unsigned long long)h->total);
		static const double pcts[] = { 50, 99, 99.9 };
		for (size_t k = 0; k < 3; k++) {
			double v;
			enum hist_pct st = hist_percentile(h, pcts[k], &v);
			char b[40];
			fmt_num(b, sizeof(b), st == HIST_EMPTY ? NAN : v);
			strbuf_addf(o, "<td class=\"n\">%s%s</td>", st == HIST_IN_OVERFLOW ? "&ge;" : "",
				    b);
		}
		char mx[40];
		fmt_num(mx, sizeof(mx), h->max);
		strbuf_addf(o, "<td class=\"n\">%s</td><td class=\"n\">%llu</td></tr>\n", mx,
			    (unsigned long long)h->overflow);
	}
	strbuf_addstr(o, "</table>");
	if (d->omitted)
		strbuf_addf(o, "<p class=\"note\">%zu more configuration(s) not drawn.</p>",
			    d->omitted);
	strbuf_addstr(o, "</div>\n");
#undef XP
#undef YP
}

/* ---- rendering: trends ------------------------------------------------------------- */

#define TW 330
#define TH 160
#define TML 50
#define TMR 10
#define TMT 12
#define TMB 26

static int worse_dir(enum sel_better b, double rel)
{
	if (b == SEL_BETTER_LOWER)
		return rel > 0;
	if (b == SEL_BETTER_HIGHER)
		return rel < 0;
	return -1;
}

static void render_trend(const struct report_trend *rt, size_t idx, struct strbuf *o)
{
	const struct trend *t = &rt->t;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < t->np; i++) {
		for (size_t k = 0; k < t->pt[i].n; k++) {
			double v = t->pt[i].vals[k];
			if (isfinite(v)) {
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
		}
		if (isfinite(rt->band_lo[i])) {
			lo = fmin(lo, rt->band_lo[i]);
			hi = fmax(hi, rt->band_hi[i]);
		}
	}
	if (!isfinite(lo)) {
		lo = 0;
		hi = 1;
	}
	/* a band reaching below zero of a metric that cannot */
	int nonneg = 1;
	for (size_t i = 0; i < t->np; i++)
		for (size_t k = 0; k < t->pt[i].n; k++)
			nonneg &= !(t->pt[i].vals[k] < 0);
	if (nonneg && lo < 0)
		lo = 0;
	if (hi - lo < 1e-12 * fmax(1, fabs(hi))) {
		lo -= fabs(lo) * 0.05 + 1e-9;
		hi += fabs(hi) * 0.05 + 1e-9;
	}
	double pad = (hi - lo) * 0.06;
	lo -= pad;
	hi += pad;
	const double pw = TW - TML - TMR, ph = TH - TMT - TMB;
	double step = pw / (double)t->np;
#define XI(i) (TML + step * ((double)(i) + 0.5))
#define YV(v) (TMT + ph - ((v) - lo) / (hi - lo) * ph)
	const char *better = rt->better == SEL_BETTER_LOWER ? "lower is better"
			     : rt->better == SEL_BETTER_HIGHER ? "higher is better" : "";
	strbuf_addstr(o, "<div class=\"chart trend\"><div class=\"t\">");
	escf(o, "%s.%s", rt->workload, rt->metric);
	strbuf_addstr(o, "</div><div class=\"s\">");
	escf(o, "%s%s%s, %s; %zu sessions, %zu change point%s", rt->config, *rt->config ? "; " : "",
	     rt->unit, better, t->np, t->ncp, t->ncp == 1 ? "" : "s");
	strbuf_addstr(o, "</div>\n");
	strbuf_addf(o, "<svg class=\"chart-svg trend\" id=\"trend%zu\" width=\"%d\" height=\"%d\" "
		       "viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
		       "data-points=\"%zu\" data-change-points=\"%zu\">\n",
		    idx, TW, TH, TW, TH, t->np, t->ncp);
	/* y ticks: lo, mid, hi */
	for (int k = 0; k <= 2; k++) {
		double v = lo + pad + (hi - lo - 2 * pad) * k / 2.0;
		char b[40];
		fmt_num(b, sizeof(b), v);
		strbuf_addf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			       "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
			    TML, YV(v), TML + pw, YV(v), TML - 3, YV(v) + 4, b);
	}
	strbuf_addf(o, "\n<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		    TML, TMT + ph, TML + pw, TMT + ph);
	/* noise band and mean per segment */
	size_t s0 = 0;
	for (size_t c = 0; c <= t->ncp; c++) {
		size_t s1 = c < t->ncp ? t->cps[c].index : t->np;
		if (s1 <= s0)
			continue;
		double x0 = TML + step * (double)s0, x1 = TML + step * (double)s1;
		double bl = rt->band_lo[s0], bh = rt->band_hi[s0], m = (bl + bh) / 2;
		if (bl < lo)
			bl = lo;
		strbuf_addf(o, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			       "height=\"%.1f\" data-lo=\"%g\" data-hi=\"%g\"><title>noise band: %g .. %g"
			       "</title></rect><line class=\"mean\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			       "y2=\"%.1f\"/>\n",
			    x0, YV(bh), x1 - x0, fmax(YV(bl) - YV(bh), 0.5), bl, bh, bl, bh, x0, YV(m), x1,
			    YV(m));
		s0 = s1;
	}
	/* change points */
	for (size_t c = 0; c < t->ncp; c++) {
		const struct change_point *cp = &t->cps[c];
		int w = worse_dir(rt->better, cp->rel_change);
		const char *cls = w < 0 ? "cp-none" : w ? "cp-worse" : "cp-better";
		double x = TML + step * (double)cp->index;
		const struct trend_point *p = &t->pt[cp->index];
		strbuf_addf(o, "<line class=\"cp %s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" "
			       "data-session=\"%lld\" data-change-pct=\"%.3g\"><title>",
			    cls, x, TMT, x, TMT + ph, (long long)p->session, 100 * cp->rel_change);
		escf(o, "change point at session %lld (%s%s%s): mean %g -> %g (%+.1f%%), p=%.2g",
		     (long long)p->session, p->tag ? p->tag : "", p->tag ? ", " : "",
		     p->kernel ? p->kernel : "", cp->mean_before, cp->mean_after,
		     100 * cp->rel_change, cp->pvalue);
		strbuf_addf(o, "</title></line><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
			       "%+.1f%%</text>\n",
			    x, TMT - 2 + 10, 100 * cp->rel_change);
	}
	/* whiskers (min..max of the repetitions) and points (medians) */
	for (size_t i = 0; i < t->np; i++) {
		const struct trend_point *p = &t->pt[i];
		double mn = INFINITY, mx = -INFINITY;
		for (size_t k = 0; k < p->n; k++) {
			mn = fmin(mn, p->vals[k]);
			mx = fmax(mx, p->vals[k]);
		}
		if (isfinite(mn) && mx > mn)
			strbuf_addf(o, "<line class=\"whisker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				       "y2=\"%.1f\"/>",
				    XI(i), YV(mn), XI(i), YV(mx));
		if (!isfinite(p->value))
			continue;
		strbuf_addf(o, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
			       "data-session=\"%lld\" data-value=\"%.10g\"><title>",
			    XI(i), YV(p->value), (long long)p->session, p->value);
		escf(o, "session %lld%s%s%s, %.10s, kernel %s: %g %s (median of %zu)",
		     (long long)p->session, p->tag ? " (" : "", p->tag ? p->tag : "",
		     p->tag ? ")" : "", p->started_at, p->kernel ? p->kernel : "?", p->value,
		     rt->unit, p->n);
		strbuf_addstr(o, "</title></circle>\n");
	}
	/* x labels: first and last session */
	strbuf_addf(o, "<text x=\"%d\" y=\"%d\">", TML, TH - 8);
	escf(o, "%.10s", t->pt[0].started_at);
	strbuf_addf(o, "</text><text x=\"%.1f\" y=\"%d\" text-anchor=\"end\">", TML + pw, TH - 8);
	escf(o, "%.10s", t->pt[t->np - 1].started_at);
	strbuf_addstr(o, "</text>\n</svg></div>\n");
#undef XI
#undef YV
}

/* ---- rendering: sysinfo ----------------------------------------------------------- */

static const char *const key_fields[] = {
	"kernel_release", "kernel_version", "cmdline", "preempt", "preempt_build",
	"preempt_dynamic", "preempt_modes", "hz", "sched_mc", "sched_features",
	"sched_tunables", "schedstats", "schedstats_config", "schedstat_version", "cpu_model",
	"ncpus", "cpus_online", "llc_groups", "cpufreq_governor", "cpuidle_driver",
	"cpuidle_governor", "hostname", "arch", "config_hash", "boot_id", NULL,
};

static void sysinfo_row(struct strbuf *o, const char *k, const json_t *f)
{
	const json_t *v = json_is_object(f) ? json_object_get(f, "value") : f;
	const json_t *src = json_is_object(f) ? json_object_get(f, "source") : NULL;
	const json_t *e = json_is_object(f) ? json_object_get(f, "error") : NULL;
	strbuf_addstr(o, "<tr><td class=\"k\">");
	esc(o, k);
	strbuf_addstr(o, "</td><td><code>");
	if (!v || json_is_null(v)) {
		strbuf_addstr(o, "(unknown)");
	} else if (json_is_string(v)) {
		esc(o, json_string_value(v));
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		esc(o, s ? s : "?");
		free(s);
	}
	strbuf_addstr(o, "</code></td>");
	if (json_is_string(e)) {
		strbuf_addstr(o, "<td class=\"err\">");
		esc(o, json_string_value(e));
	} else {
		strbuf_addstr(o, "<td class=\"src\">");
		esc(o, json_is_string(src) ? json_string_value(src) : "");
	}
	strbuf_addstr(o, "</td></tr>\n");
}

static void render_boot(const struct report_boot *b, struct strbuf *o)
{
	const json_t *si = b->sysinfo;
	const json_t *rel = json_object_get(json_object_get(si, "kernel_release"), "value");
	const json_t *pm = json_object_get(json_object_get(si, "preempt"), "value");
	strbuf_addstr(o, "<div class=\"boot\"><h3>");
	esc(o, b->machine);
	strbuf_addstr(o, " &mdash; ");
	esc(o, json_is_string(rel) ? json_string_value(rel) : "(kernel unknown)");
	strbuf_addstr(o, ", preempt ");
	esc(o, json_is_string(pm) ? json_string_value(pm) : "(unknown)");
	strbuf_addstr(o, "</h3><p class=\"meta\">");
	esc(o, b->boots);
	strbuf_addstr(o, "; method ");
	esc(o, b->method ? b->method : "?");
	if (b->accel) {
		strbuf_addstr(o, ", accel ");
		esc(o, b->accel);
	}
	strbuf_addstr(o, ", first boot at ");
	esc(o, b->first_at ? b->first_at : "?");
	strbuf_addstr(o, "</p>\n<table class=\"sysinfo\"><thead><tr><th>field</th><th>value</th>"
			 "<th>source</th></tr></thead><tbody>\n");
	for (const char *const *k = key_fields; *k; k++) {
		const json_t *f = json_object_get(si, *k);
		if (f)
			sysinfo_row(o, *k, f);
	}
	/* the remaining fields, sorted */
	const char *key;
	json_t *f;
	struct strvec rest = STRVEC_INIT;
	json_object_foreach((json_t *)si, key, f) {
		const char *const *k = key_fields;
		while (*k && strcmp(*k, key))
			k++;
		if (!*k)
			strvec_push(&rest, key);
	}
	for (size_t i = 0; i < rest.nr; i++)
		for (size_t j = i + 1; j < rest.nr; j++)
			if (strcmp(rest.v[i], rest.v[j]) > 0) {
				const char *t = rest.v[i];
				rest.v[i] = rest.v[j];
				rest.v[j] = t;
			}
	for (size_t i = 0; i < rest.nr; i++)
		sysinfo_row(o, rest.v[i], json_object_get(si, rest.v[i]));
	strvec_clear(&rest);
	strbuf_addstr(o, "</tbody></table></div>\n");
}

/* ---- rendering: the page ------------------------------------------------------------ */

void report_render_html(const struct report *r, struct strbuf *o)
{
	strbuf_addstr(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			 "<meta name=\"viewport\" content=\"width=device-width\">\n"
			 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			 "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
			 "<title>schedlab report: ");
	esc(o, r->title);
	strbuf_addf(o, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<script>%s</script>\n",
		    css, js_head);
	strbuf_addstr(o, "<div id=\"jserr\" hidden></div>\n<h1>schedlab report: ");
	esc(o, r->title);
	strbuf_addstr(o, "</h1>\n<p class=\"meta\">scope: ");
	esc(o, r->scope);
	strbuf_addstr(o, "; database <code>");
	esc(o, r->dbpath);
	strbuf_addstr(o, "</code>; generated ");
	esc(o, r->generated_at);
	strbuf_addstr(o, " by schedlab " SCHEDLAB_VERSION "</p>\n");
	strbuf_addstr(o, "<p class=\"meta\">Contents: <a href=\"#comparison\">comparison</a> &middot; "
			 "<a href=\"#latency\">latency distributions</a> &middot; <a href=\"#trends\">"
			 "trends</a> &middot; <a href=\"#sessions\">sessions</a> &middot; "
			 "<a href=\"#sysinfo\">machines and boots</a></p>\n");
	for (size_t i = 0; i < r->notes.nr; i++) {
		strbuf_addstr(o, "<div class=\"note\">");
		esc(o, r->notes.v[i]);
		strbuf_addstr(o, "</div>\n");
	}

	strbuf_addstr(o, "<h2 id=\"comparison\">Comparison</h2>\n");
	if (!r->ncmps)
		strbuf_addstr(o, "<p>No A/B comparison in this report.</p>\n");
	else
		strbuf_addstr(o, "<p class=\"meta\">Per metric: the centre of each side (median; "
				 "harmonic mean for rates), the change with its 95% bootstrap "
				 "confidence interval, the Mann&ndash;Whitney p, and the verdict "
				 "(docs/analysis.md). Click a column to sort.</p>\n");
	for (size_t i = 0; i < r->ncmps; i++)
		render_cmp(&r->cmps[i], o);

	strbuf_addstr(o, "<h2 id=\"latency\">Latency distributions</h2>\n");
	if (!r->ndists)
		strbuf_addstr(o, "<p>No latency histograms in scope.</p>\n");
	strbuf_addstr(o, "<div class=\"charts\">\n");
	for (size_t i = 0; i < r->ndists; i++)
		render_dist(&r->dists[i], i, o);
	strbuf_addstr(o, "</div>\n");

	strbuf_addstr(o, "<h2 id=\"trends\">Trends</h2>\n<p class=\"meta\">One point per session "
			 "(the median of its repetitions; the whisker spans them), oldest first. "
			 "A trend follows one configuration across kernels. Dashed lines are change "
			 "points (red: worse, green: better); the shaded band is the noise band of "
			 "each segment between change points (mean &plusmn; 2 sd).</p>\n");
	if (!r->ntrends)
		strbuf_addstr(o, "<p>No trends: fewer than 2 sessions per configuration.</p>\n");
	strbuf_addstr(o, "<div class=\"charts\">\n");
	for (size_t i = 0; i < r->ntrends; i++)
		render_trend(&r->trends[i], i, o);
	strbuf_addstr(o, "</div>\n");

	strbuf_addstr(o, "<h2 id=\"sessions\">Sessions</h2>\n<table class=\"sortable\"><thead><tr>"
			 "<th>session</th><th>tag</th><th>plan</th><th>target</th><th>started</th>"
			 "<th>finished</th><th>status</th><th>harness</th><th>plan file</th></tr>"
			 "</thead><tbody>\n");
	for (size_t i = 0; i < r->nsessions; i++) {
		const struct report_session *s = &r->sessions[i];
		const char *cells[] = { s->tag, s->name, s->target, s->started_at, s->finished_at,
					s->status, s->version, s->plan_path };
		strbuf_addf(o, "<tr><td class=\"n\">%lld</td>", (long long)s->id);
		for (size_t k = 0; k < sizeof(cells) / sizeof(cells[0]); k++) {
			strbuf_addstr(o, "<td>");
			esc(o, cells[k] ? cells[k] : "");
			strbuf_addstr(o, "</td>");
		}
		strbuf_addstr(o, "</tr>\n");
	}
	strbuf_addstr(o, "</tbody></table>\n");

	strbuf_addstr(o, "<h2 id=\"sysinfo\">Machines and boots</h2>\n<p class=\"meta\">What the "
			 "agent read after each boot (every field with where it came from). Boots "
			 "with the same sysinfo are listed together.</p>\n");
	for (size_t i = 0; i < r->nboots; i++)
		render_boot(&r->boots[i], o);
	if (r->boots_omitted)
		strbuf_addf(o, "<p class=\"note\">%zu more boot configuration(s) not shown.</p>\n",
			    r->boots_omitted);
	strbuf_addf(o, "<script>\n%s</script>\n</body>\n</html>\n", js_tail);
}

/* ---- the text summary ----------------------------------------------------------------- */

static const struct report_trend *trend_for(const struct report *r, const struct sel_series *s,
					     const char *workload, const char *metric)
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
				if (res->diff_mask & (1u << d))
					fprintf(out, " %s", sel_dim_name((enum sel_dim)d));
			fputc('\n', out);
		}
		for (size_t i = 0; i < res->nrows; i++) {
			const struct cmp_row *row = &res->rows[i];
			if (row->kind != CMP_METRIC || !row->has_verdict)
				continue;
			n++;
			count[row->v.kind]++;
			if (row->v.kind != VERDICT_WORSE)
				continue;
			if (count[VERDICT_WORSE] == 1)
				fprintf(out, "\nREGRESSIONS:\n");
			nworse++;
			char a[40], b[40];
			fmt_num(a, sizeof(a), row->v.centre_a);
			fmt_num(b, sizeof(b), row->v.centre_b);
			const char *label = res->pairs[row->pair].label;
			fprintf(out, "  %s.%s%s%s%s: %s -> %s %s, %+.1f%% (95%% CI %+.1f..%+.1f%%, "
				     "p=%.2g, n=%zu/%zu)\n",
				row->workload, row->metric, *label ? " (" : "", label,
				*label ? ")" : "", a, b, row->unit, row->v.change_pct, row->v.ci_lo_pct,
				row->v.ci_hi_pct, row->v.p_mwu, row->v.n_a, row->v.n_b);
			const struct report_trend *t =
				trend_for(r, &rc->job.b.series[res->pairs[row->pair].b], row->workload,
					  row->metric);
			const struct change_point *cp = NULL;
			for (size_t k = 0; t && k < t->t.ncp; k++)
				if (worse_dir(t->better, t->t.cps[k].rel_change) == 1)
					cp = &t->t.cps[k];
			if (cp) {
				const struct trend_point *p = &t->t.pt[cp->index];
				fprintf(out, "      starts at change point: session %lld%s%s%s, %.10s, "
					     "kernel %s: mean %g -> %g (%+.1f%%, p=%.2g)\n",
					(long long)p->session, p->tag ? " (" : "", p->tag ? p->tag : "",
					p->tag ? ")" : "", p->started_at, p->kernel ? p->kernel : "?",
					cp->mean_before, cp->mean_after, 100 * cp->rel_change,
					cp->pvalue);
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
