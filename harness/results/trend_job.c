/*
 * `schedlab trend` as a job (trend.h): load one metric of a selection, check
 * that it is one series, build its trend, and its JSON document. The command
 * prints it; `schedlab serve`'s trend page shows the same job, so a page and
 * the command never disagree on a point or a change point.
 */
#include "harness/results/trend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/machine_sessions.h"
#include "db/results.h"
#include "harness/results/compare.h"

int trend_series_from_git(const struct sel_series *se)
{
	return se->kernel_commit && *se->kernel_commit;
}

int trend_kernel_changed(const struct trend *tr, size_t i)
{
	const char *a = tr->pt[i - 1].kernel, *b = tr->pt[i].kernel;
	return a && b && strcmp(a, b);
}

char *trend_kernels_text(const struct trend *tr)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, tr->np && tr->pt[0].kernel ? tr->pt[0].kernel : "?");
	for (size_t b = 0; b < tr->nbreaks; b++)
		if (trend_kernel_changed(tr, tr->breaks[b]))
			strbuf_addf(&sb, " -> %s", tr->pt[tr->breaks[b]].kernel);
	return strbuf_detach(&sb, NULL);
}

int trend_joinable(struct db *db, const struct sample_set *s)
{
	/* kernels from git count as one kernel whatever their commit, as the
	   robot pools them (docs/alerts.md): a nightly on a moving branch;
	   other kernels may differ where the model changes with them (Debian's
	   6.1 RT, full, to its 6.12 RT, lazy by default): never two kernels of
	   one model */
	for (int d = 0; d < SEL_NDIMS; d++)
		for (size_t i = 0; d != DIM_PREEMPT && i < s->nseries; i++)
			for (size_t j = i + 1; j < s->nseries; j++) {
				const struct sel_series *a = &s->series[i], *b = &s->series[j];
				if (!strcmp(a->dim[d], b->dim[d]))
					continue;
				int git = trend_series_from_git(a) && trend_series_from_git(b);
				if (d == DIM_KERNEL &&
				    (git || strcmp(a->dim[DIM_PREEMPT], b->dim[DIM_PREEMPT])))
					continue;
				return 0;
			}
	int64_t *sid = NULL;
	size_t *owner = NULL, n = 0;
	int ok = 1;
	for (size_t g = 0; g < s->ngroups && ok; g++) {
		const struct sel_group *gr = &s->groups[g];
		for (size_t k = 0; k < gr->n && ok; k++) {
			size_t j = 0;
			while (j < n && sid[j] != gr->session[k])
				j++;
			if (j < n) {
				ok = owner[j] == gr->series;
				continue;
			}
			sid = xrealloc(sid, (n + 1) * sizeof(*sid));
			owner = xrealloc(owner, (n + 1) * sizeof(*owner));
			sid[n] = gr->session[k];
			owner[n++] = gr->series;
		}
	}
	if (ok && n) {
		char **tag = xcalloc(n, sizeof(*tag));
		db_results_tags(db, sid, n, tag);
		for (size_t i = 0; i < n; i++) {
			ok &= tag[i] && !strncmp(tag[i], "nightly-", 8);
			free(tag[i]);
		}
		free(tag);
	}
	free(sid);
	free(owner);
	return ok && n;
}

int trend_job_run(struct db *db, const char *metric, const char *where, const char *since,
		  const struct cp_options *o, struct trend_job *job, struct strbuf *err)
{
	memset(job, 0, sizeof(*job));
	job->better = "none";
	const char *dot = metric ? strchr(metric, '.') : NULL;
	if (!dot || dot == metric || !dot[1]) {
		strbuf_addstr(err, "--metric WORKLOAD.METRIC is required (e.g. "
				   "cyclictest.lat_p99_us)");
		return -1;
	}
	char *wl = xstrfmt("%.*s", (int)(dot - metric), metric);
	struct selector sel;
	struct sel_filter f = { .workload = wl, .metric = dot + 1, .since = since };
	int rc = 0;
	if (select_from_text(db, where, &sel, err)) {
		struct strbuf m = STRBUF_INIT;
		strbuf_addf(&m, "--where: %s", err->buf);
		strbuf_reset(err);
		strbuf_addstr(err, m.buf);
		strbuf_release(&m);
		rc = -1;
	} else {
		/* a selector that names the machine: its sessions first, by key
		   (db/machine_sessions.h); the rows are the same, read from the
		   machine's sessions instead of from every machine's */
		const char **names = xcalloc(sel.n + 1, sizeof(*names));
		size_t nn = 0;
		int all = 1;
		for (size_t i = 0; i < sel.n; i++)
			if (!strcmp(sel.terms[i].key, "machine")) {
				all &= *sel.terms[i].value != 0;
				names[nn++] = sel.terms[i].value;
			}
		int64_t *ids = NULL;
		size_t nids = 0;
		if (nn && all && !db_machine_sessions(db, names, nn, &ids, &nids)) {
			f.sessions = ids;
			f.nsessions = nids;
		}
		free(names);
		if (select_load(db, &sel, &f, &job->set, err))
			rc = -1;
		free(ids);
		select_free(&sel);
	}
	free(wl);
	if (!rc && !job->set.nrows) {
		strbuf_addf(err, "no results for %s%s%s%s%s", metric, where ? " where " : "",
			    where ? where : "", since ? " since " : "", since ? since : "");
		rc = -1;
	}
	if (!rc && job->set.nseries > 1) {
		if (trend_joinable(db, &job->set))
			job->joined = 1;
		else
			rc = 1;
	}
	if (rc)
		return rc;

	/* one group (or the groups of one configuration across changes of its
	   preemption model): per session, the median of its repetitions */
	const struct sample_set *set = &job->set;
	const struct sel_group *g = &set->groups[0];
	const struct sel_group **gs = xcalloc(set->ngroups + 1, sizeof(*gs));
	const char **models = xcalloc(set->ngroups + 1, sizeof(*models));
	const char **kernels = xcalloc(set->ngroups + 1, sizeof(*kernels));
	for (size_t i = 0; i < set->ngroups; i++) {
		const struct sel_series *se = &set->series[set->groups[i].series];
		gs[i] = &set->groups[i];
		models[i] = se->dim[DIM_PREEMPT];
		/* kernels from git are one kernel: their points are not labelled */
		kernels[i] = trend_series_from_git(se) ? NULL : se->kernel_release;
	}
	int brc = job->joined
			  ? trend_build_models(db, gs, kernels, models, set->ngroups, o, &job->tr, err)
			  : trend_build(db, &g, NULL, 1, o, &job->tr, err);
	free(gs);
	free(models);
	free(kernels);
	if (brc)
		return -1;
	job->built = 1;
	job->better = g->better == SEL_BETTER_LOWER ? "lower"
		      : g->better == SEL_BETTER_HIGHER ? "higher" : "none";
	for (size_t i = 0; job->joined && i < set->nseries; i++) {
		size_t j = 0;
		while (j < i && strcmp(set->series[j].dim[DIM_KERNEL], set->series[i].dim[DIM_KERNEL]))
			j++;
		job->nkernels += j == i;
	}
	return 0;
}

