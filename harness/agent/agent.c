/*
 * Agent request handlers. Requests and their arguments:
 *
 *   hello                      -> {version, proto, boot_id, pid, uid}
 *   sysinfo                    -> the sysinfo object (sysinfo.h)
 *   schedstat                  -> {"text": contents of /proc/schedstat} or error
 *   knob_set {path, value}     -> {path, old, new, readback, depth}; recorded
 *                                 for restore (depth = changes recorded now)
 *   knob_get {path}            -> {value}
 *   knob_restore {keep?}       -> {restored: N}; undoes recorded changes, newest
 *                                 first, until `keep` remain (default 0)
 *   exec {argv, timeout_s, files?, inputs?: {name: content}, load?: [{argv}],
 *         load_warmup_s?, schedstat?: bool, out_max?, bundle?: {dir, loader,
 *         argv0, tools}, stop_signal?: "TERM"|"INT", settle_s?, align_s?,
 *         seed?: 0..2^32-1}
 *        runs argv in a private temporary directory with a new process group;
 *        a program listed in the bundle's tools (the ssh target's workload
 *        bundle) runs from there, others are looked up in PATH (resolve_tool);
 *        inputs are written into that directory first (plain names only: a
 *        task description the tool reads, such as rt-app's JSON);
 *        background loads start first (warm-up, default 1 s) and are killed
 *        after; a workload stopped early (its timeout, the controller gone,
 *        the agent signalled) gets stop_signal first (default TERM; INT for
 *        rtla, which undoes its tracefs instance only on SIGINT), SIGKILL
 *        2 s later (15 s after INT); with schedstat, kernel.sched_schedstats is enabled for the run
 *        and restored, and /proc/schedstat is captured before and after.
 *        With trace: {events: [sched event names], buffer_kb?, max_bytes?}
 *        a tracefs instance of its own (instances/schedlab-PID, a recorded
 *        knob_mkdir, removed with the run's knobs) records those events of
 *        the sched subsystem from before the loads start until the
 *        workload ends; its text comes back as trace.text, the last
 *        max_bytes of it (default 16 MiB) with trace.truncated saying
 *        that the start was cut, and trace.overrun the events the ring
 *        buffer (buffer_kb per CPU) overwrote. With seed, the run is
 *        perturbed by it once its start is aligned (exec_perturb).
 *        -> {exit_code, signal, timed_out, wall_s, stdout, stderr,
 *            files: {name: content}, schedstat_before?, schedstat_after?,
 *            tool: {argv0, path, sha256, from: "bundle"|"target"},
 *            loads: [{argv0, ended_early, exit_code, tool}],
 *            trace?: {text, bytes, truncated, overrun, instance},
 *            perturb?: {seed, spin, reseeded, error?}}
 *   kexec {kernel, initrd?, cmdline, carry?: bool}
 *        loads the kernel, answers, restores knobs, and executes it
 *        (kexec -e); the controller then waits for a new banner. A bzImage
 *        is loaded with the file-based syscall (kexec -s: the kernel reads
 *        and checks the files itself; what lockdown and signed kernels
 *        need), and with kexec_load (kexec -l -i) when that fails or the
 *        image is an ELF vmlinux (kexec_file_load takes only bzImages on
 *        x86_64; an ELF kernel starts without the decompressor). With
 *        carry, the initrd handed over is the carry archive of
 *        harness/util/cpio.h written from `initrd`: the new system has the
 *        same file again and can kexec once more.
 *        -> {status: "executing", loader: "kexec_file_load"|"kexec_load",
 *            file_load_error?: why kexec -s was not used}
 *   shutdown                   -> restores knobs, answers, exits
 *
 * While a workload runs the agent watches its input: EOF (the controller died)
 * kills the workload and the loads, restores the knobs and exits. The
 * workload's and each load's process group end with the agent too when it
 * cannot see to it (SIGKILL): each has a guardian (proc.h group_guard) that
 * gives it the stop signal, then SIGKILL.
 *
 * Layout: struct agent_state is what lives for the whole connection (the
 * boot id, the knob undo stack); agent_ops[] maps each op to one handler
 * op_<name>; serve_line answers one request line; do_exec walks a struct
 * exec_run through its steps (prepare, schedstat before, loads, workload,
 * schedstat after, files, end of loads, knob restore).
 */
#include "harness/agent/agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/random.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/agent/frame.h"
#include "harness/agent/knobs.h"
#include "harness/util/cpio.h"
#include "harness/util/kelf.h"
#include "harness/util/proc.h"
#include "harness/agent/protocol.h"
#include "harness/agent/scx.h"
#include "harness/util/rmtree.h"
#include "harness/util/sha256.h"
#include "harness/util/sigstop.h"
#include "harness/util/strbuf.h"
#include "harness/util/utf8.h"
#include "harness/agent/sysinfo.h"

#ifndef SCHEDLAB_VERSION
#define SCHEDLAB_VERSION "unknown"
#endif

static volatile int stop_flag;

/* a program's SHA-256 as long as the file is unchanged (tools are hashed
 * once per connection, not before every run) */
struct hash_memo {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	char hex[65];
};
#define HASH_MEMO_MAX 16

/* what the agent holds for the whole connection */
struct agent_state {
	const struct agent_opts *o;
	const char *root;       /* o->root or "" */
	char *boot_id;
	struct knobs knobs;     /* the undo stack of every knob change */
	unsigned frame_seq;     /* batch mode: the next message's number */
	struct hash_memo memo[HASH_MEMO_MAX];
	size_t nmemo, memo_next;
};

static void on_signal(int sig)
{
	stop_flag = sig;
}

static const char *root_of(const struct agent_opts *o)
{
	return o->root ? o->root : "";
}

static char *read_boot_id(const char *root)
{
	struct strbuf sb = STRBUF_INIT;
	char *p = xstrfmt("%s/proc/sys/kernel/random/boot_id", root);
	if (strbuf_read_file(&sb, p, 128))
		strbuf_addstr(&sb, "unknown");
	strbuf_trim(&sb);
	free(p);
	return strbuf_detach(&sb, NULL);
}

static json_t *argv_of(const json_t *arr, struct strvec *sv, struct strbuf *err, const char *what)
{
	size_t i;
	json_t *v;
	if (!json_is_array(arr) || !json_array_size(arr)) {
		strbuf_addf(err, "%s: argv must be a non-empty array of strings", what);
		return NULL;
	}
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v)) {
			strbuf_addf(err, "%s: argv[%zu] is not a string", what, i);
			return NULL;
		}
		strvec_push(sv, json_string_value(v));
	}
	return (json_t *)arr;
}

