/*
 * `schedlab report --bisect ID`: one self-contained HTML page for a stored
 * bisection (harness/orchestrate/bisect.c): the range and the settings, the
 * outcome (the first bad commit with its effect and CI, or the candidates
 * left), a table of every step (commit, subject, verdict, n, centre, the
 * comparison with each end: change, CI and p, the build time and why a
 * commit was skipped), and the metric's distribution per step as an inline
 * SVG strip chart (one row of dots per step, on a log axis when the values
 * span more than a factor of 20). Reads only the bisect tables (db/bisect_store.h):
 * each step's detail holds the values it was decided on.
 */
#include "harness/results/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "db/bisect_store.h"

static const char page_css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}"
	"table{border-collapse:collapse;margin:1em 0}"
	"td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
	"th{background:#f3f3f3}.good{color:#15721a}.bad{color:#b3261e}.skip,.unclear{color:#8a6d00}"
	"code{font-size:13px}.num{text-align:right;font-variant-numeric:tabular-nums}"
	".note{color:#555}\n";

static void esc(struct strbuf *sb, const char *s)
{
	html_esc(sb, s ? s : "");
}

static void cmp_cell(struct strbuf *o, const json_t *c)
{
	if (!c) {
		strbuf_addstr(o, "<td></td>");
		return;
	}
	strbuf_addstr(o, "<td class=num>");
	json_t *ch = json_object_get(c, "change_pct"), *ci = json_object_get(c, "ci_pct"),
	       *p = json_object_get(c, "p");
	if (ch)
		strbuf_addf(o, "%+.3g%%", json_number_value(ch));
	if (json_array_size(ci) == 2)
		strbuf_addf(o, " [%+.3g, %+.3g]", json_number_value(json_array_get(ci, 0)),
			    json_number_value(json_array_get(ci, 1)));
	if (p)
		strbuf_addf(o, "<br>p=%.2g", json_number_value(p));
	strbuf_addf(o, "<br>%s%s</td>", json_string_value(json_object_get(c, "verdict")),
		    json_is_true(json_object_get(c, "significant")) ? " (counts)" : "");
}

/* the strip chart: one row per step with values */
static void strips(struct strbuf *o, const struct db_bisect_step *s, json_t **d, size_t n,
		   const char *unit)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t rows = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_object_get(d[i], "values"), *x;
		size_t k;
		if (json_array_size(v))
			rows++;
		json_array_foreach(v, k, x) {
			double y = json_number_value(x);
			if (y < lo)
				lo = y;
			if (y > hi)
				hi = y;
		}
	}
	if (!rows || !isfinite(lo))
		return;
	int logx = lo > 0 && hi / lo > 20;
	double a = logx ? log(lo) : lo, b = logx ? log(hi) : hi;
	if (b <= a)
		b = a + 1;
	const double W = 640, L = 120, RH = 22;
	double H = rows * RH + 30;
	strbuf_addf(o, "<svg width=\"%.0f\" height=\"%.0f\" role=img aria-label=\"values per "
		    "step\">\n", L + W + 20, H);
	size_t r = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_object_get(d[i], "values"), *x;
		if (!json_array_size(v))
			continue;
		double y = 10 + r * RH + RH / 2;
		const char *verdict = s[i].verdict ? s[i].verdict : "pending";
		const char *col = !strcmp(verdict, "good") ? "#15721a"
				  : !strcmp(verdict, "bad") ? "#b3261e" : "#8a6d00";
		strbuf_addf(o, "<text x=\"0\" y=\"%.1f\" font-size=\"12\">%.10s %s</text>\n",
			    y + 4, s[i].commit, verdict);
		size_t k;
		json_array_foreach(v, k, x) {
			double val = json_number_value(x), t = logx ? log(val) : val;
			strbuf_addf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" "
				    "fill-opacity=\"0.6\"><title>%.4g %s</title></circle>\n",
				    L + (t - a) / (b - a) * W, y, col, val, unit);
		}
		r++;
	}
	strbuf_addf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">%.4g %s</text>"
		    "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=end>%.4g %s%s</text>\n",
		    L, H - 4, lo, unit, L + W, H - 4, hi, unit, logx ? " (log axis)" : "");
	strbuf_addstr(o, "</svg>\n");
}

