/*
 * Unit tests of the regression robot's alerts (docs/alerts.md): the life
 * cycle of db/alertstate.c, every pair of states for both actors against
 * the table the documentation states, refused moves with a message naming
 * the states and what is possible; and the store of db/alert_store.c on a
 * real database: a database of migration 10 migrated with its data kept,
 * grouping (alerts with one range share a group, another range or machine
 * gets its own), status moves with their events (refused ones write
 * nothing), reopening to culprit found, the filters of `alerts list`.
 * Issue 40: the one function that decides a move (alert_move_decide), the
 * open states as the store asks for them, the culprit's codec (a subject
 * that is not UTF-8 is kept), a group move that skips what the life cycle
 * does not allow, and a transaction inside a transaction (a savepoint);
 * serve's overview counting the open states the life cycle names.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/alert_store.h"
#include "db/alertstate.h"
#include "db/culprit.h"
#include "db/db.h"
#include "db/serve_reads.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"

/* the documented life cycle, written out independently of the code's
 * table: "R" the nightly may, "P" a person may, "RP" both */
static const char *const expect_moves[ALERT_NSTATES][ALERT_NSTATES] = {
	/*            new   bisecting culprit unresolved ack  expected invalid fixed */
	/* new */   { "",   "RP",     "",     "",        "P", "P",     "P",    "R" },
	/* bisect */{ "",   "",       "R",    "R",       "P", "P",     "P",    "R" },
	/* culprit*/{ "",   "",       "",     "",        "P", "P",     "P",    "R" },
	/* unres */ { "P",  "RP",     "",     "",        "P", "P",     "P",    "R" },
	/* ack */   { "P",  "",       "",     "",        "",  "P",     "P",    "R" },
	/* expect */{ "P",  "",       "",     "",        "",  "",      "P",    "" },
	/* invalid*/{ "P",  "",       "",     "",        "",  "",      "",     "" },
	/* fixed */ { "P",  "",       "",     "",        "",  "",      "",     "" },
};

TEST(every_transition)
{
	char why[400];
	int bad = 0;
	for (int f = 0; f < ALERT_NSTATES; f++)
		for (int t = 0; t < ALERT_NSTATES; t++)
			for (int by = 0; by < 2; by++) {
				int want = strchr(expect_moves[f][t], by ? 'P' : 'R') != NULL;
				why[0] = '\0';
				int got = alert_transition_ok(f, t, by, why, sizeof(why));
				if (got != want) {
					printf("#   %s -> %s by %s: got %d want %d (%s)\n",
					       alert_state_name(f), alert_state_name(t),
					       by ? "person" : "nightly", got, want, why);
					bad++;
				}
				if (!got && !strstr(why, alert_state_name(f))) {
					printf("#   refusal does not name the state: %s\n", why);
					bad++;
				}
			}
	CHECK(bad == 0);
}

TEST(refusal_messages)
{
	char why[400];
	CHECK(!alert_transition_ok(ALERT_EXPECTED, ALERT_BISECTING, ALERT_BY_PERSON, why,
				   sizeof(why)));
	CHECK_STR(why, "it is expected and cannot become bisecting (a person may: reopen, invalid)");
	CHECK(!alert_transition_ok(ALERT_NEW, ALERT_FIXED, ALERT_BY_PERSON, why, sizeof(why)));
	CHECK_CONTAINS(why, "only the nightly makes it fixed");
	CHECK_CONTAINS(why, "a person may: bisect, ack, expect, invalid");
	CHECK(!alert_transition_ok(ALERT_NEW, ALERT_NEW, ALERT_BY_PERSON, why, sizeof(why)));
	CHECK_STR(why, "it is new and cannot be reopened (a person may: bisect, ack, expect, invalid)");
	CHECK(!alert_transition_ok(ALERT_EXPECTED, ALERT_CULPRIT, ALERT_BY_ROBOT, why, sizeof(why)));
	CHECK_CONTAINS(why, "it is expected, which the nightly does not make culprit found");
	CHECK(!alert_transition_ok(ALERT_NSTATES, ALERT_NEW, ALERT_BY_PERSON, why, sizeof(why)));
}

