/*
 * A write of schedlab serve: a person's move of an alert, through the
 * store's move function exactly as `schedlab alerts ack|expect|invalid|
 * reopen` makes it (db_alert_move with ALERT_BY_PERSON, the note, no
 * session), so alert_event holds the same row whichever made it. What the
 * life cycle says of the move (a note missing included) is asked of
 * alert_move_decide first, as the command does: a missing note is bad input
 * (400), a move the life cycle refuses a conflict (409), the store's write
 * lock held by another process 503 (try again).
 */
#include "harness/serve/serve_internal.h"

#include <string.h>

#include "db/alert_store.h"

int serve_triage(struct db *db, int64_t id, const char *action, const char *note,
		 const char **status_name, struct strbuf *err)
{
	static const struct {
		const char *verb;
		enum alert_state to;
	} moves[] = {
		{ "ack", ALERT_ACKNOWLEDGED },
		{ "expect", ALERT_EXPECTED },
		{ "invalid", ALERT_INVALID },
		{ "reopen", ALERT_NEW },
	};
	size_t k = 0, n = sizeof(moves) / sizeof(moves[0]);
	while (k < n && !(action && !strcmp(action, moves[k].verb)))
		k++;
	if (k == n) {
		strbuf_addf(err, "action '%s': one of ack, expect, invalid, reopen, bisect",
			    action ? action : "");
		return 400;
	}
	enum alert_state to = moves[k].to;
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		strbuf_addstr(err, db_errmsg(db));
		return 404;
	}
	char why[400];
	enum alert_state dest;
	enum alert_move mv = alert_move_decide(a.status, to, ALERT_BY_PERSON, note, 0, &dest, why,
					       sizeof(why));
	db_alert_free(&a);
	if (mv == ALERT_MOVE_NO_NOTE) {
		strbuf_addf(err, "%s: alert %lld: %s", moves[k].verb, (long long)id, why);
		return 400;
	}
	if (db_alert_move(db, id, to, ALERT_BY_PERSON, note && *note ? note : NULL, 0)) {
		if (db_failed_busy(db)) {
			strbuf_addf(err, "%s: another process is writing the store (it holds its "
					 "write lock: a nightly, a bisection, schedlab alerts): nothing "
					 "was changed; try again in a few seconds", moves[k].verb);
			return 503;
		}
		strbuf_addf(err, "%s: %s", moves[k].verb, db_errmsg(db));
		return 409;
	}
	if (db_alert_get(db, id, &a)) {
		strbuf_addstr(err, db_errmsg(db));
		return 500;
	}
	*status_name = alert_state_name(a.status);
	db_alert_free(&a);
	return 0;
}