static int enable_schedstats(struct knobs *k, int *changed, struct strbuf *err)
{
	struct strbuf cur = STRBUF_INIT;
	*changed = 0;
	if (knob_get(k, "/proc/sys/kernel/sched_schedstats", &cur, err)) {
		strbuf_release(&cur);
		return -1;
	}
	int ret = 0;
	if (strcmp(cur.buf, "1")) {
		ret = knob_set(k, "/proc/sys/kernel/sched_schedstats", "1", NULL, err);
		*changed = !ret;
	}
	strbuf_release(&cur);
	return ret;
}

/*
 * One exec request while it runs: what was asked, the run directory, the
 * background loads and the result being filled. do_exec walks it through
 * the steps below, in order; a failed step ends the run without a result
 * (the loads are stopped), and the knobs the run changed are always undone.
 */
struct exec_run {
	struct agent_state *st;
	json_t *args;
	struct strvec argv;
	char *exe;              /* the file executed for argv (resolve_tool) */
	json_t *tool;           /* which program that is: {argv0, path, sha256, from} */
	char dir[sizeof("/tmp/schedlab-run-XXXXXX")];
	int have_dir;
	int want_ss;            /* schedstat snapshots requested */
	char *sspath;           /* <root>/proc/schedstat */
	struct child *loads;    /* nloads of them started */
	struct strvec *lav;     /* their argv, nlav of them */
	char **lexe;            /* their executed files, nlav of them */
	json_t *ltools;         /* their programs, as tool above */
	size_t nloads, nlav;
	int knobs_before;       /* depth of the knob stack when the request came */
	char *tinst;            /* the tracefs instance of a traced run, or NULL */
	int stop_sig;           /* what stops the workload first: SIGTERM or SIGINT */
	json_t *res;            /* the result object, NULL once the run failed */
	json_t *lres;           /* its "loads" array until attached */
};

/* the request's input files, written into the run directory before
 * anything starts: plain names only, each created anew (mode 0600) */
static int exec_write_inputs(struct exec_run *r, struct strbuf *err)
{
	json_t *in = json_object_get(r->args, "inputs");
	const char *name;
	json_t *v;
	if (in && !json_is_object(in)) {
		strbuf_addstr(err, "exec: \"inputs\" must be an object of name: content");
		return -1;
	}
	json_object_foreach(in, name, v) {
		if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
		    !json_is_string(v)) {
			strbuf_addf(err, "exec: input \"%.100s\" must be a plain file name with a "
				    "string content", name);
			return -1;
		}
		char *p = xstrfmt("%s/%s", r->dir, name);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		const char *s = json_string_value(v);
		size_t len = json_string_length(v), off = 0;
		while (fd >= 0 && off < len) {
			ssize_t n = write(fd, s + off, len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		int bad = fd < 0 || off < len;
		if (bad)
			strbuf_addf(err, "exec: cannot write input %s: %s", p, strerror(errno));
		if (fd >= 0 && close(fd) && !bad) {
			strbuf_addf(err, "exec: cannot write input %s: %s", p, strerror(errno));
			bad = 1;
		}
		free(p);
		if (bad)
			return -1;
	}
	return 0;
}

/*
 * Which program runs. With the request's "bundle" (the ssh target's
 * workload bundle, harness/targets/bundle.h: {dir, loader, argv0, tools})
 * a bare name listed in its tools is DIR/bin/NAME, run directly when
 * static and through DIR/<loader> --library-path DIR/lib --inhibit-cache
 * [--argv0 NAME] when dynamic (argv[0] stays NAME); any other program is
 * looked up in PATH. Each is recorded as {argv0, path, sha256, from:
 * "bundle"|"target"}.
 */
static int bundle_ok(const json_t *b)
{
	const char *dir = json_string_value(json_object_get(b, "dir"));
	const char *ld = json_string_value(json_object_get(b, "loader"));
	if (!json_is_object(b) || !dir || dir[0] != '/' || strstr(dir, "/..") ||
	    !json_is_object(json_object_get(b, "tools")))
		return 0;
	if (json_object_get(b, "loader") &&
	    (!ld || !*ld || ld[0] == '/' || strstr(ld, "..")))
		return 0;
	return 1;
}

static int hash_program(struct agent_state *st, const char *path, char hex[65],
			struct strbuf *err)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		strbuf_addf(err, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (size_t i = 0; i < st->nmemo; i++) {
		struct hash_memo *m = &st->memo[i];
		if (m->dev == sb.st_dev && m->ino == sb.st_ino && m->size == sb.st_size &&
		    !memcmp(&m->mtime, &sb.st_mtim, sizeof(m->mtime)) &&
		    !memcmp(&m->ctime, &sb.st_ctim, sizeof(m->ctime))) {
			memcpy(hex, m->hex, 65);
			close(fd);
			return 0;
		}
	}
	int r = sha256_fd(fd, hex, NULL);
	close(fd);
	if (r < 0) {
		strbuf_addf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct hash_memo *m = &st->memo[st->memo_next];
	st->memo_next = (st->memo_next + 1) % HASH_MEMO_MAX;
	if (st->nmemo < HASH_MEMO_MAX)
		st->nmemo++;
	m->dev = sb.st_dev;
	m->ino = sb.st_ino;
	m->size = sb.st_size;
	m->mtime = sb.st_mtim;
	m->ctime = sb.st_ctim;
	memcpy(m->hex, hex, 65);
	return 0;
}

/* argv (rewritten for a bundled dynamic program), the file to execute
 * (*exe, malloc'd) and the record of the program (*info) */
static int resolve_tool(struct agent_state *st, const json_t *bundle, struct strvec *argv,
			char **exe, json_t **info, struct strbuf *err)
{
	char *name = xstrdup(argv->v[0]); /* argv is rewritten below */
	const char *kind = NULL;
	char *path = NULL, hex[65];
	int rc = -1;

	*exe = NULL;
	*info = NULL;
	if (bundle && !strchr(name, '/') && *name)
		kind = json_string_value(json_object_get(json_object_get(bundle, "tools"), name));
	if (kind) {
		const char *dir = json_string_value(json_object_get(bundle, "dir"));
		path = xstrfmt("%s/bin/%s", dir, name);
		if (!strcmp(kind, "dynamic")) {
			const char *ld = json_string_value(json_object_get(bundle, "loader"));
			if (!ld) {
				strbuf_addf(err, "exec: the bundle has no loader for %s", name);
				goto out;
			}
			struct strvec nv = STRVEC_INIT;
			strvec_push(&nv, name);
			strvec_push(&nv, "--library-path");
			strvec_pushf(&nv, "%s/lib", dir);
			strvec_push(&nv, "--inhibit-cache");
			if (json_is_true(json_object_get(bundle, "argv0"))) {
				strvec_push(&nv, "--argv0");
				strvec_push(&nv, name);
			}
			strvec_push(&nv, path);
			for (size_t i = 1; i < argv->nr; i++)
				strvec_push(&nv, argv->v[i]);
			strvec_clear(argv);
			*argv = nv;
			*exe = xstrfmt("%s/%s", dir, ld);
		} else {
			*exe = xstrdup(path);
		}
	} else {
		path = strchr(name, '/') ? xstrdup(name) : proc_which(name);
		if (!path) {
			strbuf_addf(err, "%s: command not found in PATH", name);
			goto out;
		}
		*exe = xstrdup(path);
	}
	if (hash_program(st, path, hex, err) < 0) {
		free(*exe);
		*exe = NULL;
		goto out;
	}
	*info = json_pack("{s:s,s:s,s:s,s:s}", "argv0", name, "path", path, "sha256", hex, "from",
			  kind ? "bundle" : "target");
	rc = 0;
out:
	free(path);
	free(name);
	return rc;
}

/*
 * A run's folder carries a marker naming the agent that made it (its pid
 * and start time, proc_start_time): an agent killed with SIGKILL cannot
 * remove its folder, so the next exec of any agent of this user removes
 * the marked folders whose agent is gone. Only folders with the marker,
 * of this user, are touched: never one by its name alone.
 */
#define RUN_MARK ".schedlab-agent"

static void mark_run_dir(const char *dir)
{
	char *p = xstrfmt("%s/" RUN_MARK, dir);
	FILE *f = fopen(p, "we");
	if (f) {
		fprintf(f, "%ld %llu\n", (long)getpid(), proc_start_time(getpid()));
		fclose(f);
	}
	free(p);
}

static void clean_stale_runs(void)
{
	DIR *d = opendir("/tmp");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "schedlab-run-", 13))
			continue;
		char *dir = xstrfmt("/tmp/%s", e->d_name);
		char *mark = xstrfmt("%s/" RUN_MARK, dir);
		struct stat st;
		struct strbuf sb = STRBUF_INIT;
		const char *why;
		long pid = 0;
		unsigned long long start = 0;
		if (!lstat(dir, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		    !strbuf_read_regular(&sb, mark, 256, &why) &&
		    sscanf(sb.buf, "%ld %llu", &pid, &start) == 2 && pid > 0 &&
		    proc_start_time((pid_t)pid) != start)
			rm_tree(dir);
		strbuf_release(&sb);
		free(mark);
		free(dir);
	}
	closedir(d);
}

