/*
 * serve's helpers (serve_internal.h): JSON of any bytes, query values,
 * tables of rows; the HTML escaping is harness/util/html.c's, the report's.
 */
#include "harness/serve/serve_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
	strbuf_addstr(o, "<table><tr>");
	for (size_t c = 0; cols[c]; c++) {
		strbuf_addstr(o, "<th>");
		html_esc(o, cols[c]);
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
				html_json_cell(o, v);
			}
			strbuf_addstr(o, "</td>");
		}
		strbuf_addstr(o, "</tr>\n");
	}
	strbuf_addstr(o, "</table>\n");
}
