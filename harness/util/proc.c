/*
 * Child processes: start with argv (never a shell), optional pipes, a new
 * process group, a timeout, and a kill of the whole group. See proc.h.
 */
#include "harness/util/proc.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *proc_which(const char *name)
{
	if (!name || !*name)
		return NULL;
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		char *cand = xstrfmt("%.*s/%s", (int)(end - path), path, name);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path = *end ? end + 1 : end;
	}
	return NULL;
}

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

/* the first signal of a stop */
static int stop_signal(const struct child *c)
{
	return c->stop_sig > 0 ? c->stop_sig : SIGTERM;
}

/* proc_exec's time from the stop signal to SIGKILL */
static double stop_grace(const struct child *c)
{
	return c->stop_grace_s > 0 ? c->stop_grace_s : 2;
}

/* every descriptor from lo up closed (close_range, else one by one) */
static void close_from(int lo)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lo, ~0U, 0) == 0)
		return;
#endif
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = lo; fd < max; fd++)
		close(fd);
}

/* the guardian (proc.h: group_guard), in the fork: system calls only. It
 * holds the read end of its pipe and nothing else, blocks every signal
 * (the group's stop signal is not for it), and at EOF (the process that
 * started the child is gone: nothing else holds the write end) stops the
 * group as proc_stop would: the stop signal, then SIGKILL after the grace
 * unless the group is gone before (the guardian steps out of it to tell,
 * and ends with it) */
