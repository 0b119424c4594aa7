/*
 * For session.c and session_batch.c only: the state of a session being
 * worked through (struct exec_ctx), of one boot (struct boot_ctx) and of one
 * run (struct run_ctx), and the steps both files take. session.c runs a
 * session boot by boot (the one-boot path); session_batch.c runs a batch
 * target's boot as one job (batch_execute) and writes a plan's job
 * (session_batch_job). No other file includes this.
 */
#ifndef SL_SESSION_INTERNAL_H
#define SL_SESSION_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "harness/orchestrate/evidence.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/progress.h"
#include "harness/orchestrate/seqrun.h"
#include "harness/orchestrate/session.h"
#include "harness/targets/target.h"
#include "harness/util/strbuf.h"
#include "workloads/workload.h"

/* outcome of one run */
enum run_outcome { RUN_OK, RUN_FAILED, RUN_SKIPPED, RUN_LOST, RUN_INTERRUPTED, RUN_DBERR };

/* one run, from its stored row to its stored result */
struct run_ctx {
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
	enum run_outcome out;
};

/* a session being worked through */
struct exec_ctx {
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
struct boot_ctx {
	struct db_boot_row br;  /* the planned row */
	int64_t id;             /* the row to fill: br.id, or a new one on resume */
	struct boot_info bi;
	struct strbuf be;       /* why the target did not come up */
	struct strbuf why;      /* how the effective configuration differs */
	char desc[200];         /* "boot 2: KERNEL, preempt=full, cmdline: ..." */
	int booted;
};

/* ---- session.c's steps, shared with session_batch.c ---------------------- */

void boot_ctx_init(struct boot_ctx *b);
void boot_ctx_release(struct boot_ctx *b);
const char *boot_error(const struct boot_ctx *b);
enum boot_state boot_outcome(const struct boot_ctx *b);
char *boot_skip_text(const struct boot_ctx *b, enum skip_reason *skip);
void run_note(struct run_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void run_skip(struct run_ctx *c, enum skip_reason why);
int boot_row(struct exec_ctx *c, size_t i, size_t j, struct boot_ctx *b);
void boot_spec_of(const struct plan_boot *b, int index, struct boot_spec *s);
void boot_target(struct exec_ctx *c, struct boot_ctx *b);
json_t *build_request(struct run_ctx *c, int schedstat_ok);
void count_done(struct exec_ctx *c, size_t k);
void knob_refused(struct run_ctx *c);
void run_ctx_init(struct run_ctx *c, struct db *db, struct target *t, const struct plan *p,
                  const struct session_opts *o, const struct db_pending_run *pr);
void run_ctx_release(struct run_ctx *c);
int run_readable(struct run_ctx *c);
void say_notes(struct exec_ctx *c, const char *notes);
int seq_look(struct exec_ctx *c, int round);
int seq_needed(struct exec_ctx *c, size_t k);
void settle(struct run_ctx *c);
int store_boot(struct exec_ctx *c, struct boot_ctx *b);
int store_run(struct run_ctx *c, int64_t next, struct strbuf *err);
int store_simple(struct db *db, int64_t run_id, const char *status, const char *error,
                 enum skip_reason skip, struct strbuf *err);
void summarize(const struct run_ctx *c, struct strbuf *summary, struct strbuf *notes);
void take_reply(struct run_ctx *c, int rc);
void target_fini(struct target *t);
void target_init(struct target *t, struct plan *p, const struct session_opts *o);

/* ---- session_batch.c ------------------------------------------------------ */

/* every boot of a batch target (batch_submit), each as one job */
void batch_execute(struct exec_ctx *c);

#endif
