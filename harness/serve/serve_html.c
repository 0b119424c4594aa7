/*
 * serve's helpers (serve_internal.h): JSON of any bytes, query values,
 * tables of rows as people read them (headings in words, moments as "3 days
 * ago" over their ISO time, changes in %, a configuration as chips naming
 * only what differs between the rows shown); the HTML escaping is
 * harness/util/html.c's, the report's.
 */
#include "harness/serve/serve_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/results/select.h"
#include "harness/util/utf8.h"

json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, s);
	utf8_scrub(&sb);
	j = json_string(sb.buf);
	strbuf_release(&sb);
	return j ? j : json_string("");
}

json_t *jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

const char *jget(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

void url_enc(struct strbuf *o, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-_.~", *p))
			strbuf_addch(o, (char)*p);
		else
			strbuf_addf(o, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}

void html_json_cell(struct strbuf *o, const json_t *v)
{
	if (!v || json_is_null(v))
		return;
	if (json_is_string(v)) {
		html_esc(o, json_string_value(v));
	} else if (json_is_integer(v)) {
		strbuf_addf(o, "%lld", (long long)json_integer_value(v));
	} else if (json_is_real(v)) {
		strbuf_addf(o, "%.6g", json_real_value(v));
	} else if (json_is_boolean(v)) {
		strbuf_addstr(o, json_is_true(v) ? "yes" : "no");
	} else {
		char *t = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		html_esc(o, t);
		free(t);
	}
}

/* ---- headings, moments, chips ------------------------------------------- */

/* the columns and JSON keys of the pages as people name them: a column
 * name never heads a table (t0868 checks every page) */
static const struct { const char *key, *label; } labels[] = {
	{ "session", "session" },
	{ "sessions", "sessions" },
	{ "latest_session", "latest session" },
	{ "latest_tag", "tag" },
	{ "latest_started_at", "started" },
	{ "latest_status", "status" },
	{ "open_alerts", "open alerts" },
	{ "machine_id", "machine number" },
	{ "started_at", "started" },
	{ "finished_at", "finished" },
	{ "created_at", "raised" },
	{ "updated_at", "updated" },
	{ "booted_at", "booted" },
	{ "at", "when" },
	{ "status", "status" },
	{ "harness_version", "harness" },
	{ "plan_path", "plan file" },
	{ "runs", "runs" },
	{ "ok", "ok" },
	{ "failed", "failed" },
	{ "todo", "to do" },
	{ "boot", "boot" },
	{ "seq", "order" },
	{ "cfg", "configuration number" },
	{ "config_hash", "kernel config" },
	{ "hz", "tick (Hz)" },
	{ "sched_mc", "multi-core scheduling" },
	{ "req_preempt", "preemption asked" },
	{ "preempt", "preemption" },
	{ "cmdline", "command line" },
	{ "kernel_commit", "commit" },
	{ "kernel_describe", "kernel version" },
	{ "qemu_version", "qemu version" },
	{ "method", "boot method" },
	{ "run", "run" },
	{ "round", "round" },
	{ "rep", "repetition" },
	{ "workload", "workload" },
	{ "run_workload", "run's workload" },
	{ "params", "parameters" },
	{ "knobs", "knobs" },
	{ "skip_reason", "skipped because" },
	{ "evidence_of", "evidence of run" },
	{ "evidence_why", "evidence because" },
	{ "wall_s", "wall time" },
	{ "exit_code", "exit code" },
	{ "argv", "command" },
	{ "n", "samples" },
	{ "min", "lowest" },
	{ "max", "highest" },
	{ "value", "value" },
	{ "censored", "cut off" },
	{ "bound", "a bound" },
	{ "alert", "alert" },
	{ "group", "change" },
	{ "kind", "kind" },
	{ "series", "series" },
	{ "series_where", "configuration" },
	{ "detector", "found by" },
	{ "base_value", "before" },
	{ "change_pct", "change" },
	{ "ci_lo_pct", "change, low end of 95% CI" },
	{ "ci_hi_pct", "change, high end of 95% CI" },
	{ "p", "p-value" },
	{ "pvalue", "p-value" },
	{ "good_session", "last good night" },
	{ "bad_session", "first bad night" },
	{ "last_seen_session", "last seen" },
	{ "fixed_session", "fixed at" },
	{ "culprit_short", "culprit" },
	{ "mean_before", "level before" },
	{ "mean_after", "level after" },
	{ "n_before", "nights before" },
	{ "n_after", "nights after" },
	{ "range", "kernel range" },
	{ "git_dir", "git repository" },
	{ "good_commit", "last good commit" },
	{ "bad_commit", "first bad commit" },
	{ "commits", "commits in range" },
	{ "bisection", "bisection" },
	{ "why", "why" },
	{ "target", "target" },
	{ "host", "host" },
	{ "seed", "seed" },
	{ "step", "step" },
	{ "role", "role" },
	{ "verdict", "verdict" },
	{ "detail", "detail" },
	{ "actor", "by" },
	{ "from", "from" },
	{ "to", "to" },
	{ "note", "note" },
	{ "unit", "unit" },
	{ "better", "better when" },
	{ "metric", "metric" },
	{ "tag", "tag" },
	{ "plan", "plan" },
	{ "machine", "machine" },
	{ "kernel", "kernel" },
	{ "clock", "clock" },
	{ "error", "error" },
	{ "notes", "notes" },
};

const char *col_label(const char *key)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(key, labels[i].key))
			return labels[i].label;
	/* one nobody named: its words at least (per thread: the pages may be
	   made on several) */
	static _Thread_local char buf[8][64];
	static _Thread_local unsigned k;
	char *b = buf[k++ % 8];
	snprintf(b, 64, "%s", key);
	for (char *c = b; *c; c++)
		if (*c == '_')
			*c = ' ';
	return b;
}

