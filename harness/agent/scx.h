/*
 * A sched_ext scheduler around one run (issue 50, docs/sched_ext.md). The
 * agent starts the scheduler's program (one of the kernel's examples,
 * scx_simple, carried into the guest at SCX_DIR) before the run's
 * workload, waits until /sys/kernel/sched_ext/state reads "enabled" and
 * root/ops names it, and after the workload checks that it is still
 * enabled and its program still running (the kernel ejects a scheduler
 * that stalls a task: its watchdog, or an error exit), stops it with
 * SIGINT and waits until the state is "disabled" again: the kernel back on
 * its own class. Anything else fails the run with the kernel's words (its
 * sched_ext lines of the kernel log) and the scheduler's own output; a run
 * is never stored as under a scheduler it did not run under.
 *
 * The checks of the sysfs text are pure (scx_check_enabled,
 * scx_check_disabled) for the unit tests; scx_begin and scx_end do the
 * rest, below the agent's root (a fake tree in tests).
 */
#ifndef SL_SCX_H
#define SL_SCX_H

#include <jansson.h>

#include "harness/util/proc.h"
#include "harness/util/strbuf.h"

/* where the schedulers are in a guest (qemu's initramfs), with lib/ beside
 * them: their own libraries and loader (built on Debian 13, newer than the
 * host's libc the rest of the guest has), which runs an ELF scheduler when
 * it is there (a script runs as itself); SCHEDLAB_SCX_DIR overrides it
 * (tests) */
#define SCX_DIR "/usr/lib/schedlab/scx"
/* the plan's name of the kernel's own class: no scheduler started */
#define SCX_BUILTIN "eevdf"

/* 1 when name is a scheduler's name the agent takes: scx_ then a-z 0-9 _ */
int scx_name_ok(const char *name);

/* the state file's text and root/ops's (NULL when absent): 0 when the
 * scheduler `name` (scx_simple: its ops are "simple") is enabled, else -1
 * with why ("state is disabling", "root/ops names qmap") */
int scx_check_enabled(const char *state, const char *ops, const char *name, struct strbuf *why);
/* 0 when the state text reads disabled, else -1 with why */
int scx_check_disabled(const char *state, struct strbuf *why);

struct scx_run {
	char *name;             /* NULL: no scheduler (eevdf) */
	char *root;
	char logpath[sizeof("/tmp/schedlab-scx-XXXXXX")];
	int logfd;
	struct child c;
	const char *argv[6];
	char *exe, *loader, *libdir;
	int started;
};

/* start the scheduler the request names ("scheduler": "scx_simple";
 * absent or "eevdf": nothing) and wait until the kernel runs it: -1 with
 * the reason (the program's output, the kernel's lines) when it does not */
int scx_begin(struct scx_run *s, const char *root, const json_t *args, struct strbuf *err);
/* after the workload: still enabled, then stopped and disabled; -1 with the
 * reason when it was ejected during the run or does not stop. Records
 * {"name", "ops", "state_after"} as res's "scheduler" when res is given.
 * Releases s either way. */
int scx_end(struct scx_run *s, json_t *res, struct strbuf *err);

#endif