/* argv, and the run directory under /tmp */
static int exec_prepare(struct exec_run *r, struct strbuf *err)
{
	json_t *bundle = json_object_get(r->args, "bundle");
	if (!argv_of(json_object_get(r->args, "argv"), &r->argv, err, "exec"))
		return -1;
	if (bundle && !bundle_ok(bundle)) {
		strbuf_addstr(err, "exec: \"bundle\" must be {\"dir\": an absolute path, "
				   "\"loader\": a path in it, \"tools\": {name: kind}}");
		return -1;
	}
	json_t *ss = json_object_get(r->args, "stop_signal");
	const char *sn = json_string_value(ss);
	r->stop_sig = SIGTERM;
	if (sn && !strcmp(sn, "INT"))
		r->stop_sig = SIGINT;
	else if (ss && !(sn && !strcmp(sn, "TERM"))) {
		strbuf_addstr(err, "exec: \"stop_signal\" must be \"TERM\" (the default) or \"INT\"");
		return -1;
	}
	json_t *seed = json_object_get(r->args, "seed");
	if (seed && (!json_is_integer(seed) || json_integer_value(seed) < 0 ||
		     json_integer_value(seed) > 0xffffffffLL)) {
		strbuf_addstr(err, "exec: \"seed\" must be an integer from 0 to 4294967295");
		return -1;
	}
	if (resolve_tool(r->st, bundle, &r->argv, &r->exe, &r->tool, err) < 0)
		return -1;
	clean_stale_runs();
	strcpy(r->dir, "/tmp/schedlab-run-XXXXXX");
	if (!mkdtemp(r->dir)) {
		strbuf_addf(err, "cannot create a run directory under /tmp: %s", strerror(errno));
		return -1;
	}
	r->have_dir = 1;
	mark_run_dir(r->dir);
	return exec_write_inputs(r, err);
}

/* with schedstat: enable kernel.sched_schedstats (a recorded knob change)
 * and take the "before" snapshot */
static void exec_schedstat_before(struct exec_run *r)
{
	struct strbuf ss = STRBUF_INIT;
	r->want_ss = json_is_true(json_object_get(r->args, "schedstat"));
	r->sspath = xstrfmt("%s/proc/schedstat", r->st->root);
	if (r->want_ss) {
		int changed = 0;
		struct strbuf e = STRBUF_INIT;
		if (enable_schedstats(&r->st->knobs, &changed, &e))
			json_object_set_new(r->res, "schedstat_error", json_string(e.buf));
		strbuf_release(&e);
		if (!strbuf_read_file(&ss, r->sspath, 1 << 22))
			json_object_set_new(r->res, "schedstat_before", json_string(ss.buf));
	}
	strbuf_release(&ss);
}

/* the folder tracefs instances are made in: /sys/kernel/tracing, or
 * through debugfs on kernels that mount it only there (NULL: none) */
static const char *tracefs_dir(const char *root)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	for (size_t i = 0; i < 2; i++) {
		char *p = xstrfmt("%s%s/instances", root, dirs[i]);
		struct stat st;
		int ok = !stat(p, &st) && S_ISDIR(st.st_mode);
		free(p);
		if (ok)
			return dirs[i];
	}
	return NULL;
}

/* with "trace": make the instance, size its buffer, enable the events
 * (every write recorded: the run's knob restore undoes them and removes
 * the instance); -1 with a message naming what failed */
