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
 *   exec {argv, timeout_s, files?, load?: [{argv}], load_warmup_s?,
 *         schedstat?: bool, out_max?}
 *        runs argv in a private temporary directory with a new process group;
 *        background loads start first (warm-up, default 1 s) and are killed
 *        after; with schedstat, kernel.sched_schedstats is enabled for the run
 *        and restored, and /proc/schedstat is captured before and after.
 *        -> {exit_code, signal, timed_out, wall_s, stdout, stderr,
 *            files: {name: content}, schedstat_before?, schedstat_after?,
 *            loads: [{argv0, ended_early, exit_code}]}
 *   kexec {kernel, initrd, cmdline}
 *        loads the kernel with kexec -l, answers ok, restores knobs, and
 *        executes it (kexec -e); the controller then waits for a new banner.
 *   shutdown                   -> restores knobs, answers, exits
 *
 * While a workload runs the agent watches its input: EOF (the controller died)
 * kills the workload and the loads, restores the knobs and exits.
 */
#include "harness/agent/agent.h"

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/agent/knobs.h"
#include "harness/util/proc.h"
#include "harness/agent/protocol.h"
#include "harness/util/strbuf.h"
#include "harness/agent/sysinfo.h"

#ifndef SCHEDLAB_VERSION
#define SCHEDLAB_VERSION "unknown"
#endif

static volatile int stop_flag;

