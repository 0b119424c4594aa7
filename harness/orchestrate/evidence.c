/*
 * Evidence triggers (evidence.h): the decision over a configuration's
 * untraced runs, and the reading of those runs from the session's rows.
 * The outlier rule itself is analysis/outlier.c; docs/metrics.md
 * ("Evidence triggers") states it for users.
 */
#include "harness/orchestrate/evidence.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/outlier.h"
#include "analysis/stats.h"
#include "db/results.h"
#include "harness/util/numfmt.h"
#include "workloads/workload.h"

void evidence_decision_init(struct evidence_decision *d)
{
	memset(d, 0, sizeof(*d));
	strbuf_init(&d->why, 0);
}

void evidence_decision_release(struct evidence_decision *d)
{
	strbuf_release(&d->why);
}

/* "1.53 s", ">1000 us" (a censored bound) */
static void add_value(struct strbuf *sb, const struct evidence_metric *m, double v, int censored)
{
	char num[32];
	fmt_num(num, sizeof(num), v);
	strbuf_addf(sb, "%s%s%s%s", censored ? ">" : "", num, m->unit && *m->unit ? " " : "",
		    m->unit ? m->unit : "");
}

static size_t count_state(const struct evidence_run *runs, size_t n, enum evidence_state st)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += runs[i].state == st;
	return c;
}

/* "run 14 failed", "runs 14, 15 timed out" for the runs in state st,
 * after `sep` when sb is not empty; nothing when there are none */
static void add_state_runs(struct strbuf *sb, const struct evidence_run *runs, size_t n,
			   enum evidence_state st, const char *verb, const char *sep)
{
	size_t c = count_state(runs, n, st), j = 0;
	if (!c)
		return;
	strbuf_addf(sb, "%s%s ", sb->len ? sep : "", c == 1 ? "run" : "runs");
	for (size_t i = 0; i < n; i++)
		if (runs[i].state == st)
			strbuf_addf(sb, "%s%lld", j++ ? ", " : "", (long long)runs[i].id);
	strbuf_addf(sb, " %s", verb);
}

/* the rule and its limit: "median 1.2 s + max(3 x 1.4826 x MAD 0.01 s, 1%
 * of the median) = 1.25 s" */
static void add_rule(struct strbuf *sb, const struct evidence_metric *m, double k,
		     const struct outlier_rule *r)
{
	strbuf_addstr(sb, "median ");
	add_value(sb, m, r->median, 0);
	strbuf_addf(sb, " %c max(%g x %g x MAD ", m->lower_better ? '+' : '-', k, OUTLIER_MAD_SCALE);
	add_value(sb, m, r->mad, 0);
	strbuf_addf(sb, ", %g%% of the median) = ", 100 * OUTLIER_MIN_REL);
	add_value(sb, m, r->limit, 0);
}