static int exec_trace_start(struct exec_run *r, struct strbuf *err)
{
	json_t *t = json_object_get(r->args, "trace");
	if (!t)
		return 0;
	json_t *ev = json_object_get(t, "events");
	if (!json_is_array(ev) || !json_array_size(ev)) {
		strbuf_addstr(err, "exec: trace.events must be a non-empty array of event names");
		return -1;
	}
	const char *dir = tracefs_dir(r->st->root);
	if (!dir) {
		strbuf_addstr(err, "trace: no tracefs (neither /sys/kernel/tracing/instances nor "
				   "/sys/kernel/debug/tracing/instances; CONFIG_FTRACE, and "
				   "mount -t tracefs nodev /sys/kernel/tracing)");
		return -1;
	}
	r->tinst = xstrfmt("%s/instances/schedlab-%d", dir, (int)getpid());
	struct knobs *k = &r->st->knobs;
	if (knob_mkdir(k, r->tinst, err)) {
		free(r->tinst);
		r->tinst = NULL;
		strbuf_addstr(err, " (trace)");
		return -1;
	}
	json_int_t kb = json_integer_value(json_object_get(t, "buffer_kb"));
	if (kb > 0) {
		char *p = xstrfmt("%s/buffer_size_kb", r->tinst);
		char v[32];
		snprintf(v, sizeof(v), "%lld", (long long)kb);
		int rc = knob_set(k, p, v, NULL, err);
		free(p);
		if (rc)
			return -1;
	}
	/* only the run's own tasks: this agent and every task forked from it
	 * from now on (event-fork), with whatever switches with them (the
	 * kernel keeps a sched_switch when either side is listed, a wakeup by
	 * the woken task). Tracing the whole machine let a busy host's other
	 * tasks overwrite the run's events in the buffer's kept tail. */
	const char *pidf[][2] = { { "options/event-fork", "1" }, { "set_event_pid", NULL } };
	char self[32];
	snprintf(self, sizeof(self), "%d", (int)getpid());
	pidf[1][1] = self;
	for (size_t f = 0; f < 2; f++) {
		char *p = xstrfmt("%s/%s", r->tinst, pidf[f][0]);
		int rc = knob_set(k, p, pidf[f][1], NULL, err);
		free(p);
		if (rc)
			return -1;
	}
	size_t i;
	json_t *e;
	json_array_foreach(ev, i, e) {
		const char *name = json_string_value(e);
		if (!name || !*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
					       strlen(name)) {
			strbuf_addf(err, "exec: trace.events[%zu] must be an event name of the sched "
				    "subsystem (sched_switch, ...)", i);
			return -1;
		}
		char *p = xstrfmt("%s/events/sched/%s/enable", r->tinst, name);
		int rc = knob_set(k, p, "1", NULL, err);
		free(p);
		if (rc)
			return -1;
	}
	return 0;
}

/* keep at most the last max bytes of text, from the start of a line when
 * one begins within them; 1 when something was cut */
static int keep_tail(struct strbuf *text, size_t max)
{
	if (text->len <= max)
		return 0;
	const char *from = text->buf + text->len - max;
	const char *nl = memchr(from, '\n', max);
	size_t keep = nl ? (size_t)(text->buf + text->len - nl - 1) : max;
	memmove(text->buf, text->buf + text->len - keep, keep);
	text->len = keep;
	text->buf[keep] = 0;
	return 1;
}

/* the instance's text after the run: tracing stopped, the last max_bytes
 * kept (tracefs files have no size: read to the end, keep the tail), the
 * overwritten events of every CPU added up */