/* what the agent holds for the whole connection */
struct agent_state {
	const struct agent_opts *o;
	const char *root;       /* o->root or "" */
	char *boot_id;
	struct knobs knobs;     /* the undo stack of every knob change */
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

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
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

static json_t *do_exec(struct agent_state *st, json_t *args, struct strbuf *err)
{
	const struct agent_opts *o = st->o;
	const char *root = st->root;
	struct strvec argv = STRVEC_INIT;
	json_t *res = NULL;
	char dir[] = "/tmp/schedlab-run-XXXXXX";
	int have_dir = 0;
	struct child *loads = NULL;
	struct strvec *lav = NULL;
	size_t nloads = 0, nlav = 0;
	int knobs_before = knob_pending(&st->knobs);

	if (!argv_of(json_object_get(args, "argv"), &argv, err, "exec"))
		goto out;
	double timeout = json_number_value(json_object_get(args, "timeout_s"));
	if (timeout <= 0)
		timeout = 3600;
	size_t out_max = (size_t)json_integer_value(json_object_get(args, "out_max"));
	if (!out_max)
		out_max = 4 << 20;
	if (!mkdtemp(dir)) {
		strbuf_addf(err, "cannot create a run directory under /tmp: %s", strerror(errno));
		goto out;
	}
	have_dir = 1;

	res = json_object();
	/* schedstat before */
	int want_ss = json_is_true(json_object_get(args, "schedstat"));
	struct strbuf ss = STRBUF_INIT;
	char *sspath = xstrfmt("%s/proc/schedstat", root);
	if (want_ss) {
		int changed = 0;
		struct strbuf e = STRBUF_INIT;
		if (enable_schedstats(&st->knobs, &changed, &e))
			json_object_set_new(res, "schedstat_error", json_string(e.buf));
		strbuf_release(&e);
		if (!strbuf_read_file(&ss, sspath, 1 << 22))
			json_object_set_new(res, "schedstat_before", json_string(ss.buf));
	}

	/* background loads */
	json_t *larr = json_object_get(args, "load");
	json_t *lres = json_array();
	if (json_is_array(larr) && json_array_size(larr)) {
		nloads = json_array_size(larr);
		loads = xcalloc(nloads, sizeof(*loads));
		nlav = nloads;
		lav = xcalloc(nlav, sizeof(*lav));
		for (size_t i = 0; i < nloads; i++) {
			struct child c = CHILD_INIT;
			loads[i] = c;
			if (!argv_of(json_object_get(json_array_get(larr, i), "argv"), &lav[i], err,
				     "load")) {
				nloads = i;
				json_decref(lres);
				lres = NULL;
				goto stop_loads_fail;
			}
			loads[i].argv = strvec_argv(&lav[i]);
			loads[i].dir = dir;
			loads[i].in = loads[i].out = loads[i].err = PROC_NULL;
			loads[i].new_pgrp = 1;
			if (proc_start(&loads[i], err)) {
				strbuf_addstr(err, " (background load)");
				nloads = i;
				json_decref(lres);
				lres = NULL;
				goto stop_loads_fail;
			}
		}
		double warm = json_number_value(json_object_get(args, "load_warmup_s"));
		if (!json_object_get(args, "load_warmup_s"))
			warm = 1;
		if (warm > 0)
			usleep((useconds_t)(warm * 1e6));
	}

	struct child c = CHILD_INIT;
	c.argv = strvec_argv(&argv);
	c.dir = dir;
	c.in = PROC_NULL;
	c.out = PROC_PIPE;
	c.err = PROC_PIPE;
	c.new_pgrp = 1;
	struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT;
	struct proc_result pr;
	int rr = proc_run(&c, timeout, &out, out_max, &errout, 64 << 10, o->in_fd, &stop_flag,
			  &pr, err);
	if (rr && !pr.wall_s) {
		/* could not start: the message names the tool */
		strbuf_release(&out);
		strbuf_release(&errout);
		json_decref(lres);
		lres = NULL;
		goto stop_loads_fail;
	}
	json_object_set_new(res, "exit_code", json_integer(pr.exit_code));
	json_object_set_new(res, "signal", json_integer(pr.term_signal));
	json_object_set_new(res, "timed_out", json_boolean(pr.timed_out));
	json_object_set_new(res, "wall_s", json_real(pr.wall_s));
	json_object_set_new(res, "stdout", json_stringn(out.buf, out.len));
	json_object_set_new(res, "stderr", json_stringn(errout.buf, errout.len));
	if (rr)
		json_object_set_new(res, "aborted", json_string(err->buf));
	strbuf_release(&out);
	strbuf_release(&errout);

	if (want_ss) {
		strbuf_reset(&ss);
		if (!strbuf_read_file(&ss, sspath, 1 << 22))
			json_object_set_new(res, "schedstat_after", json_string(ss.buf));
	}

	/* collect requested files */
	json_t *files = json_object();
	json_t *fl = json_object_get(args, "files");
	size_t i;
	json_t *fv;
	json_array_foreach(fl, i, fv) {
		const char *name = json_string_value(fv);
		if (!name || strchr(name, '/'))
			continue;
		char *p = xstrfmt("%s/%s", dir, name);
		struct strbuf fb = STRBUF_INIT;
		if (!strbuf_read_file(&fb, p, 64 << 20))
			json_object_set_new(files, name, json_stringn(fb.buf, fb.len));
		strbuf_release(&fb);
		free(p);
	}
	json_object_set_new(res, "files", files);

	for (size_t k = 0; k < nloads; k++) {
		int st = 0;
		int ended = waitpid(loads[k].pid, &st, WNOHANG) == loads[k].pid;
		if (ended)
			loads[k].pid = -1;
		else
			proc_stop(&loads[k], 1.0);
		if (lres)
			json_array_append_new(lres, json_pack("{s:s,s:b,s:i}", "argv0", loads[k].argv[0],
							      "ended_early", ended, "exit_code",
							      ended && WIFEXITED(st) ? WEXITSTATUS(st) : -1));
	}
	if (lres && res)
		json_object_set_new(res, "loads", lres);
	goto cleanup;
stop_loads_fail:
	for (size_t k = 0; k < nloads; k++)
		proc_stop(&loads[k], 1.0);
	json_decref(res);
	res = NULL;
cleanup:
	for (size_t k = 0; k < nlav; k++)
		strvec_clear(&lav[k]);
	free(lav);
	free(loads);
	/* undo what this run changed (sched_schedstats) */
	if (knob_pending(&st->knobs) > knobs_before) {
		struct strbuf e = STRBUF_INIT;
		knob_restore_to(&st->knobs, knobs_before, &e);
		if (e.len && res)
			json_object_set_new(res, "restore_error", json_string(e.buf));
		strbuf_release(&e);
	}
	free(sspath);
	strbuf_release(&ss);
out:
	if (have_dir)
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	strvec_clear(&argv);
	return res;
}

static int do_kexec(const struct agent_opts *o, json_t *args, struct strbuf *err)
{
	const char *kernel = json_string_value(json_object_get(args, "kernel"));
	const char *initrd = json_string_value(json_object_get(args, "initrd"));
	const char *cmdline = json_string_value(json_object_get(args, "cmdline"));
	if (!kernel || !cmdline) {
		strbuf_addstr(err, "kexec: needs kernel and cmdline");
		return -1;
	}
	struct strvec av = STRVEC_INIT;
	strvec_push(&av, "kexec");
	strvec_push(&av, "-l");
	strvec_push(&av, "-i"); /* --no-checks: under TCG the checksums cost seconds */
	strvec_push(&av, kernel);
	if (initrd)
		strvec_pushf(&av, "--initrd=%s", initrd);
	strvec_pushf(&av, "--append=%s", cmdline);
	struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT;
	struct proc_result pr;
	int r = proc_capture(strvec_argv(&av), 120, &out, &eo, &pr, err);
	if (!r && pr.exit_code != 0) {
		strbuf_addf(err, "kexec -l failed (exit %d): %s", pr.exit_code, eo.buf);
		r = -1;
	}
	strvec_clear(&av);
	strbuf_release(&out);
	strbuf_release(&eo);
	(void)o;
	return r;
}

static void restore_on_exit(struct agent_state *st)
{
	struct strbuf e = STRBUF_INIT;
	if (knob_restore_all(&st->knobs, &e))
		fprintf(stderr, "schedlab-agent: %s\n", e.buf);
	strbuf_release(&e);
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

int agent_serve(const struct agent_opts *o)
{
	struct agent_state state = { .o = o, .root = root_of(o) };
	struct agent_state *st = &state;
	const char *root = st->root;
	knobs_init(&st->knobs, root);
	path_prepend_self();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	char *boot_id = read_boot_id(root);
	json_t *banner = json_pack("{s:s,s:i,s:s,s:s,s:i}", "agent", "schedlab", "proto",
				   AGENT_PROTO, "version", SCHEDLAB_VERSION, "boot_id", boot_id,
				   "pid", (int)getpid());
	proto_write_json(o->out_fd, banner);
	json_decref(banner);

	struct strbuf rbuf = STRBUF_INIT, line = STRBUF_INIT;
	int status = 0;
	for (;;) {
		if (stop_flag)
			break;
		if (proto_read_line(o->in_fd, &rbuf, &line, 0.5)) {
			if (errno == ETIMEDOUT || errno == EINTR)
				continue;
			break; /* EOF: the controller is gone */
		}
		json_error_t jerr;
		json_t *req = json_loads(line.buf, 0, &jerr);
		if (!req)
			continue; /* noise on a serial line */
		json_t *id = json_object_get(req, "id");
		const char *op = json_string_value(json_object_get(req, "op"));
		json_t *args = json_object_get(req, "args");
		json_t *result = NULL;
		struct strbuf err = STRBUF_INIT;
		int quit = 0, then_kexec = 0;
		if (!id || !op) {
			strbuf_addstr(&err, "request without id or op");
		} else if (!strcmp(op, "hello")) {
			result = json_pack("{s:s,s:i,s:s,s:i,s:i}", "version", SCHEDLAB_VERSION, "proto",
					   AGENT_PROTO, "boot_id", boot_id, "pid", (int)getpid(),
					   "uid", (int)getuid());
		} else if (!strcmp(op, "sysinfo")) {
			result = sysinfo_collect(root);
		} else if (!strcmp(op, "schedstat")) {
			struct strbuf ss = STRBUF_INIT;
			char *p = xstrfmt("%s/proc/schedstat", root);
			if (!strbuf_read_file(&ss, p, 1 << 22))
				result = json_pack("{s:s}", "text", ss.buf);
			else
				strbuf_addf(&err, "/proc/schedstat: %s", strerror(errno));
			free(p);
			strbuf_release(&ss);
		} else if (!strcmp(op, "knob_set")) {
			const char *path = json_string_value(json_object_get(args, "path"));
			const char *value = json_string_value(json_object_get(args, "value"));
			if (!knob_set(&st->knobs, path ? path : "", value ? value : "", &result, &err)) {
				if (!result)
					result = json_object();
				json_object_set_new(result, "depth",
						    json_integer(knob_pending(&st->knobs)));
			}
		} else if (!strcmp(op, "knob_get")) {
			const char *path = json_string_value(json_object_get(args, "path"));
			struct strbuf v = STRBUF_INIT;
			if (!knob_get(&st->knobs, path ? path : "", &v, &err))
				result = json_pack("{s:s}", "value", v.buf);
			strbuf_release(&v);
		} else if (!strcmp(op, "knob_restore")) {
			int keep = (int)json_integer_value(json_object_get(args, "keep"));
			int n = knob_pending(&st->knobs) - keep;
			if (!knob_restore_to(&st->knobs, keep, &err))
				result = json_pack("{s:i}", "restored", n > 0 ? n : 0);
		} else if (!strcmp(op, "exec")) {
			result = do_exec(st, args, &err);
		} else if (!strcmp(op, "kexec")) {
			if (!do_kexec(o, args, &err)) {
				result = json_pack("{s:s}", "status", "executing");
				then_kexec = 1;
			}
		} else if (!strcmp(op, "shutdown")) {
			result = json_object();
			quit = 1;
		} else {
			strbuf_addf(&err, "unknown op \"%s\" (valid: hello, sysinfo, schedstat, "
				    "knob_set, knob_get, knob_restore, exec, kexec, shutdown)", op);
		}
		json_t *resp = result
			? json_pack("{s:O,s:b,s:o}", "id", id ? id : json_null(), "ok", 1, "result", result)
			: json_pack("{s:O,s:b,s:s}", "id", id ? id : json_null(), "ok", 0, "error",
				    err.len ? err.buf : "failed");
		if (proto_write_json(o->out_fd, resp))
			quit = 1;
		json_decref(resp);
		json_decref(req);
		strbuf_release(&err);
		if (then_kexec) {
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
		if (quit)
			break;
	}
	if (stop_flag)
		status = 128 + stop_flag;
	restore_on_exit(st);
	knobs_release(&st->knobs);
	free(boot_id);
	strbuf_release(&rbuf);
	strbuf_release(&line);
	return status;
}
