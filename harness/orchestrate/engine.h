/*
 * The session engine (engine.c): the state of a session being worked
 * through (struct engine), of one boot (struct engine_boot) and of one run
 * (struct engine_run), and the steps every way of running a boot takes.
 * Its loop (engine_execute) works through a session's boots with one of
 * two drivers (struct engine_driver): session.c's runs a live target's
 * boots run by run, session_batch.c's a batch target's boots as jobs (also
 * the job a plan would submit: session_batch_job). For those files only;
 * engine.c calls neither of them (only the driver it is handed).
 */
#ifndef SL_ENGINE_H
#define SL_ENGINE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "harness/orchestrate/evidence.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/progress.h"
#include "harness/orchestrate/seqrun.h"
#include "harness/orchestrate/session_opts.h"
#include "harness/targets/target.h"
#include "harness/util/strbuf.h"
#include "workloads/workload.h"

/* outcome of one run */
enum engine_outcome { ENG_OK, ENG_FAILED, ENG_SKIPPED, ENG_LOST, ENG_INTERRUPTED, ENG_DBERR };

/* one run, from its stored row to its stored result */
struct engine_run {
	struct db *db;
	struct target *t;
	const struct plan *p;
	const struct session_opts *o;
	const struct db_pending_run *pr;
	const struct workload_ops *ops;
	json_t *params, *knob;  /* the stored row's, parsed ("evidence" taken out) */
	json_t *evidence;       /* a traced run's "evidence" object, or NULL */
	json_t *applied;        /* the knob writes done (the agent's answers) */
	int knobs_touched;
	struct wl_exec ex, lex; /* the workload's request and its background load's */
	json_t *res;            /* the agent's result of exec */
	struct metric_set ms;
	json_t *trace_summary;  /* a traced run's summary (schedlab-trace.json) */
	const struct evidence_decision *why;  /* a traced run's trigger decision, or NULL */
	struct strbuf e;        /* what went wrong: the run's error */
	struct strbuf notes;    /* what the run could not give, and why: one note a
				   line (run.notes), also of a run that went wrong */
	const char *status;     /* the run row's status */
	enum skip_reason skip;  /* skipped: why (run.skip_reason), else SKIP_NONE */
	enum engine_outcome out;
};

/* a session being worked through */
struct engine {
	struct db *db;
	int64_t sid;
	struct plan *p;
	const struct session_opts *o;
	char *lock_key;               /* the target lock (tlock.h), NULL: none */
	struct db_pending_run *runs;  /* what is left, in execution order */
	size_t n;
	double *est;            /* estimated seconds of each run */
	struct progress pg;
	struct target t;
	int opened;             /* t is open */
	int lost;               /* the target was lost (or did not boot): the rest of
				   the boot is not run, the next boot reopens it */
	int resumable;          /* runs left for --resume by a lost target */
	int exit_code;          /* 0, 1, or 2 (stop) */
	struct strbuf *err;
	/* sequential repetitions (plan "until": "decided"), else NULL */
	struct seqrun *seq;
	int seq_looked;         /* the round the decisions were made before */
	double seq_t0;          /* now_mono() when this run of the session began */
	size_t seq_skipped;     /* runs skipped as decided */
	/* evidence triggers ("worst", "flagged"): traced runs they made, left
	   out (nothing flagged) and left waiting for their configuration */
	size_t ev_traced, ev_skipped, ev_waiting;
	int64_t marked;         /* the run the last store marked running (the
				   next to start), 0 when none */
	struct strvec notes_said; /* the notes of good runs shown so far */
};

/* one boot of the session and the consecutive runs that share it */
struct engine_boot {
	struct db_boot_row br;  /* the planned row */
	int64_t id;             /* the row to fill: br.id, or a new one on resume */
	struct boot_info bi;
	struct strbuf be;       /* why the target did not come up */
	struct strbuf why;      /* how the effective configuration differs */
	char desc[200];         /* "boot 2: KERNEL, preempt=full, cmdline: ..." */
	int booted;
};

/*
 * A driver of the engine's loop (engine_execute): how a boot's runs get to
 * the target and their replies back, as fio's ioengines are (queue, commit,
 * getevents; a synchronous engine's requests complete at once). The live
 * driver (session.c) is a boot whose runs complete at once: begin boots the
 * target, runs each run (marked, measured, collected) and stores it all, and
 * leaves nothing in flight. The batch driver (session_batch.c: lava, sealed
 * qemu) queues the boot's runs, marks them in one commit, submits them as one
 * job and collects it when it ends.
 *   slots  how many boots may be in flight (>= 1); asked once, first
 *   begin  the boot of runs [i, j) (some still needed): begun with
 *          engine_boot_begin; the boot in flight, or NULL when it completed
 *          at once (its boot and runs stored, or a database error in
 *          c->exit_code)
 *   wait   block until one of boots[0..n) ended (or Ctrl-C): its index;
 *          NULL when begin never leaves one in flight
 *   end    collect boot (cancel: cancel it first, on Ctrl-C or a database
 *          error), store it and its runs exactly once, free it; 1 when it is
 *          to be begun again (a boot the lab failed, tried `tries` times so
 *          far), else 0; NULL as wait
 */