/* a stored moment (YYYY-MM-DD[T ]HH:MM:SS[Z]) as seconds since the epoch
 * (UTC); -1 when it is none */
static time_t moment_parse(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	char sep;
	if (!s || sscanf(s, "%4d-%2d-%2d%c%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &sep,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 7 ||
	    (sep != 'T' && sep != ' '))
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return timegm(&tm);
}

void moment_words(char *buf, size_t n, const char *iso, time_t now)
{
	time_t t = moment_parse(iso);
	if (t < 0) {
		snprintf(buf, n, "%s", iso ? iso : "");
		return;
	}
	double d = difftime(now, t);
	const char *dir = d >= 0 ? "ago" : "from now";
	d = fabs(d);
	static const struct { double s; const char *one, *many; } u[] = {
		{ 365.25 * 86400, "year", "years" }, { 30.44 * 86400, "month", "months" },
		{ 7 * 86400, "week", "weeks" },      { 86400, "day", "days" },
		{ 3600, "hour", "hours" },           { 60, "minute", "minutes" },
	};
	if (d < 60) {
		snprintf(buf, n, "just now");
		return;
	}
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (d >= u[i].s) {
			long k = (long)(d / u[i].s);
			snprintf(buf, n, "%ld %s %s", k, k == 1 ? u[i].one : u[i].many, dir);
			return;
		}
}

void html_moment(struct strbuf *o, const char *iso)
{
	if (!iso || !*iso)
		return;
	char w[64];
	moment_words(w, sizeof(w), iso, time(NULL));
	strbuf_addstr(o, "<time datetime=\"");
	html_esc(o, iso);
	strbuf_addstr(o, "\" title=\"");
	html_esc(o, iso);
	strbuf_addstr(o, "\">");
	html_esc(o, w);
	strbuf_addstr(o, "</time>");
}

static int is_moment_key(const char *k)
{
	size_t n = strlen(k);
	return !strcmp(k, "at") || (n > 3 && !strcmp(k + n - 3, "_at"));
}

/* the terms of a selector (key=value,...; a piece that does not start with
 * key= continues the value before it, as select.c reads it) */
void where_terms(const char *w, struct strvec *keys, struct strvec *vals)
{
	struct strbuf v = STRBUF_INIT;
	const char *p = w ? w : "";
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		size_t k = 0;
		while (k < len && (p[k] == '_' || (p[k] >= 'a' && p[k] <= 'z') ||
				   (p[k] >= 'A' && p[k] <= 'Z') || (k && p[k] >= '0' && p[k] <= '9')))
			k++;
		if (k && k < len && p[k] == '=') {
			if (keys->nr > vals->nr) {
				strvec_push(vals, v.buf);
				strbuf_reset(&v);
			}
			char *key = xstrfmt("%.*s", (int)k, p);
			strvec_push(keys, key);
			free(key);
			strbuf_add(&v, p + k + 1, len - k - 1);
		} else if (keys->nr > vals->nr) {
			strbuf_addch(&v, ',');
			strbuf_add(&v, p, len);
		}
		p += len + (e ? 1 : 0);
	}
	if (keys->nr > vals->nr)
		strvec_push(vals, v.buf);
	strbuf_release(&v);
}

