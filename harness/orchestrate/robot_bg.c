/*
 * An alert group's bisection started in the background (robot_bg.h): the
 * refusals of `alerts bisect` asked first (robot_bisect_alert_check), then
 * the command itself started as a detached child through proc.h, its
 * record (group-G.json) and output (group-G.log) in the starter's folder,
 * its end recorded when it is reaped, or as unknown when a child of an
 * earlier starter is found gone.
 */
#include "harness/orchestrate/robot_bg.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/orchestrate/robot_act.h"
#include "harness/util/numfmt.h"
#include "harness/util/privdir.h"
#include "harness/util/proc.h"

struct bg_kid {
	int64_t gid;
	struct child c;
};

struct robot_bg {
	char *dbpath, *out_dir, *dir;
	size_t bisect_minutes;
	int writable;          /* opened to start: records are written */
	int dfd;               /* the folder as checked; -1: not (yet) there */
	struct bg_kid *kids;
	size_t nkids;
};

void robot_bg_job_free(struct robot_bg_job *j)
{
	free(j->started_at);
	free(j->ended_at);
	free(j->how);
	free(j->log_path);
	free(j->command);
	memset(j, 0, sizeof(*j));
}

int robot_bg_open(const struct robot_bg_opts *o, int create, struct robot_bg **out,
		  struct strbuf *err)
{
	int dfd;
	int rc = privdir_open(o->state_dir, create, 077, &dfd, err);
	if (rc < 0)
		return -1;
	struct robot_bg *bg = xcalloc(1, sizeof(*bg));
	bg->dbpath = xstrdup(o->dbpath);
	bg->out_dir = xstrdup(o->out_dir);
	bg->dir = xstrdup(o->state_dir);
	bg->bisect_minutes = o->bisect_minutes;
	bg->writable = create;
	bg->dfd = dfd;
	*out = bg;
	return 0;
}

/* the folder, checked now (owner, mode: it may have been chmod'ed since the
 * start); a reader opens it here when it appeared after the start. -1 when
 * there is none to use (a reader's missing or refused folder: nothing shown) */
static int bg_dir(struct robot_bg *bg, struct strbuf *err)
{
	if (bg->dfd < 0 && !bg->writable) {
		struct strbuf why = STRBUF_INIT;
		int rc = privdir_open(bg->dir, 0, 077, &bg->dfd, &why);
		if (rc < 0)
			strbuf_addstr(err, why.buf);
		strbuf_release(&why);
		if (rc)
			return -1;
	}
	if (bg->dfd < 0) {
		strbuf_addf(err, "%s: not open", bg->dir);
		return -1;
	}
	return privdir_check(bg->dfd, bg->dir, 077, err) ? -1 : bg->dfd;
}

void robot_bg_close(struct robot_bg *bg)
{
	if (!bg)
		return;
	free(bg->dbpath);
	free(bg->out_dir);
	free(bg->dir);
	free(bg->kids);
	if (bg->dfd >= 0)
		close(bg->dfd);
	free(bg);
}

/* the record as stored, NULL when there is none, or when it or the folder
 * is not this user's alone (never read from a folder that was not checked) */
static json_t *record_load(struct robot_bg *bg, int64_t gid)
{
	struct strbuf err = STRBUF_INIT;
	char name[64];
	snprintf(name, sizeof(name), "group-%lld.json", (long long)gid);
	int dfd = bg_dir(bg, &err);
	int fd = dfd < 0 ? -1 : privdir_openat(dfd, bg->dir, name, O_RDONLY, 0, &err);
	json_t *r = NULL;
	if (fd >= 0) {
		r = json_loadfd(fd, 0, NULL);
		close(fd);
	}
	if (fd < 0 && errno != ENOENT && err.len)
		fprintf(stderr, "schedlab: %s\n", err.buf);
	strbuf_release(&err);
	/* a record of another group is no record of this one */
	if (r && (!json_is_object(r) ||
		  json_integer_value(json_object_get(r, "group")) != (json_int_t)gid)) {
		json_decref(r);
		r = NULL;
	}
	return r;
}

