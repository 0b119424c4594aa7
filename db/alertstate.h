/*
 * The life cycle of an alert (docs/alerts.md), as data and pure functions:
 * the states, who may move an alert between them (the nightly and its
 * bisection, or a person through `schedlab alerts`), and the message that
 * refuses any other move. The store (db/alert_store.c) asks here before it
 * writes a new status, so no path of the program can make a move this
 * table does not allow.
 *
 *   new ----------> bisecting --> culprit | unresolved
 *    |                 |             |          |  (bisect again by hand)
 *    +-----------------+-------------+----------+--> acknowledged | expected | invalid
 *   new, bisecting, culprit, unresolved, acknowledged --> fixed  (the nightly:
 *       a later change point brings the series back to its level)
 *   acknowledged, expected, invalid, fixed, unresolved --> reopened (back to
 *       new, or to culprit when the group's bisection named one)
 */
#ifndef SL_DB_ALERTSTATE_H
#define SL_DB_ALERTSTATE_H

enum alert_state {
	ALERT_NEW = 0,
	ALERT_BISECTING,
	ALERT_CULPRIT,        /* "culprit found": the group's bisection named a commit */
	ALERT_UNRESOLVED,     /* the bisection ended without one commit (why kept) */
	ALERT_ACKNOWLEDGED,
	ALERT_EXPECTED,       /* a deliberate change: later baselines start after it */
	ALERT_INVALID,        /* noise, a broken machine */
	ALERT_FIXED,
	ALERT_NSTATES
};

/* who asks for a move */
enum alert_actor { ALERT_BY_ROBOT = 0, ALERT_BY_PERSON = 1 };

/* "new", "bisecting", "culprit found", ...; NULL out of range */
const char *alert_state_name(enum alert_state s);
/* the stored word (one token: "culprit" for culprit found) */
const char *alert_state_word(enum alert_state s);
/* from a stored word or a name; -1 when unknown */
int alert_state_parse(const char *word);
/* open: the change is still to be dealt with (new, bisecting, culprit found,
 * unresolved, acknowledged): the nightly says "known" and keeps measuring
 * the series against its level before the change */
int alert_state_open(enum alert_state s);

/*
 * May `by` move an alert from `from` to `to`? 1 yes; 0 no, with a message
 * that names both states and the moves that are possible from `from` in
 * why[0..whylen) ("alert is expected; it cannot become bisecting: from
 * expected a person may reopen it"). Reopening is the move to ALERT_NEW (the
 * store turns it into culprit when the group has one).
 */
int alert_transition_ok(enum alert_state from, enum alert_state to, enum alert_actor by,
			char *why, unsigned whylen);

/* what alert_move_decide() says of a move */
enum alert_move {
	ALERT_MOVE_NO_NOTE = -2,   /* a person's move without the note it needs (why says so) */
	ALERT_MOVE_REFUSED = -1,   /* the life cycle does not allow it (why says so) */
	ALERT_MOVE_NONE = 0,       /* nothing to do: the alert is there already */
	ALERT_MOVE_DO = 1,         /* write the move to *dest */
};

/*
 * The one place the life cycle is applied: `by` asks to move an alert in
 * `from` to `to` with `note`; group_culprit says whether its group's
 * bisection named a commit (reopening goes back to culprit found then, else
 * to new). Every move of a person's but reopen needs a note, which stays in
 * the alert's history (ALERT_MOVE_NO_NOTE, asked before the table: the
 * same message for `schedlab alerts` and serve's form). The store writes
 * what this decides (db_alert_move, db_alert_group_move); everything else
 * that moves an alert goes through the store.
 */
enum alert_move alert_move_decide(enum alert_state from, enum alert_state to,
				  enum alert_actor by, const char *note, int group_culprit,
				  enum alert_state *dest, char *why, unsigned whylen);

/* ",new,bisecting,...,": the stored words of the open states, each between
 * commas (the store's queries ask `instr(this, ',' || status || ',')`) */
const char *alert_open_words(void);

#endif
