/*
 * The night's HTML report (robot.h, robot_night_html; docs/alerts.md "The
 * night's report"): what the night decided first (the alerts raised, late,
 * known, moved again and fixed, each with its numbers, its group, its range
 * and its culprit as they stand after the night's bisections), then the
 * night's bisections, the open alerts, and the comparison as the robot made
 * it (its baseline, its rule, each metric's verdict). A configuration label
 * is said once, as the heading of the rows of its series, not on every row.
 * One self-contained page: no script, no external resource.
 */
#include "harness/results/robot.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/results/report.h"


static void num(struct strbuf *o, double v)
{
	if (isfinite(v))
		strbuf_addf(o, "%.4g", v);
	else
		strbuf_addstr(o, "&ndash;");
}

/* "+20.1% [+19.5, +20.7]" */
static void change(struct strbuf *o, double pct, double lo, double hi)
{
	if (!isfinite(pct)) {
		strbuf_addstr(o, "&ndash;");
		return;
	}
	strbuf_addf(o, "%+.1f%%", pct);
	if (isfinite(lo) && isfinite(hi))
		strbuf_addf(o, " [%+.1f, %+.1f]", lo, hi);
}

static void pval(struct strbuf *o, double p)
{
	if (isfinite(p))
		strbuf_addf(o, "%.2g", p);
	else
		strbuf_addstr(o, "&ndash;");
}