static int record_save(struct robot_bg *bg, int64_t gid, json_t *r, struct strbuf *err)
{
	char name[64];
	snprintf(name, sizeof(name), "group-%lld.json", (long long)gid);
	int dfd = bg_dir(bg, err);
	if (dfd < 0)
		return -1;
	char *t = json_dumps(r, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	int rc = t ? privdir_write(dfd, bg->dir, name, t, strlen(t), err) : -1;
	free(t);
	return rc;
}

/* the end of the group's latest start, written into its record */
static json_t *record_end(struct robot_bg *bg, int64_t gid, int exit_code, int sig,
			  const char *how)
{
	json_t *r = record_load(bg, gid);
	if (!r || !json_is_null(json_object_get(r, "ended_at")))
		return r;
	char *now = utc_now();
	json_object_set_new(r, "ended_at", json_string(now));
	free(now);
	json_object_set_new(r, "exit_code", exit_code >= 0 ? json_integer(exit_code) : json_null());
	json_object_set_new(r, "signal", sig ? json_integer(sig) : json_null());
	json_object_set_new(r, "how", json_string(how));
	struct strbuf err = STRBUF_INIT;
	if (bg->writable)
		record_save(bg, gid, r, &err);
	strbuf_release(&err);
	return r;
}

void robot_bg_reap(struct robot_bg *bg)
{
	for (size_t i = 0; i < bg->nkids;) {
		int st = 0;
		int r = proc_try_wait(&bg->kids[i].c, &st);
		if (r == 0) {
			i++;
			continue;
		}
		if (r == 1) {
			char how[64];
			if (WIFEXITED(st))
				snprintf(how, sizeof(how), "exit %d", WEXITSTATUS(st));
			else
				snprintf(how, sizeof(how), "killed by signal %d (%s)", WTERMSIG(st),
					 strsignal(WTERMSIG(st)));
			json_decref(record_end(bg, bg->kids[i].gid,
					       WIFEXITED(st) ? WEXITSTATUS(st) : -1,
					       WIFSIGNALED(st) ? WTERMSIG(st) : 0, how));
		}
		/* ended (or no longer ours to wait for): out of the list */
		bg->kids[i] = bg->kids[--bg->nkids];
	}
}

static int is_kid(const struct robot_bg *bg, int64_t gid)
{
	for (size_t i = 0; i < bg->nkids; i++)
		if (bg->kids[i].gid == gid)
			return 1;
	return 0;
}

static char *jdup(const json_t *r, const char *k)
{
	const char *v = json_string_value(json_object_get(r, k));
	return v ? xstrdup(v) : NULL;
}

int robot_bg_get(struct robot_bg *bg, int64_t gid, struct robot_bg_job *job)
{
	memset(job, 0, sizeof(*job));
	json_t *r = record_load(bg, gid);
	if (!r)
		return 0;
	if (json_is_null(json_object_get(r, "ended_at")) && !is_kid(bg, gid)) {
		/* started by an earlier starter of this folder: running while its
		   pid is that process */
		json_int_t pid = json_integer_value(json_object_get(r, "pid"));
		const char *start = json_string_value(json_object_get(r, "pid_start"));
		if (!proc_alive((pid_t)pid, start ? strtoull(start, NULL, 10) : 0)) {
			/* written back when this process may write there */
			json_decref(r);
			r = record_end(bg, gid, -1, 0, "its exit status is unknown: it ended while "
						  "no schedlab serve of this folder was there to "
						  "see it; the outcome is the alert's, as stored");
			if (!r)
				return 0;
		}
	}
	job->group = gid;
	job->alert = json_integer_value(json_object_get(r, "alert"));
	job->pid = (long)json_integer_value(json_object_get(r, "pid"));
	job->started_at = jdup(r, "started_at");
	job->ended_at = jdup(r, "ended_at");
	job->running = !job->ended_at;
	json_t *x = json_object_get(r, "exit_code");
	job->exit_code = json_is_integer(x) ? (int)json_integer_value(x) : -1;
	job->term_signal = (int)json_integer_value(json_object_get(r, "signal"));
	job->how = jdup(r, "how");
	/* the log's place is the folder's and the group's, never the record's */
	job->log_path = xstrfmt("%s/group-%lld.log", bg->dir, (long long)gid);
	job->command = jdup(r, "command");
	job->log_from = (long long)json_integer_value(json_object_get(r, "log_from"));
	json_decref(r);
	return 1;
}

char *robot_bg_log_tail(struct robot_bg *bg, const struct robot_bg_job *job, size_t max)
{
	struct strbuf err = STRBUF_INIT;
	char name[64];
	snprintf(name, sizeof(name), "group-%lld.log", (long long)job->group);
	int dfd = bg_dir(bg, &err);
	int fd = dfd < 0 ? -1 : privdir_openat(dfd, bg->dir, name, O_RDONLY, 0, &err);
	strbuf_release(&err);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return xstrdup("");
	}
	off_t from = job->log_from > 0 && job->log_from <= st.st_size ? job->log_from : 0;
	int cut = 0;
	if (st.st_size - from > (off_t)max) {
		from = st.st_size - (off_t)max;
		cut = 1;
	}
	struct strbuf sb = STRBUF_INIT;
	char buf[8192];
	ssize_t n;
	while ((size_t)sb.len < max && (n = pread(fd, buf, sizeof(buf), from + (off_t)sb.len)) > 0)
		strbuf_add(&sb, buf, (size_t)n > max - sb.len ? max - sb.len : (size_t)n);
	close(fd);
	const char *nl = cut ? memchr(sb.buf, '\n', sb.len) : NULL;
	if (nl && nl + 1 < sb.buf + sb.len) {
		char *t = xstrdup(nl + 1);
		strbuf_release(&sb);
		return t;
	}
	return strbuf_detach(&sb, NULL);
}