TEST(state_words)
{
	for (int s = 0; s < ALERT_NSTATES; s++) {
		CHECK(alert_state_parse(alert_state_word(s)) == s);
		CHECK(alert_state_parse(alert_state_name(s)) == s);
	}
	CHECK(alert_state_parse("culprit found") == ALERT_CULPRIT);
	CHECK(alert_state_parse("nosuch") == -1);
	CHECK(alert_state_name(ALERT_NSTATES) == NULL);
	int open = 0;
	for (int s = 0; s < ALERT_NSTATES; s++)
		open += alert_state_open(s);
	CHECK(open == 5);
	CHECK(!alert_state_open(ALERT_EXPECTED) && !alert_state_open(ALERT_FIXED) &&
	      !alert_state_open(ALERT_INVALID));
}

static char tmpdir[256];

static struct db *fixture(const char *name)
{
	char *p = xstrfmt("%s/%s", tmpdir, name);
	struct db *db = NULL;
	char *err = NULL;
	/* a database of migration 10 with two machines and five sessions:
	   what the robot finds on a machine that ran nightlies before it */
	if (db_open_raw(p, &db, &err) || db_migrate_to(db, 10)) {
		printf("#   open %s: %s\n", p, err ? err : db ? db_errmsg(db) : "?");
		free(err);
		free(p);
		return NULL;
	}
	int rc = db_exec(db,
		"INSERT INTO machine (id, name, fingerprint) VALUES (1, 'box', 'fp1'), (2, 'lab2', 'fp2');"
		"INSERT INTO session (id, name, plan_json, tag, target, harness_version) VALUES"
		" (1, 'nightly', '{}', 'nightly-1', 'local', 'v'), (2, 'nightly', '{}', 'nightly-2', 'local', 'v'),"
		" (3, 'nightly', '{}', 'nightly-3', 'local', 'v'), (4, 'nightly', '{}', 'nightly-4', 'local', 'v'),"
		" (5, 'nightly', '{}', 'nightly-5', 'local', 'v');");
	db_close(db);
	db = NULL;
	if (!rc && db_open(p, DB_READWRITE, &db, &err)) {
		printf("#   reopen %s: %s\n", p, err ? err : "?");
		free(err);
	}
	free(p);
	return rc ? NULL : db;
}

/* the first column of the first row, NULL as "NULL" */
static int first(void *ctx, int n, const char *const *names, const char *const *vals)
{
	struct strbuf *sb = ctx;
	if (vals && !sb->len)
		strbuf_addstr(sb, n && vals[0] ? vals[0] : "NULL");
	return 0;
}

static char *q(struct db *db, const char *sql)
{
	struct strbuf sb = STRBUF_INIT;
	if (db_query(db, sql, first, &sb)) {
		printf("#   query failed: %s: %s\n", sql, db_errmsg(db));
		strbuf_addstr(&sb, "ERROR");
	}
	return strbuf_detach(&sb, NULL);
}

static int64_t add(struct db *db, int64_t group, const char *metric, const char *series,
		   int64_t good, int64_t bad)
{
	struct db_alert a = { 0 };
	a.group_id = group;
	a.kind = "regression";
	a.series_key = (char *)series;
	a.series_label = "preempt=full";
	a.workload = "hackbench";
	a.metric = (char *)metric;
	a.unit = "s";
	a.detector = "check";
	a.good_session = good;
	a.bad_session = bad;
	a.base_value = 1.0;
	a.value = 1.2;
	a.change_pct = 20;
	a.ci_lo = 15;
	a.ci_hi = 25;
	a.p = 0.001;
	return db_alert_add(db, &a, "raised");
}

