/*
 * Selectors over the `results` view and loading of samples into series and
 * groups; see select.h for the rules and docs/analysis.md for the user's
 * view. Keys are checked here against the view's own column list; the
 * selection then goes to db/results.c as a struct db_where, which builds the
 * SQL (every value and filter bound as a parameter, the checked column names
 * double-quoted) and hands the rows back one by one.
 */
#include "harness/util/cmdline.h"
#include "harness/results/select.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const dim_names[SEL_NDIMS] = {
	"machine", "kernel", "preempt", "hz", "sched_mc", "cmdline", "knobs", "clock",
	"qemu", "scheduler", "workload", "params",
};
static const char *const dim_keys[SEL_NDIMS] = {
	"machine", "kernel_release", "preempt", "hz", "sched_mc", "cmdline", "knobs",
	"clock", "qemu_version", "scheduler", "run_workload", "params",
};

const char *sel_dim_name(enum sel_dim d)
{
	return d < SEL_NDIMS ? dim_names[d] : "?";
}

const char *sel_dim_key(enum sel_dim d)
{
	return d < SEL_NDIMS ? dim_keys[d] : "?";
}

static int push_column(void *cols, const char *name)
{
	strvec_push(cols, name);
	return 0;
}

int select_columns(struct db *db, struct strvec *cols, struct strbuf *err)
{
	if (db_results_columns(db, push_column, cols)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	return 0;
}

static int is_column(const struct strvec *cols, const char *s, size_t len)
{
	for (size_t i = 0; i < cols->nr; i++)
		if (strlen(cols->v[i]) == len && !strncmp(cols->v[i], s, len))
			return 1;
	return 0;
}

/* does the piece start with an identifier followed by '='? length of it or 0 */
static size_t key_len(const char *p, const char *end)
{
	const char *q = p;
	while (q < end && (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
			   (q > p && *q >= '0' && *q <= '9')))
		q++;
	return q > p && q < end && *q == '=' ? (size_t)(q - p) : 0;
}

static void valid_list(const struct strvec *cols, struct strbuf *err)
{
	for (size_t i = 0; i < cols->nr; i++)
		strbuf_addf(err, "%s%s", i ? ", " : "", cols->v[i]);
}

int select_parse(const char *text, const struct strvec *cols, struct selector *sel,
		 struct strbuf *err)
{
	memset(sel, 0, sizeof(*sel));
	if (!text)
		return 0;
	const char *p = text;
	size_t alloc = 0;
	while (*p) {
		const char *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		size_t kl = key_len(p, end);
		if (!kl) {
			if (!sel->n) {
				if (end == p)
					strbuf_addf(err, "selector '%s': empty term", text);
				else
					strbuf_addf(err,
						    "selector '%s': '%.*s' is not key=value "
						    "(keys are columns of results: ",
						    text, (int)(end - p), p);
				if (end != p) {
					valid_list(cols, err);
					strbuf_addch(err, ')');
				}
				select_free(sel);
				return -1;
			}
			/* continuation of the previous value (a comma inside it) */
			struct sel_term *t = &sel->terms[sel->n - 1];
			char *v = xstrfmt("%s,%.*s", t->value, (int)(end - p), p);
			free(t->value);
			t->value = v;
		} else {
			if (!is_column(cols, p, kl)) {
				strbuf_addf(err, "selector '%s': unknown key '%.*s'; valid keys are "
						 "the columns of results: ",
					    text, (int)kl, p);
				valid_list(cols, err);
				select_free(sel);
				return -1;
			}
			if (sel->n == alloc) {
				alloc = alloc ? 2 * alloc : 4;
				sel->terms = xrealloc(sel->terms, alloc * sizeof(*sel->terms));
			}
			struct sel_term *t = &sel->terms[sel->n++];
			t->key = xstrfmt("%.*s", (int)kl, p);
			t->value = xstrfmt("%.*s", (int)(end - p - kl - 1), p + kl + 1);
		}
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			strbuf_addf(err, "selector '%s': trailing comma", text);
			select_free(sel);
			return -1;
		}
	}
	return 0;
}