static void exec_trace_collect(struct exec_run *r)
{
	if (!r->tinst || !r->res)
		return;
	struct strbuf e = STRBUF_INIT, text = STRBUF_INIT;
	char *on = xstrfmt("%s/tracing_on", r->tinst);
	knob_set(&r->st->knobs, on, "0", NULL, &e);
	free(on);
	size_t max = (size_t)json_integer_value(json_object_get(json_object_get(r->args, "trace"),
								  "max_bytes"));
	if (!max || max > (16u << 20))
		max = 16u << 20;
	char *p = xstrfmt("%s%s/trace", r->st->root, r->tinst);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	free(p);
	size_t total = 0;
	int cut = 0;
	if (fd < 0) {
		strbuf_addf(&e, "%s%s/trace: cannot open: %s", e.len ? "; " : "", r->tinst,
			    strerror(errno));
	} else {
		char buf[65536];
		for (;;) {
			ssize_t n = read(fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			total += (size_t)n;
			strbuf_add(&text, buf, (size_t)n);
			if (text.len > 2 * max)  /* trim now and then, not per read */
				cut |= keep_tail(&text, max);
		}
		close(fd);
		cut |= keep_tail(&text, max);
	}
	long long overrun = 0;
	for (int cpu = 0; cpu < 4096; cpu++) {
		struct strbuf st = STRBUF_INIT;
		char *sp = xstrfmt("%s%s/per_cpu/cpu%d/stats", r->st->root, r->tinst, cpu);
		int rc = strbuf_read_file(&st, sp, 1 << 14);
		free(sp);
		const char *o = rc ? NULL : strstr(st.buf, "overrun: ");
		if (o)
			overrun += atoll(o + 9);
		strbuf_release(&st);
		if (rc)
			break;
	}
	utf8_scrub(&text);
	json_t *tr = json_pack("{s:s%,s:I,s:b,s:I,s:s}", "text", text.buf, text.len, "bytes",
			       (json_int_t)total, "truncated", cut, "overrun", (json_int_t)overrun,
			       "instance", r->tinst);
	if (e.len)
		json_object_set_new(tr, "error", json_string(e.buf));
	json_object_set_new(r->res, "trace", tr);
	strbuf_release(&text);
	strbuf_release(&e);
}

/* start every background load in the run directory, then the warm-up;
 * -1 when one cannot start (nloads says how many did) */
static int exec_start_loads(struct exec_run *r, struct strbuf *err)
{
	json_t *larr = json_object_get(r->args, "load");
	r->lres = json_array();
	if (!json_is_array(larr) || !json_array_size(larr))
		return 0;
	r->nloads = json_array_size(larr);
	r->loads = xcalloc(r->nloads, sizeof(*r->loads));
	r->nlav = r->nloads;
	r->lav = xcalloc(r->nlav, sizeof(*r->lav));
	r->lexe = xcalloc(r->nlav, sizeof(*r->lexe));
	r->ltools = json_array();
	for (size_t i = 0; i < r->nloads; i++) {
		struct child c = CHILD_INIT;
		json_t *info = NULL;
		r->loads[i] = c;
		if (!argv_of(json_object_get(json_array_get(larr, i), "argv"), &r->lav[i], err,
			     "load") ||
		    resolve_tool(r->st, json_object_get(r->args, "bundle"), &r->lav[i], &r->lexe[i],
				 &info, err) < 0) {
			r->nloads = i;
			return -1;
		}
		json_array_append_new(r->ltools, info);
		r->loads[i].argv = strvec_argv(&r->lav[i]);
		r->loads[i].exe = r->lexe[i];
		r->loads[i].dir = r->dir;
		r->loads[i].in = r->loads[i].out = r->loads[i].err = PROC_NULL;
		r->loads[i].new_pgrp = 1;
		r->loads[i].group_guard = 1; /* gone with the agent, even by SIGKILL */
		if (proc_start(&r->loads[i], err)) {
			strbuf_addstr(err, " (background load)");
			r->nloads = i;
			return -1;
		}
	}
	double warm = json_number_value(json_object_get(r->args, "load_warmup_s"));
	if (!json_object_get(r->args, "load_warmup_s"))
		warm = 1;
	if (warm > 0)
		usleep((useconds_t)(warm * 1e6));
	return 0;
}

/* run the workload to completion (timeout, EOF or a signal stop it);
 * -1 when it could not even start: the message names the tool */
static int exec_workload(struct exec_run *r, struct strbuf *err)
{
	const struct agent_opts *o = r->st->o;
	double timeout = json_number_value(json_object_get(r->args, "timeout_s"));
	if (timeout <= 0)
		timeout = 3600;
	size_t out_max = (size_t)json_integer_value(json_object_get(r->args, "out_max"));
	if (!out_max)
		out_max = 4 << 20;
	struct child c = CHILD_INIT;
	c.argv = strvec_argv(&r->argv);
	c.exe = r->exe;
	c.dir = r->dir;
	/* a program of ours that starts others (sl-netpair) runs them from
	   the bundle as resolve_tool does (libnative's nat_exec_tool) */
	const char *bdir = json_string_value(json_object_get(json_object_get(r->args, "bundle"),
							     "dir"));
	char *benv = bdir ? xstrfmt("SCHEDLAB_BUNDLE=%s", bdir) : NULL;
	const char *envv[] = { benv, NULL };
	if (benv)
		c.env = envv;
	c.in = PROC_NULL;
	c.out = PROC_PIPE;
	c.err = PROC_PIPE;
	c.new_pgrp = 1;
	/* the workload's group ends with the agent, even when the agent is
	   killed with SIGKILL and cannot stop it (proc.h: group_guard): the
	   guardian gives it the stop signal, then SIGKILL after the grace */
	c.group_guard = 1;
	c.stop_sig = r->stop_sig;
	/* a tool stopped with SIGINT is let finish its own teardown (rtla
	   reads what is left of its trace first: seconds under TCG) */
	c.stop_grace_s = r->stop_sig == SIGINT ? 15 : 2;
	struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT;
	struct proc_result pr;
	/* the controller's end is watched for EOF while a workload runs; a
	 * batch file has no controller behind it (its EOF is the plan's end) */
	const struct proc_io io = { .timeout_s = timeout, .out = &out, .out_max = out_max,
				    .errout = &errout, .err_max = 64 << 10,
				    .abort_fd = o->framed ? -1 : o->in_fd,
				    .abort_flag = &stop_flag };
	int rr = proc_exec(&c, &io, &pr, err);
	free(benv);
	if (rr && !pr.wall_s) {
		strbuf_release(&out);
		strbuf_release(&errout);
		return -1;
	}
	json_t *res = r->res;
	json_object_set_new(res, "exit_code", json_integer(pr.exit_code));
	json_object_set_new(res, "signal", json_integer(pr.term_signal));
	json_object_set_new(res, "timed_out", json_boolean(pr.timed_out));
	json_object_set_new(res, "wall_s", json_real(pr.wall_s));
	if (r->tool)
		json_object_set(res, "tool", r->tool);
	if (pr.leftovers)
		json_object_set_new(res, "killed_leftovers", json_string(pr.leftovers_desc));
	/* whatever bytes the program printed, as valid UTF-8 (jansson refuses
	   anything else and the output was lost): each invalid sequence
	   becomes U+FFFD and is counted */
	size_t bad_out = utf8_scrub(&out), bad_err = utf8_scrub(&errout);
	json_object_set_new(res, "stdout", json_stringn(out.buf, out.len));
	json_object_set_new(res, "stderr", json_stringn(errout.buf, errout.len));
	if (bad_out)
		json_object_set_new(res, "stdout_replaced", json_integer((json_int_t)bad_out));
	if (bad_err)
		json_object_set_new(res, "stderr_replaced", json_integer((json_int_t)bad_err));
	if (rr)
		json_object_set_new(res, "aborted", json_string(err->buf));
	strbuf_release(&out);
	strbuf_release(&errout);
	return 0;
}

static void exec_schedstat_after(struct exec_run *r)
{
	struct strbuf ss = STRBUF_INIT;
	if (r->want_ss && !strbuf_read_file(&ss, r->sspath, 1 << 22))
		json_object_set_new(r->res, "schedstat_after", json_string(ss.buf));
	strbuf_release(&ss);
}

/* the requested files of the run directory (plain names only) */
static void exec_collect_files(struct exec_run *r)
{
	json_t *files = json_object(), *refused = NULL;
	json_t *fl = json_object_get(r->args, "files");
	size_t i;
	json_t *fv;
	json_array_foreach(fl, i, fv) {
		const char *name = json_string_value(fv);
		if (!name || strchr(name, '/'))
			continue;
		char *p = xstrfmt("%s/%s", r->dir, name);
		struct strbuf fb = STRBUF_INIT;
		const char *why;
		if (!strbuf_read_regular(&fb, p, 32 << 20, &why)) {
			utf8_scrub(&fb);
			json_object_set_new(files, name, json_stringn(fb.buf, fb.len));
		} else if (errno != ENOENT) {
			if (!refused)
				refused = json_object();
			json_object_set_new(refused, name, json_string(why));
		}
		strbuf_release(&fb);
		free(p);
	}
	json_object_set_new(r->res, "files", files);
	if (refused)
		json_object_set_new(r->res, "files_refused", refused);
}

/* after a run: note which loads ended early, stop the others, and attach
 * the "loads" array */
static void exec_end_loads(struct exec_run *r)
{
	for (size_t k = 0; k < r->nloads; k++) {
		int st = 0;
		int ended = proc_try_wait(&r->loads[k], &st) == 1;
		if (!ended)
			proc_stop(&r->loads[k], 1.0);
		json_array_append_new(r->lres, json_pack("{s:s,s:b,s:i,s:O?}", "argv0",
							 r->loads[k].argv[0], "ended_early", ended,
							 "exit_code",
							 ended && WIFEXITED(st) ? WEXITSTATUS(st) : -1,
							 "tool", json_array_get(r->ltools, k)));
	}
	json_object_set_new(r->res, "loads", r->lres);
	r->lres = NULL;
}

/* a failed run: stop the loads that started, drop the result */
static void exec_fail(struct exec_run *r)
{
	for (size_t k = 0; k < r->nloads; k++)
		proc_stop(&r->loads[k], 1.0);
	json_decref(r->res);
	r->res = NULL;
}

/* undo what this run changed (sched_schedstats): the stack goes back to
 * its depth before the request, so a boot's changes stay */
static void exec_restore_knobs(struct exec_run *r)
{
	struct knobs *k = &r->st->knobs;
	if (knob_pending(k) > r->knobs_before) {
		struct strbuf e = STRBUF_INIT;
		knob_restore_to(k, r->knobs_before, &e);
		if (e.len && r->res)
			json_object_set_new(r->res, "restore_error", json_string(e.buf));
		strbuf_release(&e);
	}
}

static void exec_release(struct exec_run *r)
{
	json_decref(r->lres);
	for (size_t k = 0; k < r->nlav; k++) {
		strvec_clear(&r->lav[k]);
		if (r->lexe)
			free(r->lexe[k]);
	}
	free(r->lav);
	free(r->lexe);
	json_decref(r->ltools);
	free(r->exe);
	json_decref(r->tool);
	free(r->loads);
	free(r->sspath);
	free(r->tinst);
	if (r->have_dir)
		rm_tree(r->dir);
	strvec_clear(&r->argv);
}

/*
 * settle_s, align_s (a virtual clock, docs/virtual-time.md): start no
 * sooner than settle_s after boot, and then at a whole multiple of align_s
 * of CLOCK_MONOTONIC. The request arrives when the host sends it, and an
 * idle guest's virtual clock runs ahead to its next timer meanwhile, so
 * without this the run would begin at a phase of the guest's periodic work
 * (the tick, deferred work, the boot's late tasks) that the host decides.
 * An idle wait costs nothing in virtual time. At most 120 s in all.
 */
static void exec_align(const json_t *args)
{
	double settle = json_number_value(json_object_get(args, "settle_s"));
	double align = json_number_value(json_object_get(args, "align_s"));
	struct timespec now;
	if (!(settle > 0) && !(align > 0))
		return;
	if (clock_gettime(CLOCK_MONOTONIC, &now))
		return;
	double t = (double)now.tv_sec + (double)now.tv_nsec / 1e9, at = t;
	if (settle > 0 && settle <= 120 && at < settle)
		at = settle;
	if (align > 0 && align <= 60)
		at = ceil(at / align) * align;
	if (at <= t || at - t > 120)
		return;
	struct timespec ts = { (time_t)at, (long)((at - floor(at)) * 1e9) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* splitmix64: the perturbation's numbers from its seed */
static uint64_t perturb_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * seed (docs/virtual-time.md "Seeds"): the repetition's perturbation, once
 * the start is aligned and before anything of the run starts: 32 bytes drawn
 * from the seed mixed into the kernel's entropy pool (a write to
 * /dev/urandom) and the kernel's random generator reseeded from the pool
 * (RNDRESEEDCRNG, as root; what the agent may not do is left out and said
 * so), then a spin of a seeded number of loop iterations below
 * AGENT_PERTURB_SPIN_MAX: on a virtual clock a seeded offset of the run's
 * start from the grid of exec_align (0-17 ms at shift 2), on a real one
 * about a millisecond at most. A sealed guest then repeats rep r bit for bit
 * and differs between reps. -> {seed, spin, reseeded, error?}
 */
#define AGENT_PERTURB_SPIN_MAX (1u << 20)
static void exec_perturb(struct exec_run *r)
{
	json_t *sv = json_object_get(r->args, "seed");
	if (!sv)
		return;
	uint64_t st = (uint64_t)json_integer_value(sv);
	unsigned char pool[32];
	for (size_t i = 0; i < sizeof(pool); i += 8) {
		uint64_t x = perturb_next(&st);
		memcpy(pool + i, &x, 8);
	}
	unsigned long spin = (unsigned long)(perturb_next(&st) % AGENT_PERTURB_SPIN_MAX);
	json_t *pj = json_pack("{s:O,s:I,s:b}", "seed", sv, "spin", (json_int_t)spin, "reseeded", 0);
	char *dev = xstrfmt("%s/dev/urandom", r->st->root);
	int fd = open(dev, O_WRONLY | O_CLOEXEC);
	const char *why = NULL;
	if (fd < 0 || write(fd, pool, sizeof(pool)) != (ssize_t)sizeof(pool))
		why = "the entropy pool was not written";
	else if (ioctl(fd, RNDRESEEDCRNG) == 0)
		json_object_set_new(pj, "reseeded", json_true());
	else
		why = errno == EPERM ? "no reseed (not root)" : "no reseed";
	if (why)
		json_object_set_new(pj, "error", json_sprintf("%s: %s", why, strerror(errno)));
	if (fd >= 0)
		close(fd);
	free(dev);
	for (volatile unsigned long i = 0; i < spin; i++)
		;
	json_object_set_new(r->res, "perturb", pj);
}

static json_t *do_exec(struct agent_state *st, json_t *args, struct strbuf *err)
{
	struct exec_run r = { .st = st, .args = args, .argv = STRVEC_INIT,
			      .knobs_before = knob_pending(&st->knobs) };
	json_t *res;

	if (!exec_prepare(&r, err)) {
		struct scx_run scx;
		r.res = json_object();
		/* the run's sched_ext scheduler (scx.h) before all of it; a
		   scheduler ejected during the run fails the run */
		if (scx_begin(&scx, st->root, args, err)) {
			exec_fail(&r);
		} else {
			exec_align(args);
			exec_perturb(&r);
			exec_schedstat_before(&r);
			if (exec_trace_start(&r, err) || exec_start_loads(&r, err) ||
			    exec_workload(&r, err)) {
				exec_fail(&r);
				scx_end(&scx, NULL, err);
			} else {
				exec_trace_collect(&r);
				exec_schedstat_after(&r);
				exec_collect_files(&r);
				exec_end_loads(&r);
				if (scx_end(&scx, r.res, err))
					exec_fail(&r);
			}
		}
		exec_restore_knobs(&r);
	}
	res = r.res;
	exec_release(&r);
	return res;
}

/* where a carried initrd is written, removed once kexec has loaded it */
#define KEXEC_CARRY_FILE "/run/schedlab-kexec-initrd"

/*
 * One kexec-tools load; 0 when it loaded, else -1 with its stderr in why.
 * mem_max (0: none) caps where kexec -l may put the initrd: by default it
 * goes to the top of RAM, which is where the page allocator hands out the
 * pages kexec_load copies the segments into; every such page that lies in
 * a destination goes on a list that each later allocation walks, and a
 * 40 MB initrd took 1.3-1.8 s to load in a 768 MB TCG guest instead of
 * 0.45 s right above the kernel.
 */
static int kexec_load_with(const char *mode, const char *kernel, const char *initrd,
			   const char *cmdline, int elf, unsigned long long mem_max,
			   struct strbuf *why)
{
	struct strvec av = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT;
	struct proc_result pr;
	int r;

	strvec_push(&av, "kexec");
	if (!strcmp(mode, "file")) {
		strvec_push(&av, "-s");
		strvec_push(&av, "-l");
	} else {
		strvec_push(&av, "-l");
		strvec_push(&av, "-i"); /* --no-checks: under TCG the checksums cost seconds */
		if (elf)
			strvec_push(&av, "--args-linux"); /* a Linux boot, with an initrd */
		if (mem_max)
			strvec_pushf(&av, "--mem-max=0x%llx", mem_max);
	}
	strvec_push(&av, kernel);
	if (initrd)
		strvec_pushf(&av, "--initrd=%s", initrd);
	strvec_pushf(&av, "--append=%s", cmdline);
	r = proc_capture(strvec_argv(&av), 120, &out, &eo, &pr, why);
	if (!r && pr.exit_code != 0) {
		strbuf_trim(&eo);
		strbuf_addf(why, "kexec %s failed (exit %d): %s", av.v[1], pr.exit_code, eo.buf);
		r = -1;
	}
	strvec_clear(&av);
	strbuf_release(&out);
	strbuf_release(&eo);
	return r;
}

/* the carry archive of initrd at KEXEC_CARRY_FILE */
static int write_carry(const char *initrd, struct strbuf *err)
{
	int in = open(initrd, O_RDONLY | O_CLOEXEC), out = -1, r = -1;

	if (in < 0 || initrd[0] != '/') {
		strbuf_addf(err, "kexec: carry: %s: %s", initrd,
			    in < 0 ? strerror(errno) : "not an absolute path");
		goto done;
	}
	out = open(KEXEC_CARRY_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		strbuf_addf(err, "kexec: %s: %s", KEXEC_CARRY_FILE, strerror(errno));
		goto done;
	}
	r = cpio_write_carry(out, initrd + 1, in, err);
done:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0 && !r) {
		strbuf_addf(err, "kexec: %s: %s", KEXEC_CARRY_FILE, strerror(errno));
		r = -1;
	}
	return r;
}

static json_t *do_kexec(const struct agent_opts *o, json_t *args, struct strbuf *err)
{
	const char *kernel = json_string_value(json_object_get(args, "kernel"));
	const char *initrd = json_string_value(json_object_get(args, "initrd"));
	const char *cmdline = json_string_value(json_object_get(args, "cmdline"));
	int carry = json_is_true(json_object_get(args, "carry"));
	struct strbuf why = STRBUF_INIT;
	const char *loader = "kexec_load";
	unsigned long long mem_max = 0;
	uint64_t end;
	json_t *res = NULL;
	struct stat st;
	int elf;
	double t0 = now_mono(), t_carry = t0;

	(void)o;
	if (!kernel || !cmdline || (carry && !initrd)) {
		strbuf_addstr(err, "kexec: needs kernel and cmdline (and initrd with carry)");
		return NULL;
	}
	if (carry) {
		if (write_carry(initrd, err) < 0)
			goto out;
		initrd = KEXEC_CARRY_FILE;
		t_carry = now_mono();
	}
	/* an ELF kernel sits at fixed addresses: the initrd goes right above
	   all the memory it occupies (with the .bss a trimmed one does not
	   load: kelf.h), with 64 MB to spare, on a 16 MB boundary */
	elf = kelf_mem_end_file(kernel, &end) != 0;
	if (elf && initrd && end && stat(initrd, &st) == 0)
		mem_max = ((end + (unsigned long long)st.st_size + (64ull << 20)) | ((16ull << 20) - 1));
	if (!elf && !kexec_load_with("file", kernel, initrd, cmdline, 0, 0, &why)) {
		loader = "kexec_file_load";
	} else if (kexec_load_with("load", kernel, initrd, cmdline, elf, mem_max, err) < 0) {
		if (why.len)
			strbuf_addf(err, " (and kexec -s: %s)", why.buf);
		goto out;
	}
	/* on a VM's console this line lands in the new boot's log */
	fprintf(stderr, "schedlab-agent: kexec: %s loaded with %s in %.2f s (carry %.2f s)%s%s\n",
		kernel, loader, now_mono() - t_carry, t_carry - t0,
		why.len && strcmp(loader, "kexec_file_load") ? "; kexec -s: " : "",
		why.len && strcmp(loader, "kexec_file_load") ? why.buf : "");
	res = json_pack("{s:s,s:s}", "status", "executing", "loader", loader);
	if (why.len && strcmp(loader, "kexec_file_load"))
		json_object_set_new(res, "file_load_error", json_string(why.buf));
out:
	if (carry)
		unlink(KEXEC_CARRY_FILE); /* loaded (or not): the kernel holds its copy */
	strbuf_release(&why);
	return res;
}

static void restore_on_exit(struct agent_state *st)
{
	struct strbuf e = STRBUF_INIT;
	if (knob_restore_all(&st->knobs, &e))
		fprintf(stderr, "schedlab-agent: %s\n", e.buf);
	strbuf_release(&e);
}

/* undo what an agent killed before it could restore left behind */
static void recover_knobs(struct agent_state *st)
{
	struct strbuf r = STRBUF_INIT;
	int fails = knobs_recover(&st->knobs, &r);
	if (r.len)
		fprintf(stderr, "schedlab-agent: %s: %s\n",
			fails ? "knob journal" : "restored knobs of a dead agent", r.buf);
	strbuf_release(&r);
}

/* the native workloads (sl-*) live next to the agent: put its directory
 * first in PATH so that they are found without installing anything */
static void path_prepend_self(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	const char *old = getenv("PATH");
	char *path = xstrfmt("%s:%s", exe, old && *old ? old : "/usr/sbin:/usr/bin:/sbin:/bin");
	setenv("PATH", path, 1);
	free(path);
}

/* ------------------------------------------------------------------ */
/* requests                                                             */

/* one request: its arguments, the error message when it fails, and what
 * the loop does after answering */
struct request {
	json_t *args;
	struct strbuf err;
	int quit;               /* stop serving */
	int then_kexec;         /* restore the knobs and kexec -e */
};

/* a handler returns the result object, or NULL with rq->err set */
typedef json_t *op_fn(struct agent_state *st, struct request *rq);

static json_t *op_hello(struct agent_state *st, struct request *rq)
{
	return json_pack("{s:s,s:i,s:s,s:i,s:i}", "version", SCHEDLAB_VERSION, "proto",
			 AGENT_PROTO, "boot_id", st->boot_id, "pid", (int)getpid(), "uid",
			 (int)getuid());
}

static json_t *op_sysinfo(struct agent_state *st, struct request *rq)
{
	return sysinfo_collect(st->root);
}

static json_t *op_schedstat(struct agent_state *st, struct request *rq)
{
	json_t *result = NULL;
	struct strbuf ss = STRBUF_INIT;
	char *p = xstrfmt("%s/proc/schedstat", st->root);
	if (!strbuf_read_file(&ss, p, 1 << 22))
		result = json_pack("{s:s}", "text", ss.buf);
	else
		strbuf_addf(&rq->err, "/proc/schedstat: %s", strerror(errno));
	free(p);
	strbuf_release(&ss);
	return result;
}

/* a string argument of a request, or NULL with "args.KEY: ..." in err */
static const char *str_arg(struct request *rq, const char *key)
{
	const char *v = json_string_value(json_object_get(rq->args, key));
	if (!v)
		strbuf_addf(&rq->err, "args.%s: missing or not a string", key);
	return v;
}

static json_t *op_knob_set(struct agent_state *st, struct request *rq)
{
	json_t *result = NULL;
	const char *path = str_arg(rq, "path");
	const char *value = path ? str_arg(rq, "value") : NULL;
	if (!path || !value)
		return NULL;
	if (!knob_set(&st->knobs, path, value, &result, &rq->err)) {
		if (!result)
			result = json_object();
		json_object_set_new(result, "depth", json_integer(knob_pending(&st->knobs)));
	}
	return result;
}

static json_t *op_knob_get(struct agent_state *st, struct request *rq)
{
	json_t *result = NULL;
	const char *path = str_arg(rq, "path");
	if (!path)
		return NULL;
	struct strbuf v = STRBUF_INIT;
	if (!knob_get(&st->knobs, path, &v, &rq->err))
		result = json_pack("{s:s}", "value", v.buf);
	strbuf_release(&v);
	return result;
}

static json_t *op_knob_restore(struct agent_state *st, struct request *rq)
{
	int keep = (int)json_integer_value(json_object_get(rq->args, "keep"));
	int n = knob_pending(&st->knobs) - keep;
	if (knob_restore_to(&st->knobs, keep, &rq->err))
		return NULL;
	return json_pack("{s:i}", "restored", n > 0 ? n : 0);
}

static json_t *op_exec(struct agent_state *st, struct request *rq)
{
	return do_exec(st, rq->args, &rq->err);
}

static json_t *op_kexec(struct agent_state *st, struct request *rq)
{
	json_t *res = do_kexec(st->o, rq->args, &rq->err);
	if (res)
		rq->then_kexec = 1;
	return res;
}

static json_t *op_shutdown(struct agent_state *st, struct request *rq)
{
	rq->quit = 1;
	return json_object();
}

/* the operations, in the order the unknown-op message lists them */
static const struct agent_op {
	const char *name;
	op_fn *fn;
} agent_ops[] = {
	{ "hello", op_hello },
	{ "sysinfo", op_sysinfo },
	{ "schedstat", op_schedstat },
	{ "knob_set", op_knob_set },
	{ "knob_get", op_knob_get },
	{ "knob_restore", op_knob_restore },
	{ "exec", op_exec },
	{ "kexec", op_kexec },
	{ "shutdown", op_shutdown },
};

static json_t *dispatch(struct agent_state *st, const char *op, struct request *rq)
{
	size_t n = sizeof(agent_ops) / sizeof(agent_ops[0]);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(op, agent_ops[i].name))
			return agent_ops[i].fn(st, rq);
	strbuf_addf(&rq->err, "unknown op \"%s\" (valid: ", op);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&rq->err, "%s%s", i ? ", " : "", agent_ops[i].name);
	strbuf_addch(&rq->err, ')');
	return NULL;
}