void trend_job_free(struct trend_job *job)
{
	if (job->built)
		trend_free(&job->tr);
	sample_set_free(&job->set);
	memset(job, 0, sizeof(*job));
}

static const char *model_or_none(const char *m)
{
	return m && *m ? m : "(none)";
}

char *trend_models_text(const struct trend *tr)
{
	struct strbuf sb = STRBUF_INIT;
	const char *m = tr->np ? tr->pt[0].model : NULL;
	strbuf_addstr(&sb, model_or_none(m));
	for (size_t b = 0; b < tr->nbreaks; b++)
		strbuf_addf(&sb, " -> %s", model_or_none(tr->pt[tr->breaks[b]].model));
	return strbuf_detach(&sb, NULL);
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *trend_job_json(const struct trend_job *job, const char *metric,
		       const struct cp_options *o)
{
	const struct trend *tr = &job->tr;
	const struct trend_point *pt = tr->pt;
	const struct sel_series *se = &job->set.series[0];
	const struct sel_group *g = &job->set.groups[0];
	json_t *ser = json_object(), *points = json_array(), *cpj = json_array();
	for (int d = 0; d < SEL_NDIMS; d++) {
		char *txt = sel_series_dim_text(se, (enum sel_dim)d);
		json_object_set_new(ser, sel_dim_name(d), json_string(txt));
		free(txt);
	}
	if (job->joined) {
		char *mt = trend_models_text(tr);
		json_object_set_new(ser, "preempt", json_string(mt));
		free(mt);
	}
	json_t *brj = json_array();
	for (size_t b = 0; b < tr->nbreaks; b++) {
		size_t i = tr->breaks[b];
		json_t *bj = json_pack("{s:I,s:I,s:s,s:s,s:s}", "index", (json_int_t)i, "session",
				       (json_int_t)pt[i].session, "from",
				       model_or_none(pt[i - 1].model), "to", model_or_none(pt[i].model),
				       "cause", "effective preemption model changed");
		if (trend_kernel_changed(tr, i)) {
			json_object_set_new(bj, "kernel_from", json_string(pt[i - 1].kernel));
			json_object_set_new(bj, "kernel_to", json_string(pt[i].kernel));
		}
		json_array_append_new(brj, bj);
	}
	json_object_set_new(ser, "machine_id", json_string(se->dim[DIM_MACHINE]));
	json_object_set_new(ser, "kernel_release", json_string(se->kernel_release));
	json_object_set_new(ser, "config_hash", json_string(se->config_hash));
	for (size_t i = 0; i < tr->np; i++)
		json_array_append_new(
			points, json_pack("{s:I,s:o,s:s,s:I,s:o,s:I,s:b}", "session",
					  (json_int_t)pt[i].session, "tag",
					  pt[i].tag ? json_string(pt[i].tag) : json_null(),
					  "started_at", pt[i].started_at, "n",
					  (json_int_t)pt[i].n, "value", jnum(pt[i].value),
					  "censored", (json_int_t)pt[i].ncensored, "bound",
					  pt[i].bound));
	for (size_t k = 0; k < tr->ncp; k++) {
		const struct change_point *cp = &tr->cps[k];
		json_array_append_new(
			cpj, json_pack("{s:I,s:I,s:s,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
				       "index", (json_int_t)cp->index, "session",
				       (json_int_t)pt[cp->index].session, "started_at",
				       pt[cp->index].started_at, "n_before",
				       (json_int_t)cp->n_before, "n_after",
				       (json_int_t)cp->n_after, "mean_before",
				       jnum(cp->mean_before), "mean_after",
				       jnum(cp->mean_after), "sd_before", jnum(cp->sd_before),
				       "sd_after", jnum(cp->sd_after), "change_pct",
				       jnum(100 * cp->rel_change), "magnitude",
				       jnum(cp->magnitude), "pvalue", jnum(cp->pvalue)));
	}
	return json_pack("{s:i,s:s,s:s,s:s,s:s,s:o,s:{s:f,s:I},s:o,s:o,s:o}",
			 "schedlab_format", 1, "command", "trend", "metric", metric, "unit",
			 g->unit ? g->unit : "", "better", job->better, "series", ser, "options", "p",
			 o->max_pvalue, "window", (json_int_t)o->window, "points", points,
			 "change_points", cpj, "breaks", brj);
}
