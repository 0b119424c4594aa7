/*
 * A sched_ext scheduler around one run: see scx.h. The state file reads
 * one of enabling, enabled, disabling, disabled (kernel/sched/ext.c,
 * scx_enable_state_str); root/ops holds the BPF ops' name ("simple" for
 * scx_simple) while one is loaded.
 */
#include "harness/agent/scx.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <time.h>
#include <unistd.h>

/* how long the kernel gets to enable or disable a scheduler, and the
 * program to end after SIGINT (guest time: a virtual clock's too) */
#define SCX_WAIT_S 30.0
#define SCX_POLL_NS 20000000L

int scx_name_ok(const char *name)
{
	if (!name || strncmp(name, "scx_", 4) || !name[4] || strlen(name) > 64)
		return 0;
	for (const char *p = name + 4; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}

/* the first word of a sysfs file's text, at most n-1 bytes; "" when none */
static void first_word(const char *text, char *w, size_t n)
{
	size_t i = 0;
	w[0] = '\0';
	if (!text)
		return;
	while (*text == ' ' || *text == '\t' || *text == '\n')
		text++;
	while (text[i] && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && i + 1 < n) {
		w[i] = text[i];
		i++;
	}
	w[i] = '\0';
}

int scx_check_enabled(const char *state, const char *ops, const char *name, struct strbuf *why)
{
	char st[32], op[80];
	first_word(state, st, sizeof(st));
	first_word(ops, op, sizeof(op));
	if (!state) {
		strbuf_addstr(why, "the kernel has no /sys/kernel/sched_ext/state (no sched_ext: "
				   "CONFIG_SCHED_CLASS_EXT is not set)");
		return -1;
	}
	if (strcmp(st, "enabled")) {
		strbuf_addf(why, "/sys/kernel/sched_ext/state is '%s', not enabled", st);
		return -1;
	}
	const char *want = name && !strncmp(name, "scx_", 4) ? name + 4 : name;
	if (!want || strcmp(op, want)) {
		strbuf_addf(why, "/sys/kernel/sched_ext/root/ops is '%s', not %s's '%s'", op,
			    name ? name : "?", want ? want : "?");
		return -1;
	}
	return 0;
}

int scx_check_disabled(const char *state, struct strbuf *why)
{
	char st[32];
	first_word(state, st, sizeof(st));
	if (state && !strcmp(st, "disabled"))
		return 0;
	if (!state)
		strbuf_addstr(why, "the kernel has no /sys/kernel/sched_ext/state");
	else
		strbuf_addf(why, "/sys/kernel/sched_ext/state is '%s', not disabled: the kernel is "
			    "not back on its own class", st);
	return -1;
}

/* a sysfs file below the root; NULL (and nothing in sb) when unreadable */
static const char *read_sys(struct strbuf *sb, const char *root, const char *rel)
{
	char *p = xstrfmt("%s/sys/kernel/sched_ext/%s", root, rel);
	strbuf_reset(sb);
	int rc = strbuf_read_file(sb, p, 4096);
	free(p);
	return rc ? NULL : sb->buf;
}

/* the kernel's sched_ext lines (the last few of its log) and the tail of
 * the scheduler's own output, appended to err */
static void add_reasons(const struct scx_run *s, struct strbuf *err)
{
	int n = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	if (n > 0) {
		char *buf = xmalloc((size_t)n + 1);
		int got = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, n);
		if (got > 0) {
			buf[got] = '\0';
			const char *lines[4] = { 0 };
			size_t nl = 0;
			for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
				if (strstr(l, "sched_ext")) {
					if (nl == 4)
						memmove(lines, lines + 1, 3 * sizeof(*lines)), nl = 3;
					lines[nl++] = l;
				}
			for (size_t i = 0; i < nl; i++) {
				const char *l = lines[i];
				if (l[0] == '<' && strchr(l, '>')) /* its log level */
					l = strchr(l, '>') + 1;
				strbuf_addf(err, "%s%s", i ? " / " : "; the kernel said: ", l);
			}
		}
		free(buf);
	}
	struct strbuf out = STRBUF_INIT;
	if (s->logpath[0] && !strbuf_read_file(&out, s->logpath, 1 << 20) && out.len) {
		strbuf_trim(&out);
		size_t keep = out.len > 600 ? out.len - 600 : 0;
		for (char *p = out.buf + keep; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		strbuf_addf(err, "; %s said: %s%s", s->name, keep ? "..." : "", out.buf + keep);
	}
	strbuf_release(&out);
}

/* 1 when path starts as an ELF file does (a script runs as itself) */
static int is_elf(const char *path)
{
	unsigned char m[4] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, m, sizeof(m));
	close(fd);
	return n == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
}

