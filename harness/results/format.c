/*
 * Table, CSV and JSON output of row sets; see format.h.
 */
#include "harness/results/format.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/util/strbuf.h"

static int is_number(const char *s)
{
	if (!s || !*s)
		return 0;
	char *end;
	strtod(s, &end);
	return *end == '\0';
}

void rowset_init(struct rowset *rs, size_t ncols, const char *const *names)
{
	memset(rs, 0, sizeof(*rs));
	rs->ncols = ncols;
	rs->cols = xcalloc(ncols, sizeof(char *));
	rs->numeric = xcalloc(ncols, sizeof(int));
	for (size_t i = 0; i < ncols; i++) {
		rs->cols[i] = xstrdup(names[i] ? names[i] : "");
		rs->numeric[i] = 1;
	}
}

void rowset_add(struct rowset *rs, const char *const *cells)
{
	if (rs->nrows == rs->alloc) {
		rs->alloc = rs->alloc ? rs->alloc * 2 : 32;
		rs->rows = xrealloc(rs->rows, rs->alloc * sizeof(char **));
	}
	char **row = xcalloc(rs->ncols, sizeof(char *));
	for (size_t i = 0; i < rs->ncols; i++) {
		row[i] = cells[i] ? xstrdup(cells[i]) : NULL;
		if (cells[i] && !is_number(cells[i]))
			rs->numeric[i] = 0;
	}
	rs->rows[rs->nrows++] = row;
}

int rowset_collect(void *ctx, int ncols, const char *const *names, const char *const *values)
{
	struct rowset *rs = ctx;
	if (!rs->ncols)
		rowset_init(rs, (size_t)ncols, names);
	if (values)
		rowset_add(rs, values);
	return 0;
}

void rowset_release(struct rowset *rs)
{
	for (size_t r = 0; r < rs->nrows; r++) {
		for (size_t i = 0; i < rs->ncols; i++)
			free(rs->rows[r][i]);
		free(rs->rows[r]);
	}
	for (size_t i = 0; i < rs->ncols; i++)
		free(rs->cols[i]);
	free(rs->rows);
	free(rs->cols);
	free(rs->numeric);
	memset(rs, 0, sizeof(*rs));
}

static void csv_cell(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

/* table cells: one line, at most 60 characters; a control character
 * (a terminal escape in a plan name or a tool's output) as \xNN, never raw */
static void cell_text(const char *s, struct strbuf *sb)
{
	strbuf_reset(sb);
	if (!s) {
		strbuf_addstr(sb, "NULL");
		return;
	}
	for (const char *p = s; *p && sb->len < 60; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '\n' || c == '\t')
			strbuf_addch(sb, ' ');
		else if (c < 0x20 || c == 0x7f)
			strbuf_addf(sb, "\\x%02x", c);
		else
			strbuf_addch(sb, *p);
	}
	if (strlen(s) > 60)
		strbuf_addstr(sb, "...");
}

void rowset_print(const struct rowset *rs, enum out_format f, FILE *out)
{
	if (f == FMT_JSON) {
		json_t *cols = json_array(), *rows = json_array();
		for (size_t i = 0; i < rs->ncols; i++)
			json_array_append_new(cols, json_string(rs->cols[i]));
		for (size_t r = 0; r < rs->nrows; r++) {
			json_t *row = json_array();
			for (size_t i = 0; i < rs->ncols; i++) {
				const char *c = rs->rows[r][i];
				if (!c)
					json_array_append_new(row, json_null());
				else if (rs->numeric[i] && is_number(c))
					json_array_append_new(row, json_real(strtod(c, NULL)));
				else
					json_array_append_new(row, json_string(c));
			}
			json_array_append_new(rows, row);
		}
		json_t *doc = json_pack("{s:i,s:o,s:o}", "schedlab_format", 1, "columns", cols,
					"rows", rows);
		json_dumpf(doc, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', out);
		json_decref(doc);
		return;
	}
	if (f == FMT_CSV) {
		for (size_t i = 0; i < rs->ncols; i++) {
			if (i)
				fputc(',', out);
			csv_cell(out, rs->cols[i]);
		}
		fputc('\n', out);
		for (size_t r = 0; r < rs->nrows; r++) {
			for (size_t i = 0; i < rs->ncols; i++) {
				if (i)
					fputc(',', out);
				csv_cell(out, rs->rows[r][i]);
			}
			fputc('\n', out);
		}
		return;
	}
	size_t *w = xcalloc(rs->ncols, sizeof(size_t));
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < rs->ncols; i++)
		w[i] = strlen(rs->cols[i]);
	for (size_t r = 0; r < rs->nrows; r++)
		for (size_t i = 0; i < rs->ncols; i++) {
			cell_text(rs->rows[r][i], &sb);
			if (sb.len > w[i])
				w[i] = sb.len;
		}
	for (size_t i = 0; i < rs->ncols; i++)
		fprintf(out, "%s%-*s", i ? "  " : "", i + 1 < rs->ncols ? (int)w[i] : 0, rs->cols[i]);
	fputc('\n', out);
	for (size_t i = 0; i < rs->ncols; i++) {
		fprintf(out, "%s", i ? "  " : "");
		for (size_t k = 0; k < w[i]; k++)
			fputc('-', out);
	}
	fputc('\n', out);
	for (size_t r = 0; r < rs->nrows; r++) {
		for (size_t i = 0; i < rs->ncols; i++) {
			cell_text(rs->rows[r][i], &sb);
			if (rs->numeric[i])
				fprintf(out, "%s%*s", i ? "  " : "", (int)w[i], sb.buf);
			else
				fprintf(out, "%s%-*s", i ? "  " : "", i + 1 < rs->ncols ? (int)w[i] : 0,
					sb.buf);
		}
		fputc('\n', out);
	}
	if (!rs->nrows)
		fprintf(out, "(no rows)\n");
	strbuf_release(&sb);
	free(w);
}