TEST(store_grouping_and_moves)
{
	struct db *db = fixture("a.db");
	CHECK(db != NULL);
	if (!db)
		return;
	char *v = q(db, "SELECT count(*) FROM machine");
	CHECK_STR(v, "2");   /* migrated with its data */
	free(v);
	struct db_alert_group g = { 0 };
	g.plan = "nightly";
	g.machine_id = 1;
	g.range_key = "abc..def";
	g.good_session = 3;
	g.bad_session = 4;
	g.good_commit = "abc";
	g.bad_commit = "def";
	g.git_dir = "/src/linux";
	g.ncommits = 3;
	int existed = -1;
	int64_t g1 = db_alert_group_find_or_add(db, &g, &existed);
	CHECK(g1 > 0 && existed == 0);
	/* a second metric moved by the same range: the same group */
	int64_t g1b = db_alert_group_find_or_add(db, &g, &existed);
	CHECK(g1b == g1 && existed == 1);
	/* another range, or the same range on another machine: new groups */
	g.range_key = "def..123";
	int64_t g2 = db_alert_group_find_or_add(db, &g, &existed);
	CHECK(g2 > 0 && g2 != g1 && existed == 0);
	g.range_key = "abc..def";
	g.machine_id = 2;
	int64_t g3 = db_alert_group_find_or_add(db, &g, &existed);
	CHECK(g3 > 0 && g3 != g1 && g3 != g2 && existed == 0);

	int64_t a1 = add(db, g1, "time_s", "{\"s\":1}", 3, 4);
	int64_t a2 = add(db, g1, "rps", "{\"s\":1}", 3, 4);
	CHECK(a1 > 0 && a2 > a1);
	struct db_alert a;
	CHECK(db_alert_get(db, a1, &a) == 0);
	CHECK(a.status == ALERT_NEW && a.group_id == g1 && a.last_seen_session == 4);
	CHECK(fabs(a.change_pct - 20) < 1e-9);
	db_alert_free(&a);

	/* the robot bisects, a person may not declare it fixed */
	CHECK(db_alert_move(db, a1, ALERT_BISECTING, ALERT_BY_ROBOT, "bisection 1", 5) == 0);
	CHECK(db_alert_move(db, a1, ALERT_FIXED, ALERT_BY_PERSON, "x", 0) == -1);
	CHECK_CONTAINS(db_errmsg(db), "alert 1: it is bisecting; only the nightly makes it fixed");
	v = q(db, "SELECT count(*) FROM alert_event WHERE alert_id = 1");
	CHECK_STR(v, "2");   /* raised, bisecting: the refusal wrote nothing */
	free(v);
	CHECK(db_alert_group_set_result(db, g1, "{\"commit\":\"c4\"}", NULL) == 0);
	CHECK(db_alert_move(db, a1, ALERT_CULPRIT, ALERT_BY_ROBOT, "c4", 5) == 0);
	/* the store asks the life cycle for the note too: no path writes a
	   person's move without one */
	CHECK(db_alert_move(db, a1, ALERT_EXPECTED, ALERT_BY_PERSON, NULL, 0) == -1);
	CHECK_CONTAINS(db_errmsg(db), "alert 1: a note is required");
	CHECK(db_alert_move(db, a1, ALERT_EXPECTED, ALERT_BY_PERSON, "a trade-off", 0) == 0);
	/* reopening goes back to culprit found: the group has one */
	CHECK(db_alert_move(db, a1, ALERT_NEW, ALERT_BY_PERSON, "not so", 0) == 0);
	CHECK(db_alert_get(db, a1, &a) == 0);
	CHECK(a.status == ALERT_CULPRIT);
	db_alert_free(&a);
	/* fixed by the nightly at session 5 */
	CHECK(db_alert_move(db, a1, ALERT_FIXED, ALERT_BY_ROBOT, "level restored", 5) == 0);
	CHECK(db_alert_get(db, a1, &a) == 0);
	CHECK(a.status == ALERT_FIXED && a.fixed_session == 5);
	db_alert_free(&a);
	v = q(db, "SELECT group_concat(coalesce(from_status, '-') || '>' || to_status || ':' || actor, ' ')"
		  " FROM (SELECT * FROM alert_event WHERE alert_id = 1 ORDER BY id)");
	CHECK_STR(v, "->new:nightly new>bisecting:nightly bisecting>culprit:nightly "
		     "culprit>expected:person expected>culprit:person culprit>fixed:nightly");
	free(v);
	/* the status column refuses a word outside the life cycle */
	CHECK(db_exec(db, "UPDATE alert SET status = 'closed' WHERE id = 2") != 0);
	/* an alert that does not exist */
	CHECK(db_alert_move(db, 99, ALERT_INVALID, ALERT_BY_PERSON, NULL, 0) == -1);
	CHECK_CONTAINS(db_errmsg(db), "no alert 99");

	/* filters */
	struct db_alert *l;
	size_t n;
	struct db_alert_filter f = { .status = -1 };
	CHECK(db_alerts_list(db, &f, &l, &n) == 0 && n == 2);
	db_alerts_free(l, n);
	f.status = ALERT_NSTATES;   /* open ones */
	CHECK(db_alerts_list(db, &f, &l, &n) == 0 && n == 1 && l[0].id == a2);
	db_alerts_free(l, n);
	f.status = -1;
	f.metric = "hackbench.time_s";
	CHECK(db_alerts_list(db, &f, &l, &n) == 0 && n == 1 && l[0].id == a1);
	db_alerts_free(l, n);
	f.metric = NULL;
	f.machine = "lab2";
	CHECK(db_alerts_list(db, &f, &l, &n) == 0 && n == 0);
	db_alerts_free(l, n);
	f.machine = "box";
	f.series_key = "{\"s\":1}";
	CHECK(db_alerts_list(db, &f, &l, &n) == 0 && n == 2);
	db_alerts_free(l, n);
	int64_t *ids;
	CHECK(db_alert_groups_with(db, ALERT_NEW, &ids, &n) == 0 && n == 1 && ids[0] == g1);
	free(ids);
	struct db_alert_event *ev;
	CHECK(db_alert_events(db, a1, &ev, &n) == 0 && n == 6);
	if (n == 6) {
		CHECK_STR(ev[3].note, "a trade-off");
		CHECK_STR(ev[3].actor, "person");
		CHECK(ev[5].session == 5);
	}
	db_alert_events_free(ev, n);
	/* the open alerts of a plan on a machine (robot, nightly, its page):
	   a2 on machine 1 (a1 is fixed), a3 on machine 2, none of another plan */
	int64_t a3 = add(db, g3, "time_s", "{\"s\":1}", 3, 4);
	CHECK(db_alerts_open_of(db, "nightly", 1, &l, &n) == 0 && n == 1 && l[0].id == a2);
	db_alerts_free(l, n);
	CHECK(db_alerts_open_of(db, "nightly", 2, &l, &n) == 0 && n == 1 && l[0].id == a3);
	db_alerts_free(l, n);
	CHECK(db_alert_move(db, a3, ALERT_INVALID, ALERT_BY_PERSON, "noise", 0) == 0);
	CHECK(db_alerts_open_of(db, "nightly", 2, &l, &n) == 0 && n == 0);
	db_alerts_free(l, n);
	CHECK(db_alerts_open_of(db, "other", 1, &l, &n) == 0 && n == 0);
	db_alerts_free(l, n);
	db_close(db);
}