void select_free(struct selector *sel)
{
	for (size_t i = 0; i < sel->n; i++) {
		free(sel->terms[i].key);
		free(sel->terms[i].value);
	}
	free(sel->terms);
	memset(sel, 0, sizeof(*sel));
}

int select_from_text(struct db *db, const char *text, struct selector *sel,
		     struct strbuf *err)
{
	struct strvec cols = STRVEC_INIT;
	int rc = select_columns(db, &cols, err);
	if (!rc)
		rc = select_parse(text, &cols, sel, err);
	strvec_clear(&cols);
	return rc;
}

/* ---- loading ---------------------------------------------------------- */

static size_t find_series(struct sample_set *s, size_t *alloc, char *const *dim,
			  const struct db_result_row *row)
{
	for (size_t i = s->nseries; i-- > 0;) {
		int same = 1;
		for (int d = 0; d < SEL_NDIMS && same; d++)
			same = !strcmp(s->series[i].dim[d], dim[d]);
		if (same) {
			/* the kernel's identity is its release and config; a
			 * series that holds builds of several commits (a
			 * release that does not name its commit) has no
			 * single commit to show */
			struct sel_series *se = &s->series[i];
			if (se->kernel_label && (strcmp(se->kernel_commit, row->kernel_commit) ||
						 strcmp(se->kernel_describe, row->kernel_describe))) {
				free(se->kernel_label);
				se->kernel_label = NULL;
			}
			return i;
		}
	}
	if (s->nseries == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 8;
		s->series = xrealloc(s->series, *alloc * sizeof(*s->series));
	}
	struct sel_series *se = &s->series[s->nseries];
	memset(se, 0, sizeof(*se));
	for (int d = 0; d < SEL_NDIMS; d++)
		se->dim[d] = xstrdup(dim[d]);
	se->machine = xstrdup(row->machine);
	se->kernel_release = xstrdup(row->kernel_release);
	se->config_hash = xstrdup(row->config_hash);
	se->kernel_commit = xstrdup(row->kernel_commit);
	se->kernel_describe = xstrdup(row->kernel_describe);
	se->kernel_label = *row->kernel_commit
		? xstrfmt("%s (%s)", *row->kernel_describe ? row->kernel_describe : "?",
			  row->kernel_commit) : NULL;
	return s->nseries++;
}

static enum sel_better parse_better(const char *s)
{
	if (!strcmp(s, "lower"))
		return SEL_BETTER_LOWER;
	if (!strcmp(s, "higher"))
		return SEL_BETTER_HIGHER;
	return SEL_BETTER_NONE;
}

static size_t find_group(struct sample_set *s, size_t *alloc, size_t series,
			 const struct db_result_row *row)
{
	const char *wl = row->workload, *m = row->metric;
	for (size_t i = s->ngroups; i-- > 0;) {
		struct sel_group *g = &s->groups[i];
		if (g->series == series && !strcmp(g->workload, wl) && !strcmp(g->metric, m))
			return i;
	}
	if (s->ngroups == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 16;
		s->groups = xrealloc(s->groups, *alloc * sizeof(*s->groups));
	}
	struct sel_group *g = &s->groups[s->ngroups];
	memset(g, 0, sizeof(*g));
	g->series = series;
	g->workload = xstrdup(wl);
	g->metric = xstrdup(m);
	g->unit = xstrdup(row->unit);
	g->better = parse_better(row->better);
	return s->ngroups++;
}

static void group_add(struct sel_group *g, double v, int censored, int64_t run,
		      int64_t session, int64_t seed, const char *started)
{
	if (g->n == g->alloc) {
		g->alloc = g->alloc ? 2 * g->alloc : 8;
		g->value = xrealloc(g->value, g->alloc * sizeof(double));
		g->censored = xrealloc(g->censored, g->alloc);
		g->run_id = xrealloc(g->run_id, g->alloc * sizeof(int64_t));
		g->session = xrealloc(g->session, g->alloc * sizeof(int64_t));
		g->seed = xrealloc(g->seed, g->alloc * sizeof(int64_t));
		g->started_at = xrealloc(g->started_at, g->alloc * sizeof(char *));
	}
	g->value[g->n] = v;
	g->censored[g->n] = censored != 0;
	g->ncensored += censored != 0;
	g->run_id[g->n] = run;
	g->session[g->n] = session;
	g->seed[g->n] = seed;
	g->started_at[g->n] = xstrdup(started);
	g->n++;
}

