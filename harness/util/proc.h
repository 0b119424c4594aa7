/*
 * The one child-process module (after git's run-command.h, plus the timeout
 * and process-group kill git lacks). Every program schedlab starts goes
 * through it. The one fork without an exec outside it, a lab member's copy
 * of the controller (harness/orchestrate/lab.c), is made by hand; the native
 * workloads' own processes are the measurement, not schedlab's. Argv arrays
 * only, never a shell string; optional pipes for stdin, stdout and stderr;
 * a working directory; extra environment; a new process group so that a
 * whole tree (cyclictest's threads, hackbench's forks, qemu) can be killed,
 * and, when asked, a guardian that kills that group when this process dies,
 * even by SIGKILL (group_guard: a fork of this process without an exec,
 * which runs no code of the caller's).
 */
#ifndef SL_PROC_H
#define SL_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "harness/util/strbuf.h"

/* PROC_FD: from the caller's descriptor: stdin from in_src (a file the
 * child reads at its pace: nothing here blocks on a child that does not),
 * stdout into out_src (a log file) */
enum proc_stdio { PROC_INHERIT = 0, PROC_PIPE = 1, PROC_NULL = 2, PROC_FD = 3 };

struct child {
	/* set by the caller */
	const char *const *argv;
	const char *const *env;     /* extra KEY=VALUE entries, NULL-terminated, or NULL */
	const char *dir;            /* working directory, or NULL */
	enum proc_stdio in, out, err;
	int new_pgrp;               /* setpgid(0, 0) in the child */
	int stderr_to_stdout;
	int keep_fd;                /* an extra fd to keep open in the child (-1 none) */
	int pdeathsig;              /* signal the child gets when the parent dies (0 none) */
	/* set by proc_start */
	pid_t pid;
	int in_fd, out_fd, err_fd;  /* parent's pipe ends, -1 when not piped */
	/* set by the caller, optional:
	 * the file executed when it is not argv[0] found in PATH (a program run
	 * through its dynamic loader, argv[0] still the program's name) */
	const char *exe;
	/* prctl(PR_SET_THP_DISABLE) in the child: its anonymous memory (a VM's
	 * RAM) in small pages, never transparent huge pages */
	int no_thp;
	/* the first signal of every stop (proc_exec's timeout and aborts,
	 * proc_stop), SIGKILL following after the grace; 0 = SIGTERM. SIGINT
	 * for a tool that undoes its changes only in its SIGINT handler
	 * (rtla: its tracefs instance and osnoise settings) */
	int stop_sig;
	/* proc_exec: from the stop signal to SIGKILL; 0 = 2 s */
	double stop_grace_s;
	/* with new_pgrp: the process group does not outlive this process, even
	 * when this process is killed with SIGKILL (a parent-death signal
	 * reaches the child alone, not what it started). A guardian, forked
	 * from this process into the child's group, holding no descriptor but
	 * the read end of a pipe whose write end only this process holds,
	 * waits for EOF on it: this process is gone. Then it gives the group
	 * the stop signal and, stop_grace_s later (default 2 s), SIGKILL
	 * unless the group is gone by then (the guardian steps out of the
	 * group to see it empty, and ends with it). Signals to the
	 * group do not end it (it blocks them all) but SIGKILL does: the group
	 * kill after every reap here (proc_wait, proc_stop, proc_exec,
	 * proc_try_wait) ends it, and it is reaped with the child. A child
	 * reaped other than through this module leaves its guardian waiting */
	int group_guard;
	/* in == PROC_FD: the descriptor that becomes the child's stdin */
	int in_src;
	/* set by proc_start: the guardian and this process's end of its pipe,
	 * -1 without one */
	pid_t guard_pid;
	int guard_fd;
	/* out == PROC_FD: the descriptor that becomes the child's stdout */
	int out_src;
	/* a detached child (one that outlives this process on purpose: a
	 * bisection started by schedlab serve's page): setsid() in the child,
	 * so it is the leader of a session and a process group of its own, out
	 * of reach of this one's terminal and group signals; every descriptor
	 * it inherits but 0, 1, 2 and keep_fd is closed at its exec (a
	 * server's listening socket must not outlive the server in it). Not
	 * with new_pgrp, group_guard or pdeathsig */
	int new_session;
};
#define CHILD_INIT { NULL, NULL, NULL, PROC_INHERIT, PROC_INHERIT, PROC_INHERIT, 0, 0, -1, 0, -1, -1, -1, -1, NULL, 0, 0, 0, 0, -1, -1, -1, -1, 0 }

/* -1 with a message (naming argv[0]) when it cannot be started; a missing
 * executable is detected before fork (PATH search) so the message is exact */
