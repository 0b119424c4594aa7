/*
 * The states of runs, boots and sessions (db/runstate.c): every pair of
 * states against the moves spelled here again, the class of every run
 * state with every skip reason (a run skipped because its boot failed is
 * the one skipped run still to do), the words both ways, the refusal
 * messages, and the SQL fragments made from the tables checked on a table
 * that holds every (state, reason) pair: each fragment selects exactly the
 * rows the C functions say (issue 52: --resume, `schedlab sessions` and
 * serve had three spellings that drifted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/runstate.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"

static char tmpdir[256];

TEST(words_both_ways)
{
	for (int s = 0; s < RUN_ST_N; s++)
		CHECK(run_state_parse(run_state_word((enum run_state)s)) == s);
	for (int r = 1; r < SKIP_N; r++)
		CHECK(skip_reason_parse(skip_reason_word((enum skip_reason)r)) == r);
	for (int s = 0; s < BOOT_ST_N; s++)
		CHECK(boot_state_parse(boot_state_word((enum boot_state)s)) == s);
	for (int s = 0; s < SESSION_ST_N; s++)
		CHECK(session_state_parse(session_state_word((enum session_state)s)) == s);
	CHECK(skip_reason_word(SKIP_NONE) == NULL);
	CHECK(skip_reason_parse(NULL) == SKIP_NONE);
	CHECK(skip_reason_parse("boot failed") == -1);   /* the error's words are no reason */
	CHECK(run_state_parse("done") == -1);
	CHECK(run_state_word(RUN_ST_N) == NULL);
	CHECK_STR(run_state_word(RUN_ST_INTERRUPTED), "interrupted");
	CHECK_STR(skip_reason_word(SKIP_BOOT_FAILED), "boot-failed");
	CHECK_STR(run_class_word(RUN_TODO), "todo");
	CHECK_STR(boot_state_word(BOOT_ST_MISMATCH), "mismatch");
	CHECK_STR(session_state_word(SESSION_ST_INTERRUPTED), "interrupted");
}

TEST(classes_and_what_is_left_to_do)
{
	/* the classes, spelled again: planned, running and interrupted are to
	 * do; skipped is to do only when its boot failed */
	for (int r = 0; r < SKIP_N; r++) {
		enum skip_reason why = (enum skip_reason)r;
		CHECK(run_class_of(RUN_ST_PLANNED, why) == RUN_TODO);
		CHECK(run_class_of(RUN_ST_RUNNING, why) == RUN_TODO);
		CHECK(run_class_of(RUN_ST_INTERRUPTED, why) == RUN_TODO);
		CHECK(run_class_of(RUN_ST_OK, why) == RUN_DONE_OK);
		CHECK(run_class_of(RUN_ST_FAILED, why) == RUN_DONE_FAILED);
		CHECK(run_class_of(RUN_ST_TIMEOUT, why) == RUN_DONE_FAILED);
		CHECK(run_class_of(RUN_ST_SKIPPED, why) ==
		      (why == SKIP_BOOT_FAILED ? RUN_TODO : RUN_DONE_SKIPPED));
		CHECK(run_todo(RUN_ST_SKIPPED, why) == (why == SKIP_BOOT_FAILED));
	}
	CHECK(boot_skip_reason(BOOT_ST_FAILED) == SKIP_BOOT_FAILED);
	CHECK(boot_skip_reason(BOOT_ST_MISMATCH) == SKIP_BOOT_MISMATCH);
	CHECK(boot_skip_reason(BOOT_ST_OK) == SKIP_NONE);
	CHECK(boot_skip_reason(BOOT_ST_PLANNED) == SKIP_NONE);
	/* a failed boot's runs are to do, a mismatched boot's are not */
	CHECK(run_todo(RUN_ST_SKIPPED, boot_skip_reason(BOOT_ST_FAILED)));
	CHECK(!run_todo(RUN_ST_SKIPPED, boot_skip_reason(BOOT_ST_MISMATCH)));
	CHECK(!boot_tried(BOOT_ST_PLANNED) && boot_tried(BOOT_ST_OK) && boot_tried(BOOT_ST_FAILED) &&
	      boot_tried(BOOT_ST_MISMATCH));
	CHECK(session_state_ended(SESSION_ST_DONE) && session_state_ended(SESSION_ST_FAILED));
	CHECK(!session_state_ended(SESSION_ST_RUNNING) &&
	      !session_state_ended(SESSION_ST_INTERRUPTED));
}