static int series_cmp(const struct sel_series *a, const struct sel_series *b)
{
	int c = strcmp(a->dim[DIM_WORKLOAD], b->dim[DIM_WORKLOAD]);
	for (int d = 0; d < SEL_NDIMS && !c; d++)
		c = strcmp(a->dim[d], b->dim[d]);
	return c;
}

/* indexes into a sample set's series (qsort_r context: the set) */
static int series_idx_cmp(const void *x, const void *y, void *set)
{
	const struct sample_set *s = set;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	return series_cmp(&s->series[a], &s->series[b]);
}

/* groups by the rank of their series, then workload and metric (qsort_r
 * context: rank[] of every series) */
static int group_cmp(const void *x, const void *y, void *ctx)
{
	const size_t *rank = ctx;
	const struct sel_group *a = x, *b = y;
	if (rank[a->series] != rank[b->series])
		return rank[a->series] < rank[b->series] ? -1 : 1;
	int c = strcmp(a->workload, b->workload);
	return c ? c : strcmp(a->metric, b->metric);
}

static void sort_set_(struct sample_set *s)
{
	size_t n = s->nseries;
	if (!n)
		return;
	size_t *order = xcalloc(n, sizeof(size_t)), *rank = xcalloc(n, sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(size_t), series_idx_cmp, s);
	for (size_t i = 0; i < n; i++)
		rank[order[i]] = i;
	qsort_r(s->groups, s->ngroups, sizeof(*s->groups), group_cmp, rank);
	for (size_t i = 0; i < s->ngroups; i++)
		s->groups[i].series = rank[s->groups[i].series];
	struct sel_series *ns = xcalloc(n, sizeof(*ns));
	for (size_t i = 0; i < n; i++)
		ns[i] = s->series[order[i]];
	free(s->series);
	s->series = ns;
	free(order);
	free(rank);
}

static void count_sessions(struct sample_set *s)
{
	for (size_t i = 0; i < s->nseries; i++) {
		int64_t *seen = NULL;
		size_t nseen = 0;
		for (size_t g = 0; g < s->ngroups; g++) {
			if (s->groups[g].series != i)
				continue;
			for (size_t k = 0; k < s->groups[g].n; k++) {
				int64_t sid = s->groups[g].session[k];
				size_t j = 0;
				while (j < nseen && seen[j] != sid)
					j++;
				if (j == nseen) {
					seen = xrealloc(seen, (nseen + 1) * sizeof(int64_t));
					seen[nseen++] = sid;
				}
			}
		}
		s->series[i].nsessions = nseen;
		free(seen);
	}
}

void select_where(const struct selector *sel, const struct sel_filter *f, struct db_where *w)
{
	struct db_where_term *t = xcalloc(sel->n + 1, sizeof(*t));
	for (size_t i = 0; i < sel->n; i++) {
		t[i].column = sel->terms[i].key;
		t[i].value = sel->terms[i].value;
	}
	memset(w, 0, sizeof(*w));
	w->terms = t;
	w->nterms = sel->n;
	if (f) {
		w->workload = f->workload;
		w->metric = f->metric;
		w->since = f->since;
		w->sessions = f->sessions;
		w->nsessions = f->nsessions;
	}
}

void select_where_free(struct db_where *w)
{
	free((void *)w->terms);
	memset(w, 0, sizeof(*w));
}

/* the state of select_load() while the rows come */
struct load_ctx {
	struct sample_set *out;
	size_t salloc, galloc;
};

