/*
 * Sessions: one `schedlab run` invocation. session_start() writes every
 * planned boot and run to the database before the first one starts;
 * session_execute() works through whatever is not finished yet, in execution
 * order, which is also exactly what `run --resume` does after a crash.
 * How a run is told (quiet, the lab member's prefix) and interrupted (the
 * flag) is in struct session_opts; a lab runs one session per member
 * (harness/orchestrate/lab.h).
 */
#ifndef SL_SESSION_H
#define SL_SESSION_H

#include <signal.h>
#include <stdint.h>

#include "db/db.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/session_opts.h"
#include "harness/util/strbuf.h"

/* check the plan against the target (connecting when the target can only
 * tell at run time); -1 with the reasons when a boot configuration cannot be
 * honoured. A lab's targets are checked one after the other, each of them,
 * and the reasons name the member ("targets[1]"). */
int session_preflight(struct plan *p, const struct session_opts *o, struct strbuf *err);
/* build (or find in the cache) every kernel variant of the plan's
 * matrix.kernel that has no "image" yet (harness/orchestrate/kbuild.h) and
 * set its image (plan_set_kernel_image), so that the stored plan and the boot
 * rows name the built kernel. Progress on stderr unless `quiet`; `abort_flag`
 * (Ctrl-C) stops a build. -1 with a message. */
int session_build_kernels(struct plan *p, int quiet, volatile int *abort_flag,
			  struct strbuf *err);
/* create the session and all planned rows; returns the session id */
int64_t session_start(struct db *db, struct plan *p, const struct session_opts *o,
		      struct strbuf *err);
/* run everything unfinished; returns the exit code: 0 all ok, 1 some runs
 * failed or were skipped, 2 setup error, 130 interrupted */
int session_execute(struct db *db, int64_t sid, struct plan *p, const struct session_opts *o,
		    struct strbuf *err);
/* a session with no run left whose status is not final (its controller was
 * lost after storing the last run): claim it (one owner: a live controller
 * refuses) and store it done. The exit code as session_execute: 0, 1 when
 * runs failed or were skipped (`failed`), 2 when held or on a database error */
int session_settle(struct db *db, int64_t sid, int failed, const struct session_opts *o,
		   struct strbuf *err);

/* "local", "ssh:HOST", "qemu:KERNEL": the session's target column */
char *session_target_label(const json_t *target);

/*
 * The one global: the interrupt flag. A signal handler can reach only static
 * storage, so SIGINT/SIGTERM/SIGHUP (session_install_signals) store the signal
 * number in session_abort and do nothing else. The commands that install the
 * handlers hand its address on (session_opts.abort_flag, target.abort_flag);
 * nothing below them reads the global itself.
 */
extern volatile sig_atomic_t session_abort;
void session_install_signals(void);

#endif