int proc_start(struct child *c, struct strbuf *err);
/* when process pid started (field 22 of /proc/PID/stat, clock ticks after
 * boot), 0 when there is no such process: with the pid it names a process
 * across pid reuse */
unsigned long long proc_start_time(pid_t pid);
/* 1 when process pid runs (a zombie does not) and started at `start`
 * (proc_start_time's clock ticks): a process that is not this one's child,
 * known across pid reuse; 0 otherwise */
int proc_alive(pid_t pid, unsigned long long start);
/* signal the child's process group (or the child when it has none) */
void proc_kill(struct child *c, int sig);
/* wait for exit; *status as from waitpid */
int proc_wait(struct child *c, int *status);
/* the same without waiting: 1 when it had exited (reaped, its group
 * killed), 0 while it runs, -1 on error */
int proc_try_wait(struct child *c, int *status);
/* the stop signal (stop_sig, default SIGTERM), grace_s, then SIGKILL,
 * then reap; safe to call twice */
void proc_stop(struct child *c, double grace_s);
void proc_close_fds(struct child *c);

/*
 * What a child leaves outside its process group (a process that called
 * setsid, a daemon's double fork) no group kill reaches. Around such a
 * child this process becomes a child subreaper (prctl
 * PR_SET_CHILD_SUBREAPER): what the child started is reparented here, not
 * to init, when its parent dies, and so stays within reach.
 * proc_orphans_begin before proc_start (the children this process has then
 * are its own: left alone); proc_orphans_end once the child was reaped:
 * every process adopted since gets `sig`, SIGKILL grace_s later, and is
 * reaped, round after round (what those started is adopted as they go),
 * for at most wait_s after the SIGKILL. Only this process's own children
 * are ever signalled or waited for. The subreaper setting is put back as
 * it was. A process still there then (in uninterruptible sleep; another
 * user's, which this one may not signal) is counted in `left` and named in
 * left_desc, "PID (COMM)" each: it could not be ended.
 */
struct proc_orphans {
	int was_subreaper;        /* the setting before begin */
	int set;                  /* begin made this process a subreaper */
	pid_t *before;            /* this process's children at begin */
	unsigned long long *before_start;
	size_t nbefore;
	int ended;                /* set by end: adopted processes ended and reaped */
	int left;                 /* set by end: adopted processes it could not end */
	char left_desc[512];
};
/* 0, or -1 with why in err (the kernel refused the subreaper setting:
 * what leaves the group is then out of reach, as before) */
int proc_orphans_begin(struct proc_orphans *o, struct strbuf *err);
void proc_orphans_end(struct proc_orphans *o, int sig, double grace_s, double wait_s);

/* find an executable in PATH; returns malloc'd path or NULL */
char *proc_which(const char *name);

struct proc_result {
	int exit_code;      /* -1 when signalled */
	int term_signal;
	int timed_out;
	double wall_s;
	/* processes the child left behind that still held its stdout or stderr
	 * after it exited (a daemon that left the process group with setsid):
	 * killed with SIGKILL; how many, and "PID (COMM)" for each */
	int leftovers;
	char leftovers_desc[512];
};

/* what proc_exec does with a child's output, time and stop requests;
 * start from PROC_IO_INIT (no timeout, output discarded, no abort) */
struct proc_io {
	double timeout_s;          /* > 0: the limit (see proc_exec) */
	struct strbuf *out;        /* stdout captured here, or NULL */
	size_t out_max;            /* at most this many trailing bytes, 0 = all */
	struct strbuf *errout;     /* stderr, likewise */
	size_t err_max;
	int abort_fd;              /* >= 0: polled, see proc_exec */
	volatile int *abort_flag;  /* non-NULL: watched, see proc_exec */
};
#define PROC_IO_INIT { .abort_fd = -1 }

/*
 * Run to completion with stdout/stderr captured (io->out, io->errout,
 * keeping at most out_max / err_max trailing bytes, 0 = all) and a timeout
 * (io->timeout_s) after which the process group gets the stop signal
 * (SIGTERM unless stop_sig says otherwise) and, stop_grace_s (default 2 s)
 * later, SIGKILL. `abort_fd`, when >= 0, is also polled: if it becomes
 * readable-at-EOF or errors (the controller went away) the child is killed
 * and the call returns -1 with errno ECONNRESET. When `abort_flag` is
 * non-NULL and becomes non-zero (a signal handler set it) the child is
 * killed and -1 is returned with errno EINTR.
 */
int proc_exec(struct child *c, const struct proc_io *io, struct proc_result *res,
	      struct strbuf *err);
/* convenience: argv, capture everything, timeout */
int proc_capture(const char *const *argv, double timeout_s, struct strbuf *out,
		 struct strbuf *errout, struct proc_result *res, struct strbuf *err);

double now_mono(void);

#endif
