/*
 * The alert life cycle as one table (alertstate.h): moves[from][to] says
 * who may make the move, and everything else is refused with a message
 * built from the same table.
 */
#include "db/alertstate.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static const char *const names[ALERT_NSTATES] = {
	"new", "bisecting", "culprit found", "unresolved", "acknowledged",
	"expected", "invalid", "fixed",
};
static const char *const words[ALERT_NSTATES] = {
	"new", "bisecting", "culprit", "unresolved", "acknowledged",
	"expected", "invalid", "fixed",
};

enum { R = 1 << ALERT_BY_ROBOT, P = 1 << ALERT_BY_PERSON };

/* moves[from][to]: the actors that may make the move */
static const unsigned char moves[ALERT_NSTATES][ALERT_NSTATES] = {
	/*                   new  bisect culprit unres  ack  expect invalid fixed */
	[ALERT_NEW]          = { 0,   R | P,  0,      0,     P,   P,     P,      R },
	[ALERT_BISECTING]    = { 0,   0,      R,      R,     P,   P,     P,      R },
	[ALERT_CULPRIT]      = { 0,   0,      0,      0,     P,   P,     P,      R },
	[ALERT_UNRESOLVED]   = { P,   R | P,  0,      0,     P,   P,     P,      R },
	[ALERT_ACKNOWLEDGED] = { P,   0,      0,      0,     0,   P,     P,      R },
	[ALERT_EXPECTED]     = { P,   0,      0,      0,     0,   0,     P,      0 },
	[ALERT_INVALID]      = { P,   0,      0,      0,     0,   0,     0,      0 },
	[ALERT_FIXED]        = { P,   0,      0,      0,     0,   0,     0,      0 },
};

const char *alert_state_name(enum alert_state s)
{
	return (unsigned)s < ALERT_NSTATES ? names[s] : NULL;
}

const char *alert_state_word(enum alert_state s)
{
	return (unsigned)s < ALERT_NSTATES ? words[s] : NULL;
}

int alert_state_parse(const char *word)
{
	for (int i = 0; i < ALERT_NSTATES; i++)
		if (!strcmp(word, words[i]) || !strcmp(word, names[i]))
			return i;
	return -1;
}

int alert_state_open(enum alert_state s)
{
	return s == ALERT_NEW || s == ALERT_BISECTING || s == ALERT_CULPRIT ||
	       s == ALERT_UNRESOLVED || s == ALERT_ACKNOWLEDGED;
}

/* the verb a person uses for a move to `to` */
static const char *verb(enum alert_state to)
{
	switch (to) {
	case ALERT_NEW: return "reopen";
	case ALERT_BISECTING: return "bisect";
	case ALERT_ACKNOWLEDGED: return "ack";
	case ALERT_EXPECTED: return "expect";
	case ALERT_INVALID: return "invalid";
	default: return NULL;
	}
}

int alert_transition_ok(enum alert_state from, enum alert_state to, enum alert_actor by,
			char *why, unsigned whylen)
{
	if ((unsigned)from >= ALERT_NSTATES || (unsigned)to >= ALERT_NSTATES) {
		snprintf(why, whylen, "unknown alert state");
		return 0;
	}
	if (moves[from][to] & (1u << by))
		return 1;
	char may[160] = "";
	size_t n = 0;
	for (int t = 0; t < ALERT_NSTATES; t++) {
		if (!(moves[from][t] & P) || !verb(t))
			continue;
		n += (size_t)snprintf(may + n, n < sizeof(may) ? sizeof(may) - n : 0, "%s%s",
				      n ? ", " : "", verb(t));
	}
	const char *target = to == ALERT_NEW ? "reopened" : names[to];
	const char *be = to == ALERT_NEW ? "be " : "become ";
	if (by == ALERT_BY_PERSON && (moves[from][to] & R))
		snprintf(why, whylen, "it is %s; only the nightly makes it %s (a person may: %s)",
			 names[from], target, *may ? may : "nothing");
	else if (by == ALERT_BY_PERSON)
		snprintf(why, whylen, "it is %s and cannot %s%s (%s%s)", names[from], be, target,
			 *may ? "a person may: " : "no move is left to a person", may);
	else
		snprintf(why, whylen, "it is %s, which the nightly does not make %s", names[from],
			 target);
	return 0;
}

enum alert_move alert_move_decide(enum alert_state from, enum alert_state to,
				  enum alert_actor by, const char *note, int group_culprit,
				  enum alert_state *dest, char *why, unsigned whylen)
{
	*dest = to == ALERT_NEW && group_culprit ? ALERT_CULPRIT : to;
	if (by == ALERT_BY_PERSON && to != ALERT_NEW && (!note || !*note)) {
		snprintf(why, whylen, "a note is required (--note TEXT, or the note of the page's "
				      "form): it stays in the alert's history");
		return ALERT_MOVE_NO_NOTE;
	}
	if (from == to && to != ALERT_NEW) {
		snprintf(why, whylen, "it is %s already", alert_state_name(from));
		return ALERT_MOVE_NONE;
	}
	return alert_transition_ok(from, to, by, why, whylen) ? ALERT_MOVE_DO
								: ALERT_MOVE_REFUSED;
}

const char *alert_open_words(void)
{
	static char w[128];
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	if (!w[0]) {
		size_t n = 0;
		w[n++] = ',';
		for (int i = 0; i < ALERT_NSTATES; i++)
			if (alert_state_open((enum alert_state)i))
				n += (size_t)snprintf(w + n, sizeof(w) - n, "%s,", words[i]);
	}
	pthread_mutex_unlock(&mu);
	return w;
}
