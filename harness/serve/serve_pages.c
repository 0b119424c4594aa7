/*
 * The pages of schedlab serve (serve_internal.h; docs/serve.md). Each page
 * computes its JSON document with the code of the command that shows the
 * same thing (trend_job_run for /trend, compare_job_run for /compare, the
 * alert store and robot_group_report for /alerts and /alert/N), then, for a
 * browser, renders that document as HTML: the page shows what the API
 * answers, never a second computation. Every text from the store goes
 * through html_esc.
 */
#include "harness/serve/serve_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/alert_store.h"
#include "db/bisect_store.h"
#include "db/serve_reads.h"
#include "harness/results/compare.h"
#include "harness/results/report.h"
#include "harness/results/robot.h"
#include "harness/results/trend.h"
#include "harness/util/numfmt.h"

static const char *const numeric_cols[] = {
	"session", "sessions", "latest_session", "machine_id", "open_alerts", "runs", "ok",
	"failed", "todo", "seed", "boot", "seq", "cfg", "hz", "sched_mc", "run", "round",
	"rep", "evidence_of", "n", "min", "max", "exit_code", "wall_s", "value", "censored",
	"night_new", "night_known", "night_fixed",
	NULL,
};

static json_t *cell(const char *name, const char *v)
{
	if (!v)
		return json_null();
	for (size_t i = 0; numeric_cols[i]; i++)
		if (!strcmp(name, numeric_cols[i])) {
			char *end;
			double d = strtod(v, &end);
			if (*v && !*end)
				return d == (double)(json_int_t)d && fabs(d) < 9e15
					       ? json_integer((json_int_t)d) : json_real(d);
		}
	return jstr(v);
}

static int collect(void *ctx, int ncols, const char *const *names, const char *const *values)
{
	if (!values)
		return 0;
	json_t *o = json_object();
	for (int i = 0; i < ncols; i++)
		json_object_set_new(o, names[i], cell(names[i], values[i]));
	json_array_append_new(ctx, o);
	return 0;
}

/* the rows of a serve query as an array; NULL after setting p's error */
static json_t *rows(struct page *p, enum db_serve_query q, int64_t arg)
{
	json_t *a = json_array();
	if (db_serve_rows(p->o->db, q, arg, collect, a)) {
		p->status = 500;
		strbuf_addf(&p->err, "%s", db_errmsg(p->o->db));
		json_decref(a);
		return NULL;
	}
	return a;
}

/* the rows of q for the thing `what` numbered id; NULL when there is none
 * (404 naming it) or on a database error (500) */
static json_t *rows_of(struct page *p, enum db_serve_query q, int64_t id, const char *what)
{
	json_t *a = rows(p, q, id);
	if (a && !json_array_size(a)) {
		json_decref(a);
		p->status = 404;
		strbuf_addf(&p->err, "no %s %lld", what, (long long)id);
		return NULL;
	}
	return a;
}

static void set_title(struct page *p, const char *fmt, const char *s)
{
	free(p->title);
	p->title = xstrfmt(fmt, s);
}

/* ---- alerts as JSON ---------------------------------------------------- */

static int first_cell(void *ctx, int ncols, const char *const *names, const char *const *values)
{
	char **out = ctx;
	if (values && ncols > 0 && !*out)
		*out = xstrdup(values[0] ? values[0] : "");
	return 0;
}

/* the name of machine id (malloc'd; "" when unknown) */
static char *machine_name(struct db *db, int64_t id)
{
	char *name = NULL;
	if (id > 0)
		db_serve_rows(db, DB_SERVE_MACHINE, id, first_cell, &name);
	return name ? name : xstrdup("");
}

/* an alert; machine: the name of its group's machine (for its trend link) */
static json_t *alert_json(const struct db_alert *a, const char *machine)
{
	json_t *o = json_object();
	json_object_set_new(o, "alert", json_integer(a->id));
	json_object_set_new(o, "group", json_integer(a->group_id));
	json_object_set_new(o, "status", jstr(alert_state_name(a->status)));
	json_object_set_new(o, "kind", jstr(a->kind));
	json_object_set_new(o, "metric", json_pack("s++", a->workload ? a->workload : "", ".",
						   a->metric ? a->metric : ""));
	json_object_set_new(o, "unit", jstr(a->unit));
	json_object_set_new(o, "series", jstr(a->series_label));
	json_object_set_new(o, "series_where", jstr(a->series_where));
	json_object_set_new(o, "detector", jstr(a->detector));
	json_object_set_new(o, "base_value", jreal(a->base_value));
	json_object_set_new(o, "value", jreal(a->value));
	json_object_set_new(o, "change_pct", jreal(a->change_pct));
	json_object_set_new(o, "ci_lo_pct", jreal(a->ci_lo));
	json_object_set_new(o, "ci_hi_pct", jreal(a->ci_hi));
	json_object_set_new(o, "p", jreal(a->p));
	json_object_set_new(o, "good_session", json_integer(a->good_session));
	json_object_set_new(o, "bad_session", json_integer(a->bad_session));
	json_object_set_new(o, "last_seen_session",
			    a->last_seen_session ? json_integer(a->last_seen_session) : json_null());
	json_object_set_new(o, "fixed_session",
			    a->fixed_session ? json_integer(a->fixed_session) : json_null());
	json_object_set_new(o, "created_at", jstr(a->created_at));
	json_object_set_new(o, "updated_at", jstr(a->updated_at));
	/* the trend of the series on its machine, as the alert's link */
	struct strbuf u = STRBUF_INIT;
	strbuf_addstr(&u, "/trend?metric=");
	char *m = xstrfmt("%s.%s", a->workload, a->metric);
	url_enc(&u, m);
	free(m);
	strbuf_addstr(&u, "&where=");
	struct strbuf w = STRBUF_INIT;
	if (machine && *machine)
		strbuf_addf(&w, "machine=%s%s", machine, a->series_where && *a->series_where ? "," : "");
	strbuf_addstr(&w, a->series_where ? a->series_where : "");
	url_enc(&u, w.buf);
	strbuf_release(&w);
	json_object_set_new(o, "trend_url", jstr(u.buf));
	strbuf_release(&u);
	return o;
}

static json_t *alerts_json(struct db *db, const struct db_alert_filter *f, struct strbuf *err)
{
	struct db_alert *al;
	size_t n;
	if (db_alerts_list(db, f, &al, &n)) {
		strbuf_addstr(err, db_errmsg(db));
		return NULL;
	}
	json_t *a = json_array();
	int64_t mid = -1;
	char *mname = NULL;
	for (size_t i = 0; i < n; i++) {
		struct db_alert_group g;
		memset(&g, 0, sizeof(g));
		int gok = !db_alert_group_get(db, al[i].group_id, &g);
		if (gok && g.machine_id != mid) {   /* alerts come by machine, mostly */
			free(mname);
			mname = machine_name(db, g.machine_id);
			mid = g.machine_id;
		}
		json_t *o = alert_json(&al[i], gok ? mname : NULL);
		/* the change that raised it (its group), as the front page groups them */
		json_object_set_new(o, "plan", jstr(gok ? g.plan : NULL));
		json_object_set_new(o, "machine", jstr(gok ? mname : NULL));
		json_object_set_new(o, "range", jstr(gok ? g.range_key : NULL));
		json_object_set_new(o, "commits",
				    gok && g.ncommits >= 0 ? json_integer(g.ncommits) : json_null());
		if (gok && g.culprit) {
			json_t *c = json_loads(g.culprit, 0, NULL);
			const char *cc = json_string_value(json_object_get(c, "commit"));
			json_object_set_new(o, "culprit", jstr(cc));
			if (cc) {   /* the table's column, as `schedlab alerts` prints it */
				char *sh = xstrfmt("%.12s", cc);
				json_object_set_new(o, "culprit_short", jstr(sh));
				free(sh);
			}
			json_decref(c);
		} else {
			json_object_set_new(o, "culprit", json_null());
		}
		db_alert_group_free(&g);
		json_array_append_new(a, o);
	}
	free(mname);
	db_alerts_free(al, n);
	return a;
}

static const char *const alert_cols[] = { "alert", "status", "kind", "metric", "series_where",
					  "change_pct", "good_session", "bad_session", "culprit_short",
					  "created_at", NULL };

static void alerts_table(struct strbuf *o, const json_t *al)
{
	html_table(o, al, alert_cols, "alert", "/alert/");
}

/* ---- / ------------------------------------------------------------------- */

/* the front page's small trends: the latest SPARK_NIGHTS nights of each
 * plan and machine, up to SPARK_METRICS headline metrics (those of its open
 * alerts first, then the first by name of its latest session:
 * db_serve_spark) */
#define SPARK_NIGHTS 14
#define SPARK_METRICS 3

static int same_pm(const json_t *a, const char *plan, const char *machine)
{
	return !strcmp(jget(a, "plan"), plan) && !strcmp(jget(a, "machine"), machine);
}

/* [{plan, machine, metrics: [{metric, unit, better, trend_url, points:
 * [{session, tag, started_at, value, alert}]}]}] */
