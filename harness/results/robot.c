/*
 * The regression robot's judgement of a nightly session (robot.h). Values
 * are pooled per series *without its kernel* (a nightly on a moving git ref
 * boots another commit every night: those nights are one series to the
 * robot), per workload and metric, and judged by analysis/verdict.c with
 * the options `check` uses: the bootstrap CI of the change beyond 0 and the
 * change beyond the noise threshold. A series whose effective preemption
 * model changed (the same key but its preempt) is followed across the
 * change (find_breaks): not judged the night of it, then only against the
 * sessions from it on.
 */
#include "harness/results/robot.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/verdict.h"
#include "db/culprit.h"
#include "db/night_store.h"

#define ROBOT_ALPHA 0.05

void robot_options_default(struct robot_options *o)
{
	memset(o, 0, sizeof(*o));
	o->baseline_n = 7;
	cmp_options_default(&o->cmp);
}

void robot_result_free(struct robot_result *r)
{
	db_session_brief_free(&r->s);
	free(r->baseline);
	free(r->groups);
	strvec_clear(&r->lines);
	strvec_clear(&r->undecided);
	strvec_clear(&r->breaks);
	free(r->no_baseline);
	free(r->events);
	for (size_t i = 0; i < r->nverdicts; i++) {
		free(r->verdicts[i].workload);
		free(r->verdicts[i].metric);
		free(r->verdicts[i].unit);
		free(r->verdicts[i].series);
	}
	free(r->verdicts);
	memset(r, 0, sizeof(*r));
}

int robot_kind_sign(const char *kind)
{
	return kind && !strcmp(kind, "improvement") ? -1 : 1;
}

/* ---- series without their kernel ---------------------------------------- */

/* the identity of a series for the robot: every dimension but the kernel's
 * commit (a kernel from git) or with it (release and config otherwise) */
static char *series_key(const struct sel_series *s)
{
	json_t *o = json_object();
	for (int d = 0; d < SEL_NDIMS; d++) {
		const char *v = s->dim[d] ? s->dim[d] : "";
		if (d == DIM_KERNEL && s->kernel_commit && *s->kernel_commit)
			v = "git";
		/* no qemu (another target, a row before schema 16), no
		 * scheduler (a plan without the axis, schema 19): the key an
		 * alert of an older store has */
		if ((d == DIM_QEMU || d == DIM_SCHED) && !*v)
			continue;
		json_object_set_new(o, sel_dim_name((enum sel_dim)d), json_string(v));
	}
	char *t = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(o);
	return t;
}

/* a series key without its preemption model: the same configuration
 * before and after a change of the kernel's default mode (NULL when the
 * key is no JSON object: an alert of an older store) */
static char *key_without_model(const char *key)
{
	json_t *o = json_loads(key ? key : "", 0, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, sel_dim_name(DIM_PREEMPT), json_string(""));
	char *t = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(o);
	return t;
}

static const char *model_name(const char *m)
{
	return m && *m ? m : "unknown";
}

/* a selector of the series (bisect's --where): the dimensions the plan
 * sets, never the machine or the kernel, which the bisection changes */
static char *series_where(const struct sel_series *s)
{
	static const enum sel_dim dims[] = { DIM_PREEMPT, DIM_HZ, DIM_SCHED_MC, DIM_KNOBS,
					     DIM_WORKLOAD, DIM_PARAMS };
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		const char *v = s->dim[dims[i]];
		if (!v || !*v)
			continue;
		strbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", sel_dim_key(dims[i]), v);
	}
	return strbuf_detach(&sb, NULL);
}

/* what a person reads: preempt=full hz=250 knobs... and the parameters
 * that tell the series from the other series of its workload in `set`
 * (all of them when it is NULL) */
static char *series_label(const struct sel_series *s, const struct sample_set *set)
{
	struct strbuf sb = STRBUF_INIT;
	if (s->dim[DIM_PREEMPT] && *s->dim[DIM_PREEMPT])
		strbuf_addf(&sb, "preempt=%s", s->dim[DIM_PREEMPT]);
	if (s->dim[DIM_HZ] && *s->dim[DIM_HZ])
		strbuf_addf(&sb, "%shz=%s", sb.len ? " " : "", s->dim[DIM_HZ]);
	if (s->dim[DIM_CLOCK] && *s->dim[DIM_CLOCK] && strcmp(s->dim[DIM_CLOCK], "real"))
		strbuf_addf(&sb, "%sclock=%s", sb.len ? " " : "", s->dim[DIM_CLOCK]);
	const char *k = s->dim[DIM_KNOBS];
	if (k && *k && strcmp(k, "{}")) {
		char *l = sel_json_label(k, NULL, 0);
		strbuf_addf(&sb, "%sknobs: %s", sb.len ? " " : "", l);
		free(l);
	}
	const char **others = NULL;
	size_t nothers = 0;
	for (size_t i = 0; set && i < set->nseries; i++) {
		const struct sel_series *o = &set->series[i];
		if (o == s || !o->dim[DIM_WORKLOAD] || !s->dim[DIM_WORKLOAD] ||
		    strcmp(o->dim[DIM_WORKLOAD], s->dim[DIM_WORKLOAD]))
			continue;
		others = xrealloc(others, (nothers + 1) * sizeof(*others));
		others[nothers++] = o->dim[DIM_PARAMS] ? o->dim[DIM_PARAMS] : "{}";
	}
	const char *params = s->dim[DIM_PARAMS] ? s->dim[DIM_PARAMS] : "{}";
	/* a series alone of its workload: its parameters say nothing */
	char *p = set && !nothers ? xstrdup("") : sel_json_label(params, others, nothers);
	free(others);
	if (*p)
		strbuf_addf(&sb, "%s%s", sb.len ? " " : "", p);
	free(p);
	if (s->machine && *s->machine)
		strbuf_addf(&sb, "%son %s", sb.len ? " " : "", s->machine);
	return strbuf_detach(&sb, NULL);
}

static int metric_wanted(const struct robot_options *o, const char *wl, const char *m)
{
	if (!o->metrics || !o->metrics[0])
		return 1;
	size_t lw = strlen(wl);
	for (const char *const *p = o->metrics; *p; p++)
		if (!strcmp(*p, m) || (!strncmp(*p, wl, lw) && (*p)[lw] == '.' &&
				       !strcmp(*p + lw + 1, m)))
			return 1;
	return 0;
}

static int series_traced(const struct sel_series *s)
{
	return s->dim[DIM_PARAMS] && strstr(s->dim[DIM_PARAMS], "\"evidence\"");
}