int report_bisect_html(struct db *db, const char *spec, struct strbuf *o, struct strbuf *err)
{
	struct db_bisect b;
	struct db_bisect_step *s = NULL;
	size_t n = 0;
	if (db_bisect_load(db, spec, &b)) {
		strbuf_addf(err, "--bisect %s: %s", spec, db_errmsg(db));
		return -1;
	}
	if (db_bisect_steps(db, b.id, &s, &n)) {
		strbuf_addstr(err, db_errmsg(db));
		db_bisect_free(&b);
		return -1;
	}
	json_t **d = calloc(n ? n : 1, sizeof(*d));
	const char *unit = "";
	for (size_t i = 0; i < n; i++) {
		d[i] = s[i].detail ? json_loads(s[i].detail, 0, NULL) : NULL;
		if (!d[i])
			d[i] = json_object();
		if (!*unit && json_string_value(json_object_get(d[i], "unit")))
			unit = json_string_value(json_object_get(d[i], "unit"));
	}
	json_t *res = b.result ? json_loads(b.result, 0, NULL) : NULL;
	strbuf_addstr(o, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n"
			 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			 "style-src 'unsafe-inline'\">\n<title>schedlab bisect ");
	strbuf_addf(o, "%lld: ", (long long)b.id);
	esc(o, b.metric);
	strbuf_addf(o, "</title>\n<style>%s</style></head><body>\n<h1>bisect %lld: ", page_css,
		    (long long)b.id);
	esc(o, b.metric);
	strbuf_addstr(o, "</h1>\n<p>Range: good <code>");
	esc(o, b.good);
	strbuf_addstr(o, "</code> (");
	esc(o, b.good_ref);
	strbuf_addstr(o, ") .. bad <code>");
	esc(o, b.bad);
	strbuf_addstr(o, "</code> (");
	esc(o, b.bad_ref);
	strbuf_addstr(o, ") in <code>");
	esc(o, b.git_dir);
	strbuf_addstr(o, "</code>");
	if (b.where_sel && *b.where_sel) {
		strbuf_addstr(o, ", rows where <code>");
		esc(o, b.where_sel);
		strbuf_addstr(o, "</code>");
	}
	strbuf_addf(o, ". Status: %s. ", b.status);
	if (b.session_runs > 0)
		strbuf_addf(o, "A value is one session's centre (%d runs); %d sessions a round, "
			    "at most %d a commit", b.session_runs, b.repetitions, b.max_repetitions);
	else
		strbuf_addf(o, "A value is one run; %d runs a round, at most %d a commit",
			    b.repetitions, b.max_repetitions);
	strbuf_addf(o, ", at most %d steps; threshold %.3g%%, alpha %.3g. Runs: sessions tagged "
		    "<code>bisect-%lld</code>.</p>\n", b.max_steps, b.threshold_pct, b.alpha,
		    (long long)b.id);
	const char *outcome = json_string_value(json_object_get(res, "outcome"));
	strbuf_addstr(o, "<h2>Outcome</h2>\n<p>");
	if (outcome && !strcmp(outcome, "found")) {
		json_t *e = json_object_get(res, "effect");
		strbuf_addstr(o, "The first bad commit: <code>");
		esc(o, json_string_value(json_object_get(res, "first_bad")));
		strbuf_addstr(o, "</code> &ldquo;");
		esc(o, json_string_value(json_object_get(res, "subject")));
		strbuf_addstr(o, "&rdquo;");
		if (json_object_get(e, "change_pct")) {
			strbuf_addf(o, "; against good %+.3g%%",
				    json_number_value(json_object_get(e, "change_pct")));
			json_t *ci = json_object_get(e, "ci_pct");
			if (json_array_size(ci) == 2)
				strbuf_addf(o, " [%+.3g, %+.3g]",
					    json_number_value(json_array_get(ci, 0)),
					    json_number_value(json_array_get(ci, 1)));
		}
		strbuf_addstr(o, ".");
	} else if (outcome) {
		strbuf_addstr(o, "No single first bad commit: ");
		esc(o, outcome);
		json_t *c = json_object_get(res, "candidates"), *x;
		size_t k;
		if (json_array_size(c)) {
			strbuf_addstr(o, "; candidates:");
			json_array_foreach(c, k, x) {
				strbuf_addstr(o, " <code>");
				esc(o, json_string_value(x));
				strbuf_addstr(o, "</code>");
			}
		}
		json_t *m = json_object_get(res, "message");
		if (m) {
			strbuf_addstr(o, " (");
			esc(o, json_string_value(m));
			strbuf_addstr(o, ")");
		}
	} else {
		strbuf_addstr(o, "Not finished (schedlab bisect --resume continues it).");
	}
	strbuf_addstr(o, "</p>\n<h2>Steps</h2>\n<table><tr><th>#</th><th>commit</th><th>subject"
			 "</th><th>verdict</th><th>n</th><th>centre</th><th>against good</th>"
			 "<th>against bad</th><th>build s</th><th>why</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const char *v = s[i].verdict ? s[i].verdict : "pending";
		strbuf_addf(o, "<tr><td>%d</td><td><code>%.12s</code></td><td>", s[i].seq,
			    s[i].commit);
		esc(o, json_string_value(json_object_get(d[i], "subject")));
		strbuf_addf(o, "</td><td class=\"%s\">%s (%s)</td><td class=num>%lld</td>", v, v,
			    s[i].role, (long long)json_integer_value(json_object_get(d[i], "n")));
		json_t *ce = json_object_get(d[i], "centre");
		if (ce)
			strbuf_addf(o, "<td class=num>%.4g %s</td>", json_number_value(ce), unit);
		else
			strbuf_addstr(o, "<td></td>");
		cmp_cell(o, json_object_get(d[i], "vs_good"));
		cmp_cell(o, json_object_get(d[i], "vs_bad"));
		json_t *bs = json_object_get(d[i], "build_s");
		if (bs)
			strbuf_addf(o, "<td class=num>%.0f</td>", json_number_value(bs));
		else
			strbuf_addstr(o, "<td></td>");
		strbuf_addstr(o, "<td>");
		const char *why = json_string_value(json_object_get(d[i], "skip"));
		esc(o, why ? why : json_string_value(json_object_get(d[i], "why")));
		strbuf_addstr(o, "</td></tr>\n");
	}
	strbuf_addstr(o, "</table>\n<h2>Distribution per step</h2>\n");
	strips(o, s, d, n, unit);
	strbuf_addstr(o, "<p class=note>Each dot is one run's value; the ends' rows hold every "
			 "round they got. A step is good or bad only when it differs significantly "
			 "from the other end (docs/bisect.md).</p>\n</body></html>\n");
	for (size_t i = 0; i < n; i++)
		json_decref(d[i]);
	free(d);
	json_decref(res);
	db_bisect_steps_free(s, n);
	db_bisect_free(&b);
	return 0;
}
