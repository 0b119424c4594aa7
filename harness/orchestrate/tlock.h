/*
 * One target, one session at a time (docs/alerts.md, docs/reliability.md):
 * a lock per target machine, taken by `schedlab run` (session_execute),
 * `schedlab bisect` (for the whole bisection) and `schedlab nightly` (for
 * the whole night), so that a person's run never measures beside the
 * nightly's and a bisection is not disturbed between its sessions.
 *
 * The lock is an flock(2) on <dir>/<hash of the key>.lock, dir being
 * SCHEDLAB_TARGET_LOCK_DIR, else /run/schedlab/targets (root), else
 * $XDG_RUNTIME_DIR/schedlab-targets or /tmp/schedlab-targets-UID. The
 * holder writes its pid and what it does into the file, so that a waiter
 * can say who it waits for; the kernel drops the lock when the holder dies,
 * even by SIGKILL. A child that the holder starts for the same target
 * (nightly -> run, bisect) inherits the open lock (tlock_child_env) and
 * does not wait for its own parent; nothing else inherits it (every
 * descriptor of it is close-on-exec: tlock_seal_inherited). A process that already holds a key
 * takes it again for free (bisect's sessions).
 *
 * Keys: "local@HOST" for the local target (a lab member adds "#N": two
 * local members of one lab run side by side on purpose), "ssh:USER@HOST:PORT",
 * "lava:URL/DEVICE"; a qemu target has none (every session boots a VM of
 * its own).
 */
#ifndef SL_ORCHESTRATE_TLOCK_H
#define SL_ORCHESTRATE_TLOCK_H

#include <jansson.h>
#include <signal.h>

#include "harness/util/strbuf.h"

/* the key of a resolved target object (lab: the plan's "lab" marker, or
 * NULL); NULL when it needs no lock. malloc'd */
char *tlock_key(const json_t *target, const json_t *lab);

/*
 * Hold the lock of `key` for `what` ("schedlab run, session 12"): taken at
 * once, or after waiting (said once on stderr with prefix, naming the
 * holder) until the holder lets go; 0, or -1 with the reason in err (the
 * lock directory, or abort_flag set while waiting: "interrupted").
 */
int tlock_take(const char *key, const char *what, const char *prefix,
	       volatile sig_atomic_t *abort_flag, struct strbuf *err);
/* let go of one tlock_take (the lock goes with the last one) */
void tlock_release(const char *key);

/* for a child that works on the same target: the fd to keep open in it
 * (struct child.keep_fd: open across that one exec) and
 * "SCHEDLAB_TARGET_LOCK_FD=N" for its environment; -1 / NULL when this
 * process holds no lock of key. Never for a program that is not schedlab
 * (an agent, a workload, the --on-alert hook): a process that holds the
 * lock's descriptor holds the lock, whatever it is */
int tlock_child_fd(const char *key);
const char *tlock_child_env(const char *key);

/* the descriptor handed down (SCHEDLAB_TARGET_LOCK_FD) close-on-exec again,
 * as every descriptor of schedlab's is: what this process starts (its
 * agent, a workload, a hook) never inherits its parent's lock; only
 * tlock_child_fd passes it on. main() calls it first thing */
void tlock_seal_inherited(void);

/* the lock file of a key (for messages and tests); malloc'd */
char *tlock_path(const char *key);

#endif