/* a loaded set of sessions with each series' key */
struct pool {
	struct sample_set set;
	char **key;       /* per series */
	char **mkey;      /* per series: the key without the preemption model */
	int loaded;
};

static void pool_free(struct pool *p)
{
	if (p->loaded) {
		for (size_t i = 0; i < p->set.nseries; i++) {
			free(p->key[i]);
			free(p->mkey[i]);
		}
		free(p->key);
		free(p->mkey);
		sample_set_free(&p->set);
	}
	memset(p, 0, sizeof(*p));
}

static int pool_load(struct db *db, const int64_t *sid, size_t n, struct pool *p,
		     struct strbuf *err)
{
	memset(p, 0, sizeof(*p));
	struct selector sel;
	if (select_from_text(db, "", &sel, err))
		return -1;
	struct sel_filter f = { .sessions = sid, .nsessions = n };
	int rc = select_load(db, &sel, &f, &p->set, err);
	select_free(&sel);
	if (rc)
		return -1;
	p->loaded = 1;
	p->key = xcalloc(p->set.nseries + 1, sizeof(*p->key));
	p->mkey = xcalloc(p->set.nseries + 1, sizeof(*p->mkey));
	for (size_t i = 0; i < p->set.nseries; i++) {
		p->key[i] = series_key(&p->set.series[i]);
		p->mkey[i] = key_without_model(p->key[i]);
	}
	return 0;
}

/* the values (and censored flags) of (key, workload, metric) pooled over
 * every series of p with that key */
struct vals {
	double *v;
	unsigned char *c;
	size_t n, alloc;
	const struct sel_group *any;   /* one of the groups (unit, better) */
};

static void vals_collect(const struct pool *p, const char *key, const char *wl,
			 const char *metric, int64_t after, struct vals *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t g = 0; g < p->set.ngroups; g++) {
		const struct sel_group *gr = &p->set.groups[g];
		if (strcmp(gr->workload, wl) || strcmp(gr->metric, metric) ||
		    strcmp(p->key[gr->series], key))
			continue;
		out->any = gr;
		for (size_t i = 0; i < gr->n; i++) {
			if (gr->session[i] <= after)
				continue;
			if (out->n == out->alloc) {
				out->alloc = out->alloc ? 2 * out->alloc : 16;
				out->v = xrealloc(out->v, out->alloc * sizeof(*out->v));
				out->c = xrealloc(out->c, out->alloc);
			}
			out->v[out->n] = gr->value[i];
			out->c[out->n++] = gr->censored ? gr->censored[i] : 0;
		}
	}
}

static void vals_free(struct vals *v)
{
	free(v->v);
	free(v->c);
	memset(v, 0, sizeof(*v));
}

/* the verdict of B against A for one series and metric (A's values of
 * sessions after `after` only, 0: all): 0 with *v, 1 when a side has too
 * few values (or the metric has no direction), -1 on error */
static int judge(const struct pool *a, const struct pool *b, const char *key, const char *wl,
		 const char *metric, int64_t after, const struct robot_options *o,
		 struct verdict *v)
{
	struct vals va, vb;
	vals_collect(a, key, wl, metric, after, &va);
	vals_collect(b, key, wl, metric, 0, &vb);
	int rc = 1;
	const struct sel_group *g = vb.any ? vb.any : va.any;
	size_t least = compare_min_reps(&o->cmp);
	if (g && g->better != SEL_BETTER_NONE && va.n >= least && vb.n >= least) {
		struct verdict_options vo;
		verdict_options_default(&vo, g->better == SEL_BETTER_LOWER
						     ? VERDICT_LOWER_IS_BETTER
						     : VERDICT_HIGHER_IS_BETTER);
		vo.threshold_pct = o->cmp.threshold_pct;
		vo.centre = compare_centre_for(metric, g->unit, o->cmp.centre);
		vo.source = o->cmp.source;
		if (o->cmp.resamples)
			vo.resamples = o->cmp.resamples;
		if (o->cmp.seed)
			vo.seed = o->cmp.seed;
		rc = verdict_compare_censored(va.v, va.c, va.n, vb.v, vb.c, vb.n, &vo, v) ? -1 : 0;
		/* an alert is a decision: the bootstrap CI of a few values is not
		   enough alone, the rank test must agree (3 against 3 never can:
		   p >= 0.1), else it is inconclusive and says so; exact data
		   (identical repeats) bring their own p (verdict.h) */
		if (!rc && (v->kind == VERDICT_WORSE || v->kind == VERDICT_BETTER) &&
		    !(v->p < ROBOT_ALPHA)) {
			v->kind = VERDICT_INCONCLUSIVE;
			v->reason = "beyond the threshold, but the rank test is not significant";
		}
	}
	vals_free(&va);
	vals_free(&vb);
	return rc;
}

/* a metric left inconclusive tonight, for the summary's "undecided" line;
 * v NULL: too few values */
static void undecided(struct robot_result *r, const struct sel_series *ser,
		      const struct sample_set *set, const struct sel_group *gr,
		      const struct verdict *v)
{
	struct strbuf sb = STRBUF_INIT;
	char *lab = series_label(ser, set);
	strbuf_addf(&sb, "%s.%s%s%s%s", gr->workload, gr->metric, *lab ? " (" : "", lab,
		    *lab ? ")" : "");
	free(lab);
	if (!v)
		strbuf_addstr(&sb, " (too few values)");
	else if (v->censored)
		strbuf_addstr(&sb, " (values beyond the measurable range)");
	else if (v->reps_needed)
		strbuf_addf(&sb, " ~%zu", v->reps_needed);
	strvec_push(&r->undecided, sb.buf);
	strbuf_release(&sb);
}

/* "+20.1% [19.5, 20.7], p=0.0022" */
static void change_text(struct strbuf *sb, const struct verdict *v)
{
	if (!isfinite(v->change_pct)) {
		strbuf_addstr(sb, "change undefined");
		return;
	}
	strbuf_addf(sb, "%+.1f%%", v->change_pct);
	if (isfinite(v->ci_lo_pct) && isfinite(v->ci_hi_pct))
		strbuf_addf(sb, " [%+.1f, %+.1f]", v->ci_lo_pct, v->ci_hi_pct);
	if (v->exact && v->deterministic && v->kind != VERDICT_NO_CHANGE)
		strbuf_addstr(sb, ", exact data");
	else if (isfinite(v->p))
		strbuf_addf(sb, ", p=%.2g%s", v->p, v->exact ? " (exact data)" : "");
}

