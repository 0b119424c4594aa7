/*
 * The report as one self-contained HTML page (report_render_html; see
 * report.h): the A/B tables, the latency distributions and trends as
 * inline SVG, the sessions and the sysinfo of the boots, with a small
 * inline script that sorts tables and flags its own errors. It renders a
 * struct report that report_build() (report.c) computed and reads nothing
 * else. Every text from the database goes through html_esc()
 * (harness/util/html.c, the same escaping as serve's site); nothing from
 * the database is placed inside <script>.
 */
#include "harness/results/report.h"
#include "harness/results/format.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist.h"

/* ---- rendering: helpers ------------------------------------------------------ */

static void render_trace(const struct report_trace *t, struct strbuf *o);
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
	html_esc(o, c->label_a);
	strbuf_addstr(o, " &rarr; B: ");
	html_esc(o, c->label_b);
	strbuf_addstr(o, "</h3>\n<p class=\"meta\">selectors: A <code>");
	html_esc(o, c->a);
	strbuf_addstr(o, "</code>, B <code>");
	html_esc(o, c->b);
	strbuf_addstr(o, "</code>; ");
	if (res->diff_mask) {
		strbuf_addstr(o, "compared:");
		for (int d = 0; d < SEL_NDIMS; d++)
			if (res->label_mask & (1u << d))
				html_escf(o, " %s", sel_dim_name((enum sel_dim)d));
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
			 "<th>change %</th><th>95% CI</th><th>p-value</th><th>verdict</th>"
			 "<th>noise floor &plusmn;%</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < res->nrows; i++) {
		const struct cmp_row *row = &res->rows[i];
		int order;
		const char *cls = verdict_class(row, &order);
		char *vt = compare_verdict_text(row);
		strbuf_addf(o, "<tr class=\"%s\" data-verdict=\"%s\"><td>", cls, cls + 2);
		html_esc(o, row->workload);
		strbuf_addstr(o, "</td><td>");
		html_esc(o, res->pairs[row->pair].label);
		strbuf_addstr(o, "</td><td>");
		if (row->kind == CMP_HIST)
			html_escf(o, "%s p%g", row->metric, row->pct);
		else
			html_esc(o, row->metric);
		strbuf_addstr(o, "</td><td>");
		html_esc(o, row->unit);
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
			td_num(o, row->v.centre_a, row->v.censored_a ? "&ge;" : "");
			td_num(o, row->v.centre_b, row->v.censored_b ? "&ge;" : "");
			td_pct(o, row->v.change_pct);
			if (isfinite(row->v.ci_lo_pct))
				strbuf_addf(o, "<td class=\"n\" data-sort=\"%.6g\">[%+.1f, %+.1f]</td>",
					    row->v.ci_lo_pct, row->v.ci_lo_pct, row->v.ci_hi_pct);
			else
				strbuf_addstr(o, "<td data-sort=\"\">-</td>");
			td_num(o, row->v.p, "");
		}
		strbuf_addf(o, "<td data-sort=\"%d\">", order);
		html_esc(o, vt);
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

/* the scales of one latency chart: x in nines of the percentile (0 ..
 * xmax), y log10 of the latency (10^ly0 .. 10^ly1; below ymin on the axis) */
struct dist_scale {
	double xmax, ymin, ly0, ly1;
	double pw, ph;   /* plot width and height */
};

static double dist_x(const struct dist_scale *s, double x)
{
	return LML + x / s->xmax * s->pw;
}

static double dist_y(const struct dist_scale *s, double v)
{
	return LMT + s->ph - (log10(v < s->ymin ? s->ymin : v) - s->ly0) / (s->ly1 - s->ly0) * s->ph;
}

/* the ranges of every curve: up to 6 nines, whole decades of latency */
static void dist_scale(const struct report_dist *d, struct dist_scale *s)
{
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
	s->xmax = xmax;
	s->ymin = ymin;
	s->ly0 = ly0;
	s->ly1 = ly1;
	s->pw = LW - LML - LMR;
	s->ph = LH - LMT - LMB;
}

