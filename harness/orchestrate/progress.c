/*
 * Session progress output; see progress.h.
 */
#include "harness/orchestrate/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/util/proc.h"

void progress_fmt_dur(double s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

static int getenv_is_dumb(void)
{
	const char *t = getenv("TERM");
	return !t || !*t || !strcmp(t, "dumb");
}

void progress_init(struct progress *pg, size_t total, double est_total, int quiet)
{
	memset(pg, 0, sizeof(*pg));
	pg->quiet = quiet;
	pg->tty = !quiet && isatty(2) && !getenv_is_dumb();
	pg->total = total;
	pg->est_total = est_total;
	pg->start = now_mono();
}

void progress_set_prefix(struct progress *pg, const char *prefix)
{
	pg->prefix = prefix;
	if (prefix)
		pg->tty = 0;
}

/* whole-line mode: prefix + text + newline in one write */
static void line_out(struct progress *pg, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, pg->prefix);
	strbuf_vaddf(&sb, fmt, ap);
	strbuf_addch(&sb, '\n');
	fflush(stderr);
	for (size_t off = 0; off < sb.len;) {
		ssize_t n = write(2, sb.buf + off, sb.len - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	strbuf_release(&sb);
}

static void line_outf(struct progress *pg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void line_outf(struct progress *pg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	line_out(pg, fmt, ap);
	va_end(ap);
}

double progress_eta(const struct progress *pg)
{
	double spent = now_mono() - pg->start;
	double left = pg->est_total - pg->est_done;
	if (pg->est_done > 0 && spent > 0)
		left *= spent / pg->est_done;
	return left > 0 ? left : 0;
}

static void clear_status(struct progress *pg)
{
	if (pg->tty && pg->status_shown) {
		fputs("\r\033[K", stderr);
		pg->status_shown = 0;
	}
}

static void draw_status(struct progress *pg)
{
	if (!pg->tty || !pg->status[0])
		return;
	char eta[32];
	progress_fmt_dur(progress_eta(pg), eta, sizeof(eta));
	int cols = 100;
	fprintf(stderr, "\r\033[K%.*s | %zu/%zu done | eta %s", cols - 30, pg->status, pg->done,
		pg->total, eta);
	pg->status_shown = 1;
	fflush(stderr);
}

void progress_say(struct progress *pg, const char *fmt, ...)
{
	if (pg->quiet)
		return;
	va_list ap;
	if (pg->prefix) {
		va_start(ap, fmt);
		line_out(pg, fmt, ap);
		va_end(ap);
		return;
	}
	if (pg->pending_line) {
		fputc('\n', stderr);
		pg->pending_line = 0;
	}
	clear_status(pg);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	draw_status(pg);
	fflush(stderr);
}

void progress_run_start(struct progress *pg, const char *boot, const char *what)
{
	if (pg->quiet || pg->prefix)
		return; /* whole-line mode: the run is reported when it ends */
	if (pg->tty) {
		snprintf(pg->status, sizeof(pg->status), "> %s | run %zu/%zu %s", boot, pg->done + 1,
			 pg->total, what);
		draw_status(pg);
	} else {
		fprintf(stderr, "  [%zu/%zu] %s ...", pg->done + 1, pg->total, what);
		pg->pending_line = 1;
		fflush(stderr);
	}
}

void progress_run_end(struct progress *pg, double est_s, const char *outcome)
{
	pg->done++;
	pg->est_done += est_s;
	if (pg->quiet)
		return;
	char eta[32];
	progress_fmt_dur(progress_eta(pg), eta, sizeof(eta));
	if (pg->prefix) {
		line_outf(pg, "  [%zu/%zu] %s; eta %s", pg->done, pg->total, outcome, eta);
		return;
	}
	if (pg->tty) {
		clear_status(pg);
		fprintf(stderr, "  [%zu/%zu] %s\n", pg->done, pg->total, outcome);
		draw_status(pg);
	} else {
		fprintf(stderr, " %s; eta %s\n", outcome, eta);
		pg->pending_line = 0;
	}
	fflush(stderr);
}

void progress_done(struct progress *pg)
{
	if (pg->quiet)
		return;
	clear_status(pg);
	pg->status[0] = '\0';
	if (pg->pending_line) {
		fputc('\n', stderr);
		pg->pending_line = 0;
	}
	fflush(stderr);
}