static json_t *overview_trends(struct page *p, const json_t *open, size_t npairs)
{
	json_t *r = json_array();
	if (db_serve_spark(p->o->db, SPARK_NIGHTS, npairs, collect, r)) {
		p->status = 500;
		strbuf_addf(&p->err, "%s", db_errmsg(p->o->db));
		json_decref(r);
		return NULL;
	}
	json_t *out = json_array();
	json_t *pm = NULL, *met = NULL;
	for (size_t i = 0; i < json_array_size(r); i++) {
		json_t *row = json_array_get(r, i);
		const char *plan = jget(row, "plan"), *machine = jget(row, "machine");
		const char *metric = jget(row, "metric");
		if (!pm || !same_pm(pm, plan, machine)) {
			pm = json_pack("{s:o,s:o,s:[]}", "plan", jstr(plan), "machine", jstr(machine),
				       "metrics");
			json_array_append_new(out, pm);
			met = NULL;
		}
		if (!met || strcmp(jget(met, "metric"), metric)) {
			struct strbuf u = STRBUF_INIT, w = STRBUF_INIT;
			strbuf_addstr(&u, "/trend?metric=");
			url_enc(&u, metric);
			strbuf_addf(&w, "machine=%s", machine);
			strbuf_addstr(&u, "&where=");
			url_enc(&u, w.buf);
			int alerted = 0;
			for (size_t k = 0; k < json_array_size(open); k++)
				if (same_pm(json_array_get(open, k), plan, machine) &&
				    !strcmp(jget(json_array_get(open, k), "metric"), metric))
					alerted = 1;
			met = json_pack("{s:o,s:o,s:o,s:o,s:b,s:[]}", "metric", jstr(metric), "unit",
					jstr(jget(row, "unit")), "better", jstr(jget(row, "better")),
					"trend_url", jstr(u.buf), "alerted", alerted, "points");
			strbuf_release(&u);
			strbuf_release(&w);
			json_array_append_new(json_object_get(pm, "metrics"), met);
		}
		json_int_t sid = json_integer_value(json_object_get(row, "session"));
		json_t *alert = json_null();
		for (size_t k = 0; k < json_array_size(open); k++) {
			const json_t *a = json_array_get(open, k);
			if (same_pm(a, plan, machine) && !strcmp(jget(a, "metric"), metric) &&
			    json_integer_value(json_object_get(a, "bad_session")) == sid)
				alert = json_incref(json_object_get(a, "alert"));
		}
		json_array_append_new(json_object_get(met, "points"),
				      json_pack("{s:I,s:o,s:o,s:O,s:o}", "session", sid, "tag",
						jstr(jget(row, "tag")), "started_at",
						jstr(jget(row, "started_at")), "value",
						json_object_get(row, "value"), "alert", alert));
	}
	json_decref(r);
	/* the headline metrics: alerted first, then by name; the rest dropped */
	for (size_t i = 0; i < json_array_size(out); i++) {
		json_t *ms = json_object_get(json_array_get(out, i), "metrics"), *keep = json_array();
		for (int pass = 0; pass < 2; pass++)
			for (size_t k = 0; k < json_array_size(ms) && json_array_size(keep) < SPARK_METRICS;
			     k++) {
				json_t *m = json_array_get(ms, k);
				if (json_is_true(json_object_get(m, "alerted")) == !pass)
					json_array_append(keep, m);
			}
		json_object_set_new(json_array_get(out, i), "metrics", keep);
	}
	return out;
}

/* a small trend: the metric's points over the latest nights, an open
 * alert's bad night ringed; each point's values in its title */
static void spark_svg(struct strbuf *o, const json_t *m)
{
	const json_t *pts = json_object_get(m, "points");
	size_t n = json_array_size(pts);
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double v = json_number_value(json_object_get(json_array_get(pts, i), "value"));
		lo = fmin(lo, v);
		hi = fmax(hi, v);
	}
	if (!n || !isfinite(lo))
		return;
	if (hi - lo < 1e-12 * fmax(1, fabs(hi))) {
		lo -= 1;
		hi += 1;
	}
	const double W = 150, H = 30, P = 4;
	double dx = n > 1 ? (W - 2 * P) / (double)(n - 1) : 0;
#define SX(i) (P + (n > 1 ? (double)(i) * dx : (W - 2 * P) / 2))
#define SY(v) (P + (H - 2 * P) * (1 - ((v) - lo) / (hi - lo)))
	strbuf_addstr(o, "<a class=\"spark\" href=\"");
	html_esc(o, jget(m, "trend_url"));
	strbuf_addf(o, "\"><svg class=\"spark\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f "
		       "%.0f\" role=\"img\"><polyline class=\"line\" points=\"",
		    W, H, W, H);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(o, "%.1f,%.1f ", SX(i),
			    SY(json_number_value(json_object_get(json_array_get(pts, i), "value"))));
	strbuf_addstr(o, "\"/>");
	for (size_t i = 0; i < n; i++) {
		const json_t *pt = json_array_get(pts, i);
		double v = json_number_value(json_object_get(pt, "value"));
		int al = json_is_integer(json_object_get(pt, "alert"));
		strbuf_addf(o, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"><title>",
			    al ? "spark-alert" : "spark-pt", SX(i), SY(v), al ? "3.5" : "1.6");
		html_escf(o, "session %lld %s %s: %.4g %s",
			  (long long)json_integer_value(json_object_get(pt, "session")),
			  jget(pt, "tag"), jget(pt, "started_at"), v, jget(m, "unit"));
		if (al)
			strbuf_addf(o, " (alert %lld)",
				    (long long)json_integer_value(json_object_get(pt, "alert")));
		strbuf_addstr(o, "</title></circle>");
	}
#undef SX
#undef SY
	strbuf_addstr(o, "</svg></a>");
}

static void overview_table(struct strbuf *o, const json_t *plans, const json_t *trends,
			   const json_t *open)
{
	if (!json_array_size(plans)) {
		strbuf_addstr(o, "<p class=\"muted\">none</p>\n");
		return;
	}
	strbuf_addf(o, "<table class=\"overview\"><tr><th>plan</th><th>machine</th>"
		       "<th>the last %d nights (mean of each night's runs)</th><th>latest session</th>"
		       "<th>its runs</th><th>its alerts</th><th>open alerts</th></tr>\n",
		    SPARK_NIGHTS);
	for (size_t i = 0; i < json_array_size(plans); i++) {
		const json_t *pl = json_array_get(plans, i);
		const char *plan = jget(pl, "plan"), *machine = jget(pl, "machine");
		strbuf_addstr(o, "<tr><td>");
		html_esc(o, plan);
		strbuf_addstr(o, "</td><td>");
		html_esc(o, machine);
		strbuf_addstr(o, "</td><td class=\"sparks\">");
		for (size_t t = 0; t < json_array_size(trends); t++) {
			const json_t *tr = json_array_get(trends, t);
			if (!same_pm(tr, plan, machine))
				continue;
			const json_t *ms = json_object_get(tr, "metrics");
			for (size_t k = 0; k < json_array_size(ms); k++) {
				const json_t *m = json_array_get(ms, k);
				strbuf_addstr(o, "<div class=\"sparkrow\"><span class=\"sparkname\">");
				html_esc(o, jget(m, "metric"));
				strbuf_addstr(o, "</span> ");
				spark_svg(o, m);
				const json_t *pts = json_object_get(m, "points");
				const json_t *last = json_array_get(pts, json_array_size(pts) - 1);
				strbuf_addstr(o, " <span class=\"sparklast\">");
				html_escf(o, "%.4g %s", json_number_value(json_object_get(last, "value")),
					  jget(m, "unit"));
				strbuf_addstr(o, "</span></div>");
			}
		}
		strbuf_addf(o, "</td><td><a href=\"/session/%lld\">%lld</a> ",
			    (long long)json_integer_value(json_object_get(pl, "latest_session")),
			    (long long)json_integer_value(json_object_get(pl, "latest_session")));
		html_esc(o, jget(pl, "latest_tag"));
		strbuf_addstr(o, "<br>");
		html_moment(o, jget(pl, "latest_started_at"));
		strbuf_addstr(o, ", ");
		html_esc(o, jget(pl, "latest_status"));
		strbuf_addf(o, " (of %lld)</td>",
			    (long long)json_integer_value(json_object_get(pl, "sessions")));
		long long ok = json_integer_value(json_object_get(pl, "ok"));
		long long failed = json_integer_value(json_object_get(pl, "failed"));
		long long todo = json_integer_value(json_object_get(pl, "todo"));
		strbuf_addf(o, "<td class=\"verdicts\"><span class=\"better\">%lld ok</span>", ok);
		if (failed)
			strbuf_addf(o, ", <span class=\"worse\">%lld failed</span>", failed);
		if (todo)
			strbuf_addf(o, ", %lld to do", todo);
		long long nn = json_integer_value(json_object_get(pl, "night_new"));
		long long nk = json_integer_value(json_object_get(pl, "night_known"));
		long long nf = json_integer_value(json_object_get(pl, "night_fixed"));
		strbuf_addf(o, "</td><td class=\"verdicts\"><span class=\"%s\">%lld new</span>, "
			       "%lld still there, <span class=\"%s\">%lld fixed</span></td>",
			    nn ? "worse" : "", nn, nk, nf ? "better" : "", nf);
		long long na = json_integer_value(json_object_get(pl, "open_alerts"));
		strbuf_addf(o, "<td>%lld", na);
		if (na) {
			strbuf_addstr(o, " (");
			int first = 1;
			for (size_t k = 0; k < json_array_size(open); k++) {
				const json_t *a = json_array_get(open, k);
				if (!same_pm(a, plan, machine))
					continue;
				long long id = (long long)json_integer_value(json_object_get(a, "alert"));
				strbuf_addf(o, "%s<a href=\"/alert/%lld\">%lld</a>", first ? "" : ", ", id,
					    id);
				first = 0;
			}
			strbuf_addstr(o, ")");
		}
		strbuf_addstr(o, "</td></tr>\n");
	}
	strbuf_addstr(o, "</table>\n");
}

/* the open alerts grouped by the change (their group: the plan, machine
 * and kernel range whose nights raised them), as Perfherder groups by push */