/* the chart's title and the opening <svg> */
static void dist_head(const struct report_dist *d, size_t idx, struct strbuf *o)
{
	strbuf_addstr(o, "<div class=\"chart\"><div class=\"t\">");
	html_escf(o, "%s %s", d->workload, d->name);
	if (*d->params_label)
		html_escf(o, " (%s)", d->params_label);
	strbuf_addstr(o, "</div><div class=\"s\">latency by percentile (merged runs per "
			 "configuration; x: percentile, log scale of nines)</div>\n");
	strbuf_addf(o, "<svg class=\"chart-svg dist\" id=\"dist%zu\" width=\"%d\" height=\"%d\" "
		       "viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n",
		    idx, LW, LH, LW, LH);
}

/* grid lines, tick labels, axes and axis titles */
static void dist_grid(const struct report_dist *d, const struct dist_scale *s, struct strbuf *o)
{
	const double pw = s->pw, ph = s->ph;
	for (int k = 0; k <= (int)s->xmax; k++) {
		double x = dist_x(s, k);
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
	for (double e = s->ly0; e <= s->ly1 + 1e-9; e++)
		for (int m = 1; m < 10; m++) {
			double v = m * pow(10, e);
			if (log10(v) > s->ly1 + 1e-9)
				break;
			double y = dist_y(s, v);
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
	html_escf(o, "latency (%s, log)", d->unit);
	strbuf_addstr(o, "</text>\n");
}

/* the SVG path of a curve: a step per non-empty bucket; returns its points */
static size_t dist_path(const struct hist *h, const struct dist_scale *s, struct strbuf *path)
{
	uint64_t cum = 0;
	size_t npts = 0;
	double px = 0, py = 0, lastx = 0;
	for (size_t i = 0; i < h->nbuckets; i++) {
		if (!h->counts[i])
			continue;
		double y = dist_y(s, hist_bucket_value(h, i));
		double x0 = dist_x(s, nines((double)cum / (double)h->total, s->xmax));
		cum += h->counts[i];
		lastx = dist_x(s, nines((double)cum / (double)h->total, s->xmax));
		if (!npts) {
			strbuf_addf(path, "M%.1f %.1f", x0, y);
			px = x0;
			py = y;
			npts++;
			continue;
		}
		/* a step: along at the previous value, then up to this one */
		if (x0 - px >= 0.3) {
			strbuf_addf(path, "L%.1f %.1f", x0, py);
			px = x0;
			npts++;
		}
		if (fabs(y - py) >= 0.3) {
			strbuf_addf(path, "L%.1f %.1f", px, y);
			py = y;
			npts++;
		}
	}
	if (npts && lastx - px >= 0.3) {
		strbuf_addf(path, "L%.1f %.1f", lastx, py);
		npts++;
	}
	return npts;
}

static const double dist_pcts[] = { 50, 99, 99.9 };

/* one configuration's curve with marks at p50, p99 and p99.9 */
static void dist_curve(const struct report_curve *cv, const char *col, const char *unit,
		       const struct dist_scale *s, struct strbuf *o)
{
	const struct hist *h = &cv->h.h;
	if (!h->total)
		return;
	struct strbuf path = STRBUF_INIT;
	size_t npts = dist_path(h, s, &path);
	strbuf_addf(o, "<path class=\"curve\" stroke=\"%s\" data-points=\"%zu\" "
		       "data-samples=\"%llu\" data-config=\"",
		    col, npts, (unsigned long long)h->total);
	html_esc(o, cv->label);
	strbuf_addf(o, "\" d=\"%s\"><title>", path.buf);
	html_escf(o, "%s: %zu runs, %llu samples", cv->label, cv->h.nruns,
	     (unsigned long long)h->total);
	strbuf_addstr(o, "</title></path>\n");
	strbuf_release(&path);
	for (size_t k = 0; k < 3; k++) {
		double v;
		enum hist_pct st = hist_percentile(h, dist_pcts[k], &v);
		if (st == HIST_EMPTY || !isfinite(v))
			continue;
		strbuf_addf(o, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
			       "fill=\"%s\" data-pct=\"%g\" data-value=\"%g\"><title>",
			    dist_x(s, nines(dist_pcts[k] / 100, s->xmax)), dist_y(s, v), col,
			    dist_pcts[k], v);
		html_escf(o, "%s: p%g %s%g %s", cv->label, dist_pcts[k],
		     st == HIST_IN_OVERFLOW ? ">= " : "", v, unit);
		strbuf_addstr(o, "</title></circle>\n");
	}
}

/* the closing </svg>, the legend table (runs, samples, percentiles, max,
 * overflow per configuration) and the note on configurations left out */
static void dist_legend(const struct report_dist *d, struct strbuf *o)
{
	strbuf_addstr(o, "</svg>\n<table class=\"legend\"><tr><th></th><th>configuration</th>"
			 "<th>runs</th><th>samples</th><th>p50</th><th>p99</th><th>p99.9</th>"
			 "<th>max</th><th>overflow</th></tr>\n");
	for (size_t c = 0; c < d->ncurves; c++) {
		const struct report_curve *cv = &d->curves[c];
		const struct hist *h = &cv->h.h;
		strbuf_addf(o, "<tr><td><svg width=\"18\" height=\"8\"><rect width=\"18\" "
			       "height=\"8\" fill=\"%s\"/></svg></td><td>",
			    palette[c % NPALETTE]);
		html_esc(o, cv->label);
		if (cv->h.incompatible)
			strbuf_addstr(o, " <em>(histograms of different geometry: first run only)</em>");
		strbuf_addf(o, "</td><td class=\"n\">%zu</td><td class=\"n\">%llu</td>", cv->h.nruns,
			    (unsigned long long)h->total);
		for (size_t k = 0; k < 3; k++) {
			double v;
			enum hist_pct st = hist_percentile(h, dist_pcts[k], &v);
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
}

/* one latency chart: percentile (x, in nines) against latency (y, log) per
 * configuration, and its legend */
static void render_dist(const struct report_dist *d, size_t idx, struct strbuf *o)
{
	struct dist_scale s;
	dist_scale(d, &s);
	dist_head(d, idx, o);
	dist_grid(d, &s, o);
	for (size_t c = 0; c < d->ncurves; c++)
		dist_curve(&d->curves[c], palette[c % NPALETTE], d->unit, &s, o);
	dist_legend(d, o);
}

/* ---- rendering: trends ------------------------------------------------------------- */

#define TW 330
#define TH 160
#define TML 50
#define TMR 10
#define TMT 12
#define TMB 26

/* the scales of one trend chart: a slot of width step per session, y
 * linear from lo to hi (pad: the margin added on both sides) */
struct trend_scale {
	double lo, hi, pad;
	double pw, ph, step;   /* plot width and height, slot width */
};

static double trend_x(const struct trend_scale *s, size_t i)
{
	return TML + s->step * ((double)(i) + 0.5);
}

static double trend_y(const struct trend_scale *s, double v)
{
	return TMT + s->ph - (v - s->lo) / (s->hi - s->lo) * s->ph;
}

/* the range of the values and noise bands, padded */
static void trend_scale(const struct report_trend *rt, struct trend_scale *s)
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
	s->lo = lo;
	s->hi = hi;
	s->pad = pad;
	s->pw = TW - TML - TMR;
	s->ph = TH - TMT - TMB;
	s->step = s->pw / (double)t->np;
}

/* the chart's title and the opening <svg> */
static void trend_head(const struct report_trend *rt, size_t idx, struct strbuf *o)
{
	const struct trend *t = &rt->t;
	const char *better = rt->better == SEL_BETTER_LOWER ? "lower is better"
			     : rt->better == SEL_BETTER_HIGHER ? "higher is better" : "";
	strbuf_addstr(o, "<div class=\"chart trend\"><div class=\"t\">");
	html_escf(o, "%s.%s", rt->workload, rt->metric);
	strbuf_addstr(o, "</div><div class=\"s\">");
	html_escf(o, "%s%s%s, %s; %zu sessions, %zu change point%s", rt->config, *rt->config ? "; " : "",
	     rt->unit, better, t->np, t->ncp, t->ncp == 1 ? "" : "s");
	strbuf_addstr(o, "</div>\n");
	strbuf_addf(o, "<svg class=\"chart-svg trend\" id=\"trend%zu\" width=\"%d\" height=\"%d\" "
		       "viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
		       "data-points=\"%zu\" data-change-points=\"%zu\">\n",
		    idx, TW, TH, TW, TH, t->np, t->ncp);
}

/* y ticks (lo, mid, hi) and the x axis */
static void trend_axes(const struct trend_scale *s, struct strbuf *o)
{
	const double lo = s->lo, hi = s->hi, pad = s->pad, pw = s->pw, ph = s->ph;
	for (int k = 0; k <= 2; k++) {
		double v = lo + pad + (hi - lo - 2 * pad) * k / 2.0;
		char b[40];
		fmt_num(b, sizeof(b), v);
		strbuf_addf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			       "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
			    TML, trend_y(s, v), TML + pw, trend_y(s, v), TML - 3, trend_y(s, v) + 4, b);
	}
	strbuf_addf(o, "\n<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		    TML, TMT + ph, TML + pw, TMT + ph);
}

/* the noise band and mean of each segment between change points */
static void trend_bands(const struct report_trend *rt, const struct trend_scale *s,
			struct strbuf *o)
{
	const struct trend *t = &rt->t;
	size_t s0 = 0;
	for (size_t c = 0; c <= t->ncp; c++) {
		size_t s1 = c < t->ncp ? t->cps[c].index : t->np;
		if (s1 <= s0)
			continue;
		double x0 = TML + s->step * (double)s0, x1 = TML + s->step * (double)s1;
		double bl = rt->band_lo[s0], bh = rt->band_hi[s0], m = (bl + bh) / 2;
		if (bl < s->lo)
			bl = s->lo;
		strbuf_addf(o, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			       "height=\"%.1f\" data-lo=\"%g\" data-hi=\"%g\"><title>noise band: %g .. %g"
			       "</title></rect><line class=\"mean\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			       "y2=\"%.1f\"/>\n",
			    x0, trend_y(s, bh), x1 - x0, fmax(trend_y(s, bl) - trend_y(s, bh), 0.5), bl,
			    bh, bl, bh, x0, trend_y(s, m), x1, trend_y(s, m));
		s0 = s1;
	}
}

/* a dashed line per change point, coloured by its direction */
static void trend_change_points(const struct report_trend *rt, const struct trend_scale *s,
				struct strbuf *o)
{
	const struct trend *t = &rt->t;
	for (size_t c = 0; c < t->ncp; c++) {
		const struct change_point *cp = &t->cps[c];
		int w = report_worse_dir(rt->better, cp->rel_change);
		const char *cls = w < 0 ? "cp-none" : w ? "cp-worse" : "cp-better";
		double x = TML + s->step * (double)cp->index;
		const struct trend_point *p = &t->pt[cp->index];
		strbuf_addf(o, "<line class=\"cp %s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" "
			       "data-session=\"%lld\" data-change-pct=\"%.3g\"><title>",
			    cls, x, TMT, x, TMT + s->ph, (long long)p->session, 100 * cp->rel_change);
		html_escf(o, "change point at session %lld (%s%s%s): mean %g -> %g (%+.1f%%), p=%.2g",
		     (long long)p->session, p->tag ? p->tag : "", p->tag ? ", " : "",
		     p->kernel ? p->kernel : "", cp->mean_before, cp->mean_after,
		     100 * cp->rel_change, cp->pvalue);
		strbuf_addf(o, "</title></line><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
			       "%+.1f%%</text>\n",
			    x, TMT - 2 + 10, 100 * cp->rel_change);
	}
}

/* whiskers (min..max of the repetitions) and points (medians) */
static void trend_points(const struct report_trend *rt, const struct trend_scale *s,
			 struct strbuf *o)
{
	const struct trend *t = &rt->t;
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
				    trend_x(s, i), trend_y(s, mn), trend_x(s, i), trend_y(s, mx));
		if (!isfinite(p->value))
			continue;
		strbuf_addf(o, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
			       "data-session=\"%lld\" data-value=\"%.10g\"><title>",
			    trend_x(s, i), trend_y(s, p->value), (long long)p->session, p->value);
		html_escf(o, "session %lld%s%s%s, %.10s, kernel %s: %g %s (median of %zu)",
		     (long long)p->session, p->tag ? " (" : "", p->tag ? p->tag : "",
		     p->tag ? ")" : "", p->started_at, p->kernel ? p->kernel : "?", p->value,
		     rt->unit, p->n);
		strbuf_addstr(o, "</title></circle>\n");
	}
}

/* one trend chart: a point per session, its noise bands and change points */
static void render_trend(const struct report_trend *rt, size_t idx, struct strbuf *o)
{
	const struct trend *t = &rt->t;
	struct trend_scale s;
	trend_scale(rt, &s);
	trend_head(rt, idx, o);
	trend_axes(&s, o);
	trend_bands(rt, &s, o);
	trend_change_points(rt, &s, o);
	trend_points(rt, &s, o);
	/* x labels: first and last session */
	strbuf_addf(o, "<text x=\"%d\" y=\"%d\">", TML, TH - 8);
	html_escf(o, "%.10s", t->pt[0].started_at);
	strbuf_addf(o, "</text><text x=\"%.1f\" y=\"%d\" text-anchor=\"end\">", TML + s.pw, TH - 8);
	html_escf(o, "%.10s", t->pt[t->np - 1].started_at);
	strbuf_addstr(o, "</text>\n</svg></div>\n");
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
	html_esc(o, k);
	strbuf_addstr(o, "</td><td><code>");
	if (!v || json_is_null(v)) {
		strbuf_addstr(o, "(unknown)");
	} else if (json_is_string(v)) {
		html_esc(o, json_string_value(v));
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		html_esc(o, s ? s : "?");
		free(s);
	}
	strbuf_addstr(o, "</code></td>");
	if (json_is_string(e)) {
		strbuf_addstr(o, "<td class=\"err\">");
		html_esc(o, json_string_value(e));
	} else {
		strbuf_addstr(o, "<td class=\"src\">");
		html_esc(o, json_is_string(src) ? json_string_value(src) : "");
	}
	strbuf_addstr(o, "</td></tr>\n");
}

static void render_boot(const struct report_boot *b, struct strbuf *o)
{
	const json_t *si = b->sysinfo;
	const json_t *rel = json_object_get(json_object_get(si, "kernel_release"), "value");
	const json_t *pm = json_object_get(json_object_get(si, "preempt"), "value");
	strbuf_addstr(o, "<div class=\"boot\"><h3>");
	html_esc(o, b->machine);
	strbuf_addstr(o, " &mdash; ");
	html_esc(o, json_is_string(rel) ? json_string_value(rel) : "(kernel unknown)");
	strbuf_addstr(o, ", preempt ");
	html_esc(o, json_is_string(pm) ? json_string_value(pm) : "(unknown)");
	strbuf_addstr(o, "</h3><p class=\"meta\">");
	html_esc(o, b->boots);
	strbuf_addstr(o, "; method ");
	html_esc(o, b->method ? b->method : "?");
	if (b->accel) {
		strbuf_addstr(o, ", accel ");
		html_esc(o, b->accel);
	}
	if (b->qemu) {
		strbuf_addstr(o, ", qemu ");
		html_esc(o, b->qemu);
	}
	if (b->clock) {
		strbuf_addstr(o, ", clock ");
		html_esc(o, b->clock);
		strbuf_addstr(o, " (instructions, docs/virtual-time.md)");
	}
	strbuf_addstr(o, ", first boot at ");
	html_esc(o, b->first_at ? b->first_at : "?");
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

/* one traced run: its totals, then a row per task (the summary's
 * values are untrusted JSON from the database: numbers read as numbers,
 * strings escaped) */
static void render_trace(const struct report_trace *t, struct strbuf *o)
{
	const json_t *s = t->summary;
	strbuf_addstr(o, "<p><b>");
	html_esc(o, t->label);
	strbuf_addstr(o, "</b>: ");
	html_escf(o, "window %.3g s (covered %.3g s), %lld switches, %lld preemptions, "
	     "%lld migrations, %lld wakeups: latency p50 %.3g us, p99 %.3g us, max %.3g us%s",
	     json_number_value(json_object_get(s, "window_s")),
	     json_number_value(json_object_get(s, "span_s")),
	     (long long)json_integer_value(json_object_get(s, "switches")),
	     (long long)json_integer_value(json_object_get(s, "preemptions")),
	     (long long)json_integer_value(json_object_get(s, "migrations")),
	     (long long)json_integer_value(json_object_get(s, "wakeups")),
	     json_number_value(json_object_get(s, "lat_p50_us")),
	     json_number_value(json_object_get(s, "lat_p99_us")),
	     json_number_value(json_object_get(s, "lat_max_us")),
	     json_is_true(json_object_get(s, "truncated")) ? " (trace cut at its start)" : "");
	/* why this configuration was traced (evidence "when": worst, flagged) */
	const char *why = json_string_value(json_object_get(json_object_get(s, "trigger"), "why"));
	if (why) {
		strbuf_addstr(o, "<br><span class=\"meta\">traced because ");
		html_esc(o, why);
		strbuf_addstr(o, "</span>");
	}
	strbuf_addstr(o, "</p>\n<table class=\"sortable\"><thead><tr><th>pid</th><th>comm</th>"
			 "<th>switches</th><th>preemptions</th><th>migrations</th><th>wakeups</th>"
			 "<th>wakeup p50 us</th><th>p99 us</th><th>max us</th></tr></thead><tbody>\n");
	size_t i;
	const json_t *k;
	json_array_foreach(json_object_get(s, "tasks"), i, k) {
		strbuf_addf(o, "<tr><td>%lld</td><td>", (long long)json_integer_value(json_object_get(k, "pid")));
		const char *comm = json_string_value(json_object_get(k, "comm"));
		html_esc(o, comm ? comm : "");
		html_escf(o, "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.3g</td>"
		     "<td>%.3g</td><td>%.3g</td></tr>\n",
		     (long long)json_integer_value(json_object_get(k, "switches")),
		     (long long)json_integer_value(json_object_get(k, "preemptions")),
		     (long long)json_integer_value(json_object_get(k, "migrations")),
		     (long long)json_integer_value(json_object_get(k, "wakeups")),
		     json_number_value(json_object_get(k, "lat_p50_us")),
		     json_number_value(json_object_get(k, "lat_p99_us")),
		     json_number_value(json_object_get(k, "lat_max_us")));
	}
	strbuf_addstr(o, "</tbody></table>\n");
}

/* the robot's alerts (docs/alerts.md) */
static void render_alerts(const struct report *r, struct strbuf *o)
{
	strbuf_addstr(o, "<h2 id=\"alerts\">Alerts</h2>\n");
	if (!r->nalerts) {
		strbuf_addstr(o, "<p>No alert of the regression robot on these plans "
				 "(schedlab nightly, docs/alerts.md).</p>\n");
		return;
	}
	strbuf_addstr(o, "<p class=\"meta\">The open alerts of the plans in scope, and those "
			 "a session in scope raised or fixed (<code>schedlab alerts show N</code>; "
			 "docs/alerts.md).</p>\n<table class=\"sortable alerts\"><thead><tr>"
			 "<th>alert</th><th>group</th><th>status</th><th>kind</th><th>metric</th>"
			 "<th>series</th><th>change %</th><th>95% CI</th><th>p-value</th><th>since session</th>"
			 "<th>kernel range</th><th>culprit</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < r->nalerts; i++) {
		const struct report_alert *a = &r->alerts[i];
		strbuf_addf(o, "<tr class=\"%s\"><td>%lld</td><td>%lld</td><td>",
			    !strcmp(a->kind, "regression") ? "worse" : "better", (long long)a->id,
			    (long long)a->group_id);
		html_esc(o, a->status);
		strbuf_addstr(o, "</td><td>");
		html_esc(o, a->kind);
		strbuf_addstr(o, "</td><td>");
		html_esc(o, a->metric);
		strbuf_addstr(o, "</td><td>");
		html_esc(o, a->series);
		strbuf_addstr(o, "</td>");
		td_pct(o, a->change_pct);
		if (isfinite(a->ci_lo))
			strbuf_addf(o, "<td>[%+.1f, %+.1f]</td>", a->ci_lo, a->ci_hi);
		else
			strbuf_addstr(o, "<td></td>");
		td_num(o, a->p, "");
		strbuf_addf(o, "<td>%lld</td><td>", (long long)a->bad_session);
		html_esc(o, a->range);
		strbuf_addstr(o, "</td><td>");
		html_esc(o, a->culprit);
		strbuf_addstr(o, "</td></tr>\n");
	}
	strbuf_addstr(o, "</tbody></table>\n");
}

void report_render_html(const struct report *r, struct strbuf *o)
{
	strbuf_addstr(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			 "<meta name=\"viewport\" content=\"width=device-width\">\n"
			 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			 "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
			 "<title>schedlab report: ");
	html_esc(o, r->title);
	strbuf_addf(o, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<script>%s</script>\n",
		    css, js_head);
	strbuf_addstr(o, "<div id=\"jserr\" hidden></div>\n<h1>schedlab report: ");
	html_esc(o, r->title);
	strbuf_addstr(o, "</h1>\n<p class=\"meta\">scope: ");
	html_esc(o, r->scope);
	strbuf_addstr(o, "; database <code>");
	html_esc(o, r->dbpath);
	strbuf_addstr(o, "</code>; generated ");
	html_esc(o, r->generated_at);
	strbuf_addstr(o, " by schedlab " SCHEDLAB_VERSION "</p>\n");
	strbuf_addstr(o, "<p class=\"meta\">Contents: <a href=\"#comparison\">comparison</a> &middot; <a href=\"#alerts\">alerts</a> &middot; "
			 "<a href=\"#latency\">latency distributions</a> &middot; <a href=\"#trends\">"
			 "trends</a> &middot; <a href=\"#sessions\">sessions</a> &middot; "
			 "<a href=\"#sysinfo\">machines and boots</a></p>\n");
	for (size_t i = 0; i < r->notes.nr; i++) {
		strbuf_addstr(o, "<div class=\"note\">");
		html_esc(o, r->notes.v[i]);
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
	if (r->ntraces)
		strbuf_addstr(o, "<h3 id=\"evidence\">Evidence traces</h3>\n<p class=\"meta\">"
				 "Traced runs (plan key <code>evidence</code>), never in the rows "
				 "above with untraced runs: the summary of the last "
				 "<code>trace_s</code> seconds of each run's scheduler trace and its "
				 "busiest tasks (docs/metrics.md, &ldquo;Evidence traces&rdquo;; the "
				 "raw trace is the run's file <code>schedlab-trace.txt</code>).</p>\n");
	for (size_t i = 0; i < r->ntraces; i++)
		render_trace(&r->traces[i], o);

	render_alerts(r, o);

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
	if (r->window_text) {
		const struct report_window *w = &r->window;
		strbuf_addf(o, "<p class=\"meta window\" data-sessions=\"%zu\" data-scope=\"%zu\" "
			       "data-before=\"%zu\" data-after=\"%zu\" data-history=\"%zu\" "
			       "data-every=\"%zu\" data-max-points=\"%zu\">",
			    w->shown, w->scope, w->before, w->after, w->history, w->every,
			    w->max_points);
		html_esc(o, r->window_text);
		strbuf_addstr(o, "</p>\n");
	}
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
			html_esc(o, cells[k] ? cells[k] : "");
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