/* after answering a kexec request: knobs back, then kexec -e, which only
 * returns when it failed (the agent then goes on serving) */
static void kexec_now(struct agent_state *st)
{
	restore_on_exit(st);
	sync();
	const char *av[] = { "kexec", "-e", NULL };
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, e = STRBUF_INIT;
	struct proc_result pr;
	proc_capture(av, 60, &a, &b, &pr, &e);
	/* only reached when kexec -e failed */
	fprintf(stderr, "schedlab-agent: kexec -e failed: %s%s\n", e.buf, b.buf);
	strbuf_release(&a);
	strbuf_release(&b);
	strbuf_release(&e);
}

/* answer one line; returns 1 when the agent should stop serving. A line
 * that is not JSON is noise on a serial line and gets no answer. */
/* one protocol message out: a JSON line, or in batch mode its frame lines */
static int send_msg(struct agent_state *st, json_t *obj)
{
	if (!st->o->framed)
		return proto_write_json(st->o->out_fd, obj);
	char *s = json_dumps(obj, JSON_COMPACT);
	if (!s)
		return -1;
	int rc = frame_write(st->o->out_fd, st->frame_seq++, s, strlen(s));
	free(s);
	return rc;
}

static int serve_line(struct agent_state *st, const char *line)
{
	json_error_t jerr;
	json_t *req = json_loads(line, 0, &jerr);
	if (!req) {
		/* a line that is not JSON at all is noise of the line (a serial
		   console) and gets no answer; one that meant to be a request
		   (it opens an object) is answered with why it is not one */
		const char *p = line;
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p != '{')
			return 0;
		char msg[200];
		snprintf(msg, sizeof(msg), "malformed request: %s at character %d", jerr.text,
			 jerr.position);
		json_t *resp = json_pack("{s:n,s:b,s:s}", "id", "ok", 0, "error", msg);
		int quit = resp && send_msg(st, resp);
		json_decref(resp);
		return quit;
	}
	json_t *id = json_object_get(req, "id");
	const char *op = json_string_value(json_object_get(req, "op"));
	struct request rq = { .args = json_object_get(req, "args"), .err = STRBUF_INIT };
	json_t *result = NULL;
	if (!id || !op)
		strbuf_addstr(&rq.err, "request without id or op");
	else
		result = dispatch(st, op, &rq);
	json_t *resp = result
		? json_pack("{s:O,s:b,s:o}", "id", id ? id : json_null(), "ok", 1, "result", result)
		: json_pack("{s:O,s:b,s:s}", "id", id ? id : json_null(), "ok", 0, "error",
			    rq.err.len ? rq.err.buf : "failed");
	if (send_msg(st, resp))
		rq.quit = 1;
	json_decref(resp);
	json_decref(req);
	strbuf_release(&rq.err);
	if (rq.then_kexec)
		kexec_now(st);
	return rq.quit;
}