static void guard_run(int rfd, pid_t pgid, int sig, double grace)
{
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (rfd != 0 && dup2(rfd, 0) < 0)
		_exit(1);
	close_from(1);
	prctl(PR_SET_NAME, "schedlab-guard", 0, 0, 0);
	/* the parent put it into the group already; the same here, so that
	   neither waits for the other */
	setpgid(0, pgid);
	if (getpgid(0) != pgid)
		_exit(0); /* the group is gone: nothing to guard */
	char b;
	ssize_t n;
	do
		n = read(0, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		_exit(0); /* never written to: only EOF means anything */
	kill(-pgid, sig);
	setpgid(0, 0);
	double end = now_mono() + grace;
	while (kill(-pgid, 0) == 0 || errno != ESRCH) {
		if (now_mono() >= end) {
			kill(-pgid, SIGKILL);
			break;
		}
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	_exit(0);
}

/* start the guardian of a child just started in its own group; -1 when
 * it cannot be (err says why) */
static int guard_start(struct child *c, struct strbuf *err)
{
	int gp[2];
	if (pipe2(gp, O_CLOEXEC)) {
		strbuf_addf(err, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t g = fork();
	if (g < 0) {
		strbuf_addf(err, "fork of the guardian of %s: %s", c->argv[0], strerror(errno));
		close_pair(gp);
		return -1;
	}
	if (g == 0)
		guard_run(gp[0], c->pid, stop_signal(c), stop_grace(c));
	/* into the child's group before anything here can reap the child
	   (its zombie keeps the group): a group kill always reaches it */
	setpgid(g, c->pid);
	close(gp[0]);
	c->guard_pid = g;
	c->guard_fd = gp[1];
	return 0;
}

/* after the child was reaped and its group killed (the guardian with it):
 * reap the guardian. Closing its pipe first: a guardian not yet in the
 * group (a lost setpgid race) sees EOF, finds the group gone or stops
 * what is left of it, and ends */
static void guard_end(struct child *c)
{
	if (c->guard_pid <= 0)
		return;
	close(c->guard_fd);
	while (waitpid(c->guard_pid, NULL, 0) < 0 && errno == EINTR)
		;
	c->guard_pid = -1;
	c->guard_fd = -1;
}

/* in a forked child: every descriptor from `from` up closed at exec (the
 * kernel's close_range, else one by one up to the soft limit) */
static void cloexec_from(int from)
{
	if (!close_range((unsigned)from, ~0U, CLOSE_RANGE_CLOEXEC))
		return;
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = from; fd < max; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

int proc_start(struct child *c, struct strbuf *err)
{
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1}, pexec[2] = {-1, -1};
	c->pid = -1;
	c->in_fd = c->out_fd = c->err_fd = -1;
	c->guard_pid = c->guard_fd = -1;
	if (!c->argv || !c->argv[0]) {
		strbuf_addstr(err, "internal error: empty argv");
		return -1;
	}
	char *exe = c->exe ? xstrdup(c->exe) : proc_which(c->argv[0]);
	if (!exe) {
		strbuf_addf(err, "%s: command not found in PATH", c->argv[0]);
		return -1;
	}
	if ((c->in == PROC_PIPE && pipe2(pin, O_CLOEXEC)) ||
	    (c->out == PROC_PIPE && pipe2(pout, O_CLOEXEC)) ||
	    (c->err == PROC_PIPE && !c->stderr_to_stdout && pipe2(perr, O_CLOEXEC)) ||
	    pipe2(pexec, O_CLOEXEC)) {
		strbuf_addf(err, "pipe: %s", strerror(errno));
		goto fail;
	}
	pid_t pid = fork();
	if (pid < 0) {
		strbuf_addf(err, "fork for %s: %s", c->argv[0], strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		int nul = -1;
		if (c->new_session)
			setsid();
		else if (c->new_pgrp)
			setpgid(0, 0);
		if (c->pdeathsig)
			prctl(PR_SET_PDEATHSIG, c->pdeathsig);
		/* default signal dispositions for the child */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (c->in == PROC_NULL || c->out == PROC_NULL || c->err == PROC_NULL)
			nul = open("/dev/null", O_RDWR);
		if (c->in == PROC_PIPE)
			dup2(pin[0], 0);
		else if (c->in == PROC_NULL)
			dup2(nul, 0);
		else if (c->in == PROC_FD && c->in_src != 0)
			dup2(c->in_src, 0);
		if (c->out == PROC_PIPE)
			dup2(pout[1], 1);
		else if (c->out == PROC_NULL)
			dup2(nul, 1);
		else if (c->out == PROC_FD && c->out_src != 1)
			dup2(c->out_src, 1);
		if (c->stderr_to_stdout)
			dup2(1, 2);
		else if (c->err == PROC_PIPE)
			dup2(perr[1], 2);
		else if (c->err == PROC_NULL)
			dup2(nul, 2);
		if (c->new_session)
			cloexec_from(3);
		if (c->keep_fd >= 0) {
			int fl = fcntl(c->keep_fd, F_GETFD);
			if (fl >= 0)
				fcntl(c->keep_fd, F_SETFD, fl & ~FD_CLOEXEC);
		}
		if ((c->dir && chdir(c->dir)) ||
		    (c->no_thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))) {
			int e = errno;
			if (write(pexec[1], &e, sizeof(e)) < 0)
				_exit(127);
			_exit(127);
		}
		for (const char *const *e = c->env; e && *e; e++)
			putenv((char *)*e);
		execv(exe, (char *const *)c->argv);
		int e = errno;
		if (write(pexec[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	if (c->new_pgrp && !c->new_session)
		setpgid(pid, pid); /* avoid the race with the child's own setpgid */
	close(pexec[1]);
	pexec[1] = -1;
	int child_errno = 0;
	ssize_t n;
	do
		n = read(pexec[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pexec[0]);
	pexec[0] = -1;
	if (n == sizeof(child_errno)) {
		waitpid(pid, NULL, 0);
		strbuf_addf(err, "cannot run %s: %s", exe, strerror(child_errno));
		goto fail;
	}
	free(exe);
	exe = NULL;
	c->pid = pid;
	if (pin[0] >= 0) {
		close(pin[0]);
		c->in_fd = pin[1];
	}
	if (pout[1] >= 0) {
		close(pout[1]);
		c->out_fd = pout[0];
	}
	if (perr[1] >= 0) {
		close(perr[1]);
		c->err_fd = perr[0];
	}
	if (c->group_guard && c->new_pgrp && guard_start(c, err)) {
		proc_kill(c, SIGKILL);
		proc_wait(c, NULL);
		proc_close_fds(c);
		return -1;
	}
	return 0;
fail:
	free(exe);
	close_pair(pin);
	close_pair(pout);
	close_pair(perr);
	close_pair(pexec);
	return -1;
}

void proc_kill(struct child *c, int sig)
{
	if (c->pid <= 0)
		return;
	if (c->new_pgrp || c->new_session)
		kill(-c->pid, sig);
	kill(c->pid, sig);
}

int proc_wait(struct child *c, int *status)
{
	int st = 0;
	if (c->pid <= 0)
		return -1;
	while (waitpid(c->pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (c->new_pgrp)
		kill(-c->pid, SIGKILL); /* stragglers left in the group */
	guard_end(c);
	c->pid = -1;
	if (status)
		*status = st;
	return 0;
}

int proc_try_wait(struct child *c, int *status)
{
	int st = 0;
	if (c->pid <= 0)
		return -1;
	pid_t r;
	do
		r = waitpid(c->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (r == 0)
		return 0;
	if (c->new_pgrp)
		kill(-c->pid, SIGKILL);
	guard_end(c);
	c->pid = -1;
	if (status)
		*status = st;
	return 1;
}

static int wait_timeout(struct child *c, double secs, int *status)
{
	double end = now_mono() + secs;
	for (;;) {
		pid_t r = waitpid(c->pid, status, WNOHANG);
		if (r == c->pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (now_mono() >= end)
			return 1;
		usleep(10000);
	}
}

void proc_stop(struct child *c, double grace_s)
{
	int st;
	if (c->pid <= 0)
		return;
	proc_kill(c, stop_signal(c));
	if (wait_timeout(c, grace_s, &st) != 0) {
		proc_kill(c, SIGKILL);
		waitpid(c->pid, &st, 0);
	}
	if (c->new_pgrp)
		kill(-c->pid, SIGKILL);
	guard_end(c);
	c->pid = -1;
}

void proc_close_fds(struct child *c)
{
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->in_fd = c->out_fd = c->err_fd = -1;
}

static void fill_result(struct proc_result *res, int st)
{
	if (WIFEXITED(st)) {
		res->exit_code = WEXITSTATUS(st);
		res->term_signal = 0;
	} else if (WIFSIGNALED(st)) {
		res->exit_code = -1;
		res->term_signal = WTERMSIG(st);
	}
}

/* the child's open output pipes as pollfds: how many, and their slots in
 * *io and *ie (-1 when closed) */
static int pipe_pollfds(const struct child *c, struct pollfd *pfd, int *io, int *ie)
{
	int n = 0;
	*io = *ie = -1;
	if (c->out_fd >= 0) {
		pfd[n] = (struct pollfd){ c->out_fd, POLLIN, 0 };
		*io = n++;
	}
	if (c->err_fd >= 0) {
		pfd[n] = (struct pollfd){ c->err_fd, POLLIN, 0 };
		*ie = n++;
	}
	return n;
}

/* read once from a pipe into sb (then its last `max` bytes when it grew
 * past twice that; 0: no bound); *fd is closed and set to -1 at EOF or error */
static void read_pipe(int *fd, struct strbuf *sb, size_t max)
{
	char buf[16384];
	ssize_t k = read(*fd, buf, sizeof(buf));
	if (k > 0) {
		strbuf_add(sb, buf, (size_t)k);
		if (max && sb->len > 2 * max)
			strbuf_tail(sb, max);
	} else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(*fd);
		*fd = -1;
	}
}

/* read what is left in the pipes until EOF on both or `until` (poll, never
 * a blocking read: a process that left the group may hold them open) */
static void drain_pipes(struct child *c, struct strbuf *out, struct strbuf *errout,
			double until)
{
	while (c->out_fd >= 0 || c->err_fd >= 0) {
		double left = until - now_mono();
		if (left <= 0)
			return;
		struct pollfd pfd[2];
		int io, ie, n = pipe_pollfds(c, pfd, &io, &ie);
		int r = poll(pfd, (nfds_t)n, (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR)
			return;
		if (io >= 0 && pfd[io].revents)
			read_pipe(&c->out_fd, out, 0);
		if (ie >= 0 && pfd[ie].revents)
			read_pipe(&c->err_fd, errout, 0);
	}
}

/* kill every process that holds the other end of one of our still-open
 * pipes: after the child has exited, only what it left behind can */
static void kill_pipe_holders(struct child *c, struct proc_result *res)
{
	ino_t ino[2];
	int nino = 0;
	struct stat sb;
	if (c->out_fd >= 0 && !fstat(c->out_fd, &sb))
		ino[nino++] = sb.st_ino;
	if (c->err_fd >= 0 && !fstat(c->err_fd, &sb))
		ino[nino++] = sb.st_ino;
	if (!nino)
		return;
	DIR *proc = opendir("/proc");
	struct dirent *de;
	size_t used = strlen(res->leftovers_desc);
	while (proc && (de = readdir(proc))) {
		int pid = atoi(de->d_name);
		if (pid <= 0 || pid == getpid())
			continue;
		char fddir[64];
		snprintf(fddir, sizeof(fddir), "/proc/%d/fd", pid);
		DIR *fd = opendir(fddir);
		struct dirent *fe;
		int holds = 0;
		while (fd && !holds && (fe = readdir(fd))) {
			char link[600], target[64];
			snprintf(link, sizeof(link), "%s/%s", fddir, fe->d_name);
			ssize_t k = readlink(link, target, sizeof(target) - 1);
			if (k <= 0)
				continue;
			target[k] = 0;
			for (int i = 0; i < nino; i++) {
				char want[48];
				snprintf(want, sizeof(want), "pipe:[%lu]", (unsigned long)ino[i]);
				if (!strcmp(target, want))
					holds = 1;
			}
		}
		if (fd)
			closedir(fd);
		if (!holds || kill(pid, SIGKILL))
			continue;
		char comm[64] = "?", cpath[64];
		snprintf(cpath, sizeof(cpath), "/proc/%d/comm", pid);
		FILE *f = fopen(cpath, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		res->leftovers++;
		if (used < sizeof(res->leftovers_desc))
			used += (size_t)snprintf(res->leftovers_desc + used,
						 sizeof(res->leftovers_desc) - used, "%s%d (%s)",
						 used ? ", " : "", pid, comm);
	}
	if (proc)
		closedir(proc);
}

/* what proc_exec keeps from one poll round to the next */
struct run_state {
	double start, deadline;      /* deadline 0: none */
	double kill_at;              /* when a stopped child gets SIGKILL (0: not yet) */
	int killed_for;              /* 0, ETIMEDOUT, ECONNRESET, EINTR */
	int pidfd;                   /* the child's exit as an event, or -1 */
	int backoff;                 /* ms, the waitpid interval without a pidfd */
	int abort_fd;                /* the controller side, or -1 */
	int st;                      /* the child's wait status */
};

/* stop the child for `why`: its stop signal now, SIGKILL after the grace */
static void run_stop(struct child *c, struct run_state *rs, int why, double now)
{
	rs->killed_for = why;
	proc_kill(c, stop_signal(c));
	rs->kill_at = now + stop_grace(c);
}

/* the round's pollfds (pipes, abort fd, pidfd): how many, the abort fd's
 * slot in *ia (-1: none) */
static int run_pollfds(const struct child *c, const struct run_state *rs, struct pollfd *pfd,
		       int *io, int *ie, int *ia)
{
	int n = pipe_pollfds(c, pfd, io, ie);
	*ia = -1;
	if (rs->abort_fd >= 0 && !rs->killed_for) {
		pfd[n] = (struct pollfd){ rs->abort_fd, POLLIN, 0 };
		*ia = n++;
	}
	if (rs->pidfd >= 0 && c->out_fd < 0 && c->err_fd < 0)
		pfd[n++] = (struct pollfd){ rs->pidfd, POLLIN, 0 };
	return n;
}

/* the round's poll timeout, ms: wake as rarely as the timers allow (the
 * agent shares the CPUs with the measurement). The child's exit shows as
 * EOF on its pipes, then on the pidfd, and a signal (the abort flag)
 * interrupts poll, so 1 s is only the bound for the deadline checks */
static int run_poll_ms(const struct child *c, struct run_state *rs)
{
	int ms = 1000;
	if (rs->pidfd < 0 && c->out_fd < 0 && c->err_fd < 0) {
		ms = rs->backoff;
		rs->backoff = rs->backoff >= 64 ? 100 : 2 * rs->backoff;
	}
	double next = rs->kill_at ? rs->kill_at
		    : (!rs->killed_for && rs->deadline) ? rs->deadline : 0;
	if (next) {
		double left = next - now_mono();
		int lm = left <= 0 ? 0 : (int)(left * 1000) + 1;
		if (lm < ms)
			ms = lm;
	}
	return ms;
}

/* the controller side polled ready (revents): any input or EOF while a
 * workload runs means abort only at EOF/error; peek for EOF */
static void run_abort_fd(struct child *c, struct run_state *rs, short revents)
{
	int avail = 0;
	int k = 1;
	if (ioctl(rs->abort_fd, FIONREAD, &avail) == 0 && avail == 0)
		k = 0;
	else if (!(revents & POLLIN))
		k = 0;
	if (k == 0) {
		rs->killed_for = ECONNRESET;
		proc_kill(c, stop_signal(c));
		rs->kill_at = now_mono() + stop_grace(c);
	} else {
		rs->abort_fd = -1; /* data pending: stop polling it */
	}
}

/* 1 when the child has exited (reaped, its group killed, its pipes
 * drained), else 0 */
static int run_reap(struct child *c, struct run_state *rs, struct strbuf *out,
		    struct strbuf *errout, struct proc_result *res)
{
	pid_t w = waitpid(c->pid, &rs->st, WNOHANG);
	if (w != c->pid)
		return 0;
	c->pid = -1;
	if (c->new_pgrp)
		kill(-w, SIGKILL);
	guard_end(c);
	/* drain what is left in the pipes, for at most a second and
	   never past the deadline; what still holds them then was
	   left behind (setsid) and is killed, and said so */
	double until = now_mono() + 1.0;
	if (rs->deadline && !rs->killed_for && rs->deadline < until)
		until = rs->deadline > now_mono() ? rs->deadline : now_mono();
	drain_pipes(c, out, errout, until);
	if (c->out_fd >= 0 || c->err_fd >= 0) {
		kill_pipe_holders(c, res);
		drain_pipes(c, out, errout, now_mono() + 0.2);
	}
	return 1;
}

/* the timers: the abort flag and the deadline stop the child, the grace
 * after a stop ends in SIGKILL */
static void run_timers(struct child *c, struct run_state *rs, volatile int *abort_flag)
{
	double now = now_mono();
	if (!rs->killed_for && abort_flag && *abort_flag)
		run_stop(c, rs, EINTR, now);
	if (!rs->killed_for && rs->deadline && now >= rs->deadline)
		run_stop(c, rs, ETIMEDOUT, now);
	if (rs->kill_at && now >= rs->kill_at) {
		proc_kill(c, SIGKILL);
		rs->kill_at = 0;
	}
}

/* after the loop: bound the output, close the fds, fill *res; -1 when the
 * child was stopped for the controller or the abort flag */
static int run_finish(struct child *c, struct run_state *rs, struct strbuf *out,
		      size_t out_max, struct strbuf *errout, size_t err_max,
		      struct proc_result *res, struct strbuf *err)
{
	if (rs->pidfd >= 0)
		close(rs->pidfd);
	if (out_max)
		strbuf_tail(out, out_max);
	if (err_max)
		strbuf_tail(errout, err_max);
	proc_close_fds(c);
	res->wall_s = now_mono() - rs->start;
	fill_result(res, rs->st);
	if (rs->killed_for == ETIMEDOUT)
		res->timed_out = 1;
	if (rs->killed_for == ECONNRESET || rs->killed_for == EINTR) {
		errno = rs->killed_for;
		strbuf_addf(err, "%s stopped: %s", c->argv[0],
			    rs->killed_for == EINTR ? "interrupted" : "controller went away");
		return -1;
	}
	return 0;
}

int proc_exec(struct child *c, const struct proc_io *how, struct proc_result *res,
	      struct strbuf *err)
{
	struct strbuf *out = how->out, *errout = how->errout;
	size_t out_max = how->out_max, err_max = how->err_max;
	int abort_fd = how->abort_fd;
	volatile int *abort_flag = how->abort_flag;
	double timeout_s = how->timeout_s;
	memset(res, 0, sizeof(*res));
	struct run_state rs = { .start = now_mono(), .abort_fd = abort_fd, .backoff = 1 };
	rs.deadline = timeout_s > 0 ? rs.start + timeout_s : 0;
	if (c->pid <= 0 && proc_start(c, err))
		return -1;
	if (c->in_fd >= 0) {
		close(c->in_fd);
		c->in_fd = -1;
	}
	/* the child's exit as an event (Linux >= 5.3) once its pipes are at
	 * EOF (ldd, kexec -l: they close their output and exit, and were found
	 * up to 100 ms late); without a pidfd it is looked for every 1, 2, 4 ...
	 * 100 ms. While a pipe is open, its EOF (or the 1 s bound) tells as
	 * before: a tool that leaves a daemon on its stdout is found as late as
	 * ever, by which time the daemon has usually left the process group and
	 * is killed and named as a pipe holder, not killed with the group */
	rs.pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	for (;;) {
		struct pollfd pfd[4];
		int io, ie, ia, n = run_pollfds(c, &rs, pfd, &io, &ie, &ia);
		int r = poll(pfd, (nfds_t)n, run_poll_ms(c, &rs));
		if (r < 0 && errno != EINTR) {
			strbuf_addf(err, "poll: %s", strerror(errno));
			break;
		}
		if (r > 0) {
			if (io >= 0 && pfd[io].revents)
				read_pipe(&c->out_fd, out, out_max);
			if (ie >= 0 && pfd[ie].revents)
				read_pipe(&c->err_fd, errout, err_max);
			if (ia >= 0 && pfd[ia].revents)
				run_abort_fd(c, &rs, pfd[ia].revents);
		}
		if (run_reap(c, &rs, out, errout, res))
			break;
		run_timers(c, &rs, abort_flag);
	}
	return run_finish(c, &rs, out, out_max, errout, err_max, res, err);
}

int proc_capture(const char *const *argv, double timeout_s, struct strbuf *out,
		 struct strbuf *errout, struct proc_result *res, struct strbuf *err)
{
	struct child c = CHILD_INIT;
	c.argv = argv;
	c.in = PROC_NULL;
	c.out = PROC_PIPE;
	c.err = PROC_PIPE;
	c.new_pgrp = 1;
	const struct proc_io io = { .timeout_s = timeout_s, .out = out, .errout = errout,
				    .abort_fd = -1 };
	return proc_exec(&c, &io, res, err);
}

static unsigned long long stat_start(pid_t pid, char *state);

unsigned long long proc_start_time(pid_t pid)
{
	char state;
	return stat_start(pid, &state);
}

int proc_alive(pid_t pid, unsigned long long start)
{
	char state = 0;
	return pid > 0 && start && stat_start(pid, &state) == start && state != 'Z' &&
	       state != 'X';
}

/* /proc/PID/stat into buf (n bytes): what follows the command name's
 * ") " (field 3 on), or NULL when there is no such process */
static const char *stat_after_comm(pid_t pid, char *buf, size_t n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t k = read(fd, buf, n - 1);
	close(fd);
	if (k <= 0)
		return NULL;
	buf[k] = 0;
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	return p && p[1] ? p + 2 : NULL;
}

/* field 22 of /proc/PID/stat (0: no such process) and field 3, the state */
static unsigned long long stat_start(pid_t pid, char *state)
{
	char buf[1024];
	const char *p = stat_after_comm(pid, buf, sizeof(buf));
	unsigned long long start = 0;
	/* after ") ": state is field 3, starttime field 22 */
	if (!p || sscanf(p, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			    "%*d %*d %llu", state, &start) != 2)
		return 0;
	return start;
}

/* the ppid of process pid (field 4 of /proc/PID/stat), 0 when unknown */
static pid_t stat_ppid(pid_t pid)
{
	char buf[1024];
	const char *p = stat_after_comm(pid, buf, sizeof(buf));
	int ppid = 0;
	if (!p || sscanf(p, "%*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

static void pid_push(pid_t **v, size_t *n, pid_t pid)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = pid;
}

/* this process's children, zombies included: the children files of its
 * threads (/proc/self/task/TID/children), else (a kernel without them)
 * the processes whose parent it is. Only their pids are read */
static void own_children(pid_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	DIR *tasks = opendir("/proc/self/task");
	struct dirent *de;
	int have_files = 0;
	while (tasks && (de = readdir(tasks))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		have_files = 1;
		int pid;
		while (fscanf(f, "%d", &pid) == 1)
			if (pid > 0)
				pid_push(out, n, pid);
		fclose(f);
	}
	if (tasks)
		closedir(tasks);
	if (have_files)
		return;
	DIR *proc = opendir("/proc");
	pid_t me = getpid();
	while (proc && (de = readdir(proc))) {
		int pid = atoi(de->d_name);
		if (pid > 0 && pid != me && stat_ppid(pid) == me)
			pid_push(out, n, pid);
	}
	if (proc)
		closedir(proc);
}

int proc_orphans_begin(struct proc_orphans *o, struct strbuf *err)
{
	memset(o, 0, sizeof(*o));
	own_children(&o->before, &o->nbefore);
	o->before_start = xcalloc(o->nbefore + 1, sizeof(*o->before_start));
	for (size_t i = 0; i < o->nbefore; i++)
		o->before_start[i] = proc_start_time(o->before[i]);
	int was = 0;
	if (prctl(PR_GET_CHILD_SUBREAPER, &was, 0, 0, 0))
		was = 0;
	o->was_subreaper = was;
	if (!was && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		strbuf_addf(err, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
		free(o->before);
		free(o->before_start);
		o->before = NULL;
		o->before_start = NULL;
		return -1;
	}
	o->set = !was;
	return 0;
}

/* pid was a child of this process at begin */
static int orphan_was_ours(const struct proc_orphans *o, pid_t pid)
{
	for (size_t i = 0; i < o->nbefore; i++)
		if (o->before[i] == pid && o->before_start[i] == proc_start_time(pid))
			return 1;
	return 0;
}

/* the adopted processes still there at the end, named */
static void orphans_name_left(struct proc_orphans *o, const pid_t *kids, size_t n)
{
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		char cpath[64], comm[64] = "?";
		snprintf(cpath, sizeof(cpath), "/proc/%d/comm", (int)kids[i]);
		FILE *f = fopen(cpath, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		o->left++;
		if (used < sizeof(o->left_desc))
			used += (size_t)snprintf(o->left_desc + used, sizeof(o->left_desc) - used,
						 "%s%d (%s)", used ? ", " : "", (int)kids[i], comm);
	}
}

void proc_orphans_end(struct proc_orphans *o, int sig, double grace_s, double wait_s)
{
	double kill_at = now_mono() + grace_s, end = kill_at + wait_s;
	pid_t *told = NULL;       /* those that got `sig` */
	size_t ntold = 0;
	for (;;) {
		pid_t *kids, *live = NULL;
		size_t nkids, nlive = 0;
		int reaped = 0;
		own_children(&kids, &nkids);
		double now = now_mono();
		for (size_t i = 0; i < nkids; i++) {
			pid_t p = kids[i];
			if (orphan_was_ours(o, p))
				continue;
			int st;
			pid_t w = waitpid(p, &st, WNOHANG);
			if (w == p) {
				o->ended++;
				reaped = 1;
				continue;
			}
			if (w < 0)
				continue; /* not ours to wait for after all */
			pid_push(&live, &nlive, p);
			int first = 1;
			for (size_t k = 0; k < ntold; k++)
				first &= told[k] != p;
			if (now >= kill_at) {
				kill(p, SIGKILL);
			} else if (first) {
				kill(p, sig);
				pid_push(&told, &ntold, p);
			}
		}
		free(kids);
		/* one that ended after the listing left its own children to be
		   adopted: they show in the next round */
		if ((!nlive && !reaped) || (nlive && now >= end)) {
			orphans_name_left(o, live, nlive);
			free(live);
			break;
		}
		free(live);
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	free(told);
	if (o->set)
		prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	o->set = 0;
	free(o->before);
	free(o->before_start);
	o->before = NULL;
	o->before_start = NULL;
	o->nbefore = 0;
}