TEST(every_run_move)
{
	/* allowed[from][to], spelled again: 1 yes, 2 when the run is to do */
	static const int allowed[RUN_ST_N][RUN_ST_N] = {
		/*              planned running ok failed timeout skipped interrupted */
		/* planned */ { 0, 1, 1, 1, 1, 1, 1 },
		/* running */ { 1, 0, 1, 1, 1, 1, 1 },
		/* ok      */ { 0 },
		/* failed  */ { 0 },
		/* timeout */ { 0 },
		/* skipped */ { 2, 0, 0, 0, 0, 0, 0 },
		/* intr    */ { 1, 0, 0, 0, 0, 0, 0 },
	};
	char why[256];
	for (int f = 0; f < RUN_ST_N; f++)
		for (int t = 0; t < RUN_ST_N; t++)
			for (int r = 0; r < SKIP_N; r++) {
				int want = allowed[f][t] == 1 ||
					   (allowed[f][t] == 2 && r == SKIP_BOOT_FAILED);
				int got = run_move_ok((enum run_state)f, (enum skip_reason)r,
						      (enum run_state)t, why, sizeof(why));
				if (got != want)
					printf("#   run %s (%s) -> %s: %d\n", run_state_word(f),
					       r ? skip_reason_word(r) : "-", run_state_word(t), got);
				CHECK(got == want);
			}
	CHECK(!run_move_ok(RUN_ST_OK, SKIP_NONE, RUN_ST_FAILED, why, sizeof(why)));
	CHECK_STR(why, "run is ok and cannot become failed (from ok: none)");
	CHECK(!run_move_ok(RUN_ST_SKIPPED, SKIP_BOOT_MISMATCH, RUN_ST_PLANNED, why, sizeof(why)));
	CHECK_STR(why, "run is skipped for good and cannot become planned (from skipped: none)");
	CHECK(!run_move_ok(RUN_ST_INTERRUPTED, SKIP_NONE, RUN_ST_OK, why, sizeof(why)));
	CHECK_STR(why, "run is interrupted and cannot become ok (from interrupted: planned)");
	CHECK(!run_move_ok(RUN_ST_N, SKIP_NONE, RUN_ST_OK, why, sizeof(why)));
	CHECK_STR(why, "unknown run state");
}

TEST(every_boot_and_session_move)
{
	char why[256];
	for (int f = 0; f < BOOT_ST_N; f++)
		for (int t = 0; t < BOOT_ST_N; t++)
			CHECK(boot_move_ok((enum boot_state)f, (enum boot_state)t, why, sizeof(why)) ==
			      (f == BOOT_ST_PLANNED && t != BOOT_ST_PLANNED));
	CHECK(!boot_move_ok(BOOT_ST_FAILED, BOOT_ST_OK, why, sizeof(why)));
	CHECK_STR(why, "boot is failed and cannot become ok (from failed: none)");
	for (int f = 0; f < SESSION_ST_N; f++)
		for (int t = 0; t < SESSION_ST_N; t++)
			CHECK(session_move_ok((enum session_state)f, (enum session_state)t, why,
					      sizeof(why)) ==
			      (f == SESSION_ST_RUNNING ? t != SESSION_ST_RUNNING
						       : t == SESSION_ST_RUNNING));
	CHECK(!session_move_ok(SESSION_ST_DONE, SESSION_ST_INTERRUPTED, why, sizeof(why)));
	CHECK_STR(why, "session is done and cannot become interrupted (from done: running)");
}