int evidence_decide(enum evidence_when when, double k, const struct evidence_metric *m,
		    const struct evidence_run *runs, size_t n, struct evidence_decision *d)
{
	d->when = when;
	d->of = 0;
	d->flagged = 0;
	strbuf_reset(&d->why);
	d->verdict = EVIDENCE_TRACE;
	if (when == EVIDENCE_ALWAYS)
		return 0;
	const char *w = evidence_when_name(when);
	size_t pending = count_state(runs, n, EVR_PENDING);
	if (pending) {
		d->verdict = EVIDENCE_WAIT;
		strbuf_addf(&d->why, "%s: waiting for %zu untraced run%s of its configuration still "
			    "to do (%s ", w, pending, pending == 1 ? "" : "s",
			    pending == 1 ? "run" : "runs");
		size_t j = 0;
		for (size_t i = 0; i < n; i++)
			if (runs[i].state == EVR_PENDING)
				strbuf_addf(&d->why, "%s%lld", j++ ? ", " : "", (long long)runs[i].id);
		strbuf_addch(&d->why, ')');
		return 0;
	}
	/* the values of the ok runs with the metric, and which run each is */
	double *v = xcalloc(n + 1, sizeof(double));
	size_t *at = xcalloc(n + 1, sizeof(size_t));
	size_t nv = 0;
	for (size_t i = 0; i < n; i++)
		if (runs[i].state == EVR_OK && runs[i].has_value && !isnan(runs[i].value)) {
			at[nv] = i;
			v[nv++] = runs[i].value;
		}
	size_t nfail = count_state(runs, n, EVR_FAILED) + count_state(runs, n, EVR_TIMEOUT);
	int64_t first_fail = 0;
	for (size_t i = 0; i < n && !first_fail; i++)
		if (runs[i].state == EVR_FAILED || runs[i].state == EVR_TIMEOUT)
			first_fail = runs[i].id;
	struct strbuf fails = STRBUF_INIT;
	add_state_runs(&fails, runs, n, EVR_FAILED, "failed", "; ");
	add_state_runs(&fails, runs, n, EVR_TIMEOUT, "timed out", "; ");
	int ret = 0;
	if (when == EVIDENCE_WORST) {
		long wi = outlier_worst(v, nv, m->lower_better);
		if (wi >= 0) {
			const struct evidence_run *r = &runs[at[wi]];
			d->of = r->id;
			strbuf_addf(&d->why, "worst: run %lld has the worst %s of its configuration's "
				    "%zu untraced run%s with it: ", (long long)r->id, m->name, nv,
				    nv == 1 ? "" : "s");
			add_value(&d->why, m, r->value, r->censored);
			strbuf_addf(&d->why, " (%s is better", m->lower_better ? "lower" : "higher");
			double med;
			if (nv > 1 && !stats_median(v, nv, &med)) {
				strbuf_addstr(&d->why, "; median ");
				add_value(&d->why, m, med, 0);
			}
			strbuf_addch(&d->why, ')');
		} else {
			d->of = first_fail;
			strbuf_addf(&d->why, "worst: none of its configuration's %zu untraced run%s "
				    "gave %s", n, n == 1 ? "" : "s", m->name);
		}
		if (fails.len)
			strbuf_addf(&d->why, "; %s", fails.buf);
		goto out;
	}
	/* flagged */
	unsigned char *flag = xcalloc(nv + 1, 1);
	struct outlier_rule rule;
	int no = outlier_mad(v, nv, m->lower_better, k, flag, &rule);
	if (no < 0) {
		free(flag);
		ret = -1;
		goto out;
	}
	d->flagged = (size_t)no + nfail;
	if (!d->flagged) {
		d->verdict = EVIDENCE_SKIP;
		strbuf_addf(&d->why, "flagged: nothing flagged among its configuration's %zu untraced "
			    "run%s (none failed or timed out; ", n, n == 1 ? "" : "s");
		if (nv < OUTLIER_MIN_N)
			strbuf_addf(&d->why, "the outlier rule needs %d ok runs with %s, there %s %zu)",
				    OUTLIER_MIN_N, m->name, nv == 1 ? "was" : "were", nv);
		else {
			strbuf_addf(&d->why, "no %s beyond ", m->name);
			add_rule(&d->why, m, k, &rule);
			strbuf_addch(&d->why, ')');
		}
		free(flag);
		goto out;
	}
	strbuf_addstr(&d->why, "flagged: ");
	long most = -1;
	size_t j = 0;
	for (size_t i = 0; i < nv; i++) {
		if (!flag[i])
			continue;
		if (most < 0 || (m->lower_better ? v[i] > v[most] : v[i] < v[most]))
			most = (long)i;
		const struct evidence_run *r = &runs[at[i]];
		strbuf_addf(&d->why, "%srun %lld (", j++ ? ", " : "", (long long)r->id);
		add_value(&d->why, m, r->value, r->censored);
		strbuf_addch(&d->why, ')');
	}
	if (no)
		strbuf_addf(&d->why, " %s by %s (%s than ", no == 1 ? "is an outlier" : "are outliers",
			    m->name, m->lower_better ? "higher" : "lower");
	if (no) {
		struct strbuf rs = STRBUF_INIT;
		add_rule(&rs, m, k, &rule);
		strbuf_addf(&d->why, "%s)", rs.buf);
		strbuf_release(&rs);
	}
	if (fails.len)
		strbuf_addf(&d->why, "%s%s", no ? "; " : "", fails.buf);
	d->of = first_fail ? first_fail : most >= 0 ? runs[at[most]].id : 0;
	free(flag);
out:
	strbuf_release(&fails);
	free(v);
	free(at);
	return ret;
}

/* ---- the configuration's runs, from the session's rows ------------------- */

