/*
 * Unit tests of what the child-process module (harness/util/proc.h) sets up
 * in a child before it runs: no transparent huge pages when asked (the qemu
 * target's guest RAM under TCG), inherited otherwise, read back from the
 * child's own /proc/self/status; and the signal a stopped child gets first
 * (SIGTERM, or stop_sig: rtla cleans up on SIGINT only).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
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
	if (proc_run(&c, 10, out, 0, &eo, 0, -1, NULL, &res, &err))
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

/* a shell that says which signal stopped it: proc_run's timeout, or
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
		if (proc_run(&c, 0.3, out, 0, &eo, 0, -1, NULL, &res, &err) || !res.timed_out)
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

int main(void)
{
	RUN(no_thp_in_the_child_only);
	RUN(stop_signal);
	return tap_done();
}