static int load_row(void *ctx, const struct db_result_row *row)
{
	struct load_ctx *lc = ctx;
	struct sample_set *out = lc->out;
	char *dim[SEL_NDIMS];
	dim[DIM_MACHINE] = xstrdup(*row->machine_id ? row->machine_id : row->machine);
	dim[DIM_KERNEL] = xstrfmt("%s\t%s", row->kernel_release, row->config_hash);
	dim[DIM_PREEMPT] = xstrdup(row->preempt);
	dim[DIM_HZ] = xstrdup(row->hz);
	dim[DIM_SCHED_MC] = xstrdup(row->sched_mc);
	dim[DIM_CMDLINE] = xstrdup(row->cmdline);
	dim[DIM_KNOBS] = xstrdup(row->knobs);
	dim[DIM_CLOCK] = row->clock_shift >= 0
		? xstrfmt("%s, shift %d", *row->clock ? row->clock : "real", row->clock_shift)
		: xstrdup(*row->clock ? row->clock : "real");
	dim[DIM_QEMU] = xstrdup(row->qemu_version);
	dim[DIM_SCHED] = xstrdup(row->scheduler);
	dim[DIM_WORKLOAD] = xstrdup(row->run_workload);
	dim[DIM_PARAMS] = xstrdup(row->params);
	size_t si = find_series(out, &lc->salloc, dim, row);
	for (int d = 0; d < SEL_NDIMS; d++)
		free(dim[d]);
	size_t gi = find_group(out, &lc->galloc, si, row);
	group_add(&out->groups[gi], row->value, row->censored, row->run_id, row->session, row->seed,
		  row->started_at);
	out->nrows++;
	return 0;
}

int select_load(struct db *db, const struct selector *sel, const struct sel_filter *f,
		struct sample_set *out, struct strbuf *err)
{
	memset(out, 0, sizeof(*out));
	struct db_where w;
	select_where(sel, f, &w);
	struct load_ctx lc = { .out = out };
	int rc = db_results_select(db, &w, load_row, &lc);
	select_where_free(&w);
	if (rc) {
		strbuf_addstr(err, db_errmsg(db));
		sample_set_free(out);
		return -1;
	}
	sort_set_(out);
	count_sessions(out);
	return 0;
}

void sample_set_free(struct sample_set *s)
{
	for (size_t i = 0; i < s->nseries; i++) {
		for (int d = 0; d < SEL_NDIMS; d++)
			free(s->series[i].dim[d]);
		free(s->series[i].machine);
		free(s->series[i].kernel_release);
		free(s->series[i].config_hash);
		free(s->series[i].kernel_commit);
		free(s->series[i].kernel_describe);
		free(s->series[i].kernel_label);
	}
	for (size_t i = 0; i < s->ngroups; i++) {
		struct sel_group *g = &s->groups[i];
		for (size_t k = 0; k < g->n; k++)
			free(g->started_at[k]);
		free(g->started_at);
		free(g->value);
		free(g->censored);
		free(g->run_id);
		free(g->seed);
		free(g->session);
		free(g->workload);
		free(g->metric);
		free(g->unit);
	}
	free(s->series);
	free(s->groups);
	memset(s, 0, sizeof(*s));
}

int sel_series_match(const struct sel_series *a, const struct sel_series *b, unsigned mask)
{
	for (int d = 0; d < SEL_NDIMS; d++)
		if ((mask & (1u << d)) && strcmp(a->dim[d], b->dim[d]))
			return 0;
	return 1;
}

/* ---- labels ----------------------------------------------------------- */

static char *json_value_text(const json_t *v)
{
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	char *r = xstrdup(s ? s : "?");
	free(s);
	return r;
}

char *sel_json_label(const char *json, const char *const *others, size_t nothers)
{
	json_t *o = json_loads(json ? json : "", JSON_DECODE_ANY, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		return xstrdup(json ? json : "");
	}
	json_t **oth = xcalloc(nothers + 1, sizeof(json_t *));
	for (size_t i = 0; i < nothers; i++)
		oth[i] = json_loads(others[i] ? others[i] : "", JSON_DECODE_ANY, NULL);
	struct strbuf sb = STRBUF_INIT;
	struct strvec unset = STRVEC_INIT;
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) {
		if (!strcmp(key, "type"))
			continue;
		int same = nothers > 0;
		for (size_t i = 0; i < nothers && same; i++) {
			json_t *w = json_is_object(oth[i]) ? json_object_get(oth[i], key) : NULL;
			same = w && json_equal(v, w);
		}
		if (same)
			continue;
		char *t = json_value_text(v);
		strbuf_addf(&sb, "%s%s=%s", sb.len ? " " : "", key, t);
		free(t);
	}
	/* keys the others have and this one lacks */
	for (size_t i = 0; i < nothers; i++) {
		if (!json_is_object(oth[i]))
			continue;
		json_object_foreach(oth[i], key, v) {
			size_t u = 0;
			while (u < unset.nr && strcmp(unset.v[u], key))
				u++;
			if (strcmp(key, "type") && !json_object_get(o, key) && u == unset.nr) {
				strvec_push(&unset, key);
				strbuf_addf(&sb, "%s%s=(unset)", sb.len ? " " : "", key);
			}
		}
	}
	strvec_clear(&unset);
	for (size_t i = 0; i < nothers; i++)
		json_decref(oth[i]);
	free(oth);
	json_decref(o);
	return strbuf_detach(&sb, NULL);
}