/* one term as a chip's words: "full preemption", "250 Hz", "groups=4" */
static void chip_words(struct strbuf *o, const char *k, const char *v)
{
	if (!strcmp(k, "preempt"))
		strbuf_addf(o, "preempt %s", *v ? v : "unknown");
	else if (!strcmp(k, "hz"))
		strbuf_addf(o, "%s Hz", v);
	else if (!strcmp(k, "sched_mc"))
		strbuf_addf(o, "multi-core scheduling %s", !strcmp(v, "1") ? "on" : "off");
	else if (!strcmp(k, "knobs") || !strcmp(k, "params")) {
		char *l = sel_json_label(v, NULL, 0);
		strbuf_addf(o, "%s%s", !strcmp(k, "knobs") ? "knobs " : "", *l ? l : "defaults");
		free(l);
	} else if (!strcmp(k, "run_workload") || !strcmp(k, "machine") ||
		   !strcmp(k, "kernel_release") || !strcmp(k, "tag"))
		strbuf_addstr(o, v);
	else if (!strcmp(k, "clock"))
		strbuf_addf(o, "%s clock", v);
	else
		strbuf_addf(o, "%s %s", col_label(k), v);
}

static int skipped(const struct strvec *skip, const char *k)
{
	for (size_t i = 0; skip && i < skip->nr; i++)
		if (!strcmp(skip->v[i], k))
			return 1;
	return 0;
}

void html_chips(struct strbuf *o, const char *where, const struct strvec *skip)
{
	struct strvec k = { 0 }, v = { 0 };
	where_terms(where, &k, &v);
	int any = 0;
	for (size_t i = 0; i < k.nr && i < v.nr; i++) {
		/* what goes without saying: no knobs, the real clock, no qemu */
		if (skipped(skip, k.v[i]) || (!strcmp(k.v[i], "knobs") && !strcmp(v.v[i], "{}")) ||
		    (!strcmp(k.v[i], "clock") && !strcmp(v.v[i], "real")) ||
		    (!strcmp(k.v[i], "qemu_version") && (!*v.v[i] || !strcmp(v.v[i], "(none)"))))
			continue;
		struct strbuf w = STRBUF_INIT;
		chip_words(&w, k.v[i], v.v[i]);
		strbuf_addstr(o, "<span class=\"chip\" title=\"");
		html_escf(o, "%s=%s", k.v[i], v.v[i]);
		strbuf_addstr(o, "\">");
		html_esc(o, w.buf);
		strbuf_addstr(o, "</span> ");
		strbuf_release(&w);
		any = 1;
	}
	if (!any)
		strbuf_addstr(o, "<span class=\"muted\">the same as the others</span>");
	strvec_clear(&k);
	strvec_clear(&v);
}

void where_words(struct strbuf *o, const char *where)
{
	struct strvec k = { 0 }, v = { 0 };
	where_terms(where, &k, &v);
	for (size_t i = 0; i < k.nr && i < v.nr; i++) {
		if (i)
			strbuf_addstr(o, ", ");
		chip_words(o, k.v[i], v.v[i]);
	}
	strvec_clear(&k);
	strvec_clear(&v);
}

void where_common(const char *const *wheres, size_t n, struct strvec *common)
{
	if (n < 2)
		return;
	struct strvec k0 = { 0 }, v0 = { 0 };
	where_terms(wheres[0], &k0, &v0);
	for (size_t i = 0; i < k0.nr && i < v0.nr; i++) {
		int same = 1;
		for (size_t r = 1; r < n && same; r++) {
			struct strvec k = { 0 }, v = { 0 };
			where_terms(wheres[r], &k, &v);
			same = 0;
			for (size_t j = 0; j < k.nr && j < v.nr; j++)
				if (!strcmp(k.v[j], k0.v[i]))
					same = !strcmp(v.v[j], v0.v[i]);
			strvec_clear(&k);
			strvec_clear(&v);
		}
		if (same)
			strvec_push(common, k0.v[i]);
	}
	strvec_clear(&k0);
	strvec_clear(&v0);
}

