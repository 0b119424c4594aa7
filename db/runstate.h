/*
 * The states of a session's rows, as data and pure functions, like the
 * alerts' life cycle (alertstate.h): a run's, a boot's and a session's
 * states, the moves between them, which runs are still to do (what `run
 * --resume` redoes, what `schedlab sessions` and serve count as "todo"), and
 * the SQL fragments of those classes that every query of db/ takes from here
 * (docs/schema.md "States"). A skipped run says why in its own column
 * (run.skip_reason, schema 18), never in its error: a run skipped because
 * its boot failed is still to do, one skipped for any other reason is final.
 *
 * Runs:   planned --> running --> ok | failed | timeout | skipped | interrupted
 *            |           |  (back to planned: started in a commit, never measured)
 *            +-----------+--> skipped | interrupted | failed (stored without a start)
 *         interrupted, running, skipped (boot failed) --> planned (--resume)
 * Boots:  planned --> ok | mismatch | failed   (a boot is stored once; --resume
 *         plans a new row for the runs of one that is not planned)
 * Sessions: running --> done | failed | interrupted --> running (--resume)
 */
#ifndef SL_DB_RUNSTATE_H
#define SL_DB_RUNSTATE_H

#include <stddef.h>

enum run_state {
	RUN_ST_PLANNED = 0,
	RUN_ST_RUNNING,
	RUN_ST_OK,
	RUN_ST_FAILED,
	RUN_ST_TIMEOUT,
	RUN_ST_SKIPPED,
	RUN_ST_INTERRUPTED,
	RUN_ST_N
};

/* why a run was skipped (run.skip_reason; SKIP_NONE: NULL, a run not skipped) */
enum skip_reason {
	SKIP_NONE = 0,
	SKIP_BOOT_FAILED,     /* its boot failed (the target did not come up): redone by --resume */
	SKIP_BOOT_MISMATCH,   /* its boot is not the configuration asked for: final */
	SKIP_UNSUPPORTED,     /* the kernel lacks what it needs (a tracer, a knob file) */
	SKIP_DECIDED,         /* sequential repetitions: decided, or stopped at the cap */
	SKIP_NOT_NEEDED,      /* an evidence trigger left the traced run out */
	SKIP_N
};

/* what a run counts as: still to do, or finished ok, failed (failed or
 * timeout) or skipped for good */
enum run_class { RUN_TODO = 0, RUN_DONE_OK, RUN_DONE_FAILED, RUN_DONE_SKIPPED, RUN_NCLASSES };

enum boot_state { BOOT_ST_PLANNED = 0, BOOT_ST_OK, BOOT_ST_MISMATCH, BOOT_ST_FAILED, BOOT_ST_N };

enum session_state {
	SESSION_ST_RUNNING = 0,
	SESSION_ST_DONE,
	SESSION_ST_FAILED,
	SESSION_ST_INTERRUPTED,
	SESSION_ST_N
};

/* the stored words ("planned", ...; "boot-failed", ...; "todo", ...); NULL
 * out of range and for SKIP_NONE */
const char *run_state_word(enum run_state s);
const char *skip_reason_word(enum skip_reason r);
const char *run_class_word(enum run_class c);
const char *boot_state_word(enum boot_state s);
const char *session_state_word(enum session_state s);
/* from a stored word; -1 when unknown (skip_reason_parse: NULL is SKIP_NONE) */
int run_state_parse(const char *word);
int skip_reason_parse(const char *word);
int boot_state_parse(const char *word);
int session_state_parse(const char *word);

/* the one decision of what a stored run counts as; a skip reason on a run
 * that is not skipped is ignored */
enum run_class run_class_of(enum run_state s, enum skip_reason why);
/* still to do: --resume redoes it (run_class_of() == RUN_TODO) */
int run_todo(enum run_state s, enum skip_reason why);
/* the skip reason of the runs of a boot in state s that did not come up as
 * asked (failed, mismatch); SKIP_NONE for a boot that may run them */
enum skip_reason boot_skip_reason(enum boot_state s);
/* a boot in state s was tried: its runs that are still to do need a new
 * boot row (--resume plans one) */
int boot_tried(enum boot_state s);
/* done or failed: the session ended and will not change unless resumed
 * (not running, not interrupted) */
int session_state_ended(enum session_state s);

/*
 * May a run (a boot, a session) move from `from` to `to`? 1 yes; 0 no,
 * with "it is ok and cannot become running (from ok: none)" in
 * why[0..whylen). A skipped run goes back to planned only when it is still
 * to do (why_from: its skip reason).
 */
int run_move_ok(enum run_state from, enum skip_reason why_from, enum run_state to, char *why,
		size_t whylen);
int boot_move_ok(enum boot_state from, enum boot_state to, char *why, size_t whylen);
int session_move_ok(enum session_state from, enum session_state to, char *why, size_t whylen);

/*
 * The SQL fragments, made from the tables above: a condition that holds
 * for the runs of class c, over the columns status and skip_reason of the
 * run table named `alias` ("r"; "" for none), "(r.status = 'planned' OR
 * ... OR (r.status = 'skipped' AND r.skip_reason = 'boot-failed'))"; the
 * same for the runs a finished run may come from (run_from_sql: the states
 * from which a move to `to` is allowed), and the sessions that ended.
 * Static strings, made once for each alias of up to 7 characters.
 */
const char *run_class_sql(enum run_class c, const char *alias);
const char *run_from_sql(enum run_state to, const char *alias);
const char *session_ended_sql(const char *alias);

#endif