/* ---- histograms ------------------------------------------------------- */

static int hist_name_cmp(const void *x, const void *y)
{
	return strcmp(((const struct sel_hist *)x)->name, ((const struct sel_hist *)y)->name);
}

/* the state of select_load_hists() while the rows come */
struct hists_ctx {
	struct sel_hist *hs;
	size_t nh;
	struct strbuf *err;
};

static int hist_row(void *ctx, int64_t run_id, const char *name, const char *unit,
		    const char *data)
{
	struct hists_ctx *hc = ctx;
	json_error_t je;
	json_t *j = json_loads(data, 0, &je);
	struct hist h;
	if (!j || hist_from_json(&h, j)) {
		json_decref(j);
		strbuf_addf(hc->err, "histogram %s of run %lld is malformed", name, (long long)run_id);
		return 1;
	}
	json_decref(j);
	struct sel_hist *hs = hc->hs;
	size_t k = 0;
	while (k < hc->nh && strcmp(hs[k].name, name))
		k++;
	if (k == hc->nh) {
		hs = hc->hs = xrealloc(hs, (hc->nh + 1) * sizeof(*hs));
		hs[k].name = xstrdup(name);
		hs[k].unit = xstrdup(unit);
		hs[k].nruns = 1;
		hs[k].incompatible = 0;
		hs[k].h = h;
		hc->nh++;
		return 0;
	}
	if (hist_merge(&hs[k].h, &h))
		hs[k].incompatible = 1;
	else
		hs[k].nruns++;
	hist_free(&h);
	return 0;
}

int select_load_hists(struct db *db, const int64_t *run_id, size_t n, struct sel_hist **out,
		      size_t *nout, struct strbuf *err)
{
	*out = NULL;
	*nout = 0;
	/* the same run may be listed more than once (one per metric) */
	int64_t *ids = xcalloc(n + 1, sizeof(int64_t));
	size_t nids = 0;
	for (size_t i = 0; i < n; i++) {
		int dup = 0;
		for (size_t j = 0; j < i && !dup; j++)
			dup = run_id[j] == run_id[i];
		if (!dup)
			ids[nids++] = run_id[i];
	}
	struct hists_ctx hc = { .err = err };
	int rc = db_results_hists(db, ids, nids, hist_row, &hc);
	free(ids);
	if (rc) {
		if (rc < 0)
			strbuf_addstr(err, db_errmsg(db));
		sel_hists_free(hc.hs, hc.nh);
		return -1;
	}
	if (hc.nh)
		qsort(hc.hs, hc.nh, sizeof(*hc.hs), hist_name_cmp);
	*out = hc.hs;
	*nout = hc.nh;
	return 0;
}

void sel_hists_free(struct sel_hist *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].unit);
		hist_free(&h[i].h);
	}
	free(h);
}

unsigned sel_label_mask(unsigned mask, const struct sample_set *const *sets, size_t nsets)
{
	unsigned both = (1u << DIM_PREEMPT) | (1u << DIM_CMDLINE);
	if ((mask & both) != both)
		return mask;
	const char *first = NULL;
	for (size_t k = 0; k < nsets; k++)
		for (size_t i = 0; i < sets[k]->nseries; i++) {
			const char *c = sets[k]->series[i].dim[DIM_CMDLINE];
			if (!first)
				first = c;
			else if (!cmdline_same_but_preempt(first, c))
				return mask;
		}
	return mask & ~(1u << DIM_CMDLINE);
}
