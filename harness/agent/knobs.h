/*
 * Kernel knobs on the target: writes restricted to an allow-list of kernel
 * paths, each change recorded so that it can be undone. The records live in
 * a `struct knobs`, an undo stack the caller owns and passes to every call:
 * the agent keeps one in its state for the whole connection and unwinds it
 * after each run, on request, and when it exits for any reason it can catch
 * (EOF on its input, SIGTERM, SIGINT). Boot-level changes (the local
 * target's preempt mode) are the oldest records, at the bottom; a run's
 * knobs are unwound down to them with knob_restore_to.
 *
 * Three kinds of file are understood:
 *   plain     a value file (/proc/sys/kernel/sched_schedstats): old content is
 *             written back;
 *   choice    "a (b) c" files (/sys/kernel/debug/sched/preempt): the current
 *             choice is the parenthesised one; restoring writes it back;
 *   features  /sys/kernel/debug/sched/features: written one token at a time
 *             (FOO or NO_FOO); restoring writes the opposite token for each
 *             feature whose state changed. A token the kernel does not know is
 *             an error naming it ("unsupported by this kernel").
 */
#ifndef SL_KNOBS_H
#define SL_KNOBS_H

#include <jansson.h>

#include "harness/util/strbuf.h"

/* 1 when path is textually below an allowed prefix and has no "." or ".."
 * component (sysfs itself uses symlinks, so they are not resolved) */
int knob_path_allowed(const char *path);
/* why path must never be written although it is below an allowed prefix
 * (a sysctl that makes the kernel run a program as root, or a one-way
 * switch), NULL when it may be; knob_set and plan validation both refuse */
const char *knob_denied(const char *path);
/* the allowed prefixes, for messages */
const char *knob_allowed_prefixes(void);

/*
 * One machine's knobs: the root prefix every path is read and written below
 * ("" on a real machine; tests use a fake tree) and the undo stack, oldest
 * change first. Initialise with knobs_init; knobs_release frees the records
 * without writing anything back (call knob_restore_all first to undo them).
 */
struct knob_change;
struct knobs {
	const char *root;               /* borrowed; outlives the context */
	struct knob_change *stack;      /* nr records, oldest first */
	size_t nr, alloc;
	double others_wait_s;           /* knob_set's wait for another agent (10 s) */
};
void knobs_init(struct knobs *k, const char *root);
void knobs_release(struct knobs *k);

/*
 * Write value to path and record the old state on k's stack. For the
 * features file value is a single token. Returns 0 and *info =
 * {"path","old","new","readback"} (new reference); -1 with a message.
 * Nothing is recorded on failure.
 */
int knob_set(struct knobs *k, const char *path, const char *value, json_t **info,
	     struct strbuf *err);
/*
 * Create the directory path (below an allowed prefix: a tracefs instance
 * /sys/kernel/tracing/instances/schedlab-PID, whose files are then written
 * with knob_set) and record it: restoring removes it, and with it whatever
 * the instance held. An existing directory is an error (it is not ours).
 */
int knob_mkdir(struct knobs *k, const char *path, struct strbuf *err);
/* read a knob's current content (records nothing) */
int knob_get(const struct knobs *k, const char *path, struct strbuf *out, struct strbuf *err);
/* undo every recorded change, newest first; returns number of failures and
 * appends their messages to err (a failed record is dropped all the same) */
int knob_restore_all(struct knobs *k, struct strbuf *err);
/* undo changes until only the oldest `keep` remain (boot-level changes stay) */
int knob_restore_to(struct knobs *k, int keep, struct strbuf *err);
/*
 * The changes of agents that died without restoring them (SIGKILL, a
 * crash): every journal under <root>/run/schedlab whose agent is gone is
 * played back, newest change first, and removed. A journal of a live agent
 * is left alone (and knob_set waits up to 10 s for such an agent to restore
 * a path it shares, then refuses). Appends "PATH=VALUE (left by agent PID)"
 * per restored change to report; returns the number that failed.
 */
int knobs_recover(const struct knobs *k, struct strbuf *report);
/* number of changes currently recorded */
int knob_pending(const struct knobs *k);

/* pure helpers (tested): is token set in a features list? */
int features_has(const char *list, const char *token);

#endif
