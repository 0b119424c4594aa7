/*
 * How a session is told and interrupted (struct session_opts), apart from
 * session.h so that the session engine (engine.h) below session.c can read
 * them without an arrow up to it.
 */
#ifndef SL_SESSION_OPTS_H
#define SL_SESSION_OPTS_H

#include <signal.h>

struct session_opts {
	const char *tag;
	int quiet;              /* no per-run progress lines */
	const char *agent_path; /* override bin/schedlab-agent */
	/* the interrupt flag, normally &session_abort (below); set to a signal
	 * number, the session stops at the next safe point (the target sees it
	 * too: target.abort_flag). NULL: nothing interrupts. */
	volatile sig_atomic_t *abort_flag;
	/* a lab member (a process of its own): every progress line and message
	 * of session_execute starts with this ("[ssh:lab1] "), written as whole
	 * lines with no live status line; NULL otherwise */
	const char *prefix;
	/* take the session from an owner that still looks alive (one on
	 * another host, which cannot be checked): run --resume --take-over */
	int take_over;
};

/* the signal that interrupted the session, 0 when none */
static inline int session_aborted(const struct session_opts *o)
{
	return o->abort_flag ? *o->abort_flag : 0;
}

#endif
