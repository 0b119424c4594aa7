/*
 * The regression robot's own sessions (docs/alerts.md "The baseline"):
 * `schedlab nightly` marks every session it runs or judges (session.nightly,
 * schema 15), and the rolling baseline takes the marked sessions whatever
 * their tags. When none qualifies, the sessions passed over and why.
 */
#ifndef SL_DB_NIGHT_STORE_H
#define SL_DB_NIGHT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

/* mark session `id` as one of the nightly's: 0, or -1 with the message */
int db_session_mark_nightly(struct db *db, int64_t id);

/* a session of the plan that the rolling baseline did not take */
struct db_passed_over {
	int64_t id;
	char *tag;          /* NULL: none */
	int nightly;        /* marked as the nightly's (schema 15) */
	int has_results;    /* any metric stored */
	int on_machine;     /* a good boot on the machine asked about */
};
/* the sessions of `plan` with id < before (not tagged `but_tag`: tonight's
 * lab), newest first, at most max, into *out (*n of them) and their number
 * in all into *total: 0, or -1 with the message */
int db_nightly_passed_over(struct db *db, const char *plan, int64_t machine_id, int64_t before,
			   const char *but_tag, size_t max, struct db_passed_over **out,
			   size_t *n, size_t *total);
void db_passed_over_free(struct db_passed_over *p, size_t n);

/* a session of one night (docs/alerts.md "One night": the plan, its
 * target, the tag) */
struct db_night_session {
	int64_t id;
	char *target;       /* session.target: the label of its target */
	char *status;       /* running, interrupted, done, ... */
	int nightly;        /* judged by a nightly (session.nightly) */
};
/* the sessions of `plan` tagged `tag`, oldest first, into *out (*n of
 * them): 0, or -1 with the message */
int db_night_sessions(struct db *db, const char *plan, const char *tag,
		      struct db_night_session **out, size_t *n);
void db_night_sessions_free(struct db_night_session *s, size_t n);

#endif
