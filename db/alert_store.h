/*
 * The store of the regression robot's alerts (docs/alerts.md; tables
 * alert_group, alert, alert_event of migration 11). A group is found or made
 * by its plan, machine and range key (the commit range of a kernel from
 * git, else the good and bad sessions), so alerts raised by one change
 * share one group and one bisection. Every status change goes through
 * db_alert_move(), which asks db/alertstate.c first and writes the
 * event in the same transaction. Each function prepares and finalizes its
 * own statements; -1 with db_errmsg() on error.
 */
#ifndef SL_DB_ALERT_STORE_H
#define SL_DB_ALERT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "db/alertstate.h"
#include "db/db.h"

struct db_alert_group {
	int64_t id;
	char *plan;
	int64_t machine_id;
	char *range_key;
	int64_t good_session, bad_session;
	char *git_dir, *good_commit, *bad_commit;  /* NULL: not a kernel from git */
	int ncommits;                              /* commits in good..bad, -1 unknown */
	int64_t bisect_id;                         /* 0: none yet */
	char *bisect_plan;                         /* the narrowed plan bisected */
	char *culprit;                             /* JSON, NULL until found */
	char *why;                                 /* unresolved: the reason */
	char *created_at, *updated_at;
};
void db_alert_group_free(struct db_alert_group *g);

struct db_alert {
	int64_t id, group_id;
	char *kind;                      /* regression | improvement */
	enum alert_state status;
	char *series_key, *series_label, *series_where;
	char *workload, *metric, *unit;
	char *detector;                  /* check | changepoint */
	int64_t good_session, bad_session;
	char *baseline;                  /* JSON array of the baseline's sessions */
	double base_value, value, change_pct, ci_lo, ci_hi, p;  /* NAN: unknown */
	int64_t last_seen_session, fixed_session;               /* 0: none */
	char *created_at, *updated_at;
};
void db_alert_free(struct db_alert *a);
void db_alerts_free(struct db_alert *a, size_t n);

/* the group with g's plan, machine and range key: its id (*existed = 1), or
 * a new one made from g (*existed = 0); -1 on error */
int64_t db_alert_group_find_or_add(struct db *db, const struct db_alert_group *g, int *existed);
int db_alert_group_get(struct db *db, int64_t id, struct db_alert_group *out);
/* the group's bisection, its narrowed plan, its result (culprit JSON or
 * why, NULL leaves a field as it is) */
int db_alert_group_set_bisect(struct db *db, int64_t id, int64_t bisect_id, const char *plan);
int db_alert_group_set_result(struct db *db, int64_t id, const char *culprit, const char *why);

/* a new alert (status new, an event "raised" at bad_session); its id or -1 */
int64_t db_alert_add(struct db *db, const struct db_alert *a, const char *note);
int db_alert_get(struct db *db, int64_t id, struct db_alert *out);

/*
 * Move alert `id` to `to` for `by` (the nightly or a person), with a note
 * and the session that caused it (0: none). A move the life cycle does not
 * allow is refused: -1 with "alert N: it is X, ..." in db_errmsg(). ALERT_NEW
 * is reopening: the alert goes back to culprit found when its group's
 * bisection named one, else to new.
 */
int db_alert_move(struct db *db, int64_t id, enum alert_state to, enum alert_actor by,
		  const char *note, int64_t session);
/*
 * Move the alerts of group `gid` in state `from` (-1: any; ALERT_NSTATES:
 * any open one) to `to` for `by`, each as db_alert_move() does; an alert
 * the life cycle does not let `by` move that way (alertstate.h) is left as
 * it is. How many moved in *moved (may be NULL).
 */
int db_alert_group_move(struct db *db, int64_t gid, int from, enum alert_state to,
			enum alert_actor by, const char *note, int64_t session, size_t *moved);
/* the nightly saw the alert's change again in session s (no status change) */
int db_alert_seen(struct db *db, int64_t id, int64_t s);

struct db_alert_filter {
	int status;              /* -1: any; ALERT_NSTATES: any open one */
	const char *machine;     /* machine name, NULL: any */
	const char *metric;      /* "workload.metric" or "metric", NULL: any */
	const char *since;       /* created_at >= since, NULL: any */
	const char *plan;        /* plan name, NULL: any */
	int64_t machine_id;      /* 0: any */
	int64_t group_id;        /* 0: any */
	const char *series_key;  /* NULL: any */
};
/* alerts matching f, oldest first */
int db_alerts_list(struct db *db, const struct db_alert_filter *f, struct db_alert **out,
		   size_t *n);
/* the open alerts of a plan on a machine, oldest first: the series the
 * robot follows, and the list nightly prints and its page shows */
int db_alerts_open_of(struct db *db, const char *plan, int64_t machine_id, struct db_alert **out,
		      size_t *n);

struct db_alert_event {
	char *at, *from_status, *to_status, *actor, *note;
	int64_t session;
};
int db_alert_events(struct db *db, int64_t alert_id, struct db_alert_event **out, size_t *n);
void db_alert_events_free(struct db_alert_event *e, size_t n);

/* the group ids with an alert in state s, oldest first (bisection queue) */
int db_alert_groups_with(struct db *db, enum alert_state s, int64_t **ids, size_t *n);

/* the newest bad session of an expected alert of `plan` on `machine_id`
 * (0: none): the nightly's baseline starts there */
int64_t db_alert_expected_since(struct db *db, const char *plan, int64_t machine_id);

/* ---- the site's hook's calls (schema 16, docs/alerts.md "The hook") ------ */

/* a call of the hook the store holds */
struct db_alert_hook {
	int64_t id, group_id, session_id;
	char *event;                 /* raised, fixed, bisected */
	int64_t claim_pid;           /* 0: not claimed */
	unsigned long long claim_start;
};
void db_alert_hooks_free(struct db_alert_hook *h, size_t n);
/* group gid's call for night `sid` with `event` (not yet delivered: its
 * event replaced, `bisected` over the others; delivered: left as it is): 0,
 * or -1 with the message. Within the caller's transaction when there is one */
int db_alert_hook_add(struct db *db, int64_t gid, int64_t sid, const char *event);
/* the calls not yet delivered of the groups of `plan` on `machine_id`,
 * oldest first */
int db_alert_hooks_pending(struct db *db, const char *plan, int64_t machine_id,
			   struct db_alert_hook **out, size_t *n);
/* claim call `id` for the process (pid, start) when its claim is still
 * (old_pid, old_start) and it is not delivered: 1 claimed, 0 not (another
 * took it meanwhile), -1 with the message */
int db_alert_hook_claim(struct db *db, int64_t id, int64_t old_pid,
			unsigned long long old_start, int64_t pid, unsigned long long start);
/* call `id` delivered (the hook ran): 0, or -1 with the message */
int db_alert_hook_delivered(struct db *db, int64_t id);

#endif