static void alerts_by_change(struct strbuf *o, const json_t *open)
{
	if (!json_array_size(open)) {
		strbuf_addstr(o, "<p class=\"muted\">none</p>\n");
		return;
	}
	size_t n = json_array_size(open);
	char *done = xcalloc(n, 1);
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		const json_t *a0 = json_array_get(open, i);
		json_int_t g = json_integer_value(json_object_get(a0, "group"));
		json_t *mine = json_array();
		for (size_t k = i; k < n; k++)
			if (json_integer_value(json_object_get(json_array_get(open, k), "group")) == g) {
				json_array_append(mine, json_array_get(open, k));
				done[k] = 1;
			}
		strbuf_addstr(o, "<section class=\"change\"><h3>");
		html_escf(o, "%s on %s: ", jget(a0, "plan"), jget(a0, "machine"));
		html_cell(o, "range", json_object_get(a0, "range"), NULL);
		strbuf_addstr(o, "</h3>\n<p class=\"muted\">");
		if (json_is_integer(json_object_get(a0, "commits")))
			strbuf_addf(o, "%lld commit%s, ",
				    (long long)json_integer_value(json_object_get(a0, "commits")),
				    json_integer_value(json_object_get(a0, "commits")) == 1 ? "" : "s");
		strbuf_addf(o, "nights %lld to %lld, %zu alert%s</p>\n",
			    (long long)json_integer_value(json_object_get(a0, "good_session")),
			    (long long)json_integer_value(json_object_get(a0, "bad_session")),
			    json_array_size(mine), json_array_size(mine) == 1 ? "" : "s");
		alerts_table(o, mine);
		strbuf_addstr(o, "</section>\n");
		json_decref(mine);
	}
	free(done);
}

void page_overview(struct page *p)
{
	json_t *plans = rows(p, DB_SERVE_OVERVIEW, 0);
	if (!plans)
		return;
	json_t *running = rows(p, DB_SERVE_RUNNING, 0);
	if (!running) {
		json_decref(plans);
		return;
	}
	struct db_alert_filter f = { .status = ALERT_NSTATES };
	json_t *open = alerts_json(p->o->db, &f, &p->err);
	if (!open) {
		p->status = 500;
		json_decref(plans);
		json_decref(running);
		return;
	}
	json_t *trends = overview_trends(p, open, json_array_size(plans));
	if (!trends) {
		json_decref(plans);
		json_decref(running);
		json_decref(open);
		return;
	}
	p->doc = json_pack("{s:i,s:s,s:o,s:o,s:o}", "schedlab_format", 1, "page", "overview",
			   "plans", plans, "open_alerts", open, "running", running);
	set_title(p, "%s", "schedlab: plans, machines, open alerts");
	json_object_set_new(p->doc, "nights", json_integer(SPARK_NIGHTS));
	json_object_set_new(p->doc, "trends", trends);
	if (!p->want_html)
		return;
	struct strbuf *o = &p->html;
	strbuf_addstr(o, "<h2>Plans and machines</h2>\n");
	overview_table(o, plans, trends, open);
	strbuf_addf(o, "<h2>Open alerts (%zu), by the change that raised them</h2>\n",
		    json_array_size(open));
	alerts_by_change(o, open);
	strbuf_addstr(o, "<h2>Running sessions</h2>\n");
	static const char *const rc[] = { "session", "plan", "tag", "target", "started_at", "host",
					  "runs", "ok", "failed", "todo", NULL };
	html_table(o, running, rc, "session", "/session/");
}

/* ---- /sessions, /session/N ---------------------------------------------------- */

void page_sessions(struct page *p)
{
	json_t *running = rows(p, DB_SERVE_RUNNING, 0);
	json_t *recent = running ? rows(p, DB_SERVE_RECENT, 100) : NULL;
	if (!recent) {
		json_decref(running);
		return;
	}
	p->doc = json_pack("{s:i,s:s,s:o,s:o}", "schedlab_format", 1, "page", "sessions",
			   "running", running, "recent", recent);
	set_title(p, "%s", "sessions");
	if (!p->want_html)
		return;
	strbuf_addstr(&p->html, "<h2>Running</h2>\n");
	html_table(&p->html, running, NULL, "session", "/session/");
	strbuf_addstr(&p->html, "<h2>The newest 100</h2>\n");
	html_table(&p->html, recent, NULL, "session", "/session/");
}

/* a trend link of a metric of the session: the series on its machine */
static char *metric_trend_url(const json_t *m, const char *machine)
{
	struct strbuf u = STRBUF_INIT, w = STRBUF_INIT;
	strbuf_addstr(&u, "/trend?metric=");
	char *mm = xstrfmt("%s.%s", jget(m, "workload"), jget(m, "metric"));
	url_enc(&u, mm);
	free(mm);
	if (machine && *machine)
		strbuf_addf(&w, "machine=%s,", machine);
	strbuf_addf(&w, "run_workload=%s,params=%s", jget(m, "run_workload"), jget(m, "params"));
	strbuf_addstr(&u, "&where=");
	url_enc(&u, w.buf);
	strbuf_release(&w);
	return strbuf_detach(&u, NULL);
}

