/*
 * Unit tests of what the child-process module (harness/util/proc.h) sets up
 * in a child before it runs: no transparent huge pages when asked (the qemu
 * target's guest RAM under TCG), inherited otherwise, read back from the
 * child's own /proc/self/status; the signal a stopped child gets first
 * (SIGTERM, or stop_sig: rtla cleans up on SIGINT only); stdin from a file
 * (PROC_FD); a detached child (its own session, its output in a file,
 * none of our descriptors); and the group guardian: a child's process group ends with the
 * process that started it even when that one is killed with SIGKILL, and
 * the guardian is reaped with the child otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/util/proc.h"
#include "tests/unit/tap.h"

/* a child of argv with its stdout and stderr piped */
static struct child piped(const char *const *argv)
{
	struct child c = CHILD_INIT;
	c.argv = argv;
	c.out = PROC_PIPE;
	c.err = PROC_PIPE;
	return c;
}

/* the THP_enabled line of a child started with no_thp, "" when absent */
static void thp_of_child(int no_thp, struct strbuf *out)
{
	const char *argv[] = { "grep", "^THP_enabled", "/proc/self/status", NULL };
	struct child c = piped(argv);
	struct strbuf eo = STRBUF_INIT, err = STRBUF_INIT;
	struct proc_result res;

	c.no_thp = no_thp;
	strbuf_reset(out);
	if (proc_exec(&c, &(struct proc_io){ .timeout_s = 10, .out = out, .errout = &eo, .abort_fd = -1 },
			 &res, &err))
		strbuf_reset(out);
	strbuf_trim(out);
	strbuf_release(&eo);
	strbuf_release(&err);
}

TEST(no_thp_in_the_child_only)
{
	struct strbuf out = STRBUF_INIT;
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int have = 0;

	while (f && fgets(line, sizeof(line), f))
		have |= !strncmp(line, "THP_enabled:", 12);
	if (f)
		fclose(f);
	CHECK(have); /* /proc/self/status has THP_enabled since Linux 5.0 */
	thp_of_child(1, &out);
	CHECK_STR(out.buf, "THP_enabled:\t0");
	thp_of_child(0, &out);
	CHECK_STR(out.buf, "THP_enabled:\t1");
	strbuf_release(&out);
}

/* a shell that says which signal stopped it: proc_exec's timeout, or
 * proc_stop when `stop` */
static void stopped_by(int stop_sig, int stop, struct strbuf *out)
{
	const char *argv[] = { "sh", "-c", "trap 'echo INT; exit 0' INT; "
			       "trap 'echo TERM; exit 0' TERM; echo up; "
			       "while :; do sleep 0.05; done", NULL };
	struct child c = piped(argv);
	struct strbuf eo = STRBUF_INIT, err = STRBUF_INIT;
	struct proc_result res;

	c.new_pgrp = 1;
	c.stop_sig = stop_sig;
	strbuf_reset(out);
	if (!stop) {
		if (proc_exec(&c, &(struct proc_io){ .timeout_s = 0.3, .out = out, .errout = &eo, .abort_fd = -1 },
				 &res, &err) || !res.timed_out)
			strbuf_addstr(out, " (not a timeout)");
	} else if (!proc_start(&c, &err)) {
		char buf[64];
		ssize_t n = read(c.out_fd, buf, 3); /* "up\n": the traps are set */
		proc_stop(&c, 2);
		while (n > 0 && (n = read(c.out_fd, buf, sizeof(buf))) > 0)
			strbuf_add(out, buf, (size_t)n);
		proc_close_fds(&c);
	}
	strbuf_trim(out);
	strbuf_release(&eo);
	strbuf_release(&err);
}

TEST(stop_signal)
{
	struct strbuf out = STRBUF_INIT;
	stopped_by(0, 0, &out);
	CHECK_STR(out.buf, "up\nTERM");
	stopped_by(SIGINT, 0, &out);
	CHECK_STR(out.buf, "up\nINT");
	stopped_by(0, 1, &out);
	CHECK_STR(out.buf, "TERM");
	stopped_by(SIGINT, 1, &out);
	CHECK_STR(out.buf, "INT");
	strbuf_release(&out);
}