struct engine_driver {
	const char *name;
	size_t (*slots)(struct engine *c);
	void *(*begin)(struct engine *c, size_t i, size_t j);
	size_t (*wait)(struct engine *c, void *const *boots, size_t n);
	int (*end)(struct engine *c, void *boot, int cancel, int tries);
};

/*
 * The session's one loop, for every driver: the boots in execution order,
 * up to d->slots in flight; sequential repetitions look at what is stored
 * before each round (a new round waits for the last one's boots to end), and
 * a boot none of whose runs is still needed is not begun; a boot to be begun
 * again goes before the next new one. Stops at Ctrl-C or a database error
 * (the boots in flight ended, canceled); the outcome in c->exit_code,
 * c->resumable.
 */
void engine_execute(struct engine *c, const struct engine_driver *d);

/* ---- the steps (engine.c) ------------------------------------------------ */

/* the target of plan p (its "target" object copied), not yet open */
void engine_target_init(struct target *t, struct plan *p, const struct session_opts *o);
void engine_target_fini(struct target *t);
/* the boot configuration b of the plan, the index-th */
void engine_boot_spec(const struct plan_boot *b, int index, struct boot_spec *s);

/* a run's store (-1 with a message): the row alone, for a run that ends
 * before it is measured (skipped, interrupted) */
int engine_store_simple(struct db *db, int64_t run_id, const char *status, const char *error,
			enum skip_reason skip, struct strbuf *err);
/* the run stored in row pr; db may be NULL (nothing is stored: a plan's job) */
void engine_run_init(struct engine_run *c, struct db *db, struct target *t, const struct plan *p,
		     const struct session_opts *o, const struct db_pending_run *pr);
void engine_run_release(struct engine_run *c);
void engine_run_skip(struct engine_run *c, enum skip_reason why);
void engine_knob_refused(struct engine_run *c);
int engine_run_readable(struct engine_run *c);
/* the agent's exec request of the run: the one place a run's request is
 * built (argv, timeout, files, background load, schedstat, trace); NULL when
 * the workload or its load cannot be built (c->e says why) */
json_t *engine_build_request(struct engine_run *c, int schedstat_ok);
void engine_take_reply(struct engine_run *c, int rc);
void engine_settle(struct engine_run *c);
/* the label of run r on its progress line ("hackbench rep 2 knobs={}"), malloc'd */
char *engine_run_what(const struct db_pending_run *r);
/*
 * The collect step of run k, whichever way it ran: stored with its metrics
 * in one commit that also marks run `next` running when the session goes on
 * to it (not after Ctrl-C, a lost target or an interrupted run; 0: none;
 * c->marked says whether it did), its progress line (`what`, `secs`), its
 * notes said once, and what the session makes of its outcome (exit code,
 * a lost target, runs left resumable). A run whose outcome is ENG_DBERR
 * already (its mark failed) is not stored. Its outcome.
 */
enum engine_outcome engine_run_collect(struct engine *c, size_t k, struct engine_run *rx,
				       int64_t next, const char *what, double secs);

/* runs ids[0..n) marked running (start) or back to planned, in one commit;
 * -1 with the database's message in c->err */
int engine_mark(struct engine *c, const int64_t *ids, size_t n, int start);
/* the live path: run_id is about to start, marked running in a commit of its
 * own unless the last store marked it (c->marked); -1 as engine_mark */
int engine_mark_next(struct engine *c, int64_t run_id);
/* a run marked by the last store that will not start (Ctrl-C, a lost
 * target): back to planned; -1 as engine_mark */
int engine_unmark_next(struct engine *c);

void engine_count_done(struct engine *c, size_t k);
/* sequential repetitions: engine_seq_look before a round's first boot (-1
 * on a database error); engine_seq_needed 1 when run k is still needed,
 * else 0 (stored skipped as decided) or -1 */
int engine_seq_look(struct engine *c, int round);
int engine_seq_needed(struct engine *c, size_t k);

/* the end of the boot that starts at run i: its runs are [i, j) */
size_t engine_boot_end(const struct engine *c, size_t i);
/* is any run of [i, j) still needed (sequential repetitions)? 0: none, and
 * each is stored skipped as decided (exit code 2 on a database error); a
 * boot none of whose runs is needed is not booted at all */
int engine_boot_needed(struct engine *c, size_t i, size_t j);

void engine_boot_init(struct engine_boot *b);
void engine_boot_release(struct engine_boot *b);
const char *engine_boot_error(const struct engine_boot *b);
/* the begin step of the boot of runs [i, j): its row (a new one on resume:
 * engine_boot_row), the target brought into its configuration
 * (engine_boot_target; a batch target only prepares); -1 on a database
 * error (c->err, exit code 2) */
int engine_boot_begin(struct engine *c, size_t i, size_t j, struct engine_boot *b);
/* the boot row stored: ok, mismatch or failed; -1 as engine_boot_begin */
int engine_boot_store(struct engine *c, struct engine_boot *b);
/* a boot that is not ok: runs idx[0..m) stored skipped with the reason
 * (`named`: its line names the boot); 1, or 0 when the boot is ok */
int engine_boot_skipped(struct engine *c, const struct engine_boot *b, const size_t *idx,
			size_t m, int named);

#endif