void page_session(struct page *p, int64_t id)
{
	json_t *s = rows_of(p, DB_SERVE_SESSION, id, "session");
	if (!s)
		return;
	json_t *boots = rows(p, DB_SERVE_BOOTS, id);
	json_t *runs = boots ? rows(p, DB_SERVE_RUNS, id) : NULL;
	json_t *metrics = runs ? rows(p, DB_SERVE_METRICS, id) : NULL;
	if (!metrics) {
		json_decref(s);
		json_decref(boots);
		json_decref(runs);
		return;
	}
	json_t *ses = json_incref(json_array_get(s, 0));
	json_decref(s);
	/* the plan and the sysinfo as JSON values, not strings */
	json_t *pj = json_loads(jget(ses, "plan_json"), 0, NULL);
	if (pj)
		json_object_set_new(ses, "plan_json", pj);
	const char *machine = NULL;
	for (size_t i = 0; i < json_array_size(boots); i++) {
		json_t *b = json_array_get(boots, i);
		json_t *si = json_loads(jget(b, "sysinfo"), 0, NULL);
		if (si)
			json_object_set_new(b, "sysinfo", si);
		if (!machine && !strcmp(jget(b, "status"), "ok"))
			machine = jget(b, "machine");
	}
	for (size_t i = 0; i < json_array_size(metrics); i++) {
		json_t *m = json_array_get(metrics, i);
		char *u = metric_trend_url(m, machine);
		json_object_set_new(m, "trend_url", jstr(u));
		free(u);
	}
	p->doc = json_pack("{s:i,s:s,s:o,s:o,s:o,s:o}", "schedlab_format", 1, "page", "session",
			   "session", ses, "boots", boots, "runs", runs, "metrics", metrics);
	char *t = xstrfmt("session %lld", (long long)id);
	set_title(p, "%s", t);
	free(t);
	if (!p->want_html)
		return;
	struct strbuf *o = &p->html;
	static const char *const sc[] = { "session", "plan", "tag", "target", "status",
					  "started_at", "finished_at", "harness_version", "seed",
					  "plan_path", "runs", "ok", "failed", "todo", NULL };
	json_t *one = json_pack("[O]", ses);
	html_table(o, one, sc, NULL, NULL);
	json_decref(one);
	strbuf_addstr(o, "<h2>Boots (configuration as verified)</h2>\n");
	static const char *const bc[] = { "boot", "seq", "cfg", "status", "machine", "kernel",
					  "config_hash", "hz", "sched_mc", "req_preempt", "preempt",
					  "cmdline", "kernel_commit", "kernel_describe", "clock",
					  "qemu_version", "method", "error", "booted_at", NULL };
	html_table(o, boots, bc, NULL, NULL);
	for (size_t i = 0; i < json_array_size(boots); i++) {
		json_t *b = json_array_get(boots, i);
		json_t *si = json_object_get(b, "sysinfo");
		if (!si || json_is_null(si))
			continue;
		char *d = json_dumps(si, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		strbuf_addf(o, "<details><summary>sysinfo of boot %lld</summary><pre>",
			    (long long)json_integer_value(json_object_get(b, "boot")));
		html_esc(o, d);
		strbuf_addstr(o, "</pre></details>\n");
		free(d);
	}
	strbuf_addstr(o, "<h2>Metrics</h2>\n<table><tr><th>run's workload</th><th>parameters</th>"
			 "<th>metric</th><th>unit</th><th>better when</th><th>samples</th>"
			 "<th>lowest</th><th>highest</th></tr>\n");
	for (size_t i = 0; i < json_array_size(metrics); i++) {
		json_t *m = json_array_get(metrics, i);
		strbuf_addstr(o, "<tr><td>");
		html_esc(o, jget(m, "run_workload"));
		strbuf_addstr(o, "</td><td>");
		html_esc(o, jget(m, "params"));
		strbuf_addstr(o, "</td><td><a href=\"");
		html_esc(o, jget(m, "trend_url"));
		strbuf_addstr(o, "\">");
		html_escf(o, "%s.%s", jget(m, "workload"), jget(m, "metric"));
		strbuf_addstr(o, "</a></td><td>");
		html_esc(o, jget(m, "unit"));
		strbuf_addstr(o, "</td><td>");
		html_esc(o, jget(m, "better"));
		strbuf_addstr(o, "</td><td>");
		html_json_cell(o, json_object_get(m, "n"));
		strbuf_addstr(o, "</td><td>");
		html_json_cell(o, json_object_get(m, "min"));
		strbuf_addstr(o, "</td><td>");
		html_json_cell(o, json_object_get(m, "max"));
		strbuf_addstr(o, "</td></tr>\n");
	}
	strbuf_addstr(o, "</table>\n<h2>Runs</h2>\n");
	static const char *const rc[] = { "run", "boot", "seq", "round", "workload", "params",
					  "knobs", "rep", "status", "skip_reason", "error", "notes",
					  "started_at", "finished_at", "evidence_of", NULL };
	html_table(o, runs, rc, "run", "/run/");
	if (json_object_get(ses, "plan_json")) {
		char *d = json_dumps(json_object_get(ses, "plan_json"),
				     JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
		strbuf_addstr(o, "<h2>Plan</h2>\n<pre>");
		html_esc(o, d);
		strbuf_addstr(o, "</pre>\n");
		free(d);
	}
}

/* ---- /run/N: what a run ran and its raw output ------------------------------ */

void page_run(struct page *p, int64_t id)
{
	json_t *r = rows_of(p, DB_SERVE_RUN, id, "run");
	if (!r)
		return;
	json_t *m = rows(p, DB_SERVE_RUN_METRICS, id);
	if (!m) {
		json_decref(r);
		return;
	}
	json_t *run = json_incref(json_array_get(r, 0));
	json_decref(r);
	static const char *const as_json[] = { "argv", "knobs_applied", "load", "files", NULL };
	for (size_t i = 0; as_json[i]; i++) {
		json_t *v = json_loads(jget(run, as_json[i]), JSON_DECODE_ANY, NULL);
		if (v)
			json_object_set_new(run, as_json[i], v);
	}
	p->doc = json_pack("{s:i,s:s,s:o,s:o}", "schedlab_format", 1, "page", "run", "run", run,
			   "metrics", m);
	char *t = xstrfmt("run %lld", (long long)id);
	set_title(p, "%s", t);
	free(t);
	if (!p->want_html)
		return;
	struct strbuf *o = &p->html;
	static const char *const rc[] = { "run", "session", "boot", "seq", "round", "workload",
					  "params", "knobs", "rep", "status", "skip_reason", "error",
					  "notes", "started_at", "finished_at", "wall_s", "exit_code",
					  "argv", "evidence_of", "evidence_why", NULL };
	json_t *one = json_pack("[O]", run);
	html_table(o, one, rc, "session", "/session/");
	json_decref(one);
	strbuf_addstr(o, "<h2>Metrics</h2>\n");
	html_table(o, m, NULL, NULL, NULL);
	static const char *const raw[] = { "stdout", "stderr", "knobs_applied", "load", "files",
					   NULL };
	for (size_t i = 0; raw[i]; i++) {
		const json_t *v = json_object_get(run, raw[i]);
		if (!v || json_is_null(v))
			continue;
		strbuf_addf(o, "<h2>%s</h2>\n<pre id=\"%s\">", raw[i], raw[i]);
		if (json_is_string(v)) {
			html_esc(o, json_string_value(v));
		} else {
			char *d = json_dumps(v, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
			html_esc(o, d);
			free(d);
		}
		strbuf_addstr(o, "</pre>\n");
	}
}

/* ---- /trend ---------------------------------------------------------------- */

/* a selector of one series: the machine and what robot.c's series_where
 * names, plus the kernel when it is not from git */
static char *series_where_full(const struct sel_series *se)
{
	static const enum sel_dim dims[] = { DIM_PREEMPT, DIM_HZ, DIM_SCHED_MC, DIM_KNOBS,
					     DIM_WORKLOAD, DIM_PARAMS };
	struct strbuf sb = STRBUF_INIT;
	if (se->machine && *se->machine)
		strbuf_addf(&sb, "machine=%s", se->machine);
	if (!(se->kernel_commit && *se->kernel_commit) && se->kernel_release && *se->kernel_release)
		strbuf_addf(&sb, "%skernel_release=%s,config_hash=%s", sb.len ? "," : "",
			    se->kernel_release, se->config_hash ? se->config_hash : "");
	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		const char *v = se->dim[dims[i]];
		if (v && *v)
			strbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", sel_dim_key(dims[i]), v);
	}
	return strbuf_detach(&sb, NULL);
}

/* robot.c's series_where of a series (the alert's selector) */
static char *series_where_robot(const struct sel_series *se)
{
	static const enum sel_dim dims[] = { DIM_PREEMPT, DIM_HZ, DIM_SCHED_MC, DIM_KNOBS,
					     DIM_WORKLOAD, DIM_PARAMS };
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		const char *v = se->dim[dims[i]];
		if (v && *v)
			strbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", sel_dim_key(dims[i]), v);
	}
	return strbuf_detach(&sb, NULL);
}

static void trend_svg(struct strbuf *o, const json_t *doc)
{
	const json_t *pts = json_object_get(doc, "points");
	size_t n = json_array_size(pts);
	if (!n)
		return;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double v = json_number_value(json_object_get(json_array_get(pts, i), "value"));
		if (isfinite(v)) {
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
	}
	if (!isfinite(lo)) {
		lo = 0;
		hi = 1;
	}
	if (hi - lo < 1e-12 * fmax(1, fabs(hi))) {
		lo -= 0.5 * fmax(fabs(lo), 1e-9);
		hi += 0.5 * fmax(fabs(hi), 1e-9);
	}
	double pad = 0.08 * (hi - lo);
	lo -= pad;
	hi += pad;
	const double W = 960, H = 320, L = 70, R = 20, T = 15, B = 30;
	double dx = n > 1 ? (W - L - R) / (double)(n - 1) : 0;
#define X(i) (L + (n > 1 ? (double)(i) * dx : (W - L - R) / 2))
#define Y(v) (T + (H - T - B) * (1 - ((v) - lo) / (hi - lo)))
	/* the page's script (serve_assets.c) zooms it: the plot's bounds and
	   its value range as data, each point's position and values as data */
	strbuf_addf(o, "<div class=\"trend\"><p class=\"muted\">Drag over a range to zoom in "
		       "(double-click or <button id=\"zoom-reset\" type=\"button\">show all"
		       "</button>); a point shows its values; a click opens its session. "
		       "<span id=\"zoom-info\"></span></p>\n"
		       "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"trend-svg\" width=\"%.0f\" "
		       "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" data-l=\"%.0f\" "
		       "data-r=\"%.0f\" data-t=\"%.0f\" data-b=\"%.0f\" data-lo=\"%.17g\" "
		       "data-hi=\"%.17g\" data-unit=\"",
		    W, H, W, H, L, W - R, T, H - B, lo, hi);
	html_esc(o, jget(doc, "unit"));
	strbuf_addf(o, "\">\n<defs><clipPath id=\"plot-clip\"><rect x=\"%.0f\" y=\"0\" "
		       "width=\"%.0f\" height=\"%.0f\"/></clipPath></defs>\n",
		    L - 9, W - L - R + 18, H - B + 9);
	for (int k = 0; k <= 4; k++) {
		double v = lo + (hi - lo) * k / 4;
		strbuf_addf(o, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" "
			       "stroke=\"#eee\"/><text class=\"ylab\" data-k=\"%d\" x=\"4\" "
			       "y=\"%.1f\" font-size=\"11\">%.4g</text>\n",
			    L, W - R, Y(v), Y(v), k, Y(v) + 4, v);
	}
	strbuf_addstr(o, "<g clip-path=\"url(#plot-clip)\"><g id=\"zoomable\">\n");
	/* the noise band: mean +- one standard deviation of the points of each
	   segment between change points (drawn, not judged: the verdicts are
	   the change points') */
	const json_t *cpl = json_object_get(doc, "change_points");
	size_t seg0 = 0;
	for (size_t k = 0; k <= json_array_size(cpl); k++) {
		size_t end = k < json_array_size(cpl)
				     ? (size_t)json_integer_value(
					       json_object_get(json_array_get(cpl, k), "index"))
				     : n;
		if (end > n)
			end = n;
		double sum = 0, sq = 0;
		size_t m = 0;
		for (size_t i = seg0; i < end; i++) {
			double v = json_number_value(json_object_get(json_array_get(pts, i), "value"));
			if (isfinite(v)) {
				sum += v;
				sq += v * v;
				m++;
			}
		}
		if (m >= 2) {
			double mean = sum / (double)m;
			double var = (sq - sum * sum / (double)m) / (double)(m - 1);
			double sd = var > 0 ? sqrt(var) : 0;
			double x0 = X(seg0) - dx / 2, x1 = X(end - 1) + dx / 2;
			double y0 = Y(fmin(hi, mean + sd)), y1 = Y(fmax(lo, mean - sd));
			strbuf_addf(o, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				       "height=\"%.1f\"><title>mean %.4g, sd %.3g (%zu points)</title></rect>\n",
				    fmax(L, x0), y0, fmin(W - R, x1) - fmax(L, x0), fmax(y1 - y0, 0.5), mean,
				    sd, m);
		}
		seg0 = end;
	}
	/* change points: a dashed line where the level moves, the levels around it */
	const json_t *cps = json_object_get(doc, "change_points");
	for (size_t k = 0; k < json_array_size(cps); k++) {
		const json_t *cp = json_array_get(cps, k);
		size_t i = (size_t)json_integer_value(json_object_get(cp, "index"));
		double mb = json_number_value(json_object_get(cp, "mean_before"));
		double ma = json_number_value(json_object_get(cp, "mean_after"));
		double xb = X(i) - dx / 2;
		strbuf_addf(o, "<line class=\"cp\" vector-effect=\"non-scaling-stroke\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\">"
			       "<title>change point at session %lld: %+.1f%%</title></line>\n",
			    xb, xb, T, H - B,
			    (long long)json_integer_value(json_object_get(cp, "session")),
			    json_number_value(json_object_get(cp, "change_pct")));
		if (isfinite(mb) && isfinite(ma)) {
			size_t nb = (size_t)json_integer_value(json_object_get(cp, "n_before"));
			size_t na = (size_t)json_integer_value(json_object_get(cp, "n_after"));
			double x0 = X(i >= nb ? i - nb : 0), x1 = X(i + na - 1 < n ? i + na - 1 : n - 1);
			strbuf_addf(o, "<line class=\"level\" vector-effect=\"non-scaling-stroke\" x1=\"%.1f\" "
				       "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/><line class=\"level\" "
				       "vector-effect=\"non-scaling-stroke\" x1=\"%.1f\" x2=\"%.1f\" "
				       "y1=\"%.1f\" y2=\"%.1f\"/>\n",
				    x0, xb, Y(mb), Y(mb), xb, x1, Y(ma), Y(ma));
		}
	}
	strbuf_addstr(o, "<polyline class=\"line\" vector-effect=\"non-scaling-stroke\" points=\"");
	for (size_t i = 0; i < n; i++) {
		double v = json_number_value(json_object_get(json_array_get(pts, i), "value"));
		if (isfinite(v))
			strbuf_addf(o, "%.1f,%.1f ", X(i), Y(v));
	}
	strbuf_addstr(o, "\"/>\n</g>\n");
	for (size_t i = 0; i < n; i++) {
		const json_t *pt = json_array_get(pts, i);
		double v = json_number_value(json_object_get(pt, "value"));
		if (!isfinite(v))
			continue;
		long long sid = (long long)json_integer_value(json_object_get(pt, "session"));
		strbuf_addf(o, "<a href=\"/session/%lld\"><circle class=\"pt%s\" cx=\"%.1f\" "
			       "cy=\"%.1f\" r=\"3.5\" data-x=\"%.1f\" data-y=\"%.1f\" "
			       "data-session=\"%lld\" data-v=\"%.6g\" data-tag=\"",
			    sid, json_is_true(json_object_get(pt, "bound")) ? " bound" : "", X(i), Y(v),
			    X(i), Y(v), sid, v);
		html_esc(o, jget(pt, "tag"));
		strbuf_addstr(o, "\" data-at=\"");
		html_esc(o, jget(pt, "started_at"));
		strbuf_addstr(o, "\" data-kernel=\"");
		html_esc(o, jget(pt, "kernel"));
		strbuf_addstr(o, "\"><title>");
		html_escf(o, "session %lld %s %s: %.6g", sid, jget(pt, "tag"), jget(pt, "started_at"),
			  v);
		const char *k = jget(pt, "kernel");
		if (*k) {
			strbuf_addstr(o, " kernel ");
			html_esc(o, k);
		}
		strbuf_addstr(o, "</title></circle></a>\n");
	}
	/* the alerts: a ring at the point of their bad session */
	const json_t *al = json_object_get(doc, "alerts");
	for (size_t k = 0; k < json_array_size(al); k++) {
		const json_t *a = json_array_get(al, k);
		json_int_t bad = json_integer_value(json_object_get(a, "bad_session"));
		for (size_t i = 0; i < n; i++) {
			const json_t *pt = json_array_get(pts, i);
			double v = json_number_value(json_object_get(pt, "value"));
			if (json_integer_value(json_object_get(pt, "session")) != bad || !isfinite(v))
				continue;
			strbuf_addf(o, "<a href=\"/alert/%lld\"><circle class=\"alert-mark\" "
				       "cx=\"%.1f\" cy=\"%.1f\" r=\"8\" data-x=\"%.1f\" "
				       "data-y=\"%.1f\"><title>",
				    (long long)json_integer_value(json_object_get(a, "alert")), X(i),
				    Y(v), X(i), Y(v));
			html_escf(o, "alert %lld: %s %s", (long long)json_integer_value(
							      json_object_get(a, "alert")),
				  jget(a, "kind"), jget(a, "status"));
			strbuf_addstr(o, "</title></circle></a>\n");
		}
	}
#undef X
#undef Y
	strbuf_addstr(o, "</g><rect id=\"zoom-sel\" class=\"zoom-sel\" x=\"0\" y=\"0\" width=\"0\" "
			 "height=\"0\"/></svg>\n<div id=\"tip\" class=\"tip\" hidden></div></div>\n");
}

static void trend_form(struct strbuf *o, const char *metric, const char *where,
		       const char *since)
{
	strbuf_addstr(o, "<form method=\"get\" action=\"/trend\">metric <input name=\"metric\" "
			 "size=\"28\" value=\"");
	html_esc(o, metric);
	strbuf_addstr(o, "\"> where <input name=\"where\" size=\"60\" value=\"");
	html_esc(o, where);
	strbuf_addstr(o, "\"> since <input name=\"since\" size=\"12\" value=\"");
	html_esc(o, since);
	strbuf_addstr(o, "\"> <button>show</button></form>\n");
}

/* since=: a date as the commands' --since takes it; 0, or -1 with 400 */
static int since_ok(struct page *p, const char *since)
{
	if (!since || date_arg_valid(since))
		return 0;
	p->status = 400;
	strbuf_addf(&p->err, "since=%s: expected " DATE_ARG_FORMAT " (as --since)", since);
	return -1;
}

void page_trend(struct page *p)
{
	const char *metric = p->arg(p->cls, "metric"), *where = p->arg(p->cls, "where");
	const char *since = p->arg(p->cls, "since");
	if (since_ok(p, since))
		return;
	struct cp_options cpo;
	cp_options_default(&cpo);
	const char *pv = p->arg(p->cls, "p"), *win = p->arg(p->cls, "window");
	if (pv) {
		char *end;
		double v = strtod(pv, &end);
		if (*end || !(v > 0 && v < 1)) {
			p->status = 400;
			strbuf_addf(&p->err, "p=%s: a significance between 0 and 1 (e.g. 0.001)", pv);
			return;
		}
		cpo.max_pvalue = v;
	}
	if (win) {
		char *end;
		long v = strtol(win, &end, 10);
		if (*end || v < 2 || v > 100000) {
			p->status = 400;
			strbuf_addf(&p->err, "window=%s: a number of points from 2 to 100000", win);
			return;
		}
		cpo.window = (size_t)v;
	}
	set_title(p, "trend %s", metric ? metric : "");
	if (!metric) {
		p->status = 400;
		strbuf_addstr(&p->err, "metric=WORKLOAD.METRIC is required (e.g. "
				       "/trend?metric=hackbench.time_s&where=machine=m1)");
		return;
	}
	struct trend_job job;
	struct strbuf err = STRBUF_INIT;
	int rc = trend_job_run(p->o->db, metric, where, since, &cpo, &job, &err);
	if (rc < 0) {
		p->status = 400;
		strbuf_addstr(&p->err, err.buf);
		strbuf_release(&err);
		trend_job_free(&job);
		return;
	}
	strbuf_release(&err);
	if (rc > 0) {
		/* several series: each with the link that narrows to it */
		json_t *list = json_array();
		for (size_t i = 0; i < job.set.nseries; i++) {
			const struct sel_series *se = &job.set.series[i];
			json_t *s = json_object();
			for (int d = 0; d < SEL_NDIMS; d++) {
				char *t = sel_series_dim_text(se, (enum sel_dim)d);
				json_object_set_new(s, sel_dim_name(d), jstr(t));
				free(t);
			}
			json_object_set_new(s, "sessions", json_integer((json_int_t)se->nsessions));
			char *w = series_where_full(se);
			struct strbuf u = STRBUF_INIT;
			strbuf_addstr(&u, "/trend?metric=");
			url_enc(&u, metric);
			strbuf_addstr(&u, "&where=");
			url_enc(&u, w);
			if (since) {
				strbuf_addstr(&u, "&since=");
				url_enc(&u, since);
			}
			json_object_set_new(s, "where", jstr(w));
			json_object_set_new(s, "url", jstr(u.buf));
			free(w);
			strbuf_release(&u);
			json_array_append_new(list, s);
		}
		p->doc = json_pack("{s:i,s:s,s:o,s:o}", "schedlab_format", 1, "page", "trend",
				   "metric", jstr(metric), "several_series", list);
		if (p->want_html) {
			trend_form(&p->html, metric, where, since);
			strbuf_addf(&p->html, "<p>The selection holds %zu series; a trend is of one. "
					      "Pick one:</p>\n", job.set.nseries);
			/* each named by what tells it from the others */
			size_t ns = json_array_size(list);
			const char **w = xcalloc(ns ? ns : 1, sizeof(*w));
			for (size_t i = 0; i < ns; i++)
				w[i] = jget(json_array_get(list, i), "where");
			struct strvec common = { 0 };
			where_common(w, ns, &common);
			if (common.nr) {
				strbuf_addstr(&p->html, "<p class=\"common\">every series: ");
				struct strvec differ = { 0 }, k = { 0 }, v = { 0 };
				where_terms(w[0], &k, &v);
				for (size_t i = 0; i < k.nr; i++) {
					size_t c = 0;
					while (c < common.nr && strcmp(common.v[c], k.v[i]))
						c++;
					if (c == common.nr)
						strvec_push(&differ, k.v[i]);
				}
				html_chips(&p->html, w[0], &differ);
				strbuf_addstr(&p->html, "</p>\n");
				strvec_clear(&differ);
				strvec_clear(&k);
				strvec_clear(&v);
			}
			strbuf_addstr(&p->html, "<ul class=\"series\">\n");
			for (size_t i = 0; i < ns; i++) {
				json_t *s = json_array_get(list, i);
				strbuf_addstr(&p->html, "<li><a href=\"");
				html_esc(&p->html, jget(s, "url"));
				strbuf_addstr(&p->html, "\">");
				html_chips(&p->html, w[i], &common);
				strbuf_addf(&p->html, "</a> (%lld sessions)</li>\n",
					    (long long)json_integer_value(json_object_get(s, "sessions")));
			}
			strbuf_addstr(&p->html, "</ul>\n");
			strvec_clear(&common);
			free(w);
		}
		trend_job_free(&job);
		return;
	}
	json_t *doc = trend_job_json(&job, metric, &cpo);
	/* each point's kernel (git: describe and commit) */
	json_t *pts = json_object_get(doc, "points");
	for (size_t i = 0; i < job.tr.np && i < json_array_size(pts); i++) {
		const struct trend_point *tp = &job.tr.pt[i];
		const char *k = tp->kernel;
		for (size_t g = 0; !k && g < job.set.ngroups; g++) {
			const struct sel_group *gr = &job.set.groups[g];
			for (size_t r = 0; r < gr->n; r++)
				if (gr->session[r] == tp->session) {
					const struct sel_series *se = &job.set.series[gr->series];
					k = se->kernel_label ? se->kernel_label : se->kernel_release;
					break;
				}
		}
		json_object_set_new(json_array_get(pts, i), "kernel", jstr(k));
	}
	/* the alerts of this series (robot.c's selector of it) on its points */
	struct strbuf aerr = STRBUF_INIT;
	struct db_alert_filter f = { .status = -1, .metric = metric };
	json_t *all = alerts_json(p->o->db, &f, &aerr), *mine = json_array();
	for (size_t k = 0; k < json_array_size(all); k++) {
		json_t *a = json_array_get(all, k);
		int match = 0;
		for (size_t s = 0; s < job.set.nseries && !match; s++) {
			char *w = series_where_robot(&job.set.series[s]);
			match = !strcmp(w, jget(a, "series_where"));
			free(w);
		}
		json_int_t bad = json_integer_value(json_object_get(a, "bad_session"));
		int on = 0;
		for (size_t i = 0; i < job.tr.np && !on; i++)
			on = job.tr.pt[i].session == bad;
		if (match && on)
			json_array_append(mine, a);
	}
	json_decref(all);
	strbuf_release(&aerr);
	json_object_set_new(doc, "alerts", mine);
	json_object_set_new(doc, "page", json_string("trend"));
	p->doc = doc;
	trend_job_free(&job);
	if (!p->want_html)
		return;
	struct strbuf *o = &p->html;
	trend_form(o, metric, where, since);
	const json_t *ser = json_object_get(doc, "series");
	strbuf_addstr(o, "<p class=\"series\"><b>");
	html_escf(o, "%s", metric);
	strbuf_addstr(o, "</b> ");
	html_escf(o, "(%s, %s is better): %zu sessions; ", jget(doc, "unit"), jget(doc, "better"),
		  json_array_size(pts));
	/* the series as chips: its dimensions as the selector keys name them */
	struct strbuf sw = STRBUF_INIT;
	for (int d = 0; d < SEL_NDIMS; d++) {
		const char *v = jget(ser, sel_dim_name((enum sel_dim)d));
		if (*v)
			strbuf_addf(&sw, "%s%s=%s", sw.len ? "," : "", sel_dim_key((enum sel_dim)d), v);
	}
	html_chips(o, sw.buf, NULL);
	strbuf_release(&sw);
	strbuf_addstr(o, "</p>\n");
	trend_svg(o, doc);
	const json_t *cps = json_object_get(doc, "change_points");
	strbuf_addf(o, "<h2>Change points (%zu)</h2>\n", json_array_size(cps));
	static const char *const cc[] = { "session", "started_at", "mean_before", "mean_after",
					  "change_pct", "pvalue", "n_before", "n_after", NULL };
	html_table(o, cps, cc, "session", "/session/");
	strbuf_addf(o, "<h2>Alerts (%zu)</h2>\n", json_array_size(mine));
	alerts_table(o, mine);
	strbuf_addstr(o, "<h2>Points</h2>\n");
	static const char *const ptc[] = { "session", "tag", "started_at", "n", "value", "kernel",
					   "bound", NULL };
	html_table(o, pts, ptc, "session", "/session/");
}

/* ---- /compare -------------------------------------------------------------- */

/* the selector of side x ("a", "b"): from the lists' picks x_tag, x_kernel,
 * x_config, x_machine when one is given, else the typed x=; NULL: none */
static char *side_selector(struct page *p, const char *x)
{
	static const struct { const char *field, *key; } parts[] = {
		{ "tag", "tag=" }, { "machine", "machine=" }, { "kernel", "kernel_release=" },
		{ "config", "" },
	};
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s_%s", x, parts[i].field);
		const char *v = p->arg(p->cls, name);
		if (v && *v)
			strbuf_addf(&sb, "%s%s%s", sb.len ? "," : "", parts[i].key, v);
	}
	if (sb.len)
		return strbuf_detach(&sb, NULL);
	strbuf_release(&sb);
	const char *typed = p->arg(p->cls, x);
	return typed ? xstrdup(typed) : NULL;
}