TEST(move_decided_in_one_place)
{
	char why[400];
	enum alert_state dest;
	CHECK(alert_move_decide(ALERT_NEW, ALERT_BISECTING, ALERT_BY_ROBOT, NULL, 0, &dest, why,
				sizeof(why)) == ALERT_MOVE_DO && dest == ALERT_BISECTING);
	/* there already: nothing to do, not an error of the life cycle */
	CHECK(alert_move_decide(ALERT_BISECTING, ALERT_BISECTING, ALERT_BY_PERSON, "n", 0, &dest,
				why, sizeof(why)) == ALERT_MOVE_NONE);
	CHECK(strstr(why, "bisecting already") != NULL);
	CHECK(alert_move_decide(ALERT_EXPECTED, ALERT_BISECTING, ALERT_BY_PERSON, "n", 0, &dest,
				why, sizeof(why)) == ALERT_MOVE_REFUSED);
	CHECK(strstr(why, "it is expected and cannot become bisecting") != NULL);
	/* reopening goes back to culprit found when the group has one */
	CHECK(alert_move_decide(ALERT_FIXED, ALERT_NEW, ALERT_BY_PERSON, NULL, 1, &dest, why,
				sizeof(why)) == ALERT_MOVE_DO && dest == ALERT_CULPRIT);
	CHECK(alert_move_decide(ALERT_FIXED, ALERT_NEW, ALERT_BY_PERSON, "", 0, &dest, why,
				sizeof(why)) == ALERT_MOVE_DO && dest == ALERT_NEW);
	/* a person's every move but reopen needs a note: asked first, one
	   message for the command and the page */
	CHECK(alert_move_decide(ALERT_NEW, ALERT_ACKNOWLEDGED, ALERT_BY_PERSON, NULL, 0, &dest, why,
				sizeof(why)) == ALERT_MOVE_NO_NOTE);
	CHECK(strstr(why, "a note is required (--note TEXT") != NULL);
	CHECK(alert_move_decide(ALERT_EXPECTED, ALERT_EXPECTED, ALERT_BY_PERSON, "", 0, &dest, why,
				sizeof(why)) == ALERT_MOVE_NO_NOTE);
	CHECK(alert_move_decide(ALERT_NEW, ALERT_ACKNOWLEDGED, ALERT_BY_PERSON, "why", 0, &dest,
				why, sizeof(why)) == ALERT_MOVE_DO);
	/* the nightly's moves carry their own notes; none is asked of it */
	CHECK(alert_move_decide(ALERT_BISECTING, ALERT_UNRESOLVED, ALERT_BY_ROBOT, NULL, 0, &dest,
				why, sizeof(why)) == ALERT_MOVE_DO);
	CHECK_STR(alert_open_words(), ",new,bisecting,culprit,unresolved,acknowledged,");
}