struct gather {
	const struct db_pending_run *pr;
	json_t *params, *knobs;       /* the traced run's, "evidence" taken out */
	char *params_s;               /* params as stored for an untraced run */
	struct evidence_run *runs;
	size_t n;
	char *unit;
	int better_known, lower_better;
};

static enum evidence_state state_of(const struct db_evidence_row *r)
{
	int st = run_state_parse(r->status);
	if (st == RUN_ST_OK)
		return boot_state_parse(r->boot_status) == BOOT_ST_OK ? EVR_OK : EVR_OTHER;
	if (st == RUN_ST_FAILED)
		return EVR_FAILED;
	if (st == RUN_ST_TIMEOUT)
		return EVR_TIMEOUT;
	/* the runs --resume redoes (db/runstate.c: planned, running,
	   interrupted, skipped because their boot failed) */
	if (st >= 0 && run_todo((enum run_state)st, r->skip < 0 ? SKIP_NONE : (enum skip_reason)r->skip))
		return EVR_PENDING;
	return EVR_OTHER;
}

static int gather_row(void *ctx, const struct db_evidence_row *r)
{
	struct gather *g = ctx;
	if (r->run_id == g->pr->run_id)
		return 0;
	/* the strings as session_start wrote them, else the JSON values */
	int same = g->params_s && !strcmp(r->params, g->params_s) &&
		   !strcmp(r->knobs, g->pr->knobs);
	if (!same) {
		json_t *pj = json_loads(r->params, 0, NULL), *kj = json_loads(r->knobs, 0, NULL);
		same = pj && kj && !json_object_get(pj, "evidence") && json_equal(pj, g->params) &&
		       json_equal(kj, g->knobs);
		json_decref(pj);
		json_decref(kj);
	}
	if (!same)
		return 0;
	g->runs = xrealloc(g->runs, (g->n + 1) * sizeof(*g->runs));
	struct evidence_run *e = &g->runs[g->n++];
	memset(e, 0, sizeof(*e));
	e->id = r->run_id;
	e->state = state_of(r);
	e->has_value = e->state == EVR_OK && r->has_value;
	e->value = r->value;
	e->censored = r->censored;
	if (e->has_value && !g->better_known) {
		g->better_known = 1;
		g->lower_better = strcmp(r->better, "higher") != 0;
		free(g->unit);
		g->unit = xstrdup(r->unit);
	}
	return 0;
}

int evidence_for_run(struct db *db, int64_t sid, const struct plan *p,
		     const struct db_pending_run *pr, struct evidence_decision *d,
		     struct strbuf *err)
{
	struct gather g = { .pr = pr, .lower_better = 1 };
	g.params = json_loads(pr->params, 0, NULL);
	g.knobs = json_loads(pr->knobs, 0, NULL);
	json_object_del(g.params, "evidence");
	g.params_s = g.params ? json_dumps(g.params, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	/* the plan's workload this run is of: its trigger */
	const struct plan_workload *wl = NULL;
	for (size_t i = 0; i < p->nwl && !wl && g.params; i++)
		if (p->wl[i].evidence && !strcmp(p->wl[i].ops->name, pr->workload) &&
		    json_equal(p->wl[i].params, g.params))
			wl = &p->wl[i];
	const struct workload_ops *ops = workload_find(pr->workload);
	int ret = 0;
	if (!wl || wl->when == EVIDENCE_ALWAYS || !ops || !ops->primary || !g.knobs) {
		/* always (or a run the plan does not know: as before the triggers) */
		ret = evidence_decide(EVIDENCE_ALWAYS, 0, NULL, NULL, 0, d);
		goto out;
	}
	if (db_evidence_runs(db, sid, pr->cfg, pr->workload, ops->primary, gather_row, &g)) {
		strbuf_addf(err, "database: %s", db_errmsg(db));
		ret = -1;
		goto out;
	}
	struct evidence_metric m = { ops->primary, g.unit ? g.unit : "", g.lower_better };
	ret = evidence_decide(wl->when, wl->outlier_k, &m, g.runs, g.n, d);
	if (ret)
		strbuf_addstr(err, "evidence: out of memory");
out:
	json_decref(g.params);
	json_decref(g.knobs);
	free(g.params_s);
	free(g.runs);
	free(g.unit);
	return ret;
}