#define PICKS_MAX 300

/* {tags, kernels, configs, machines}: each [{value, sessions}], newest first */
static json_t *compare_picks(struct page *p)
{
	static const struct { const char *name; enum db_serve_query q; } lists[] = {
		{ "tags", DB_SERVE_PICK_TAGS }, { "kernels", DB_SERVE_PICK_KERNELS },
		{ "configs", DB_SERVE_PICK_CONFIGS }, { "machines", DB_SERVE_PICK_MACHINES },
	};
	json_t *o = json_object();
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		json_t *r = rows(p, lists[i].q, PICKS_MAX);
		if (!r) {
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, lists[i].name, r);
	}
	return o;
}

/* the selected value of side x's list field (x_field=) */
static const char *picked(struct page *p, const char *x, const char *field)
{
	char name[32];
	snprintf(name, sizeof(name), "%s_%s", x, field);
	const char *v = p->arg(p->cls, name);
	return v ? v : "";
}

static void pick_select(struct page *p, struct strbuf *o, const char *x, const char *field,
			const char *label, const json_t *list)
{
	strbuf_addf(o, "<label>%s <select name=\"%s_%s\" id=\"%s-%s\"><option value=\"\">any"
		       "</option>", label, x, field, x, field);
	const char *sel = picked(p, x, field);
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *r = json_array_get(list, i);
		const char *v = jget(r, "value");
		strbuf_addstr(o, "<option value=\"");
		html_esc(o, v);
		strbuf_addf(o, "\"%s>", !strcmp(v, sel) ? " selected" : "");
		if (!strcmp(field, "config")) {   /* the configuration in words */
			struct strbuf w = STRBUF_INIT;
			where_words(&w, v);
			html_esc(o, w.buf);
			strbuf_release(&w);
		} else {
			html_esc(o, v);
		}
		long long ns = (long long)json_integer_value(json_object_get(r, "sessions"));
		strbuf_addf(o, " (%lld session%s)</option>", ns, ns == 1 ? "" : "s");
	}
	strbuf_addstr(o, "</select></label>\n");
}