static char *sessions_json(const int64_t *s, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)s[i]));
	char *t = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return t;
}

static int64_t *sessions_parse(const char *json, size_t *n)
{
	*n = 0;
	json_t *a = json_loads(json ? json : "[]", 0, NULL);
	int64_t *out = calloc(json_is_array(a) ? json_array_size(a) + 1 : 1, sizeof(*out));
	for (size_t i = 0; json_is_array(a) && i < json_array_size(a); i++)
		if (json_is_integer(json_array_get(a, i)))
			out[(*n)++] = json_integer_value(json_array_get(a, i));
	json_decref(a);
	return out;
}

static void add_group(struct robot_result *r, int64_t g)
{
	for (size_t i = 0; i < r->ngroups; i++)
		if (r->groups[i] == g)
			return;
	r->groups = xrealloc(r->groups, (r->ngroups + 1) * sizeof(*r->groups));
	r->groups[r->ngroups++] = g;
}

static void add_event(struct robot_result *r, int64_t alert, const char *what)
{
	r->events = xrealloc(r->events, (r->nevents + 1) * sizeof(*r->events));
	r->events[r->nevents++] = (struct robot_event){ alert, what };
}

/* the verdict of a metric tonight (v NULL: too few values) */
static struct robot_verdict *add_verdict(struct robot_result *r, const struct sel_series *ser,
					 const struct sample_set *set, const struct sel_group *gr,
					 const struct verdict *v, const char *what, int64_t from)
{
	r->verdicts = xrealloc(r->verdicts, (r->nverdicts + 1) * sizeof(*r->verdicts));
	struct robot_verdict *d = &r->verdicts[r->nverdicts++];
	memset(d, 0, sizeof(*d));
	d->workload = xstrdup(gr->workload);
	d->metric = xstrdup(gr->metric);
	d->unit = gr->unit ? xstrdup(gr->unit) : NULL;
	d->series = series_label(ser, set);
	d->verdict = what ? what : v ? verdict_kind_name(v->kind) : "too few values";
	d->a = v ? v->centre_a : NAN;
	d->b = v ? v->centre_b : NAN;
	d->change_pct = v ? v->change_pct : NAN;
	d->ci_lo = v ? v->ci_lo_pct : NAN;
	d->ci_hi = v ? v->ci_hi_pct : NAN;
	d->p = v ? v->p : NAN;
	d->na = v ? v->n_a : 0;
	d->nb = v ? v->n_b : 0;
	d->from = from;
	return d;
}

