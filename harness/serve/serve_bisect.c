/*
 * The second write of schedlab serve: an alert's group bisected from its
 * page (docs/serve.md "Bisect from the page"). Not a second bisection: the
 * page starts `schedlab alerts bisect N` itself as a detached child, whose
 * refusals, record and log are harness/orchestrate/robot_bg.h's; this file
 * maps them to HTTP and shows what is known of the latest start as the
 * alert page's "bisect_job": running or ended (how), its command, its
 * log's tail, and once ended the outcome as stored (the alert's status,
 * the group's culprit or why).
 */
#include "harness/serve/serve_internal.h"

#include <string.h>

#include "db/alert_store.h"
#include "db/culprit.h"
#include "harness/orchestrate/robot_bg.h"

#define LOG_TAIL_MAX (16 * 1024)

json_t *bisect_job_json(struct robot_bg *bg, struct db *db, int64_t gid)
{
	struct robot_bg_job j;
	if (!bg || !robot_bg_get(bg, gid, &j))
		return json_null();
	char *tail = robot_bg_log_tail(bg, &j, LOG_TAIL_MAX);
	json_t *o = json_pack("{s:I,s:I,s:b,s:o,s:o,s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "group",
			      (json_int_t)gid, "alert", (json_int_t)j.alert, "running", j.running,
			      "started_at", jstr(j.started_at), "ended_at", jstr(j.ended_at), "pid",
			      (json_int_t)j.pid, "exit_code",
			      j.exit_code >= 0 ? json_integer(j.exit_code) : json_null(), "signal",
			      j.term_signal ? json_integer(j.term_signal) : json_null(), "how",
			      jstr(j.how), "command", jstr(j.command), "log", jstr(j.log_path),
			      "log_tail", jstr(tail));
	free(tail);
	json_t *outcome = json_null();
	struct db_alert a;
	if (!j.running && !db_alert_get(db, j.alert, &a)) {
		struct db_alert_group g;
		struct db_culprit c;
		int has = 0;
		memset(&g, 0, sizeof(g));
		if (!db_alert_group_get(db, gid, &g))
			has = !db_culprit_decode(g.culprit, &c);
		outcome = json_pack("{s:s,s:o,s:o}", "status", alert_state_name(a.status), "culprit",
				    has ? jstr(c.commit) : json_null(), "why", jstr(g.why));
		if (has)
			db_culprit_free(&c);
		db_alert_group_free(&g);
		db_alert_free(&a);
	}
	json_object_set_new(o, "outcome", outcome);
	robot_bg_job_free(&j);
	return o;
}

int serve_bisect(struct db *db, struct robot_bg *bg, int64_t id, json_t **doc,
		 struct strbuf *err)
{
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		strbuf_addstr(err, db_errmsg(db));
		return 404;
	}
	int64_t gid = a.group_id;
	db_alert_free(&a);
	if (!bg) {
		strbuf_addstr(err, "bisect: schedlab serve has no folder for its bisections");
		return 500;
	}
	struct robot_bg_job j;
	switch (robot_bg_start(bg, db, id, &j, err)) {
	case ROBOT_BG_STARTED:
		break;
	case ROBOT_BG_BUSY:
	case ROBOT_BG_REFUSED:
		return 409;
	default:
		return 500;
	}
	robot_bg_job_free(&j);
	*doc = json_pack("{s:i,s:I,s:I,s:o}", "schedlab_format", 1, "alert", (json_int_t)id,
			 "group", (json_int_t)gid, "bisect_job", bisect_job_json(bg, db, gid));
	return 0;
}