TEST(stdin_from_a_file)
{
	int fd = memfd_create("test-proc", MFD_CLOEXEC);
	CHECK(fd >= 0 && write(fd, "hello\n", 6) == 6 && lseek(fd, 0, SEEK_SET) == 0);
	const char *argv[] = { "cat", NULL };
	struct child c = piped(argv);
	struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT, err = STRBUF_INIT;
	struct proc_result res;
	c.in = PROC_FD;
	c.in_src = fd;
	CHECK(!proc_exec(&c, &(struct proc_io){ .timeout_s = 10, .out = &out, .errout = &eo, .abort_fd = -1 },
			 &res, &err));
	CHECK_STR(out.buf, "hello\n");
	CHECK(res.exit_code == 0);
	close(fd);
	strbuf_release(&out);
	strbuf_release(&eo);
	strbuf_release(&err);
}

/* whether process group pgid has a live member; orphans come to this
 * process (a subreaper) and are reaped here meanwhile */
static int group_lives(pid_t pgid)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return kill(-pgid, 0) == 0 || errno != ESRCH;
}

/* a process that starts `sh -c 'sleep 600 & wait'` in a group of its own
 * (guarded or not), says the group on a pipe and is killed with SIGKILL:
 * whether the group is gone `secs` later */
static int group_gone_after_sigkill(int guard, double secs, pid_t *pgid_out)
{
	int p[2];
	pid_t pgid = 0;
	if (pipe(p))
		return 0;
	pid_t m = fork();
	if (m == 0) {
		const char *argv[] = { "sh", "-c", "sleep 600 & wait", NULL };
		struct child c = CHILD_INIT;
		struct strbuf err = STRBUF_INIT;
		c.argv = argv;
		c.in = PROC_NULL;
		c.new_pgrp = 1;
		c.group_guard = guard;
		c.stop_grace_s = 0.5;
		close(p[0]);
		if (proc_start(&c, &err))
			_exit(1);
		usleep(200 * 1000); /* the shell has started its sleep */
		if (write(p[1], &c.pid, sizeof(c.pid)) < 0)
			_exit(1);
		raise(SIGKILL);
	}
	close(p[1]);
	if (m < 0 || read(p[0], &pgid, sizeof(pgid)) != sizeof(pgid))
		pgid = 0;
	close(p[0]);
	waitpid(m, NULL, 0);
	*pgid_out = pgid;
	if (pgid <= 0)
		return 0;
	double end = now_mono() + secs;
	while (group_lives(pgid) && now_mono() < end)
		usleep(20 * 1000);
	return !group_lives(pgid);
}