TEST(fragments_spelled)
{
	CHECK_STR(run_class_sql(RUN_TODO, "r"),
		  "(r.status = 'planned' OR r.status = 'running' OR (r.status = 'skipped' AND "
		  "(r.skip_reason = 'boot-failed')) OR r.status = 'interrupted')");
	CHECK_STR(run_class_sql(RUN_DONE_FAILED, ""), "(status = 'failed' OR status = 'timeout')");
	CHECK_STR(run_from_sql(RUN_ST_OK, ""), "(status = 'planned' OR status = 'running')");
	CHECK_STR(session_ended_sql("s"), "(s.status = 'done' OR s.status = 'failed')");
	/* made once: the same pointer again */
	CHECK(run_class_sql(RUN_TODO, "r") == run_class_sql(RUN_TODO, "r"));
}

/* the fragments against the C functions on every (state, reason) pair */
struct ids {
	struct strbuf s;
};

static int collect(void *ctx, int nc, const char *const *names, const char *const *vals)
{
	struct ids *c = ctx;
	if (vals && vals[0])
		strbuf_addf(&c->s, "%s%s", c->s.len ? "," : "", vals[0]);
	return 0;
}

TEST(fragments_select_what_the_table_says)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/t.db", tmpdir);
	struct db *db = NULL;
	char *err = NULL;
	CHECK(db_open(path, DB_READWRITE, &db, &err) == 0);
	free(err);
	if (!db)
		return;
	/* a table of its own with the run table's two columns */
	CHECK(db_exec(db, "CREATE TABLE pairs (id INTEGER PRIMARY KEY, status TEXT, "
			  "skip_reason TEXT)") == 0);
	for (int s = 0; s < RUN_ST_N; s++)
		for (int r = 0; r < SKIP_N; r++) {
			char q[200];
			const char *w = skip_reason_word((enum skip_reason)r);
			snprintf(q, sizeof(q), "INSERT INTO pairs VALUES (%d, '%s', %s%s%s)",
				 s * SKIP_N + r, run_state_word((enum run_state)s), w ? "'" : "",
				 w ? w : "NULL", w ? "'" : "");
			CHECK(db_exec(db, q) == 0);
		}
	for (int c = 0; c < RUN_NCLASSES + RUN_ST_N; c++) {
		struct ids got = { STRBUF_INIT }, want = { STRBUF_INIT };
		char q[1024];
		const char *frag = c < RUN_NCLASSES ? run_class_sql((enum run_class)c, "p")
				   : run_from_sql((enum run_state)(c - RUN_NCLASSES), "p");
		snprintf(q, sizeof(q), "SELECT id FROM pairs p WHERE %s ORDER BY id", frag);
		CHECK(db_query(db, q, collect, &got) == 0);
		for (int s = 0; s < RUN_ST_N; s++)
			for (int r = 0; r < SKIP_N; r++) {
				char why[64];
				int in = c < RUN_NCLASSES
					? run_class_of((enum run_state)s, (enum skip_reason)r) ==
						  (enum run_class)c
					: s != c - RUN_NCLASSES &&
						  run_move_ok((enum run_state)s, (enum skip_reason)r,
							      (enum run_state)(c - RUN_NCLASSES), why,
							      sizeof(why));
				if (in)
					strbuf_addf(&want.s, "%s%d", want.s.len ? "," : "",
						    s * SKIP_N + r);
			}
		if (strcmp(got.s.buf, want.s.buf))
			printf("#   %s: got %s, want %s\n", frag, got.s.buf, want.s.buf);
		CHECK_STR(got.s.buf, want.s.buf);
		strbuf_release(&got.s);
		strbuf_release(&want.s);
	}
	db_close(db);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/sl-runstate-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(words_both_ways);
	RUN(classes_and_what_is_left_to_do);
	RUN(every_run_move);
	RUN(every_boot_and_session_move);
	RUN(fragments_spelled);
	RUN(fragments_select_what_the_table_says);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		printf("# could not remove %s\n", tmpdir);
	return tap_done();
}
