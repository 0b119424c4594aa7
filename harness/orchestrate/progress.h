/*
 * Progress of a session on stderr. On a terminal: finished runs scroll as
 * lines and one live status line at the bottom shows the boot and run being
 * done, how many are left and an ETA; elsewhere (logs, CI): plain lines only.
 * The ETA starts from the plan's estimate and is refined by the measured
 * times: remaining estimate x (actual time so far / estimate of what is done).
 *
 * With a prefix (progress_set_prefix, used by the members of a lab that run
 * in parallel and share one stderr) every line starts with it ("[ssh:lab1] "),
 * there is no live status line, and each line is written whole, in one
 * write(2), so that lines of different processes never mix.
 */
#ifndef SL_PROGRESS_H
#define SL_PROGRESS_H

#include <stddef.h>

struct progress {
	int quiet, tty;
	size_t total, done;
	double start, est_total, est_done;
	char status[256];
	int status_shown;
	int pending_line;       /* plain mode: a run line awaits its result */
	const char *prefix;     /* NULL, or whole-line mode with this prefix */
};

void progress_init(struct progress *pg, size_t total, double est_total, int quiet);
/* whole lines only, each starting with `prefix` (kept, not copied) */
void progress_set_prefix(struct progress *pg, const char *prefix);
/* a permanent line (a newline is added) */
void progress_say(struct progress *pg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void progress_run_start(struct progress *pg, const char *boot, const char *what);
void progress_run_end(struct progress *pg, double est_s, const char *outcome);
double progress_eta(const struct progress *pg);
void progress_done(struct progress *pg);
/* "42s", "3m12s", "1h05m" */
void progress_fmt_dur(double s, char *buf, size_t len);

#endif
