/*
 * The one write of schedlab serve: a person's move of an alert, through the
 * store's move function exactly as `schedlab alerts ack|expect|invalid|
 * reopen` makes it (db_alert_move with ALERT_BY_PERSON, the note, no
 * session), so alert_event holds the same row whichever made it. The rule
 * that every move but reopen needs a note is the command's (cmd_alerts.c's
 * do_move); when that code moves to harness/orchestrate, this file is the
 * one call site to re-point.
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
		strbuf_addf(err, "action '%s': one of ack, expect, invalid, reopen",
			    action ? action : "");
		return 400;
	}
	enum alert_state to = moves[k].to;
	if (to != ALERT_NEW && (!note || !*note)) {
		strbuf_addf(err, "%s %lld: a note is required (why: it stays in the alert's "
				 "history)", moves[k].verb, (long long)id);
		return 400;
	}
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		strbuf_addstr(err, db_errmsg(db));
		return 404;
	}
	db_alert_free(&a);
	if (db_alert_move(db, id, to, ALERT_BY_PERSON, note && *note ? note : NULL, 0)) {
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