/* a cell of column key as people read it */
void html_cell(struct strbuf *o, const char *key, const json_t *v,
		      const struct strvec *common)
{
	if (!v || json_is_null(v))
		return;
	size_t kl = strlen(key);
	const char *to = NULL;   /* a number that names a page: its link */
	if (!strcmp(key, "session") || (kl > 8 && !strcmp(key + kl - 8, "_session")))
		to = "/session/";
	else if (!strcmp(key, "alert"))
		to = "/alert/";
	else if (!strcmp(key, "run") || !strcmp(key, "evidence_of"))
		to = "/run/";
	else if (!strcmp(key, "bisection"))
		to = "/bisect/";
	if (to && json_is_integer(v)) {
		strbuf_addf(o, "<a href=\"%s%lld\">%lld</a>", to, (long long)json_integer_value(v),
			    (long long)json_integer_value(v));
	} else if (json_is_string(v) && (!strcmp(key, "range") || !strcmp(key, "commit") ||
					 (kl > 7 && !strcmp(key + kl - 7, "_commit")))) {
		/* a commit (or a range of two) by its first 12 characters, whole
		   in the title */
		const char *t = json_string_value(v), *dots = strstr(t, "..");
		strbuf_addstr(o, "<code title=\"");
		html_esc(o, t);
		strbuf_addstr(o, "\">");
		if (dots)
			html_escf(o, "%.*s..%.12s", (int)((dots - t) < 12 ? (dots - t) : 12), t, dots + 2);
		else
			html_escf(o, "%.12s", t);
		strbuf_addstr(o, "</code>");
	} else if (json_is_string(v) && is_moment_key(key)) {
		html_moment(o, json_string_value(v));
	} else if (json_is_number(v) && strlen(key) > 4 && !strcmp(key + strlen(key) - 4, "_pct")) {
		strbuf_addf(o, "%+.1f%%", json_number_value(v));
	} else if (json_is_number(v) && !strcmp(key, "wall_s")) {
		strbuf_addf(o, "%.3g s", json_number_value(v));
	} else if (json_is_string(v) && (!strcmp(key, "series_where") || !strcmp(key, "where"))) {
		html_chips(o, json_string_value(v), common);
	} else {
		html_json_cell(o, v);
	}
}

void html_table(struct strbuf *o, const json_t *rows, const char *const *cols,
		const char *linkcol, const char *linkprefix)
{
	size_t n = json_array_size(rows);
	if (!n) {
		strbuf_addstr(o, "<p class=\"muted\">none</p>\n");
		return;
	}
	const char *own[64];
	if (!cols) {
		size_t k = 0;
		const char *key;
		json_t *v;
		json_object_foreach((json_t *)json_array_get(rows, 0), key, v) {
			if (k < 63)
				own[k++] = key;
		}
		own[k] = NULL;
		cols = own;
	}
	/* a configuration column names only what differs between its rows; what
	   they share is said once above the table */
	struct strvec common = { 0 };
	for (size_t c = 0; cols[c]; c++) {
		if (strcmp(cols[c], "series_where") && strcmp(cols[c], "where"))
			continue;
		const char **w = xcalloc(n, sizeof(*w));
		for (size_t i = 0; i < n; i++)
			w[i] = jget(json_array_get(rows, i), cols[c]);
		where_common(w, n, &common);
		if (common.nr) {
			strbuf_addstr(o, "<p class=\"common\">every row: ");
			html_chips(o, w[0], NULL);
			strbuf_addstr(o, "</p>\n");
		}
		free(w);
		break;
	}
	strbuf_addstr(o, "<table><tr>");
	for (size_t c = 0; cols[c]; c++) {
		strbuf_addstr(o, "<th>");
		html_esc(o, col_label(cols[c]));
		strbuf_addstr(o, "</th>");
	}
	strbuf_addstr(o, "</tr>\n");
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(rows, i);
		strbuf_addstr(o, "<tr>");
		for (size_t c = 0; cols[c]; c++) {
			const json_t *v = json_object_get(r, cols[c]);
			strbuf_addstr(o, "<td>");
			if (linkcol && !strcmp(cols[c], linkcol) && v && !json_is_null(v)) {
				strbuf_addstr(o, "<a href=\"");
				html_esc(o, linkprefix);
				struct strbuf t = STRBUF_INIT;
				html_json_cell(&t, v);
				strbuf_addstr(o, t.buf);   /* a number or escaped text */
				strbuf_addstr(o, "\">");
				strbuf_addstr(o, t.buf);
				strbuf_addstr(o, "</a>");
				strbuf_release(&t);
			} else {
				html_cell(o, cols[c], v, &common);
			}
			strbuf_addstr(o, "</td>");
		}
		strbuf_addstr(o, "</tr>\n");
	}
	strbuf_addstr(o, "</table>\n");
	strvec_clear(&common);
}

void html_fields(struct strbuf *o, const json_t *obj, const char *const *keys)
{
	strbuf_addstr(o, "<table class=\"fields\">");
	const char *key;
	json_t *v;
	if (keys) {
		for (size_t i = 0; keys[i]; i++) {
			strbuf_addstr(o, "<tr><th>");
			html_esc(o, col_label(keys[i]));
			strbuf_addstr(o, "</th><td>");
			html_cell(o, keys[i], json_object_get(obj, keys[i]), NULL);
			strbuf_addstr(o, "</td></tr>\n");
		}
	} else {
		json_object_foreach((json_t *)obj, key, v) {
			strbuf_addstr(o, "<tr><th>");
			html_esc(o, col_label(key));
			strbuf_addstr(o, "</th><td>");
			html_cell(o, key, v, NULL);
			strbuf_addstr(o, "</td></tr>\n");
		}
	}
	strbuf_addstr(o, "</table>\n");
}