static void compare_form(struct page *p, struct strbuf *o, const json_t *picks, const char *a,
			 const char *b, const char *metric)
{
	strbuf_addstr(o, "<form class=\"pick\" id=\"compare-form\" method=\"get\" "
			 "action=\"/compare\">\n");
	static const char *const sides[] = { "a", "b" };
	for (size_t s = 0; s < 2; s++) {
		strbuf_addf(o, "<fieldset id=\"side-%s\"><legend>%s</legend>\n", sides[s],
			    s ? "B (the new side)" : "A (the baseline)");
		pick_select(p, o, sides[s], "tag", "tag", json_object_get(picks, "tags"));
		pick_select(p, o, sides[s], "kernel", "kernel", json_object_get(picks, "kernels"));
		pick_select(p, o, sides[s], "config", "configuration",
			    json_object_get(picks, "configs"));
		pick_select(p, o, sides[s], "machine", "machine", json_object_get(picks, "machines"));
		const char *cur = s ? b : a;
		if (cur) {
			strbuf_addstr(o, "<p class=\"muted\">now: <code class=\"selector\">");
			html_esc(o, cur);
			strbuf_addstr(o, "</code></p>\n");
		}
		strbuf_addstr(o, "</fieldset>\n");
	}
	strbuf_addstr(o, "<p><label>metric (optional) <input name=\"metric\" size=\"20\" value=\"");
	html_esc(o, metric);
	strbuf_addstr(o, "\"></label> <button id=\"do-compare\">compare</button></p></form>\n");
}