TEST(culprit_codec)
{
	struct db_culprit c, d;
	db_culprit_init(&c);
	CHECK(db_culprit_encode(&c) == NULL);   /* no commit: no culprit */
	c.commit = xstrdup("0123456789abcdef");
	c.subject = xstrdup("sched: caf\xe9 (ISO-8859-1)");   /* not UTF-8 */
	c.author = xstrdup("Ann <ann@example.org>");
	c.change_pct = 12.5;
	c.ci_lo = 10;
	c.ci_hi = 15;
	c.bisect_id = 7;
	c.builds = 3;
	c.boots = 9;
	c.steps = xcalloc(1, sizeof(*c.steps));
	c.steps[0] = (struct db_culprit_step){ xstrdup("0123"), xstrdup("mid"), xstrdup("bad"),
					       xstrdup("") };
	c.nsteps = 1;
	char *t = db_culprit_encode(&c);
	CHECK(t != NULL);
	CHECK(t && db_culprit_decode(t, &d) == 0);
	if (t) {
		CHECK_STR(d.commit, "0123456789abcdef");
		CHECK_STR(d.subject, "sched: caf\xc3\xa9 (ISO-8859-1)");
		CHECK(d.change_pct == 12.5 && d.ci_lo == 10 && d.ci_hi == 15 && isnan(d.p));
		CHECK(d.bisect_id == 7 && d.builds == 3 && d.boots == 9 && d.nsteps == 1);
		CHECK(d.nsteps == 1 && !strcmp(d.steps[0].verdict, "bad"));
		db_culprit_free(&d);
	}
	CHECK(db_culprit_decode("{\"why\": \"x\"}", &d) == -1);
	CHECK(db_culprit_decode(NULL, &d) == -1);
	CHECK(db_culprit_decode("not json", &d) == -1);
	free(t);
	db_culprit_free(&c);
}

