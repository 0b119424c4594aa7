/*
 * metric_set: the container parse() fills, and wl_exec helpers.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "workloads/workload.h"

void metric_set_init(struct metric_set *ms)
{
	memset(ms, 0, sizeof(*ms));
	strbuf_init(&ms->note, 0);
}

void metric_set_note(struct metric_set *ms, const char *fmt, ...)
{
	va_list ap;
	if (ms->note.len)
		strbuf_addstr(&ms->note, "; ");
	va_start(ap, fmt);
	strbuf_vaddf(&ms->note, fmt, ap);
	va_end(ap);
}

void metric_set_release(struct metric_set *ms)
{
	free(ms->m);
	for (size_t i = 0; i < ms->nhist; i++)
		hist_free(&ms->hist[i].h);
	free(ms->hist);
	json_decref(ms->extra);
	strbuf_release(&ms->note);
	memset(ms, 0, sizeof(*ms));
	strbuf_init(&ms->note, 0);
}

void metric_add_note(struct metric_set *ms, const char *name, double value, const char *unit,
		     enum better better, const char *note)
{
	if (isnan(value) || isinf(value))
		return; /* an unknown value is absent, not stored as a number */
	if (ms->nr == ms->alloc) {
		ms->alloc = ms->alloc ? ms->alloc * 2 : 16;
		ms->m = xrealloc(ms->m, ms->alloc * sizeof(*ms->m));
	}
	struct metric *m = &ms->m[ms->nr++];
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->value = value;
	m->unit = unit;
	m->better = better;
	m->note = note;
}

void metric_add(struct metric_set *ms, const char *name, double value, const char *unit,
		enum better better)
{
	metric_add_note(ms, name, value, unit, better, NULL);
}

void metric_add_bound(struct metric_set *ms, const char *name, double value, const char *unit,
		      enum better better, const char *note)
{
	size_t n = ms->nr;
	metric_add_note(ms, name, value, unit, better, note);
	if (ms->nr > n)
		ms->m[n].censored = 1;
}

enum hist_pct metric_add_hist_pct(struct metric_set *ms, const char *name, const struct hist *h,
				  double p, double scale, const char *unit)
{
	double v;
	enum hist_pct r = hist_percentile(h, p, &v);
	if (r == HIST_OK)
		metric_add(ms, name, v * scale, unit, BETTER_LOWER);
	else if (r == HIST_IN_OVERFLOW)
		metric_add_bound(ms, name, v * scale, unit, BETTER_LOWER, METRIC_NOTE_OVERFLOW);
	return r;
}

const struct metric *metric_find(const struct metric_set *ms, const char *name)
{
	for (size_t i = 0; i < ms->nr; i++)
		if (!strcmp(ms->m[i].name, name))
			return &ms->m[i];
	return NULL;
}

void metric_add_hist(struct metric_set *ms, const char *name, const char *unit, struct hist *h)
{
	if (ms->nhist == ms->ahist) {
		ms->ahist = ms->ahist ? ms->ahist * 2 : 4;
		ms->hist = xrealloc(ms->hist, ms->ahist * sizeof(*ms->hist));
	}
	struct named_hist *nh = &ms->hist[ms->nhist++];
	snprintf(nh->name, sizeof(nh->name), "%s", name);
	nh->unit = unit;
	nh->h = *h;
	memset(h, 0, sizeof(*h));
}

void wl_exec_init(struct wl_exec *ex)
{
	memset(ex, 0, sizeof(*ex));
}

void wl_exec_release(struct wl_exec *ex)
{
	strvec_clear(&ex->argv);
	strvec_clear(&ex->files);
	json_decref(ex->inputs);
	memset(ex, 0, sizeof(*ex));
}

const struct hist *metric_find_hist(const struct metric_set *ms, const char *name)
{
	for (size_t i = 0; name && i < ms->nhist; i++)
		if (!strcmp(ms->hist[i].name, name))
			return &ms->hist[i].h;
	return NULL;
}

json_t *native_output(const char *tool, const struct wl_output *out, struct strbuf *err)
{
	json_error_t je;
	if (out->exit_code != 0) {
		strbuf_addf(err, "%s exited with status %d: %s", tool, out->exit_code,
			    out->err && *out->err ? out->err : "(no message)");
		return NULL;
	}
	json_t *o = json_loads(out->out ? out->out : "", 0, &je);
	if (!o || !json_is_object(o)) {
		strbuf_addf(err, "%s output is not a JSON object (line %d: %s)", tool, je.line,
			    je.text);
		json_decref(o);
		return NULL;
	}
	return o;
}

void native_add_metrics(struct metric_set *ms, const json_t *o, const struct native_metric *defs,
			const char *bound_prefix, const char *bound_note)
{
	for (const struct native_metric *d = defs; d->key; d++) {
		const json_t *v = json_object_get(o, d->key);
		if (!json_is_number(v))
			continue;
		const struct hist *h = metric_find_hist(ms, d->hist);
		double pv;
		if (h && hist_percentile(h, d->pct, &pv) == HIST_IN_OVERFLOW)
			metric_add_bound(ms, d->key, json_number_value(v), d->unit, d->better,
					 METRIC_NOTE_OVERFLOW);
		else if (bound_prefix && !strncmp(d->key, bound_prefix, strlen(bound_prefix)))
			metric_add_bound(ms, d->key, json_number_value(v), d->unit, d->better,
					 bound_note);
		else
			metric_add(ms, d->key, json_number_value(v), d->unit, d->better);
	}
}