/* the group of a change that came in between sessions good and bad */
static int64_t group_for(struct db *db, const struct robot_result *r, int64_t good,
			 const struct robot_options *o, struct strbuf *err)
{
	struct db_session_brief gb;
	if (db_session_brief(db, good, &gb)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	struct db_alert_group g = { 0 };
	g.plan = r->s.plan;
	g.machine_id = r->s.machine_id;
	g.good_session = good;
	g.bad_session = r->s.id;
	g.ncommits = -1;
	char *key;
	if (gb.commit && r->s.commit && strcmp(gb.commit, r->s.commit)) {
		g.git_dir = r->s.git_dir;
		g.good_commit = gb.commit;
		g.bad_commit = r->s.commit;
		key = xstrfmt("%s..%s", gb.commit, r->s.commit);
		if (o->count_commits && g.git_dir)
			g.ncommits = o->count_commits(o->ctx, g.git_dir, gb.commit, r->s.commit);
	} else {
		key = xstrfmt("session %lld..%lld", (long long)good, (long long)r->s.id);
	}
	g.range_key = key;
	int existed;
	int64_t id = db_alert_group_find_or_add(db, &g, &existed);
	if (id < 0)
		strbuf_addstr(err, db_errmsg(db));
	free(key);
	db_session_brief_free(&gb);
	return id;
}

/* the range of a group for the summary */
static void range_text(struct strbuf *sb, struct db *db, int64_t gid)
{
	struct db_alert_group g;
	if (db_alert_group_get(db, gid, &g))
		return;
	if (g.good_commit && g.bad_commit) {
		strbuf_addf(sb, "commit range: good %.12s .. bad %.12s", g.good_commit, g.bad_commit);
		if (g.ncommits >= 0)
			strbuf_addf(sb, ", %d commit%s", g.ncommits, g.ncommits == 1 ? "" : "s");
	} else {
		strbuf_addf(sb, "sessions: good %lld .. bad %lld", (long long)g.good_session,
			    (long long)g.bad_session);
		if (robot_group_same_kernel(db, gid) == 1)
			strbuf_addf(sb, ", %s", ROBOT_NO_KERNEL_CHANGE);
	}
	db_alert_group_free(&g);
}

int robot_group_same_kernel(struct db *db, int64_t gid)
{
	struct db_alert_group g;
	if (db_alert_group_get(db, gid, &g))
		return -1;
	int same = -1;
	if (g.good_commit && g.bad_commit && strcmp(g.good_commit, g.bad_commit)) {
		same = 0;
	} else {
		struct db_session_brief a, b;
		if (!db_session_brief(db, g.good_session, &a)) {
			if (!db_session_brief(db, g.bad_session, &b)) {
				/* a kernel from git: the same commit; any other: the
				   series pins its release and config */
				same = (!a.commit && !b.commit) ||
				       (a.commit && b.commit && !strcmp(a.commit, b.commit));
				db_session_brief_free(&b);
			}
			db_session_brief_free(&a);
		}
	}
	db_alert_group_free(&g);
	return same;
}

/* a late alert (docs/alerts.md "Late alerts"): the change it joins */
struct late {
	int64_t gid, good, bad;     /* its group and sessions */
	const char *baseline;       /* its level before (JSON), borrowed */
	enum alert_state status;    /* the group's alert's: the late one follows it */
	int64_t first;              /* that alert */
};

/* a late alert takes its group's state: a group under bisection, or whose
 * bisection ended, is not bisected again for it */
static int late_follow(struct db *db, int64_t id, const struct late *late, struct strbuf *err)
{
	if (late->status != ALERT_BISECTING && late->status != ALERT_CULPRIT &&
	    late->status != ALERT_UNRESOLVED)
		return 0;
	char *note = xstrfmt("joins alert group %lld, whose change it moved with",
			     (long long)late->gid);
	int rc = db_alert_move(db, id, ALERT_BISECTING, ALERT_BY_ROBOT, note, 0);
	if (!rc && late->status != ALERT_BISECTING)
		rc = db_alert_move(db, id, late->status, ALERT_BY_ROBOT, note, 0);
	if (rc)
		strbuf_addstr(err, db_errmsg(db));
	free(note);
	return rc ? -1 : 0;
}

static int raise_alert_in(struct db *db, struct robot_result *r, const struct robot_options *o,
			  const struct sample_set *set, const struct sel_series *ser,
			  const char *key, const struct sel_group *gr, const struct verdict *v,
			  const int64_t *base, size_t nbase, const char *how,
			  const struct late *late, struct strbuf *err)
{
	int64_t gid = late ? late->gid : group_for(db, r, base[0], o, err);
	if (gid < 0)
		return -1;
	struct db_alert a = { 0 };
	a.group_id = gid;
	a.kind = v->kind == VERDICT_WORSE ? "regression" : "improvement";
	a.series_key = (char *)key;
	a.series_label = series_label(ser, set);
	a.series_where = series_where(ser);
	a.workload = gr->workload;
	a.metric = gr->metric;
	a.unit = gr->unit;
	a.detector = "check";
	a.good_session = late ? late->good : base[0];
	a.bad_session = late ? late->bad : r->s.id;
	a.baseline = late ? xstrdup(late->baseline) : sessions_json(base, nbase);
	a.base_value = v->centre_a;
	a.value = v->centre_b;
	a.change_pct = v->change_pct;
	a.ci_lo = v->ci_lo_pct;
	a.ci_hi = v->ci_hi_pct;
	a.p = v->p;
	struct strbuf note = STRBUF_INIT, line = STRBUF_INIT;
	change_text(&note, v);
	int64_t id = db_alert_add(db, &a, note.buf);
	if (id < 0) {
		strbuf_addstr(err, db_errmsg(db));
	} else {
		add_group(r, gid);
		add_event(r, id, late ? "late" : "raised");
		if (v->kind == VERDICT_WORSE)
			r->new_regressions++;
		else
			r->new_improvements++;
		strbuf_addf(&line, "%s %s: alert %lld (group %lld): %s.%s %s: %.4g -> %.4g %s, ",
			    how, a.kind, (long long)id, (long long)gid, gr->workload, gr->metric,
			    a.series_label, v->centre_a, v->centre_b, gr->unit ? gr->unit : "");
		change_text(&line, v);
		if (late)
			strbuf_addf(&line, "; it moved with the change at session %lld (alert %lld), "
				    "undecided until tonight, and joins its group", (long long)late->bad,
				    (long long)late->first);
		strbuf_addstr(&line, "; ");
		range_text(&line, db, gid);
		strvec_push(&r->lines, line.buf);
		if (late && late_follow(db, id, late, err))
			id = -1;
	}
	strbuf_release(&note);
	strbuf_release(&line);
	free(a.series_label);
	free(a.series_where);
	free(a.baseline);
	return id < 0 ? -1 : 0;
}

static int raise_alert(struct db *db, struct robot_result *r, const struct robot_options *o,
		       const struct sample_set *set, const struct sel_series *ser, const char *key,
		       const struct sel_group *gr, const struct verdict *v, const int64_t *base,
		       size_t nbase, const char *how, struct strbuf *err)
{
	return raise_alert_in(db, r, o, set, ser, key, gr, v, base, nbase, how, NULL, err);
}

/* the series of p with key k (for a raised alert's label and selector) */
static const struct sel_series *series_of(const struct pool *p, const char *k)
{
	for (size_t i = 0; i < p->set.nseries; i++)
		if (!strcmp(p->key[i], k))
			return &p->set.series[i];
	return NULL;
}

/* ---- a change of the effective preemption model ---------------------------- */

/* per series of tonight: what the baseline says of its model */
struct model_break {
	int restart;       /* the model changed tonight: a new baseline, not judged */
	int64_t after;     /* judged against baseline sessions after this one (0: all) */
	const char *from;  /* the model before the change (borrowed); NULL: none */
	int64_t at;        /* the session of the change */
};

/* for each series of tonight, the sessions of the baseline that hold the
 * same configuration (its key without the model): tonight's model against
 * the newest of them, and the newest with another model */
static void find_breaks(const struct pool *tonight, const struct pool *base, int64_t sid,
			struct model_break *mb)
{
	for (size_t i = 0; i < tonight->set.nseries; i++) {
		struct model_break *b = &mb[i];
		memset(b, 0, sizeof(*b));
		const char *mk = tonight->mkey[i];
		const char *model = tonight->set.series[i].dim[DIM_PREEMPT];
		if (!mk)
			continue;
		int64_t newest = 0, other = 0;
		const char *newest_model = NULL, *other_model = NULL;
		for (size_t g = 0; g < base->set.ngroups; g++) {
			const struct sel_group *gr = &base->set.groups[g];
			if (!base->mkey[gr->series] || strcmp(base->mkey[gr->series], mk))
				continue;
			const char *m = base->set.series[gr->series].dim[DIM_PREEMPT];
			for (size_t k = 0; k < gr->n; k++) {
				if (gr->session[k] > newest) {
					newest = gr->session[k];
					newest_model = m;
				}
				if (strcmp(m, model) && gr->session[k] > other) {
					other = gr->session[k];
					other_model = m;
				}
			}
		}
		if (!newest)
			continue;   /* a new series: nothing to break */
		if (strcmp(newest_model, model)) {
			b->restart = 1;
			b->from = newest_model;
			b->at = sid;
		} else if (other) {
			/* a change within the baseline: the oldest session after the
			   last one of the other model */
			b->after = other;
			b->from = other_model;
			b->at = sid;
			for (size_t g = 0; g < base->set.ngroups; g++) {
				const struct sel_group *gr = &base->set.groups[g];
				if (strcmp(base->key[gr->series], tonight->key[i]))
					continue;
				for (size_t k = 0; k < gr->n; k++)
					if (gr->session[k] > other && gr->session[k] < b->at)
						b->at = gr->session[k];
			}
		}
	}
}

/* one line per change (from, to, session), naming its series */
static void break_lines(struct robot_result *r, const struct pool *tonight,
			const struct model_break *mb)
{
	size_t n = tonight->set.nseries;
	for (size_t i = 0; i < n; i++) {
		const char *to = tonight->set.series[i].dim[DIM_PREEMPT];
		if (!mb[i].from)
			continue;
		size_t j;
		for (j = 0; j < i; j++)
			if (mb[j].from && !strcmp(mb[j].from, mb[i].from) && mb[j].at == mb[i].at &&
			    mb[j].restart == mb[i].restart &&
			    !strcmp(tonight->set.series[j].dim[DIM_PREEMPT], to))
				break;
		if (j < i)
			continue;   /* said with the first series of the change */
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "effective preemption model changed: %s -> %s at session %lld (",
			    model_name(mb[i].from), model_name(to), (long long)mb[i].at);
		int first = 1;
		for (size_t k = i; k < n; k++) {
			if (!mb[k].from || strcmp(mb[k].from, mb[i].from) || mb[k].at != mb[i].at ||
			    mb[k].restart != mb[i].restart ||
			    strcmp(tonight->set.series[k].dim[DIM_PREEMPT], to))
				continue;
			char *lab = series_label(&tonight->set.series[k], &tonight->set);
			strbuf_addf(&sb, "%s%s", first ? "" : "; ", lab);
			free(lab);
			first = 0;
		}
		if (mb[i].restart)
			strbuf_addf(&sb, "): a new baseline starts here; nothing is judged against the "
					 "%s baseline tonight", model_name(mb[i].from));
		else
			strbuf_addf(&sb, "): judged against the sessions from %lld on only",
				    (long long)mb[i].at);
		strvec_push(&r->breaks, sb.buf);
		strbuf_release(&sb);
	}
}

