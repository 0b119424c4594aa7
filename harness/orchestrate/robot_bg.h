/*
 * An alert group's bisection started in the background (docs/serve.md
 * "Bisect from the page"): `schedlab alerts bisect N --db DB --out-dir DIR
 * [--bisect-minutes M]`, the command itself (robot_bisect_alert, no second
 * implementation), as a detached child of this program (proc.h
 * new_session: a session and process group of its own, stdin /dev/null,
 * stdout and stderr appended to a log), so that it outlives the process
 * that started it (schedlab serve) and a reload of the page.
 *
 * What is known of it lives in a folder of the starter's own (mode 0700):
 * group-G.json, the record of the group's latest start (the alert, the
 * child's pid and start time, when it started, its argv, and once it has
 * ended when and how), replaced whole at each change (privdir_write), and
 * group-G.log, the output of every start, each after a header line. Both
 * are read only from that folder as checked, only when this user wrote
 * them (owner, mode, no symlink: privdir.h); the log's path is the
 * folder's and the group's, never taken from the record, so a record that
 * another user planted can neither show a file nor hold a group busy. The
 * starter reaps its own children (waitpid WNOHANG, robot_bg_reap) and
 * writes their ends; a child of an earlier starter (serve restarted) is
 * known to run by its pid and start time (proc_alive), and once it is gone
 * its end is recorded as unknown: the outcome is the group's, as stored.
 *
 * A start is refused while one runs for the group (one bisection a group
 * from here; what the nightly or a person does meanwhile is the target
 * lock's business, which the bisection takes), and with the command's own
 * message when the command would refuse (robot_bisect_alert_check).
 */
#ifndef SL_ORCHESTRATE_ROBOT_BG_H
#define SL_ORCHESTRATE_ROBOT_BG_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "harness/util/strbuf.h"

struct robot_bg_opts {
	const char *dbpath;      /* the store the child opens (--db) */
	const char *out_dir;     /* its --out-dir: the narrowed plans, the bisections' logs */
	const char *state_dir;   /* the records and logs above */
	size_t bisect_minutes;   /* --bisect-minutes (0: the command's default) */
};

/* what is known of a group's latest background bisection */
struct robot_bg_job {
	int64_t group, alert;
	long pid;
	char *started_at;        /* UTC, 2026-12-07T01:02:03Z */
	char *ended_at;          /* NULL while it runs */
	int running;
	int exit_code;           /* -1: none (running, a signal, or unknown) */
	int term_signal;         /* 0: none */
	char *how;               /* how it ended in words ("exit 0", "killed by signal 9",
				    "its exit status is unknown: ..."); NULL while it runs */
	char *log_path;
	char *command;           /* its argv as one line, for people */
	long long log_from;      /* where its output starts in the log */
};
void robot_bg_job_free(struct robot_bg_job *j);

struct robot_bg;

/* the folder o->state_dir, made 0700 when missing and `create`; refused
 * (-1 with why) when it is not a folder of this user's that only this user
 * may enter (mode 0700 or stricter; a symlink is not followed). It is held
 * open from here on, and every use looks at its owner and mode again and
 * reads or writes through that descriptor (privdir.h), so a folder swapped
 * or chmod'ed later is never read: nothing of it is shown then, and no
 * start is made. Without `create` (a reader: nothing is started, no record
 * written) a missing folder is no error: nothing was started from it; it
 * is opened, with the same checks, when it appears. o's strings are
 * copied */
int robot_bg_open(const struct robot_bg_opts *o, int create, struct robot_bg **out,
		  struct strbuf *err);
/* forget the children: they go on, and are reaped by whoever inherits them */
void robot_bg_close(struct robot_bg *bg);

/* reap the children that have ended and record how (never waits) */
void robot_bg_reap(struct robot_bg *bg);

/* what robot_bg_start says */
enum robot_bg_start {
	ROBOT_BG_STARTED = 0,
	ROBOT_BG_BUSY,           /* one runs for the group (err names it) */
	ROBOT_BG_REFUSED,        /* `alerts bisect` would refuse: its message in err */
	ROBOT_BG_FAILED,         /* the folder, the log, the fork: why in err */
};

/*
 * Start the bisection of alert `alert`'s group (the alert exists: the
 * caller has looked), *job its record then. Nothing is written to the
 * store here; the child writes what `alerts bisect` writes.
 */
enum robot_bg_start robot_bg_start(struct robot_bg *bg, struct db *db, int64_t alert,
				   struct robot_bg_job *job, struct strbuf *err);

/* the group's latest start: 1 with *job, 0 when none was made from this
 * folder (or its record cannot be read) */
int robot_bg_get(struct robot_bg *bg, int64_t gid, struct robot_bg_job *job);

/* the job's output as far as it went, at most `max` bytes (from a line's
 * start when cut), malloc'd; "" when the log cannot be read */
char *robot_bg_log_tail(struct robot_bg *bg, const struct robot_bg_job *job, size_t max);

#endif