static void nap(void)
{
	struct timespec ts = { 0, SCX_POLL_NS };
	nanosleep(&ts, NULL);
}

static void scx_release(struct scx_run *s)
{
	if (s->logfd >= 0)
		close(s->logfd);
	if (s->logpath[0])
		unlink(s->logpath);
	free(s->name);
	free(s->root);
	free(s->exe);
	free(s->loader);
	free(s->libdir);
	memset(s, 0, sizeof(*s));
	s->logfd = -1;
}

/* SIGINT (the examples unregister in their handler), then wait for the
 * program and for the kernel's state to read disabled */
static int scx_stop(struct scx_run *s, struct strbuf *why)
{
	struct strbuf sb = STRBUF_INIT;
	int st, rc = -1;
	if (s->started && proc_try_wait(&s->c, &st) == 0) {
		proc_kill(&s->c, SIGINT);
		double t0 = now_mono();
		while (proc_try_wait(&s->c, &st) == 0 && now_mono() - t0 < SCX_WAIT_S)
			nap();
		if (now_mono() - t0 >= SCX_WAIT_S) {
			proc_stop(&s->c, 1.0);
			strbuf_addf(why, "%s did not end within %.0f s of SIGINT (killed); ", s->name,
				    SCX_WAIT_S);
		}
	}
	s->started = 0;
	double t0 = now_mono();
	for (;;) {
		struct strbuf w = STRBUF_INIT;
		rc = scx_check_disabled(read_sys(&sb, s->root, "state"), &w);
		if (!rc || now_mono() - t0 >= SCX_WAIT_S) {
			if (rc)
				strbuf_addstr(why, w.buf);
			strbuf_release(&w);
			break;
		}
		strbuf_release(&w);
		nap();
	}
	strbuf_release(&sb);
	return rc;
}