/* an open alert whose series is not measured tonight because its model
 * changed: " (its series' effective preemption model changed: A -> B ...)" */
static void alert_break_note(const struct db_alert *al, const struct pool *tonight,
			     struct strbuf *line)
{
	char *amk = key_without_model(al->series_key);
	if (!amk)
		return;
	json_t *k = json_loads(al->series_key, 0, NULL);
	const char *from = json_string_value(json_object_get(k, sel_dim_name(DIM_PREEMPT)));
	for (size_t i = 0; i < tonight->set.nseries; i++)
		if (tonight->mkey[i] && !strcmp(tonight->mkey[i], amk) &&
		    strcmp(tonight->key[i], al->series_key)) {
			strbuf_addf(line, " (its series' effective preemption model changed: %s -> %s; "
					  "the series goes on with a new baseline)",
				    model_name(from), model_name(tonight->set.series[i].dim[DIM_PREEMPT]));
			break;
		}
	json_decref(k);
	free(amk);
}

/* an open alert against tonight: known, moved again, or fixed */
static int follow_alert(struct db *db, struct robot_result *r, const struct robot_options *o,
			const struct db_alert *al, const struct pool *tonight,
			struct strbuf *err)
{
	int sign = robot_kind_sign(al->kind);
	enum verdict_kind same = sign > 0 ? VERDICT_WORSE : VERDICT_BETTER;
	enum verdict_kind back = sign > 0 ? VERDICT_BETTER : VERDICT_WORSE;
	size_t nbefore, nafter = 0;
	int64_t *before = sessions_parse(al->baseline, &nbefore);
	int64_t *after = NULL;
	struct pool pb = { 0 }, pa = { 0 };
	int rc = -1;
	if (db_nightly_sessions(db, r->s.plan, r->s.machine_id, al->bad_session, r->s.id,
			       o->baseline_n, r->s.tag, &after, &nafter)) {
		strbuf_addstr(err, db_errmsg(db));
		goto out;
	}
	if (pool_load(db, before, nbefore, &pb, err) || pool_load(db, after, nafter, &pa, err))
		goto out;
	struct verdict vb, va;
	int jb = judge(&pb, tonight, al->series_key, al->workload, al->metric, 0, o, &vb);
	int ja = nafter ? judge(&pa, tonight, al->series_key, al->workload, al->metric, 0, o, &va)
			: 1;
	if (jb < 0 || ja < 0) {
		strbuf_addstr(err, "the verdict could not be computed");
		goto out;
	}
	struct strbuf line = STRBUF_INIT;
	const char *st = alert_state_name(al->status);
	if (jb == 1) {
		strbuf_addf(&line, "known: alert %lld (%s): %s.%s %s: not measured tonight",
			    (long long)al->id, st, al->workload, al->metric, al->series_label);
		alert_break_note(al, tonight, &line);
		r->known++;
		add_event(r, al->id, "known, not measured");
	} else if (vb.kind == same && !ja && va.kind == same) {
		/* worse than before and than the level after the change: a new
		   step on top of the known one */
		strbuf_addf(&line, "known: alert %lld (%s), and the series moved again:",
			    (long long)al->id, st);
		strvec_push(&r->lines, line.buf);
		strbuf_reset(&line);
		r->known++;
		add_event(r, al->id, "known, moved again");
		db_alert_seen(db, al->id, r->s.id);
		const struct sel_series *ser = series_of(tonight, al->series_key);
		const struct sel_group *gr = NULL;
		for (size_t g = 0; g < tonight->set.ngroups && !gr; g++)
			if (!strcmp(tonight->set.groups[g].workload, al->workload) &&
			    !strcmp(tonight->set.groups[g].metric, al->metric) &&
			    !strcmp(tonight->key[tonight->set.groups[g].series], al->series_key))
				gr = &tonight->set.groups[g];
		if (ser && gr &&
		    raise_alert(db, r, o, &tonight->set, ser, al->series_key, gr, &va, after, nafter, "NEW",
				err)) {
			strbuf_release(&line);
			goto out;
		}
	} else if (vb.kind == same) {
		strbuf_addf(&line, "known: alert %lld (%s): %s.%s %s: ", (long long)al->id, st,
			    al->workload, al->metric, al->series_label);
		change_text(&line, &vb);
		strbuf_addf(&line, " against its level before session %lld",
			    (long long)al->bad_session);
		r->known++;
		add_event(r, al->id, "known");
		db_alert_seen(db, al->id, r->s.id);
	} else if (vb.kind != same && !ja && va.kind == back) {
		char note[200];
		snprintf(note, sizeof(note), "back to the level before session %lld (%+.1f%% "
			 "against the level after it)", (long long)al->bad_session, va.change_pct);
		if (db_alert_move(db, al->id, ALERT_FIXED, ALERT_BY_ROBOT, note, r->s.id)) {
			strbuf_addstr(err, db_errmsg(db));
			strbuf_release(&line);
			goto out;
		}
		strbuf_addf(&line, "fixed: alert %lld: %s.%s %s: %s", (long long)al->id,
			    al->workload, al->metric, al->series_label, note);
		r->fixed++;
		add_event(r, al->id, "fixed");
		add_group(r, al->group_id);
	} else {
		strbuf_addf(&line, "known: alert %lld (%s): %s.%s %s: not decided tonight (", (long long)al->id,
			    st, al->workload, al->metric, al->series_label);
		change_text(&line, &vb);
		strbuf_addf(&line, " against the level before session %lld: %s)",
			    (long long)al->bad_session, verdict_kind_name(vb.kind));
		r->known++;
		add_event(r, al->id, "known, undecided");
	}
	if (line.len)
		strvec_push(&r->lines, line.buf);
	strbuf_release(&line);
	rc = 0;
out:
	pool_free(&pb);
	pool_free(&pa);
	free(before);
	free(after);
	return rc;
}