TEST(group_move_and_nested_transactions)
{
	struct db *db = fixture("group.db");
	CHECK(db != NULL);
	if (!db)
		return;
	struct db_alert_group g = { .plan = "nightly", .machine_id = 1, .range_key = "a..b",
				    .good_session = 1, .bad_session = 2, .ncommits = -1 };
	int existed;
	int64_t gid = db_alert_group_find_or_add(db, &g, &existed);
	int64_t a1 = add(db, gid, "time_s", "{}", 1, 2), a2 = add(db, gid, "time_s", "{}", 1, 2);
	CHECK(a1 > 0 && a2 > 0);
	CHECK(db_alert_move(db, a2, ALERT_EXPECTED, ALERT_BY_PERSON, "x", 0) == 0);
	/* the robot's group move: the alert it may move moves, the expected one
	   is left as it is (no error) */
	size_t moved = 9;
	CHECK(db_alert_group_move(db, gid, -1, ALERT_BISECTING, ALERT_BY_ROBOT, "go", 0,
				  &moved) == 0 && moved == 1);
	struct db_alert x;
	CHECK(db_alert_get(db, a1, &x) == 0 && x.status == ALERT_BISECTING);
	db_alert_free(&x);
	CHECK(db_alert_get(db, a2, &x) == 0 && x.status == ALERT_EXPECTED);
	db_alert_free(&x);
	/* a move inside the caller's transaction is a savepoint of it: undone
	   with the caller's rollback, kept with its commit */
	CHECK(db_begin(db) == 0);
	CHECK(db_alert_move(db, a1, ALERT_UNRESOLVED, ALERT_BY_ROBOT, "y", 0) == 0);
	db_rollback(db);
	CHECK(db_alert_get(db, a1, &x) == 0 && x.status == ALERT_BISECTING);
	db_alert_free(&x);
	CHECK(db_begin(db) == 0);
	CHECK(db_alert_move(db, a1, ALERT_EXPECTED, ALERT_BY_ROBOT, "z", 0) == -1);  /* refused */
	CHECK(db_alert_move(db, a1, ALERT_UNRESOLVED, ALERT_BY_ROBOT, "y", 0) == 0);
	CHECK(db_commit(db) == 0);
	CHECK(db_alert_get(db, a1, &x) == 0 && x.status == ALERT_UNRESOLVED);
	db_alert_free(&x);
	db_close(db);
}

/* the hook's calls (schema 17): one a group and night, bisected over
 * raised, undone with the judgement's rollback, claimed once while the
 * claimer lives, taken over from a dead one, and not pending once
 * delivered */
TEST(hook_calls_stored_claimed_delivered)
{
	struct db *db = fixture("hook.db");
	CHECK(db != NULL);
	if (!db)
		return;
	struct db_alert_group g = { .plan = "nightly", .machine_id = 1, .range_key = "a..b",
				    .good_session = 1, .bad_session = 2, .ncommits = -1 };
	int existed;
	int64_t gid = db_alert_group_find_or_add(db, &g, &existed);
	CHECK(gid > 0);
	/* with a judgement that is rolled back: nothing */
	CHECK(db_begin(db) == 0);
	CHECK(db_alert_hook_add(db, gid, 2, "raised") == 0);
	db_rollback(db);
	struct db_alert_hook *h;
	size_t n;
	CHECK(db_alert_hooks_pending(db, "nightly", 1, &h, &n) == 0 && n == 0);
	db_alert_hooks_free(h, n);
	CHECK(db_begin(db) == 0);
	CHECK(db_alert_hook_add(db, gid, 2, "raised") == 0);
	CHECK(db_commit(db) == 0);
	CHECK(db_alert_hook_add(db, gid, 2, "bisected") == 0);
	CHECK(db_alert_hook_add(db, gid, 2, "raised") == 0);   /* bisected stays */
	CHECK(db_alert_hooks_pending(db, "nightly", 1, &h, &n) == 0 && n == 1);
	CHECK(n == 1 && h[0].group_id == gid && h[0].session_id == 2 && h[0].claim_pid == 0);
	CHECK_STR(n ? h[0].event : "", "bisected");
	int64_t id = n ? h[0].id : 0;
	db_alert_hooks_free(h, n);
	/* another plan or machine: not its call */
	CHECK(db_alert_hooks_pending(db, "nightly", 2, &h, &n) == 0 && n == 0);
	db_alert_hooks_free(h, n);
	/* claimed by (100, 7): a second claim from the unclaimed state fails */
	CHECK(db_alert_hook_claim(db, id, 0, 0, 100, 7) == 1);
	CHECK(db_alert_hook_claim(db, id, 0, 0, 200, 9) == 0);
	/* taken over from (100, 7), as from a dead claimer */
	CHECK(db_alert_hook_claim(db, id, 100, 7, 200, 9) == 1);
	CHECK(db_alert_hooks_pending(db, "nightly", 1, &h, &n) == 0 && n == 1 &&
	      h[0].claim_pid == 200 && h[0].claim_start == 9);
	db_alert_hooks_free(h, n);
	CHECK(db_alert_hook_delivered(db, id) == 0);
	CHECK(db_alert_hooks_pending(db, "nightly", 1, &h, &n) == 0 && n == 0);
	db_alert_hooks_free(h, n);
	/* delivered: not claimed again, and a later add leaves it */
	CHECK(db_alert_hook_claim(db, id, 200, 9, 300, 1) == 0);
	CHECK(db_alert_hook_add(db, gid, 2, "fixed") == 0);
	char *v = q(db, "SELECT event || ' ' || (delivered_at IS NOT NULL) FROM alert_hook");
	CHECK_STR(v, "bisected 1");
	free(v);
	db_close(db);
}