/* ------------------------------------------------------------------ */
/* the loop                                                             */

static void catch_signals(void)
{
	sigstop_catch(on_signal, SIGSTOP_IGNORE_PIPE);
}

static void send_banner(struct agent_state *st)
{
	json_t *banner = json_pack("{s:s,s:i,s:s,s:s,s:i}", "agent", "schedlab", "proto",
				   AGENT_PROTO, "version", SCHEDLAB_VERSION, "boot_id",
				   st->boot_id, "pid", (int)getpid());
	send_msg(st, banner);
	json_decref(banner);
}

int agent_serve(const struct agent_opts *o)
{
	struct agent_state st = { .o = o, .root = root_of(o) };
	struct strbuf rbuf = STRBUF_INIT, line = STRBUF_INIT;
	int status = 0;
	knobs_init(&st.knobs, st.root);
	recover_knobs(&st);
	path_prepend_self();
	catch_signals();
	st.boot_id = read_boot_id(st.root);
	send_banner(&st);
	for (;;) {
		if (stop_flag)
			break;
		if (proto_read_line(o->in_fd, &rbuf, &line, 0.5)) {
			if (errno == ETIMEDOUT || errno == EINTR)
				continue;
			break; /* EOF: the controller is gone */
		}
		if (serve_line(&st, line.buf))
			break;
	}
	if (stop_flag)
		status = 128 + stop_flag;
	restore_on_exit(&st);
	knobs_release(&st.knobs);
	free(st.boot_id);
	strbuf_release(&rbuf);
	strbuf_release(&line);
	return status;
}