TEST(group_guard_outlives_a_sigkill)
{
	pid_t pgid;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* unguarded, the group runs on: what the guardian is for */
	CHECK(!group_gone_after_sigkill(0, 1, &pgid));
	if (pgid > 0)
		kill(-pgid, SIGKILL);
	/* guarded: SIGTERM at once (SIGKILL 0.5 s later if need be) */
	CHECK(group_gone_after_sigkill(1, 5, &pgid));
	CHECK(pgid > 0);
	/* and the guardian ends with its group (an orphan that came here) */
	double end = now_mono() + 5;
	int r;
	while ((r = (int)waitpid(-1, NULL, WNOHANG)) >= 0 && now_mono() < end)
		if (r == 0)
			usleep(20 * 1000);
	CHECK(r < 0 && errno == ECHILD);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(group_guard_reaped_with_the_child)
{
	const char *argv[] = { "true", NULL };
	struct child c = CHILD_INIT;
	struct strbuf err = STRBUF_INIT;
	struct proc_result res;
	int st;
	c.argv = argv;
	c.new_pgrp = 1;
	c.group_guard = 1;
	struct proc_io io = PROC_IO_INIT;
	io.timeout_s = 10;
	CHECK(!proc_exec(&c, &io, &res, &err));
	CHECK(c.guard_pid == -1 && c.guard_fd == -1);
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD); /* no child left */
	/* proc_try_wait: running, then exited, its guardian reaped */
	const char *argv2[] = { "sleep", "0.2", NULL };
	c = (struct child)CHILD_INIT;
	c.argv = argv2;
	c.new_pgrp = 1;
	c.group_guard = 1;
	CHECK(!proc_start(&c, &err));
	CHECK(c.guard_pid > 0);
	CHECK(proc_try_wait(&c, &st) == 0);
	int r;
	double end = now_mono() + 10;
	while ((r = proc_try_wait(&c, &st)) == 0 && now_mono() < end)
		usleep(20 * 1000);
	CHECK(r == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(c.guard_pid == -1);
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	strbuf_release(&err);
}

/* a detached child (new_session): the leader of its own session and
 * group, its stdout and stderr in a file, no descriptor of ours but 0-2 */
TEST(detached_child)
{
	char path[] = "/tmp/test-proc-XXXXXX";
	int log = mkstemp(path);
	int leak[2];
	CHECK(log >= 0 && pipe(leak) == 0);   /* no O_CLOEXEC: would be inherited */
	const char *argv[] = { "sh", "-c", "echo pid $$ sid $(cut -d' ' -f6 /proc/$$/stat); "
				     "ls /proc/$$/fd | tr '\\n' ' '; echo >&2 err", NULL };
	struct child c = CHILD_INIT;
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
	int st;
	c.argv = argv;
	c.in = PROC_NULL;
	c.out = PROC_FD;
	c.out_src = log;
	c.stderr_to_stdout = 1;
	c.new_session = 1;
	CHECK(!proc_start(&c, &err));
	pid_t pid = c.pid;
	CHECK(proc_wait(&c, &st) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char buf[512];
	ssize_t n = pread(log, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	strbuf_addf(&out, "pid %d sid %d\n0 1 2 err\n", (int)pid, (int)pid);
	CHECK_STR(buf, out.buf);
	/* the pipe's ends are still ours */
	CHECK(fcntl(leak[0], F_GETFD) >= 0 && fcntl(leak[1], F_GETFD) >= 0);
	close(leak[0]);
	close(leak[1]);
	close(log);
	unlink(path);
	strbuf_release(&out);
	strbuf_release(&err);
}

/* what a child leaves outside its group (setsid) is adopted and ended by
 * proc_orphans_end, round after round; a child of ours from before is
 * left alone, and the subreaper setting is put back */
TEST(orphans_adopted_and_ended)
{
	const char *pre_argv[] = { "sleep", "30", NULL };
	struct child pre = CHILD_INIT;
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
	pre.argv = pre_argv;
	CHECK(!proc_start(&pre, &err));
	struct proc_orphans o;
	CHECK(!proc_orphans_begin(&o, &err));
	int sr = 0;
	CHECK(!prctl(PR_GET_CHILD_SUBREAPER, &sr, 0, 0, 0) && sr == 1);
	/* a session of its own with a child (TERM ignored: KILL ends it) */
	const char *argv[] = { "sh", "-c", "setsid sh -c 'trap \"\" TERM; sleep 1000; :' "
				     "</dev/null >/dev/null 2>&1 & p=$!; "
				     /* out of the group before the child exits (its
				        group is killed then): its own session */
				     "while [ \"$(cut -d' ' -f6 /proc/$p/stat)\" != $p ]; do sleep 0.01; done; "
				     "echo $p", NULL };
	struct child c = piped(argv);
	c.new_pgrp = 1;
	struct proc_result res;
	struct proc_io io = PROC_IO_INIT;
	io.out = &out;
	io.timeout_s = 10;
	CHECK(!proc_exec(&c, &io, &res, &err) && res.exit_code == 0);
	pid_t orphan = (pid_t)atoi(out.buf);
	CHECK(orphan > 0);
	unsigned long long start = proc_start_time(orphan);
	CHECK(proc_alive(orphan, start));
	double t0 = now_mono();
	proc_orphans_end(&o, SIGTERM, 0.3, 5);
	CHECK(!proc_alive(orphan, start) && o.left == 0 && o.ended >= 1);
	CHECK(now_mono() - t0 < 5);
	CHECK(!prctl(PR_GET_CHILD_SUBREAPER, &sr, 0, 0, 0) && sr == 0);
	/* the child from before is ours still, and alive */
	CHECK(waitpid(pre.pid, NULL, WNOHANG) == 0);
	proc_stop(&pre, 1);
	strbuf_release(&out);
	strbuf_release(&err);
}

int main(void)
{
	RUN(no_thp_in_the_child_only);
	RUN(stop_signal);
	RUN(stdin_from_a_file);
	RUN(group_guard_outlives_a_sigkill);
	RUN(group_guard_reaped_with_the_child);
	RUN(detached_child);
	RUN(orphans_adopted_and_ended);
	return tap_done();
}