/* one line of argv for people (the log's header, the page) */
static char *argv_line(const char *const *argv)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		int plain = *argv[i] && strspn(argv[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
						       "QRSTUVWXYZ0123456789-_=./:,+@%") ==
						  strlen(argv[i]);
		if (plain) {
			strbuf_addstr(&sb, argv[i]);
			continue;
		}
		strbuf_addch(&sb, '\'');
		for (const char *p = argv[i]; *p; p++)
			if (*p == '\'')
				strbuf_addstr(&sb, "'\\''");
			else
				strbuf_addch(&sb, *p);
		strbuf_addch(&sb, '\'');
	}
	return strbuf_detach(&sb, NULL);
}

enum robot_bg_start robot_bg_start(struct robot_bg *bg, struct db *db, int64_t alert,
				   struct robot_bg_job *job, struct strbuf *err)
{
	memset(job, 0, sizeof(*job));
	robot_bg_reap(bg);
	/* one starter at a time in this folder: the check and the start are
	   one step */
	/* the folder as checked at the start, looked at again; its lock on an
	   open file description of its own */
	int held = bg_dir(bg, err);
	if (held < 0)
		return ROBOT_BG_FAILED;
	int dfd = openat(held, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || flock(dfd, LOCK_EX)) {
		strbuf_addf(err, "%s: %s", bg->dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return ROBOT_BG_FAILED;
	}
	enum robot_bg_start rc = ROBOT_BG_FAILED;
	int64_t gid = 0;
	int logfd = -1;
	struct strbuf why = STRBUF_INIT;
	struct strvec av = STRVEC_INIT;
	char *logpath = NULL, *cmd = NULL, *now = NULL;
	json_t *r = NULL;
	if (robot_bisect_alert_check(db, alert, bg->out_dir, &gid, &why)) {
		/* a group that is busy says so first: its alert is bisecting,
		   which the life cycle lets a person continue, so the refusal
		   below would be about something else */
		if (gid > 0 && robot_bg_get(bg, gid, job) && job->running)
			goto busy;
		robot_bg_job_free(job);
		strbuf_addstr(err, why.buf);
		rc = ROBOT_BG_REFUSED;
		goto out;
	}
	if (robot_bg_get(bg, gid, job) && job->running)
		goto busy;
	robot_bg_job_free(job);
	logpath = xstrfmt("%s/group-%lld.log", bg->dir, (long long)gid);
	char logname[64];
	snprintf(logname, sizeof(logname), "group-%lld.log", (long long)gid);
	logfd = privdir_openat(held, bg->dir, logname, O_WRONLY | O_CREAT | O_APPEND, 0600, err);
	struct stat st;
	if (logfd < 0)
		goto out;
	if (fstat(logfd, &st)) {
		strbuf_addf(err, "%s: %s", logpath, strerror(errno));
		goto out;
	}
	strvec_pushv(&av, (const char *const[]){ robot_self(), "alerts", "bisect", NULL });
	strvec_pushf(&av, "%lld", (long long)alert);
	strvec_pushv(&av, (const char *const[]){ "--db", bg->dbpath, "--out-dir", bg->out_dir,
						 NULL });
	if (bg->bisect_minutes)
		strvec_pushf(&av, "--bisect-minutes=%zu", bg->bisect_minutes);
	cmd = argv_line(strvec_argv(&av));
	now = utc_now();
	char *head = xstrfmt("==== %s: %s\n", now, cmd);
	ssize_t hw = write(logfd, head, strlen(head));
	free(head);
	if (hw < 0) {
		strbuf_addf(err, "%s: %s", logpath, strerror(errno));
		goto out;
	}
	struct child c = CHILD_INIT;
	c.argv = strvec_argv(&av);
	c.in = PROC_NULL;
	c.out = PROC_FD;
	c.out_src = logfd;
	c.stderr_to_stdout = 1;
	c.new_session = 1;
	/* not the target lock of whoever started this process: the bisection
	   takes its own */
	const char *env[] = { "SCHEDLAB_TARGET_LOCK_FD=", NULL };
	c.env = env;
	if (proc_start(&c, err))
		goto out;
	bg->kids = xrealloc(bg->kids, (bg->nkids + 1) * sizeof(*bg->kids));
	bg->kids[bg->nkids++] = (struct bg_kid){ gid, c };
	char start[32];
	snprintf(start, sizeof(start), "%llu", proc_start_time(c.pid));
	json_t *argv = json_array();
	for (size_t i = 0; c.argv[i]; i++)
		json_array_append_new(argv, json_string(c.argv[i]));
	r = json_pack("{s:I,s:I,s:i,s:s,s:s,s:o,s:s,s:s,s:I,s:n,s:n,s:n,s:n}", "group",
		      (json_int_t)gid, "alert", (json_int_t)alert, "pid", (int)c.pid, "pid_start",
		      start, "started_at", now, "argv", argv, "command", cmd, "log", logpath,
		      "log_from", (json_int_t)st.st_size, "ended_at", "exit_code", "signal", "how");
	/* the child runs: a record that cannot be written is said, the
	   bisection goes on (it is reaped all the same) */
	if (!r || record_save(bg, gid, r, err)) {
		strbuf_addf(err, " (bisection pid %d started all the same)", (int)c.pid);
		goto out;
	}
	robot_bg_get(bg, gid, job);
	rc = ROBOT_BG_STARTED;
	goto out;
busy:
	strbuf_addf(err, "alert group %lld: the bisection started from this page at %s (alert "
			 "%lld, pid %ld) is still running; wait for its end (its log: %s)",
		    (long long)gid, job->started_at ? job->started_at : "?", (long long)job->alert,
		    job->pid, job->log_path ? job->log_path : "?");
	robot_bg_job_free(job);
	rc = ROBOT_BG_BUSY;
out:
	json_decref(r);
	if (logfd >= 0)
		close(logfd);
	flock(dfd, LOCK_UN);
	close(dfd);
	strvec_clear(&av);
	strbuf_release(&why);
	free(logpath);
	free(cmd);
	free(now);
	return rc;
}
