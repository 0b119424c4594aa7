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

int proc_start(struct child *c, struct strbuf *err)
{
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1}, pexec[2] = {-1, -1};
	c->pid = -1;
	c->in_fd = c->out_fd = c->err_fd = -1;
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
		if (c->new_pgrp)
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
		if (c->out == PROC_PIPE)
			dup2(pout[1], 1);
		else if (c->out == PROC_NULL)
			dup2(nul, 1);
		if (c->stderr_to_stdout)
			dup2(1, 2);
		else if (c->err == PROC_PIPE)
			dup2(perr[1], 2);
		else if (c->err == PROC_NULL)
			dup2(nul, 2);
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
	if (c->new_pgrp)
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
	if (c->new_pgrp)
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
	c->pid = -1;
	if (status)
		*status = st;
	return 0;
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

/* the first signal of a stop */
static int stop_signal(const struct child *c)
{
	return c->stop_sig > 0 ? c->stop_sig : SIGTERM;
}

/* proc_run's time from the stop signal to SIGKILL */
static double stop_grace(const struct child *c)
{
	return c->stop_grace_s > 0 ? c->stop_grace_s : 2;
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
		char buf[16384];
		int *fds[2] = { io >= 0 && pfd[io].revents ? &c->out_fd : NULL,
				ie >= 0 && pfd[ie].revents ? &c->err_fd : NULL };
		struct strbuf *sinks[2] = { out, errout };
		for (int i = 0; i < 2; i++) {
			if (!fds[i])
				continue;
			ssize_t k = read(*fds[i], buf, sizeof(buf));
			if (k > 0)
				strbuf_add(sinks[i], buf, (size_t)k);
			else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
				close(*fds[i]);
				*fds[i] = -1;
			}
		}
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