/* ---- an open change inside the rolling baseline ------------------------------ */

/* per series of tonight: the newest open alert of the series whose change
 * (its bad session) lies inside the rolling baseline, with sessions of the
 * baseline on both sides of it (docs/alerts.md "Late alerts") */
struct change {
	const struct db_alert *al;   /* borrowed; NULL: none */
	struct pool before;          /* the alert's level before */
	struct pool since;           /* the baseline's sessions from its bad session on */
	struct pool since_all;       /* those and tonight */
	int64_t *since_ids;
	size_t nsince;
	struct db_alert *grp;        /* every alert of its group */
	size_t ngrp;
};

static void change_free(struct change *c)
{
	pool_free(&c->before);
	pool_free(&c->since);
	pool_free(&c->since_all);
	free(c->since_ids);
	db_alerts_free(c->grp, c->ngrp);
	memset(c, 0, sizeof(*c));
}

/* the changes of tonight's series (ch[i] for series i): 0, or -1 */
static int find_changes(struct db *db, const struct robot_result *r, const struct pool *tonight,
			const struct db_alert *open, size_t nopen, const struct model_break *mb,
			struct change *ch, struct strbuf *err)
{
	for (size_t i = 0; i < tonight->set.nseries; i++) {
		struct change *c = &ch[i];
		if (mb[i].restart || mb[i].after)
			continue;   /* a change of the model rules the baseline */
		for (size_t k = 0; k < nopen; k++) {
			const struct db_alert *al = &open[k];
			if (strcmp(al->series_key, tonight->key[i]) || al->bad_session >= r->s.id)
				continue;
			int in = 0, older = 0;
			for (size_t b = 0; b < r->nbaseline; b++) {
				in |= r->baseline[b] == al->bad_session;
				older |= r->baseline[b] < al->bad_session;
			}
			if (in && older && (!c->al || al->bad_session > c->al->bad_session))
				c->al = al;
		}
		if (!c->al)
			continue;
		size_t nbefore;
		int64_t *before = sessions_parse(c->al->baseline, &nbefore);
		c->since_ids = xcalloc(r->nbaseline + 2, sizeof(*c->since_ids));
		for (size_t b = 0; b < r->nbaseline; b++)
			if (r->baseline[b] >= c->al->bad_session)
				c->since_ids[c->nsince++] = r->baseline[b];
		c->since_ids[c->nsince] = r->s.id;
		struct db_alert_filter f = { .status = -1, .group_id = c->al->group_id };
		int rc = pool_load(db, before, nbefore, &c->before, err) ||
			 pool_load(db, c->since_ids, c->nsince, &c->since, err) ||
			 pool_load(db, c->since_ids, c->nsince + 1, &c->since_all, err);
		free(before);
		if (rc)
			return -1;
		if (db_alerts_list(db, &f, &c->grp, &c->ngrp)) {
			strbuf_addstr(err, db_errmsg(db));
			return -1;
		}
	}
	return 0;
}

/* one line per change: its series' other metrics judged on one side of it */
static void change_lines(struct robot_result *r, const struct pool *tonight,
			 const struct change *ch)
{
	for (size_t i = 0; i < tonight->set.nseries; i++) {
		if (!ch[i].al)
			continue;
		char *lab = series_label(&tonight->set.series[i], &tonight->set);
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "alert group %lld changed at session %lld, inside the baseline (%s): "
			    "the series' other metrics are judged against the sessions from %lld on, "
			    "and a move at the change joins its group",
			    (long long)ch[i].al->group_id, (long long)ch[i].al->bad_session, lab,
			    (long long)ch[i].al->bad_session);
		strvec_push(&r->breaks, sb.buf);
		strbuf_release(&sb);
		free(lab);
	}
}

/* the change's group holds an alert of (workload, metric) of the series */
static int change_has(const struct change *c, const char *key, const char *wl, const char *m)
{
	for (size_t i = 0; i < c->ngrp; i++)
		if (!strcmp(c->grp[i].series_key, key) && !strcmp(c->grp[i].workload, wl) &&
		    !strcmp(c->grp[i].metric, m))
			return 1;
	return 0;
}

/* nbaseline 0: why (robot.h, no_baseline): the sessions of the plan
 * since the expected change that the baseline did not take, and why */