void page_compare(struct page *p)
{
	const char *metric = p->arg(p->cls, "metric"), *thr = p->arg(p->cls, "threshold");
	set_title(p, "%s", "compare");
	/* each side picked from the lists (a_tag=, a_kernel=, a_config=,
	   a_machine=: the selector they make), or typed (a=) */
	char *as = side_selector(p, "a"), *bs = side_selector(p, "b");
	const char *a = as, *b = bs;
	json_t *picks = compare_picks(p);
	if (!picks) {
		free(as);
		free(bs);
		return;
	}
	struct strbuf form = STRBUF_INIT;
	compare_form(p, &form, picks, a, b, metric);
	json_decref(picks);
	if (!a || !b) {
		p->doc = json_pack("{s:i,s:s,s:s}", "schedlab_format", 1, "page", "compare",
				   "usage", "/compare?a=SELECTOR&b=SELECTOR[&metric=M][&threshold=PCT]");
		strbuf_add(&p->html, form.buf, form.len);
		strbuf_addstr(&p->html, "<p>Pick each side from the tags, kernels, configurations "
					"and machines in the store (as <code>schedlab compare A "
					"B</code> with the selector they make).</p>\n");
		strbuf_release(&form);
		free(as);
		free(bs);
		return;
	}
	struct cmp_options o;
	cmp_options_default(&o);
	o.range_param = p->o->range_param;
	o.metric = metric;
	if (thr) {
		char *end;
		double v = strtod(thr, &end);
		if (*end || !(v > 0 && v <= 1000)) {
			p->status = 400;
			strbuf_addf(&p->err, "threshold=%s: a percentage above 0 (default 2)", thr);
			strbuf_release(&form);
			free(as);
			free(bs);
			return;
		}
		o.threshold_pct = v;
	}
	struct compare_job job;
	struct strbuf err = STRBUF_INIT;
	if (compare_job_run(p->o->db, a, b, &o, 1, &job, &err)) {
		p->status = 400;
		strbuf_addstr(&p->err, err.buf);
		strbuf_release(&err);
		strbuf_release(&form);
		free(as);
		free(bs);
		return;
	}
	strbuf_release(&err);
	if (!job.a.nrows || !job.b.nrows) {
		p->status = 404;
		strbuf_addf(&p->err, "selector %s matches no results", !job.a.nrows ? a : b);
	} else if (!job.r.nrows) {
		p->status = 404;
		strbuf_addstr(&p->err, "A and B have no (workload, metric) in common");
	}
	if (p->status != 200) {
		compare_job_free(&job);
		strbuf_release(&form);
		free(as);
		free(bs);
		return;
	}
	json_t *doc = compare_job_json(&job, a, b);
	compare_job_free(&job);
	json_object_set_new(doc, "page", json_string("compare"));
	p->doc = doc;
	if (p->want_html) {
		struct strbuf *h = &p->html;
		strbuf_add(h, form.buf, form.len);
		const json_t *w = json_object_get(doc, "warnings");
		for (size_t i = 0; i < json_array_size(w); i++) {
			strbuf_addstr(h, "<p class=\"muted\">");
			html_esc(h, json_string_value(json_array_get(w, i)));
			strbuf_addstr(h, "</p>\n");
		}
		strbuf_addstr(h, "<table><tr><th>workload</th><th>series</th><th>metric</th>"
				 "<th>unit</th><th>A</th><th>B</th><th>change</th><th>95% CI of the change</th>"
				 "<th>p-value</th><th>verdict</th></tr>\n");
		const json_t *rs = json_object_get(doc, "rows");
		for (size_t i = 0; i < json_array_size(rs); i++) {
			const json_t *r = json_array_get(rs, i);
			const char *v = jget(r, "verdict");
			strbuf_addf(h, "<tr class=\"%s\"><td>",
				    !strcmp(v, "worse") ? "worse" : !strcmp(v, "better") ? "better" : "");
			html_esc(h, jget(r, "workload"));
			strbuf_addstr(h, "</td><td>");
			html_esc(h, jget(r, "series"));
			strbuf_addstr(h, "</td><td>");
			html_esc(h, jget(r, "metric"));
			if (!strcmp(jget(r, "kind"), "histogram"))
				strbuf_addf(h, " p%g", json_number_value(json_object_get(r, "percentile")));
			strbuf_addstr(h, "</td><td>");
			html_esc(h, jget(r, "unit"));
			strbuf_addstr(h, "</td><td>");
			html_json_cell(h, json_object_get(r, "a"));
			strbuf_addstr(h, "</td><td>");
			html_json_cell(h, json_object_get(r, "b"));
			double ch = json_number_value(json_object_get(r, "change_pct"));
			strbuf_addstr(h, "</td><td>");
			if (json_is_number(json_object_get(r, "change_pct")))
				strbuf_addf(h, "%+.1f%%", ch);
			strbuf_addstr(h, "</td><td>");
			if (json_is_number(json_object_get(r, "ci_lo_pct")))
				strbuf_addf(h, "[%+.1f, %+.1f]",
					    json_number_value(json_object_get(r, "ci_lo_pct")),
					    json_number_value(json_object_get(r, "ci_hi_pct")));
			strbuf_addstr(h, "</td><td>");
			html_json_cell(h, json_object_get(r, "p"));
			strbuf_addstr(h, "</td><td>");
			html_esc(h, jget(r, "verdict_text"));
			strbuf_addstr(h, "</td></tr>\n");
		}
		strbuf_addstr(h, "</table>\n<p><a id=\"report-link\" href=\"/report?a=");
		struct strbuf u = STRBUF_INIT;
		url_enc(&u, a);
		strbuf_addstr(&u, "&b=");
		url_enc(&u, b);
		html_esc(h, u.buf);
		strbuf_release(&u);
		strbuf_addstr(h, "\">the report of this comparison</a> (latency curves, "
				 "trends, sysinfo: schedlab report --compare)</p>\n");
	}
	strbuf_release(&form);
	free(as);
	free(bs);
}

/* ---- /alerts, /alert/N --------------------------------------------------- */

void page_alerts(struct page *p)
{
	const char *status = p->arg(p->cls, "status");
	struct db_alert_filter f = { .status = ALERT_NSTATES, .machine = p->arg(p->cls, "machine"),
				     .metric = p->arg(p->cls, "metric"),
				     .since = p->arg(p->cls, "since") };
	/* the filters of `schedlab alerts list` */
	if (since_ok(p, f.since))
		return;
	if (status && !strcmp(status, "all"))
		f.status = -1;
	else if (status && strcmp(status, "open")) {
		int s = alert_state_parse(status);
		if (s < 0) {
			p->status = 400;
			strbuf_addf(&p->err, "status=%s: one of new, bisecting, culprit, unresolved, "
					     "acknowledged, expected, invalid, fixed, open, all", status);
			return;
		}
		f.status = s;
	}
	json_t *al = alerts_json(p->o->db, &f, &p->err);
	if (!al) {
		p->status = 500;
		return;
	}
	p->doc = json_pack("{s:i,s:s,s:s,s:o}", "schedlab_format", 1, "page", "alerts", "status",
			   status ? status : "open", "alerts", al);
	set_title(p, "alerts: %s", status ? status : "open");
	if (!p->want_html)
		return;
	strbuf_addstr(&p->html, "<p>");
	static const char *const st[] = { "open", "all", "new", "bisecting", "culprit",
					  "unresolved", "acknowledged", "expected", "invalid",
					  "fixed", NULL };
	for (size_t i = 0; st[i]; i++)
		strbuf_addf(&p->html, "<a href=\"/alerts?status=%s\">%s</a> ", st[i], st[i]);
	strbuf_addstr(&p->html, "</p>\n");
	alerts_table(&p->html, al);
}

static void triage_forms(struct strbuf *o, int64_t id, const char *csrf)
{
	static const char *const verbs[] = { "ack", "expect", "invalid", "reopen", NULL };
	strbuf_addf(o, "<form class=\"triage\" method=\"post\" action=\"/alert/%lld\">"
		       "<p>Triage (as <code>schedlab alerts VERB %lld --note TEXT</code>):</p>"
		       "<input type=\"hidden\" name=\"csrf\" value=\"%s\">"
		       "<label>note <textarea name=\"note\" maxlength=\"60000\"></textarea></label>"
		       "<p><label>token <input type=\"password\" name=\"token\" "
		       "autocomplete=\"current-password\"></label></p><p>",
		    (long long)id, (long long)id, csrf);
	for (size_t i = 0; verbs[i]; i++)
		strbuf_addf(o, "<button name=\"action\" value=\"%s\" id=\"do-%s\">%s</button> ",
			    verbs[i], verbs[i], verbs[i]);
	strbuf_addstr(o, "</p></form>\n");
	strbuf_addf(o, "<form class=\"triage\" method=\"post\" action=\"/alert/%lld\" "
		       "id=\"bisect-form\"><p>Bisect the alert's group (as <code>schedlab alerts "
		       "bisect %lld</code>, in the background: it outlives this page and this "
		       "server):</p><input type=\"hidden\" name=\"csrf\" value=\"%s\">"
		       "<p><label>token <input type=\"password\" name=\"token\" "
		       "autocomplete=\"current-password\"></label> <button name=\"action\" "
		       "value=\"bisect\" id=\"do-bisect\">bisect</button></p></form>\n",
		    (long long)id, (long long)id, csrf);
}

/* the latest bisection started from this page: running or how it ended,
 * the outcome as stored, its log's tail (a running one reloads the page
 * every 10 s) */
static void bisect_job_html(struct strbuf *o, const json_t *j)
{
	if (!json_is_object(j))
		return;
	int running = json_is_true(json_object_get(j, "running"));
	if (running)
		strbuf_addstr(o, "<meta http-equiv=\"refresh\" content=\"10\">\n");
	strbuf_addf(o, "<section id=\"bisect\"><h2>Bisection started from this page</h2>\n"
		       "<p id=\"bisect-job\" data-running=\"%d\">", running);
	if (running)
		strbuf_addf(o, "<b>running</b> since ");
	else
		strbuf_addstr(o, "started ");
	html_moment(o, jget(j, "started_at"));
	strbuf_addf(o, " (pid %lld)", (long long)json_integer_value(json_object_get(j, "pid")));
	if (!running) {
		strbuf_addstr(o, ", <b>ended</b> ");
		html_moment(o, jget(j, "ended_at"));
		strbuf_addstr(o, ": <span id=\"bisect-how\">");
		html_esc(o, jget(j, "how"));
		strbuf_addstr(o, "</span>");
	}
	strbuf_addstr(o, "</p>\n");
	const json_t *oc = json_object_get(j, "outcome");
	if (json_is_object(oc)) {
		strbuf_addstr(o, "<p id=\"bisect-outcome\">outcome: <b>");
		html_esc(o, jget(oc, "status"));
		strbuf_addstr(o, "</b>");
		if (json_is_string(json_object_get(oc, "culprit"))) {
			strbuf_addstr(o, ", culprit <code>");
			html_esc(o, jget(oc, "culprit"));
			strbuf_addstr(o, "</code>");
		}
		if (json_is_string(json_object_get(oc, "why"))) {
			strbuf_addstr(o, ": ");
			html_esc(o, jget(oc, "why"));
		}
		strbuf_addstr(o, "</p>\n");
	}
	strbuf_addstr(o, "<p class=\"muted\"><code>");
	html_esc(o, jget(j, "command"));
	strbuf_addstr(o, "</code>; its log: <code>");
	html_esc(o, jget(j, "log"));
	strbuf_addstr(o, "</code></p>\n<pre id=\"bisect-log\">");
	html_esc(o, jget(j, "log_tail"));
	strbuf_addstr(o, "</pre></section>\n");
}