int proc_run(struct child *c, double timeout_s, struct strbuf *out, size_t out_max,
	     struct strbuf *errout, size_t err_max, int abort_fd,
	     volatile int *abort_flag, struct proc_result *res, struct strbuf *err)
{
	memset(res, 0, sizeof(*res));
	double start = now_mono();
	double deadline = timeout_s > 0 ? start + timeout_s : 0;
	double kill_at = 0;
	int killed_for = 0; /* 0, ETIMEDOUT, ECONNRESET, EINTR */
	if (c->pid <= 0 && proc_start(c, err))
		return -1;
	if (c->in_fd >= 0) {
		close(c->in_fd);
		c->in_fd = -1;
	}
	int st = 0;
	/* the child's exit as an event (Linux >= 5.3) once its pipes are at
	 * EOF (ldd, kexec -l: they close their output and exit, and were found
	 * up to 100 ms late); without a pidfd it is looked for every 1, 2, 4 ...
	 * 100 ms. While a pipe is open, its EOF (or the 1 s bound) tells as
	 * before: a tool that leaves a daemon on its stdout is found as late as
	 * ever, by which time the daemon has usually left the process group and
	 * is killed and named as a pipe holder, not killed with the group */
	int pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	int backoff = 1;
	for (;;) {
		struct pollfd pfd[4];
		int io, ie, ia = -1, n = pipe_pollfds(c, pfd, &io, &ie);
		if (abort_fd >= 0 && !killed_for) {
			pfd[n] = (struct pollfd){ abort_fd, POLLIN, 0 };
			ia = n++;
		}
		if (pidfd >= 0 && c->out_fd < 0 && c->err_fd < 0)
			pfd[n++] = (struct pollfd){ pidfd, POLLIN, 0 };
		/* wake as rarely as the timers allow: the agent shares the CPUs
		 * with the measurement. The child's exit shows as EOF on its pipes,
		 * then on the pidfd, and a signal (the abort flag) interrupts poll,
		 * so 1 s is only the bound for the deadline checks */
		int ms = 1000;
		if (pidfd < 0 && c->out_fd < 0 && c->err_fd < 0) {
			ms = backoff;
			backoff = backoff >= 64 ? 100 : 2 * backoff;
		}
		double next = kill_at ? kill_at : (!killed_for && deadline) ? deadline : 0;
		if (next) {
			double left = next - now_mono();
			int lm = left <= 0 ? 0 : (int)(left * 1000) + 1;
			if (lm < ms)
				ms = lm;
		}
		int r = poll(pfd, (nfds_t)n, ms);
		if (r < 0 && errno != EINTR) {
			strbuf_addf(err, "poll: %s", strerror(errno));
			break;
		}
		if (r > 0) {
			char buf[16384];
			if (io >= 0 && pfd[io].revents) {
				ssize_t k = read(c->out_fd, buf, sizeof(buf));
				if (k > 0) {
					strbuf_add(out, buf, (size_t)k);
					if (out_max && out->len > 2 * out_max)
						strbuf_tail(out, out_max);
				} else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
					close(c->out_fd);
					c->out_fd = -1;
				}
			}
			if (ie >= 0 && pfd[ie].revents) {
				ssize_t k = read(c->err_fd, buf, sizeof(buf));
				if (k > 0) {
					strbuf_add(errout, buf, (size_t)k);
					if (err_max && errout->len > 2 * err_max)
						strbuf_tail(errout, err_max);
				} else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
					close(c->err_fd);
					c->err_fd = -1;
				}
			}
			if (ia >= 0 && pfd[ia].revents) {
				/* the controller side: any input or EOF while a workload
				 * runs means abort only at EOF/error; peek for EOF */
				int avail = 0;
				int k = 1;
				if (ioctl(abort_fd, FIONREAD, &avail) == 0 && avail == 0)
					k = 0;
				else if (!(pfd[ia].revents & POLLIN))
					k = 0;
				if (k == 0) {
					killed_for = ECONNRESET;
					proc_kill(c, stop_signal(c));
					kill_at = now_mono() + stop_grace(c);
				} else {
					abort_fd = -1; /* data pending: stop polling it */
				}
			}
		}
		pid_t w = waitpid(c->pid, &st, WNOHANG);
		if (w == c->pid) {
			c->pid = -1;
			if (c->new_pgrp)
				kill(-w, SIGKILL);
			/* drain what is left in the pipes, for at most a second and
			   never past the deadline; what still holds them then was
			   left behind (setsid) and is killed, and said so */
			double until = now_mono() + 1.0;
			if (deadline && !killed_for && deadline < until)
				until = deadline > now_mono() ? deadline : now_mono();
			drain_pipes(c, out, errout, until);
			if (c->out_fd >= 0 || c->err_fd >= 0) {
				kill_pipe_holders(c, res);
				drain_pipes(c, out, errout, now_mono() + 0.2);
			}
			break;
		}
		double now = now_mono();
		if (!killed_for && abort_flag && *abort_flag) {
			killed_for = EINTR;
			proc_kill(c, stop_signal(c));
			kill_at = now + stop_grace(c);
		}
		if (!killed_for && deadline && now >= deadline) {
			killed_for = ETIMEDOUT;
			proc_kill(c, stop_signal(c));
			kill_at = now + stop_grace(c);
		}
		if (kill_at && now >= kill_at) {
			proc_kill(c, SIGKILL);
			kill_at = 0;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	if (out_max)
		strbuf_tail(out, out_max);
	if (err_max)
		strbuf_tail(errout, err_max);
	proc_close_fds(c);
	res->wall_s = now_mono() - start;
	fill_result(res, st);
	if (killed_for == ETIMEDOUT)
		res->timed_out = 1;
	if (killed_for == ECONNRESET || killed_for == EINTR) {
		errno = killed_for;
		strbuf_addf(err, "%s stopped: %s", c->argv[0],
			    killed_for == EINTR ? "interrupted" : "controller went away");
		return -1;
	}
	return 0;
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
	return proc_run(&c, timeout_s, out, 0, errout, 0, -1, NULL, res, err);
}

unsigned long long proc_start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return 0;
	unsigned long long start = 0;
	/* after ") ": state is field 3, starttime field 22 */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			  "%*d %*d %llu", &start) != 1)
		return 0;
	return start;
}