static int no_baseline_why(struct db *db, struct robot_result *r, struct strbuf *err)
{
	struct db_passed_over *po = NULL;
	size_t n = 0, total = 0;
	const char *machine = r->s.machine ? r->s.machine : "this machine";
	if (db_nightly_passed_over(db, r->s.plan, r->s.machine_id, r->s.id, r->s.tag, 100000, &po,
				   &n, &total)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (po[i].id >= r->expected_since)
			po[k++] = po[i];
		else
			free(po[i].tag);
	struct strbuf sb = STRBUF_INIT;
	if (!k) {
		strbuf_addf(&sb, "no baseline yet: this is the first nightly session of %s on %s%s",
			    r->s.plan, machine, r->expected_since ? " since the expected change" : "");
	} else {
		strbuf_addf(&sb, "no baseline: no earlier session of %s on %s%s is a night the "
			    "baseline can take; %zu passed over:", r->s.plan, machine,
			    r->expected_since ? " since the expected change" : "", k);
		for (size_t i = 0; i < k && i < 6; i++) {
			strbuf_addf(&sb, "%s session %lld", i ? ";" : "", (long long)po[i].id);
			if (po[i].tag)
				strbuf_addf(&sb, " (%s)", po[i].tag);
			if (!po[i].nightly)
				strbuf_addstr(&sb, ": not run or judged by `schedlab nightly` (only its "
						   "sessions form the baseline)");
			else if (!po[i].on_machine)
				strbuf_addstr(&sb, ": on another machine");
			else if (!po[i].has_results)
				strbuf_addstr(&sb, ": no results stored");
			else
				strbuf_addstr(&sb, ": not taken");
		}
		if (k > 6)
			strbuf_addf(&sb, "; and %zu more", k - 6);
	}
	r->no_baseline = strbuf_detach(&sb, NULL);
	db_passed_over_free(po, k);
	return 0;
}

int robot_judge(struct db *db, int64_t sid, const struct robot_options *o,
		struct robot_result *r, struct strbuf *err)
{
	memset(r, 0, sizeof(*r));
	r->lines = (struct strvec)STRVEC_INIT;
	r->undecided = (struct strvec)STRVEC_INIT;
	r->breaks = (struct strvec)STRVEC_INIT;
	if (db_session_brief(db, sid, &r->s)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	if (!r->s.has_results || !r->s.machine_id) {
		strbuf_addf(err, "session %lld has no results to judge", (long long)sid);
		return -1;
	}
	/* a session the nightly judges is one of its nights, whatever its tag:
	   the baseline of the nights after it */
	if (db_session_mark_nightly(db, sid)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	r->expected_since = db_alert_expected_since(db, r->s.plan, r->s.machine_id);
	if (r->expected_since < 0 ||
	    db_nightly_sessions(db, r->s.plan, r->s.machine_id, r->expected_since, sid,
				o->baseline_n, r->s.tag, &r->baseline, &r->nbaseline)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	struct pool tonight, base = { 0 };
	if (pool_load(db, &sid, 1, &tonight, err))
		return -1;
	int rc = -1;
	struct model_break *mb = NULL;
	struct change *ch = NULL;
	size_t nch = 0;
	/* the open alerts first: they own their series */
	struct db_alert *open = NULL;
	size_t nopen = 0;
	if (db_alerts_open_of(db, r->s.plan, r->s.machine_id, &open, &nopen)) {
		strbuf_addstr(err, db_errmsg(db));
		goto out;
	}
	for (size_t i = 0; i < nopen; i++)
		if (open[i].bad_session < sid &&
		    follow_alert(db, r, o, &open[i], &tonight, err))
			goto out;
	if (!r->nbaseline) {
		rc = no_baseline_why(db, r, err);
		goto out;
	}
	if (pool_load(db, r->baseline, r->nbaseline, &base, err))
		goto out;
	mb = xcalloc(tonight.set.nseries + 1, sizeof(*mb));
	find_breaks(&tonight, &base, sid, mb);
	break_lines(r, &tonight, mb);
	ch = xcalloc(tonight.set.nseries + 1, sizeof(*ch));
	nch = tonight.set.nseries;
	if (find_changes(db, r, &tonight, open, nopen, mb, ch, err))
		goto out;
	change_lines(r, &tonight, ch);
	for (size_t g = 0; g < tonight.set.ngroups; g++) {
		const struct sel_group *gr = &tonight.set.groups[g];
		const struct sel_series *ser = &tonight.set.series[gr->series];
		if (gr->better == SEL_BETTER_NONE || series_traced(ser) ||
		    !metric_wanted(o, gr->workload, gr->metric))
			continue;
		if (mb[gr->series].restart) {
			r->nrestarted++;   /* a new baseline starts tonight */
			continue;
		}
		const char *key = tonight.key[gr->series];
		int owned = 0;
		for (size_t i = 0; i < nopen && !owned; i++)
			owned = !strcmp(open[i].series_key, key) &&
				!strcmp(open[i].workload, gr->workload) &&
				!strcmp(open[i].metric, gr->metric);
		struct verdict v;
		const struct change *c = ch[gr->series].al ? &ch[gr->series] : NULL;
		/* a change inside the baseline: judged against one side of it */
		int j = judge(c ? &c->since : &base, &tonight, key, gr->workload, gr->metric,
			      mb[gr->series].after, o, &v);
		if (j < 0) {
			strbuf_addstr(err, "the verdict could not be computed");
			goto out;
		}
		r->nmetrics++;
		int64_t from = c ? c->al->bad_session : mb[gr->series].after ? mb[gr->series].at : 0;
		if (owned) {
			r->nknown_metrics++;
			add_verdict(r, ser, &tonight.set, gr, NULL, "followed by an open alert", 0);
			continue;
		}
		if (c && (j == 1 || (v.kind != VERDICT_WORSE && v.kind != VERDICT_BETTER)) &&
		    !change_has(c, key, gr->workload, gr->metric)) {
			/* not moved tonight: did it move at the change? */
			struct verdict vl;
			int jl = judge(&c->before, &c->since_all, key, gr->workload, gr->metric, 0, o,
				       &vl);
			if (jl < 0) {
				strbuf_addstr(err, "the verdict could not be computed");
				goto out;
			}
			if (!jl && (vl.kind == VERDICT_WORSE || vl.kind == VERDICT_BETTER)) {
				if (vl.kind == VERDICT_WORSE)
					r->nworse++;
				else
					r->nbetter++;
				struct late late = { .gid = c->al->group_id,
						     .good = c->al->good_session,
						     .bad = c->al->bad_session,
						     .baseline = c->al->baseline,
						     .status = c->al->status, .first = c->al->id };
				if (raise_alert_in(db, r, o, &tonight.set, ser, key, gr, &vl, NULL, 0,
						   "LATE", &late, err))
					goto out;
				add_verdict(r, ser, &tonight.set, gr, &vl, NULL, 0)->alert =
					r->events[r->nevents - 1].alert;
				r->late++;
				continue;
			}
		}
		if (j == 1) {
			r->too_few = 1;
			r->ninconclusive++;
			undecided(r, ser, &tonight.set, gr, NULL);
			add_verdict(r, ser, &tonight.set, gr, NULL, NULL, from);
			continue;
		}
		struct robot_verdict *rv = add_verdict(r, ser, &tonight.set, gr, &v, NULL, from);
		if (v.kind == VERDICT_INCONCLUSIVE)
			undecided(r, ser, &tonight.set, gr, &v);
		switch (v.kind) {
		case VERDICT_WORSE: r->nworse++; break;
		case VERDICT_BETTER: r->nbetter++; break;
		case VERDICT_NO_CHANGE: r->nsame++; break;
		default: r->ninconclusive++; break;
		}
		if (v.kind == VERDICT_INCONCLUSIVE && isfinite(v.change_pct) &&
		    verdict_beyond(v.change_pct, o->cmp.threshold_pct)) {
			struct strbuf line = STRBUF_INIT;
			char *lab = series_label(ser, &tonight.set);
			strbuf_addf(&line, "inconclusive, no alert: %s.%s %s: ", gr->workload,
				    gr->metric, lab);
			free(lab);
			change_text(&line, &v);
			strbuf_addf(&line, " with %zu and %zu values", v.n_a, v.n_b);
			if (v.reps_needed)
				strbuf_addf(&line, "; about %zu a side would decide it", v.reps_needed);
			else
				strbuf_addstr(&line, "; more repetitions a night would decide it");
			strvec_push(&r->lines, line.buf);
			strbuf_release(&line);
		}
		if (v.kind != VERDICT_WORSE && v.kind != VERDICT_BETTER)
			continue;
		if (raise_alert(db, r, o, &tonight.set, ser, key, gr, &v,
				c ? c->since_ids : r->baseline, c ? c->nsince : r->nbaseline, "NEW",
				err))
			goto out;
		rv = &r->verdicts[r->nverdicts - 1];   /* (add_verdict may have moved it) */
		rv->alert = r->events[r->nevents - 1].alert;
	}
	rc = 0;
out:
	for (size_t i = 0; i < nch; i++)
		change_free(&ch[i]);
	free(ch);
	free(mb);
	db_alerts_free(open, nopen);
	pool_free(&tonight);
	pool_free(&base);
	return rc;
}

/* ---- the culprit report ---------------------------------------------------- */

int robot_group_report(struct db *db, int64_t gid, struct strbuf *out, struct strbuf *err)
{
	struct db_alert_group g;
	if (db_alert_group_get(db, gid, &g)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	struct db_alert *al = NULL;
	size_t n = 0;
	struct db_alert_filter f = { .status = -1, .group_id = gid };
	if (db_alerts_list(db, &f, &al, &n)) {
		strbuf_addstr(err, db_errmsg(db));
		db_alert_group_free(&g);
		return -1;
	}
	struct db_session_brief bad = { 0 };
	db_session_brief(db, g.bad_session, &bad);
	/* built here, escaped at the end: a subject, an author, a series label
	   or a reason reaches a mail or a terminal without a control character */
	struct strbuf raw = STRBUF_INIT;
	struct strbuf *keep = out;
	out = &raw;
	struct db_culprit cu;
	int c = !db_culprit_decode(g.culprit, &cu);
	const char *status = n ? alert_state_name(al[0].status) : "?";
	if (c)
		strbuf_addf(out, "schedlab: %s is the first bad commit of alert group %lld\n\n",
			    cu.commit, (long long)gid);
	else
		strbuf_addf(out, "schedlab: alert group %lld, %s\n\n", (long long)gid, status);
	if (c) {
		strbuf_addf(out, "commit:   %s\nsubject:  %s\nauthor:   %s\n", cu.commit,
			    cu.subject ? cu.subject : "", cu.author ? cu.author : "");
		if (isfinite(cu.change_pct)) {
			strbuf_addf(out, "effect:   %+.1f%%", cu.change_pct);
			if (isfinite(cu.ci_lo) && isfinite(cu.ci_hi))
				strbuf_addf(out, " [%+.1f, %+.1f]", cu.ci_lo, cu.ci_hi);
			if (isfinite(cu.p))
				strbuf_addf(out, ", p=%.2g", cu.p);
			strbuf_addstr(out, " against the good end\n");
		}
		if (isfinite(cu.error_bound))
			strbuf_addf(out, "how sure: the whole bisection's error rate is at most %.3g "
				    "(each call a test at its share of it)\n", cu.error_bound);
	} else if (g.why) {
		strbuf_addf(out, "unresolved: %s\n", g.why);
	}
	strbuf_addf(out, "machine:  %s\nplan:     %s\n", bad.machine ? bad.machine : "?", g.plan);
	if (g.good_commit) {
		strbuf_addf(out, "range:    good %s .. bad %s", g.good_commit, g.bad_commit);
		if (g.ncommits >= 0)
			strbuf_addf(out, " (%d commit%s)", g.ncommits, g.ncommits == 1 ? "" : "s");
		strbuf_addf(out, "\nrepo:     %s\n", g.git_dir ? g.git_dir : "?");
	}
	strbuf_addf(out, "sessions: good %lld .. bad %lld", (long long)g.good_session,
		    (long long)g.bad_session);
	if (robot_group_same_kernel(db, gid) == 1)
		strbuf_addf(out, ": %s (the same kernel, configuration and knobs: nothing to "
			    "bisect)", ROBOT_NO_KERNEL_CHANGE);
	strbuf_addstr(out, "\n\n");
	strbuf_addf(out, "what moved (%zu metric%s):\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		struct verdict v = { 0 };
		v.change_pct = al[i].change_pct;
		v.ci_lo_pct = al[i].ci_lo;
		v.ci_hi_pct = al[i].ci_hi;
		v.p_mwu = al[i].p;
		struct strbuf ch = STRBUF_INIT;
		change_text(&ch, &v);
		strbuf_addf(out, "  alert %lld %s %s: %s.%s %s: %.4g -> %.4g %s, %s\n",
			    (long long)al[i].id, al[i].kind, alert_state_name(al[i].status),
			    al[i].workload, al[i].metric, al[i].series_label, al[i].base_value,
			    al[i].value, al[i].unit ? al[i].unit : "", ch.buf);
		strbuf_release(&ch);
	}
	if (c && cu.nsteps) {
		strbuf_addstr(out, "\ncommits tested:\n");
		for (size_t i = 0; i < cu.nsteps; i++)
			strbuf_addf(out, "  %.12s %-7s %s\n", cu.steps[i].commit ? cu.steps[i].commit : "",
				    cu.steps[i].verdict ? cu.steps[i].verdict : "",
				    cu.steps[i].why ? cu.steps[i].why : "");
	}
	if (c && cu.builds >= 0)
		strbuf_addf(out, "cost: %ld builds, %ld boots\n", cu.builds,
			    cu.boots >= 0 ? cu.boots : 0L);
	strbuf_addstr(out, "\nto reproduce:\n");
	if (g.bisect_id)
		strbuf_addf(out, "  schedlab bisect --resume %lld          # the bisection's log\n",
			    (long long)g.bisect_id);
	if (n)
		strbuf_addf(out, "  schedlab compare --metric %s.%s session=%lld session=%lld\n",
			    al[0].workload, al[0].metric, (long long)g.good_session,
			    (long long)g.bad_session);
	strbuf_addf(out, "  schedlab alerts show %lld\n", n ? (long long)al[0].id : 0LL);
	strbuf_addprintable(keep, raw.buf, 1);
	strbuf_release(&raw);
	if (c)
		db_culprit_free(&cu);
	db_session_brief_free(&bad);
	db_alerts_free(al, n);
	db_alert_group_free(&g);
	return 0;
}