/* the string member k of o, "" when absent */
static const char *member_text(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* the group's range: "commits good..bad (N)", or the sessions and whether
 * they ran one kernel */
static void range_cell(struct db *db, const struct db_alert_group *g, struct strbuf *o)
{
	if (g->good_commit && g->bad_commit) {
		html_escf(o, "%.12s..%.12s", g->good_commit, g->bad_commit);
		if (g->ncommits >= 0)
			strbuf_addf(o, " (%d commit%s)", g->ncommits, g->ncommits == 1 ? "" : "s");
	} else {
		strbuf_addf(o, "sessions %lld..%lld", (long long)g->good_session,
			    (long long)g->bad_session);
		if (robot_group_same_kernel(db, g->id) == 1)
			strbuf_addstr(o, "<br><span class=\"warn\">" ROBOT_NO_KERNEL_CHANGE
					 " (nothing to bisect)</span>");
	}
}

/* the group's culprit, or why there is none yet */
static void culprit_cell(const struct db_alert_group *g, struct strbuf *o)
{
	json_t *c = g->culprit ? json_loads(g->culprit, 0, NULL) : NULL;
	if (json_is_object(c)) {
		strbuf_addstr(o, "<b class=\"culprit\">");
		html_escf(o, "%.12s", member_text(c, "commit"));
		strbuf_addstr(o, "</b> ");
		html_esc(o, member_text(c, "subject"));
		json_t *e = json_object_get(c, "effect");
		json_t *ch = json_object_get(e, "change_pct");
		if (json_is_number(ch)) {
			strbuf_addstr(o, "<br>effect ");
			json_t *ci = json_object_get(e, "ci_pct");
			if (json_is_array(ci) && json_array_size(ci) == 2)
				change(o, json_number_value(ch), json_number_value(json_array_get(ci, 0)),
				       json_number_value(json_array_get(ci, 1)));
			else
				change(o, json_number_value(ch), NAN, NAN);
		}
	} else if (g->why) {
		strbuf_addstr(o, "unresolved: ");
		html_esc(o, g->why);
	} else {
		strbuf_addstr(o, "&ndash;");
	}
	json_decref(c);
}

/* an alert as a row of the decisions or the open alerts */
static void alert_row(struct db *db, const struct db_alert *a, const char *what,
		      struct strbuf *o)
{
	struct db_alert_group g;
	memset(&g, 0, sizeof(g));
	int have = !db_alert_group_get(db, a->group_id, &g);
	const char *cls = !strcmp(a->kind, "regression") ? "worse" : "better";
	strbuf_addf(o, "<tr class=\"%s\"><td>%lld</td>", cls, (long long)a->id);
	if (what) {
		strbuf_addstr(o, "<td><b>");
		html_esc(o, what);
		strbuf_addstr(o, "</b></td>");
	}
	strbuf_addstr(o, "<td>");
	html_esc(o, a->kind);
	strbuf_addstr(o, "</td><td>");
	html_esc(o, alert_state_name(a->status));
	strbuf_addstr(o, "</td><td>");
	html_escf(o, "%s.%s", a->workload, a->metric);
	strbuf_addstr(o, "</td><td>");
	num(o, a->base_value);
	strbuf_addstr(o, " &rarr; ");
	num(o, a->value);
	if (a->unit && *a->unit) {
		strbuf_addch(o, ' ');
		html_esc(o, a->unit);
	}
	strbuf_addstr(o, "</td><td>");
	change(o, a->change_pct, a->ci_lo, a->ci_hi);
	strbuf_addstr(o, "</td><td>");
	pval(o, a->p);
	strbuf_addf(o, "</td><td>%lld</td><td>", (long long)a->group_id);
	if (have)
		range_cell(db, &g, o);
	strbuf_addf(o, "<br>sessions %lld..%lld</td><td>", (long long)a->good_session,
		    (long long)a->bad_session);
	if (have)
		culprit_cell(&g, o);
	strbuf_addstr(o, "</td></tr>\n");
	if (have)
		db_alert_group_free(&g);
}

/* the heading row of a series' rows, when it changes */
static void series_row(struct strbuf *o, const char **last, const char *label, int cols)
{
	if (*last && !strcmp(*last, label))
		return;
	*last = label;
	strbuf_addf(o, "<tr class=\"series\"><th colspan=\"%d\">", cols);
	html_esc(o, *label ? label : "(the only configuration)");
	strbuf_addstr(o, "</th></tr>\n");
}

static int by_label(const void *x, const void *y)
{
	const struct db_alert *a = x, *b = y;
	int c = strcmp(a->series_label, b->series_label);
	return c ? c : (a->id > b->id) - (a->id < b->id);
}

struct ev_row {
	const struct db_alert *a;
	const char *what;
	size_t order;
};

static int row_by_label(const void *x, const void *y)
{
	const struct ev_row *a = x, *b = y;
	int c = strcmp(a->a->series_label, b->a->series_label);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

static const char alert_head[] =
	"<th>alert</th>%s<th>kind</th><th>state now</th><th>metric</th><th>before &rarr; "
	"tonight</th><th>change [95%% CI]</th><th>p</th><th>group</th><th>range</th>"
	"<th>culprit</th>";

static void decisions(struct db *db, const struct robot_result *r, struct strbuf *o)
{
	strbuf_addstr(o, "<h2 id=\"decided\">What the night decided</h2>\n<p class=\"headline\">");
	size_t raised = r->new_regressions + r->new_improvements;
	if (!r->nbaseline && !r->nevents) {
		html_esc(o, r->no_baseline ? r->no_baseline : "no baseline");
		strbuf_addstr(o, "</p>\n");
		return;
	}
	strbuf_addf(o, "<span class=\"%s\">%zu new regression alert%s</span>, %zu new "
		    "improvement alert%s",
		    r->new_regressions ? "worse" : "ok", r->new_regressions,
		    r->new_regressions == 1 ? "" : "s", r->new_improvements,
		    r->new_improvements == 1 ? "" : "s");
	if (r->late)
		strbuf_addf(o, " (%zu of them late: joined the group of their change)", r->late);
	strbuf_addf(o, ", %zu known, %zu fixed", r->known, r->fixed);
	strbuf_addstr(o, "</p>\n");
	if (!r->nevents) {
		strbuf_addstr(o, "<p>No alert was raised, followed or fixed tonight.</p>\n");
		return;
	}
	(void)raised;
	/* the events' alerts, as they stand now (after the bisections), sorted
	   by series: each label said once */
	struct db_alert *al = xcalloc(r->nevents + 1, sizeof(*al));
	struct ev_row *rows = xcalloc(r->nevents + 1, sizeof(*rows));
	size_t n = 0;
	for (size_t i = 0; i < r->nevents; i++) {
		if (db_alert_get(db, r->events[i].alert, &al[n]))
			continue;
		rows[n].a = &al[n];
		rows[n].what = r->events[i].what;
		rows[n].order = i;
		n++;
	}
	qsort(rows, n, sizeof(*rows), row_by_label);
	strbuf_addstr(o, "<table class=\"alerts\"><tr>");
	strbuf_addf(o, alert_head, "<th>tonight</th>");
	strbuf_addstr(o, "</tr>\n");
	const char *last = NULL;
	for (size_t i = 0; i < n; i++) {
		series_row(o, &last, rows[i].a->series_label, 11);
		alert_row(db, rows[i].a, rows[i].what, o);
	}
	strbuf_addstr(o, "</table>\n");
	db_alerts_free(al, n);
	free(rows);
}

static void open_alerts(struct db *db, const struct robot_result *r, struct strbuf *o)
{
	struct db_alert *al;
	size_t n;
	if (db_alerts_open_of(db, r->s.plan, r->s.machine_id, &al, &n))
		return;
	strbuf_addf(o, "<h2 id=\"open\">Open alerts of the plan on the machine: %zu</h2>\n", n);
	if (n) {
		qsort(al, n, sizeof(*al), by_label);
		strbuf_addstr(o, "<table class=\"alerts\"><tr>");
		strbuf_addf(o, alert_head, "");
		strbuf_addstr(o, "</tr>\n");
		const char *last = NULL;
		for (size_t i = 0; i < n; i++) {
			series_row(o, &last, al[i].series_label, 10);
			alert_row(db, &al[i], NULL, o);
		}
		strbuf_addstr(o, "</table>\n");
	}
	db_alerts_free(al, n);
}

static int verdict_by_label(const void *x, const void *y)
{
	const struct robot_verdict *a = *(const struct robot_verdict *const *)x;
	const struct robot_verdict *b = *(const struct robot_verdict *const *)y;
	int c = strcmp(a->series, b->series);
	if (!c)
		c = strcmp(a->workload, b->workload);
	return c ? c : strcmp(a->metric, b->metric);
}

static void comparison(const struct robot_result *r, const struct robot_night_page *p,
		       struct strbuf *o)
{
	strbuf_addstr(o, "<h2 id=\"comparison\">The comparison as the robot made it</h2>\n");
	if (!r->nbaseline) {
		strbuf_addstr(o, "<p>");
		html_esc(o, r->no_baseline ? r->no_baseline : "no baseline");
		strbuf_addstr(o, ": nothing was compared tonight.</p>\n");
		return;
	}
	strbuf_addf(o, "<p><b>Its baseline</b>: session%s", r->nbaseline == 1 ? "" : "s");
	for (size_t i = 0; i < r->nbaseline; i++)
		strbuf_addf(o, " %lld", (long long)r->baseline[i]);
	strbuf_addf(o, " (the %zu previous night%s of plan ", r->nbaseline,
		    r->nbaseline == 1 ? "" : "s");
	html_esc(o, r->s.plan);
	strbuf_addstr(o, " on ");
	html_esc(o, r->s.machine ? r->s.machine : "this machine");
	if (r->expected_since)
		strbuf_addf(o, ", from session %lld on: the expected change",
			    (long long)r->expected_since);
	strbuf_addf(o, ") against tonight's session %lld.</p>\n", (long long)r->s.id);
	strbuf_addf(o, "<p><b>Its rule</b>: a metric moved when the bootstrap 95%% CI of its "
		    "change lies beyond 0, the change is at or beyond the noise threshold "
		    "(%g%%, symmetric on the ratio) and the two-sided Mann-Whitney p is below 0.05 "
		    "(exact data bring their own p). Values are pooled per series without its "
		    "kernel. A metric followed by an open alert is judged against that alert's "
		    "level before its change (above), not here.</p>\n",
		    p->threshold_pct);
	strbuf_addf(o, "<p>%zu metrics: %zu worse, %zu better, %zu no change, %zu inconclusive, "
		    "%zu followed by open alerts", r->nmetrics, r->nworse, r->nbetter, r->nsame,
		    r->ninconclusive, r->nknown_metrics);
	if (r->nrestarted)
		strbuf_addf(o, "; %zu not judged: a new baseline after a change of the preemption "
			    "model", r->nrestarted);
	strbuf_addstr(o, ".</p>\n");
	for (size_t i = 0; i < r->breaks.nr; i++) {
		strbuf_addstr(o, "<p class=\"note\">");
		html_esc(o, r->breaks.v[i]);
		strbuf_addstr(o, "</p>\n");
	}
	if (!r->nverdicts)
		return;
	const struct robot_verdict **v = xcalloc(r->nverdicts + 1, sizeof(*v));
	for (size_t i = 0; i < r->nverdicts; i++)
		v[i] = &r->verdicts[i];
	qsort(v, r->nverdicts, sizeof(*v), verdict_by_label);
	strbuf_addstr(o, "<table class=\"cmp\"><tr><th>metric</th><th>baseline</th><th>tonight</th>"
			 "<th>change [95% CI]</th><th>p</th><th>values</th><th>verdict</th>"
			 "<th>alert</th></tr>\n");
	const char *last = NULL;
	for (size_t i = 0; i < r->nverdicts; i++) {
		const struct robot_verdict *d = v[i];
		series_row(o, &last, d->series, 8);
		const char *cls = !strcmp(d->verdict, "worse")    ? "worse"
				  : !strcmp(d->verdict, "better") ? "better"
								  : "";
		strbuf_addf(o, "<tr class=\"%s\"><td>", cls);
		html_escf(o, "%s.%s", d->workload, d->metric);
		if (d->unit && *d->unit) {
			strbuf_addstr(o, " (");
			html_esc(o, d->unit);
			strbuf_addch(o, ')');
		}
		strbuf_addstr(o, "</td><td>");
		num(o, d->a);
		strbuf_addstr(o, "</td><td>");
		num(o, d->b);
		strbuf_addstr(o, "</td><td>");
		change(o, d->change_pct, d->ci_lo, d->ci_hi);
		strbuf_addstr(o, "</td><td>");
		pval(o, d->p);
		strbuf_addstr(o, "</td><td>");
		if (d->na || d->nb)
			strbuf_addf(o, "%zu vs %zu", d->na, d->nb);
		if (d->from)
			strbuf_addf(o, "<br>baseline from session %lld on", (long long)d->from);
		strbuf_addf(o, "</td><td class=\"v-%s\">", cls);
		html_esc(o, d->verdict);
		strbuf_addstr(o, "</td><td>");
		if (d->alert)
			strbuf_addf(o, "%lld", (long long)d->alert);
		strbuf_addstr(o, "</td></tr>\n");
	}
	strbuf_addstr(o, "</table>\n");
	free(v);
	if (r->undecided.nr) {
		strbuf_addf(o, "<p class=\"note\">undecided: %zu metric%s left inconclusive tonight "
			    "(~N: about N repetitions a side would decide it):</p>\n<ul>",
			    r->undecided.nr, r->undecided.nr == 1 ? "" : "s");
		for (size_t i = 0; i < r->undecided.nr; i++) {
			strbuf_addstr(o, "<li>");
			html_esc(o, r->undecided.v[i]);
			strbuf_addstr(o, "</li>");
		}
		strbuf_addstr(o, "</ul>\n");
	}
}

static const char style[] =
	"body{font-family:sans-serif;margin:1.5em;max-width:75em;color:#222}"
	"h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.25em .5em;"
	"text-align:left;vertical-align:top;font-size:.9em}"
	"tr.series th{background:#eef2f7;font-weight:normal;font-style:italic}"
	"tr.worse td:first-child{border-left:4px solid #c0392b}"
	"tr.better td:first-child{border-left:4px solid #27ae60}"
	".headline{font-size:1.15em}span.worse,td.v-worse{color:#c0392b;font-weight:bold}"
	"span.ok{color:#27ae60}td.v-better{color:#27ae60;font-weight:bold}"
	".warn{color:#b9770e}.note{color:#555}.culprit{font-family:monospace}"
	"pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap}";

int robot_night_html(struct db *db, const struct robot_result *r,
		     const struct robot_night_page *p, struct strbuf *out, struct strbuf *err)
{
	(void)err;
	strbuf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			   "<title>");
	html_escf(out, "schedlab nightly %s", p->title ? p->title : "");
	strbuf_addf(out, "</title><style>%s</style></head><body>\n<h1>", style);
	html_escf(out, "schedlab nightly %s: session %lld, plan %s, machine %s", p->title ? p->title : "",
	     (long long)r->s.id, r->s.plan, r->s.machine ? r->s.machine : "?");
	strbuf_addstr(out, "</h1>\n");
	if (p->runs) {
		strbuf_addstr(out, "<p>runs: ");
		html_esc(out, p->runs);
		strbuf_addstr(out, "</p>\n");
	}
	decisions(db, r, out);
	if (p->bisections && *p->bisections) {
		strbuf_addstr(out, "<h2 id=\"bisections\">The bisections tonight</h2>\n<pre>");
		html_esc(out, p->bisections);
		strbuf_addstr(out, "</pre>\n");
	}
	open_alerts(db, r, out);
	comparison(r, p, out);
	if (p->detail_href) {
		strbuf_addstr(out, "<h2 id=\"detail\">The session in detail</h2>\n<p><a href=\"");
		html_esc(out, p->detail_href);
		strbuf_addstr(out, "\">");
		html_esc(out, p->detail_href);
		strbuf_addstr(out, "</a>: the session's own report (its configurations, workloads "
				   "and system information), without a judgement of its own.</p>\n");
	}
	strbuf_addstr(out, "</body></html>\n");
	return 0;
}