void page_alert(struct page *p, int64_t id)
{
	struct db *db = p->o->db;
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		p->status = 404;
		strbuf_addstr(&p->err, db_errmsg(db));
		return;
	}
	struct db_alert_group g;
	memset(&g, 0, sizeof(g));
	int gok = !db_alert_group_get(db, a.group_id, &g);
	char *mname = machine_name(db, gok ? g.machine_id : 0);
	json_t *aj = alert_json(&a, mname);
	free(mname);
	json_t *gj = json_null(), *steps = json_array(), *events = json_array();
	char *report = NULL;
	if (gok) {
		json_t *cul = g.culprit ? json_loads(g.culprit, 0, NULL) : NULL;
		gj = json_pack("{s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "group",
			       (json_int_t)g.id, "plan", jstr(g.plan), "range", jstr(g.range_key),
			       "git_dir", jstr(g.git_dir), "good_commit", jstr(g.good_commit),
			       "bad_commit", jstr(g.bad_commit), "commits",
			       g.ncommits >= 0 ? json_integer(g.ncommits) : json_null(), "bisection",
			       g.bisect_id ? json_integer(g.bisect_id) : json_null(), "culprit",
			       cul ? cul : jstr(g.culprit), "why", jstr(g.why), "created_at",
			       jstr(g.created_at), "updated_at", jstr(g.updated_at));
		/* the group's bisection, or the one under way for its plan (a
		   running bisection is the group's once it ends) */
		int64_t bid = g.bisect_id;
		if (!bid && g.bisect_plan)
			bid = db_bisect_by_plan_path(db, g.bisect_plan);
		if (bid) {
			struct db_bisect_step *st;
			size_t n;
			if (!db_bisect_steps(db, bid, &st, &n)) {
				for (size_t i = 0; i < n; i++)
					json_array_append_new(
						steps, json_pack("{s:i,s:o,s:o,s:o,s:o}", "step", st[i].seq,
								 "commit", jstr(st[i].commit), "role",
								 jstr(st[i].role), "verdict",
								 jstr(st[i].verdict), "detail",
								 jstr(st[i].detail)));
				db_bisect_steps_free(st, n);
			}
		}
		struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
		if (!robot_group_report(db, g.id, &out, &err))
			report = strbuf_detach(&out, NULL);
		strbuf_release(&out);
		strbuf_release(&err);
	}
	struct db_alert_event *ev;
	size_t ne;
	if (!db_alert_events(db, id, &ev, &ne)) {
		for (size_t i = 0; i < ne; i++)
			json_array_append_new(
				events, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "at", jstr(ev[i].at),
						  "actor", jstr(ev[i].actor), "from",
						  jstr(ev[i].from_status), "to", jstr(ev[i].to_status),
						  "session",
						  ev[i].session ? json_integer(ev[i].session) : json_null(),
						  "note", jstr(ev[i].note)));
		db_alert_events_free(ev, ne);
	}
	p->doc = json_pack("{s:i,s:s,s:o,s:o,s:o,s:o,s:o,s:o}", "schedlab_format", 1, "page",
			   "alert", "alert", aj, "group", gj, "bisection_steps", steps, "history",
			   events, "report", jstr(report), "bisect_job",
			   gok ? bisect_job_json(p->bg, db, g.id) : json_null());
	free(report);
	char *t = xstrfmt("alert %lld: %s %s", (long long)id, a.kind, alert_state_name(a.status));
	set_title(p, "%s", t);
	free(t);
	db_alert_group_free(&g);
	db_alert_free(&a);
	if (!p->want_html)
		return;
	struct strbuf *o = &p->html;
	strbuf_addf(o, "<p id=\"status\" data-status=\"%s\">status: <b>",
		    alert_state_word((enum alert_state)alert_state_parse(jget(aj, "status"))) ?: "");
	html_esc(o, jget(aj, "status"));
	strbuf_addstr(o, "</b></p>\n");
	const json_t *cul = json_object_get(gj, "culprit");
	if (json_is_object(cul)) {
		strbuf_addstr(o, "<p id=\"culprit\">culprit: <code>");
		html_esc(o, jget(cul, "commit"));
		strbuf_addstr(o, "</code> ");
		html_esc(o, jget(cul, "subject"));
		strbuf_addstr(o, " (");
		html_esc(o, jget(cul, "author"));
		strbuf_addstr(o, ")</p>\n");
	}
	/* the change in words: before, after, how much, how sure */
	strbuf_addstr(o, "<p class=\"change\">");
	html_esc(o, jget(aj, "metric"));
	strbuf_addstr(o, ": ");
	html_json_cell(o, json_object_get(aj, "base_value"));
	strbuf_addch(o, ' ');
	html_esc(o, jget(aj, "unit"));
	strbuf_addstr(o, " &rarr; <b>");
	html_json_cell(o, json_object_get(aj, "value"));
	strbuf_addch(o, ' ');
	html_esc(o, jget(aj, "unit"));
	strbuf_addstr(o, "</b>");
	if (json_is_number(json_object_get(aj, "change_pct"))) {
		strbuf_addf(o, " (<b>%+.1f%%</b>", json_number_value(json_object_get(aj, "change_pct")));
		if (json_is_number(json_object_get(aj, "ci_lo_pct")))
			strbuf_addf(o, ", 95%% CI %+.1f%% to %+.1f%%",
				    json_number_value(json_object_get(aj, "ci_lo_pct")),
				    json_number_value(json_object_get(aj, "ci_hi_pct")));
		if (json_is_number(json_object_get(aj, "p")))
			strbuf_addf(o, ", p-value %.2g", json_number_value(json_object_get(aj, "p")));
		strbuf_addch(o, ')');
	}
	strbuf_addstr(o, "</p>\n");
	static const char *const fields[] = { "series_where", "detector", "good_session",
					      "bad_session", "last_seen_session", "fixed_session",
					      "created_at", "updated_at", NULL };
	html_fields(o, aj, fields);
	strbuf_addstr(o, "<p><a id=\"trend-link\" href=\"");
	html_esc(o, jget(aj, "trend_url"));
	strbuf_addstr(o, "\">the trend of this series</a></p>\n");
	if (!json_is_null(gj)) {
		strbuf_addf(o, "<h2>The change that raised it (alert group %lld)</h2>\n",
			    (long long)json_integer_value(json_object_get(gj, "group")));
		static const char *const gf[] = { "plan", "range", "commits", "good_commit",
						  "bad_commit", "git_dir", "bisection", "why",
						  "created_at", "updated_at", NULL };
		html_fields(o, gj, gf);
	}
	if (json_is_integer(json_object_get(gj, "bisection")))
		strbuf_addf(o, "<p><a id=\"bisect-link\" href=\"/bisect/%lld\">the bisection's "
			       "page</a></p>\n",
			    (long long)json_integer_value(json_object_get(gj, "bisection")));
	bisect_job_html(o, json_object_get(p->doc, "bisect_job"));
	strbuf_addf(o, "<h2>Bisection steps (%zu)</h2>\n", json_array_size(steps));
	html_table(o, steps, NULL, NULL, NULL);
	strbuf_addstr(o, "<h2>Culprit report</h2>\n<pre id=\"report\">");
	html_esc(o, jget(p->doc, "report"));
	strbuf_addstr(o, "</pre>\n<h2>History</h2>\n");
	static const char *const hc[] = { "at", "actor", "from", "to", "session", "note", NULL };
	html_table(o, events, hc, NULL, NULL);
}

void page_alert_forms(struct page *p, int64_t id, const char *csrf)
{
	if (csrf)
		triage_forms(&p->html, id, csrf);
	else
		strbuf_addstr(&p->html, "<p class=\"muted\">read-only: schedlab serve was started "
					"without --token-file, so triage is off.</p>\n");
}

/* ---- /report, /bisect/N: the pages `schedlab report` writes ----------------- */

void page_report(struct page *p)
{
	const char *a = p->arg(p->cls, "a"), *b = p->arg(p->cls, "b");
	const char *session = p->arg(p->cls, "session"), *since = p->arg(p->cls, "since");
	struct report_options ro;
	report_options_default(&ro);
	ro.cmp.range_param = p->o->range_param;
	ro.dbpath = "schedlab serve";
	set_title(p, "%s", "report");
	if (a && b) {
		ro.mode = REPORT_COMPARE;
		ro.a = a;
		ro.b = b;
	} else if (session) {
		/* a session that is not there is 404, as /session/N's */
		if (db_session_resolve(p->o->db, session) < 0) {
			int number = !strcmp(session, "last") ||
				     (strspn(session, "0123456789") == strlen(session) &&
				      strlen(session) < 19 && atoll(session) > 0);
			p->status = number ? 404 : 400;
			strbuf_addstr(&p->err, db_errmsg(p->o->db));
			return;
		}
		ro.mode = REPORT_SESSION;
		ro.session = session;
	} else if (since) {
		if (since_ok(p, since))
			return;
		ro.mode = REPORT_SINCE;
		ro.since = since;
	} else {
		p->status = 400;
		strbuf_addstr(&p->err, "/report?a=SEL&b=SEL, /report?session=N or "
				       "/report?since=DATE (as schedlab report --compare, "
				       "--session, --since)");
		return;
	}
	struct report r;
	struct strbuf err = STRBUF_INIT;
	if (report_build(p->o->db, &ro, &r, &err)) {
		p->status = 400;
		strbuf_addstr(&p->err, err.buf);
		strbuf_release(&err);
		return;
	}
	strbuf_release(&err);
	report_render_html(&r, &p->html);
	report_free(&r);
	p->whole = 1;
}

void page_bisect(struct page *p, int64_t id)
{
	char spec[32];
	snprintf(spec, sizeof(spec), "%lld", (long long)id);
	char *t = xstrfmt("bisection %lld", (long long)id);
	set_title(p, "%s", t);
	free(t);
	struct strbuf err = STRBUF_INIT;
	if (report_bisect_html(p->o->db, spec, &p->html, &err)) {
		p->status = 404;
		strbuf_addstr(&p->err, err.buf);
		strbuf_reset(&p->html);
	} else {
		p->whole = 1;
	}
	strbuf_release(&err);
}