/* serve's overview: the open_alerts column of its first row */
static int open_col(void *ctx, int n, const char *const *names, const char *const *vals)
{
	struct strbuf *sb = ctx;
	for (int i = 0; vals && !sb->len && i < n; i++)
		if (!strcmp(names[i], "open_alerts"))
			strbuf_addstr(sb, vals[i] ? vals[i] : "NULL");
	return 0;
}

/* serve's overview counts as open exactly the states alert_state_open says
 * (its query once spelled them again as SQL) */
TEST(serve_overview_open_is_the_life_cycles)
{
	struct db *db = fixture("serve.db");
	CHECK(db != NULL);
	if (!db)
		return;
	CHECK(db_exec(db, "INSERT INTO boot (id, session_id, seq, cfg, status, machine_id)"
			  " VALUES (1, 1, 0, 0, 'ok', 1)") == 0);
	struct db_alert_group g = { 0 };
	g.plan = "nightly";
	g.machine_id = 1;
	g.range_key = "abc..def";
	g.good_session = 1;
	g.bad_session = 2;
	int existed;
	int64_t gid = db_alert_group_find_or_add(db, &g, &existed);
	int64_t id = add(db, gid, "time_s", "{\"s\":1}", 1, 2);
	CHECK(gid > 0 && id > 0);
	for (int st = 0; st < ALERT_NSTATES; st++) {
		char sql[128];
		snprintf(sql, sizeof(sql), "UPDATE alert SET status = '%s' WHERE id = %lld",
			 alert_state_word((enum alert_state)st), (long long)id);
		CHECK(db_exec(db, sql) == 0);
		struct strbuf sb = STRBUF_INIT;
		CHECK(db_serve_rows(db, DB_SERVE_OVERVIEW, 0, open_col, &sb) == 0);
		CHECK_STR(sb.buf, alert_state_open((enum alert_state)st) ? "1" : "0");
		strbuf_release(&sb);
	}
	/* a query with ?1 still gets its argument */
	struct strbuf sb = STRBUF_INIT;
	CHECK(db_serve_rows(db, DB_SERVE_MACHINE, 2, first, &sb) == 0);
	CHECK_STR(sb.buf, "lab2");
	strbuf_release(&sb);
	db_close(db);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/sl-alerts-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(every_transition);
	RUN(refusal_messages);
	RUN(state_words);
	RUN(store_grouping_and_moves);
	RUN(move_decided_in_one_place);
	RUN(culprit_codec);
	RUN(group_move_and_nested_transactions);
	RUN(hook_calls_stored_claimed_delivered);
	RUN(serve_overview_open_is_the_life_cycles);
	char *cmd = xstrfmt("rm -rf '%s'", tmpdir);
	if (system(cmd))
		printf("# could not remove %s\n", tmpdir);
	free(cmd);
	return tap_done();
}