int scx_begin(struct scx_run *s, const char *root, const json_t *args, struct strbuf *err)
{
	const char *name = json_string_value(json_object_get(args, "scheduler"));
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	memset(s, 0, sizeof(*s));
	s->logfd = -1;
	if (json_object_get(args, "scheduler") && !name) {
		strbuf_addstr(err, "exec: \"scheduler\" must be a string");
		return -1;
	}
	if (!name || !strcmp(name, SCX_BUILTIN))
		return 0;
	if (!scx_name_ok(name)) {
		strbuf_addf(err, "exec: \"scheduler\": '%.80s' is no sched_ext scheduler's name "
			    "(scx_ then a-z 0-9 _) nor %s", name, SCX_BUILTIN);
		return -1;
	}
	s->name = xstrdup(name);
	s->root = xstrdup(root);
	const char *dir = getenv("SCHEDLAB_SCX_DIR");
	dir = dir && *dir ? dir : SCX_DIR;
	s->exe = xstrfmt("%s/%s", dir, name);
	s->libdir = xstrfmt("%s/lib", dir);
	s->loader = xstrfmt("%s/lib/ld-linux-x86-64.so.2", dir);
	/* the kernel must be on its own class before: another scheduler
	   loaded (one that outlived its run) is no base to start from */
	if (scx_check_disabled(read_sys(&sb, root, "state"), &why)) {
		strbuf_addf(err, "sched_ext: cannot start %s: %s", name, why.buf);
		goto fail;
	}
	if (access(s->exe, X_OK)) {
		strbuf_addf(err, "sched_ext: %s: %s (the kernel's schedulers are built by "
			    "`make -C kernels scx` and carried by the qemu target)", s->exe,
			    strerror(errno));
		goto fail;
	}
	strcpy(s->logpath, "/tmp/schedlab-scx-XXXXXX");
	s->logfd = mkstemp(s->logpath);
	if (s->logfd < 0) {
		s->logpath[0] = '\0';
		strbuf_addf(err, "sched_ext: cannot create a log under /tmp: %s", strerror(errno));
		goto fail;
	}
	struct child c = CHILD_INIT;
	s->c = c;
	if (access(s->loader, X_OK) == 0 && is_elf(s->exe)) {
		/* its own loader and libraries (scx.h) */
		s->argv[0] = s->loader;
		s->argv[1] = "--library-path";
		s->argv[2] = s->libdir;
		s->argv[3] = s->exe;
		s->argv[4] = NULL;
		s->c.exe = s->loader;
	} else {
		s->argv[0] = s->exe;
		s->argv[1] = NULL;
		s->c.exe = s->exe;
	}
	s->c.argv = s->argv;
	s->c.in = PROC_NULL;
	s->c.out = PROC_FD;
	s->c.out_src = s->logfd;
	s->c.stderr_to_stdout = 1;
	s->c.new_pgrp = 1;
	s->c.group_guard = 1;
	s->c.stop_sig = SIGINT;
	if (proc_start(&s->c, &why)) {
		strbuf_addf(err, "sched_ext: %s did not start: %s", name, why.buf);
		goto fail;
	}
	s->started = 1;
	double t0 = now_mono();
	for (;;) {
		int st;
		strbuf_reset(&why);
		struct strbuf ops = STRBUF_INIT;
		const char *stt = read_sys(&sb, root, "state");
		int ok = !scx_check_enabled(stt, read_sys(&ops, root, "root/ops"), name, &why);
		strbuf_release(&ops);
		if (ok)
			break;
		if (proc_try_wait(&s->c, &st) != 0) {
			s->started = 0;
			strbuf_addf(err, "sched_ext: %s failed to load (it exited: %s)", name, why.buf);
			add_reasons(s, err);
			goto fail_stop;
		}
		if (now_mono() - t0 >= SCX_WAIT_S) {
			strbuf_addf(err, "sched_ext: %s not enabled within %.0f s: %s", name,
				    SCX_WAIT_S, why.buf);
			add_reasons(s, err);
			goto fail_stop;
		}
		nap();
	}
	strbuf_release(&sb);
	strbuf_release(&why);
	return 0;
fail_stop:
	strbuf_reset(&why);
	if (scx_stop(s, &why))
		strbuf_addf(err, "; after it: %s", why.buf);
fail:
	strbuf_release(&sb);
	strbuf_release(&why);
	scx_release(s);
	return -1;
}

int scx_end(struct scx_run *s, json_t *res, struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT, ops = STRBUF_INIT, why = STRBUF_INIT;
	int rc = 0, st;
	if (!s->name) {
		scx_release(s);
		return 0;
	}
	const char *state = read_sys(&sb, s->root, "state");
	const char *op = read_sys(&ops, s->root, "root/ops");
	char opname[80];
	first_word(op, opname, sizeof(opname));
	int gone = proc_try_wait(&s->c, &st) != 0;
	if (gone)
		s->started = 0;
	if (scx_check_enabled(state, op, s->name, &why) || gone) {
		strbuf_addf(err, "sched_ext: %s was ejected during the run (%s%s)", s->name,
			    why.len ? why.buf : "its program ended",
			    gone && why.len ? "; its program ended" : "");
		add_reasons(s, err);
		rc = -1;
	}
	strbuf_reset(&why);
	if (scx_stop(s, &why)) {
		strbuf_addf(err, "%ssched_ext: after stopping %s: %s", rc ? "; " : "", s->name,
			    why.buf);
		rc = -1;
	}
	if (!rc && res)
		json_object_set_new(res, "scheduler", json_pack("{s:s,s:s,s:s}", "name", s->name,
								 "ops", opname, "state_after",
								 "disabled"));
	strbuf_release(&sb);
	strbuf_release(&ops);
	strbuf_release(&why);
	scx_release(s);
	return rc;
}
