/*
 * The regression robot's actions (robot_act.h): a night (judge, report,
 * bisection queue, the hook's calls), bisecting an alert group with a
 * child `schedlab bisect` under a wall-time budget and writing its outcome
 * back, a one-commit culprit, counting a range's commits, and the site's
 * hook. Moved here from harness/cli (robot_cli.c, cmd_nightly.c) so that
 * the commands only parse and print.
 */
#include "harness/orchestrate/robot_act.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/alert_store.h"
#include "db/bisect_store.h"
#include "db/culprit.h"
#include "db/night_store.h"
#include "harness/agent/preempt_offer.h"
#include "harness/orchestrate/kgit.h"
#include "harness/orchestrate/tlock.h"
#include "harness/results/robot.h"
#include "harness/util/atomicfile.h"
#include "harness/util/fault.h"
#include "harness/util/privdir.h"
#include "harness/util/proc.h"
#include "harness/util/tag.h"

const char *robot_self(void)
{
	/* read at every call: a long-lived process (serve, a nightly) whose
	   file was replaced by a new build or package sees "PATH (deleted)";
	   its children then run this same program through /proc/self/exe
	   (the fork's exe is ours), never a path that is not there */
	static char self[PATH_MAX];
	static const char deleted[] = " (deleted)";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return "schedlab";
	self[n] = '\0';
	size_t dl = sizeof(deleted) - 1;
	if ((size_t)n > dl && !strcmp(self + n - dl, deleted))
		return "/proc/self/exe";
	return self;
}

int robot_count_commits(void *ctx, const char *git_dir, const char *good, const char *bad)
{
	(void)ctx;
	char *range = xstrfmt("%s..%s", good, bad);
	const char *args[] = { "-C", git_dir, "rev-list", "--count", range, "--", NULL };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	int n = -1;
	if (!kgit_git(args, 120, NULL, &out, &err)) {
		char *end;
		long v = strtol(out.buf, &end, 10);
		if (end != out.buf && v >= 0 && v < INT_MAX)
			n = (int)v;
	}
	free(range);
	strbuf_release(&out);
	strbuf_release(&err);
	return n;
}

/* "git log -1 --format=F commit" in dir, or "": asked as UTF-8 (a
 * repository may say i18n.logOutputEncoding ISO-8859-1); bytes that are
 * not UTF-8 all the same are kept by the culprit's encoder (culprit.h) */
static char *git_field(const char *dir, const char *commit, const char *fmt)
{
	char *f = xstrfmt("--format=%s", fmt);
	const char *args[] = { "-C", dir, "log", "-1", "--encoding=UTF-8", f, commit, "--",
			       NULL };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	if (kgit_git(args, 60, NULL, &out, &err))
		strbuf_reset(&out);
	free(f);
	strbuf_release(&err);
	return strbuf_detach(&out, NULL);
}

/* the group's first open alert, a regression before an improvement */
static int lead_alert(struct db *db, int64_t gid, struct db_alert *lead, struct strbuf *err)
{
	struct db_alert *al;
	size_t n;
	struct db_alert_filter f = { .status = ALERT_NSTATES, .group_id = gid };
	if (db_alerts_list(db, &f, &al, &n)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	size_t pick = n;
	for (size_t i = 0; i < n && pick == n; i++)
		if (!strcmp(al[i].kind, "regression"))
			pick = i;
	if (pick == n && n)
		pick = 0;
	if (pick == n) {
		strbuf_addf(err, "alert group %lld has no open alert to bisect", (long long)gid);
		db_alerts_free(al, n);
		return -1;
	}
	*lead = al[pick];
	memset(&al[pick], 0, sizeof(al[pick]));
	db_alerts_free(al, n);
	return 0;
}

/* the robot moves the group's alerts in state `from` (ALERT_NSTATES: any
 * open one) that the life cycle lets it move to `to` (the store decides) */
static int move_group(struct db *db, int64_t gid, enum alert_state from, enum alert_state to,
		      const char *note, struct strbuf *err)
{
	if (db_alert_group_move(db, gid, (int)from, to, ALERT_BY_ROBOT, note, 0, NULL)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	return 0;
}

/* the plan of the bad session narrowed to the alert's configuration and
 * workload, its git kernel without what `schedlab run` added (commit,
 * describe, image): what the bisection runs at each commit */
static char *narrowed_plan(struct db *db, const struct db_alert_group *g,
			   const struct db_alert *lead, struct strbuf *err)
{
	char *pj = NULL, *ppath = NULL, *ptag = NULL, *pstatus = NULL;
	int rc = db_session_load(db, g->bad_session, &pj, &ppath, &ptag, &pstatus);
	json_t *plan = rc || !pj ? NULL : json_loads(pj, 0, NULL);
	free(pj);
	free(ppath);
	free(ptag);
	free(pstatus);
	if (!json_is_object(plan)) {
		strbuf_addf(err, "session %lld: its stored plan cannot be read",
			    (long long)g->bad_session);
		json_decref(plan);
		return NULL;
	}
	json_t *key = json_loads(lead->series_key, 0, NULL);
	/* the stored model (rt, rt-lazy on an RT kernel) is asked for as its
	   mode (full, lazy: preempt_offer.h) */
	const char *preempt =
		preempt_model_mode(json_string_value(json_object_get(key, "preempt")));
	const char *wl = lead->workload;
	const char *runwl = json_string_value(json_object_get(key, "workload"));
	const char *knobs = json_string_value(json_object_get(key, "knobs"));
	json_t *m = json_object_get(plan, "matrix");
	json_t *k = json_object_get(m, "kernel");
	if (json_is_array(k)) {
		json_t *git = NULL;
		for (size_t i = 0; i < json_array_size(k) && !git; i++)
			if (json_is_object(json_array_get(k, i)) &&
			    json_object_get(json_array_get(k, i), "git"))
				git = json_array_get(k, i);
		if (git) {
			json_incref(git);
			json_object_set_new(m, "kernel", git);
			k = git;
		}
	}
	if (json_is_object(k))
		for (const char *const *d = (const char *const[]){ "commit", "describe", "image",
								    NULL }; *d; d++)
			json_object_del(k, *d);
	json_t *pre = json_object_get(m, "preempt");
	if (preempt && *preempt && json_is_array(pre)) {
		json_t *one = json_array();
		size_t i;
		json_t *v;
		json_array_foreach(pre, i, v)
			if (json_is_string(v) && !strcmp(json_string_value(v), preempt))
				json_array_append(one, v);
		if (json_array_size(one))
			json_object_set(m, "preempt", one);
		json_decref(one);
	}
	json_t *kn = json_object_get(m, "knobs");
	if (knobs && json_is_array(kn)) {
		json_t *want = json_loads(knobs, 0, NULL), *one = json_array();
		size_t i;
		json_t *v;
		json_array_foreach(kn, i, v)
			if (want && json_equal(v, want))
				json_array_append(one, v);
		if (json_array_size(one))
			json_object_set(m, "knobs", one);
		json_decref(one);
		json_decref(want);
	}
	json_t *ws = json_object_get(plan, "workloads");
	if (json_is_array(ws)) {
		json_t *one = json_array();
		size_t i;
		json_t *v;
		const char *t = runwl && *runwl ? runwl : wl;
		json_array_foreach(ws, i, v)
			if (json_is_string(json_object_get(v, "type")) &&
			    !strcmp(json_string_value(json_object_get(v, "type")), t))
				json_array_append(one, v);
		if (json_array_size(one))
			json_object_set(plan, "workloads", one);
		json_decref(one);
	}
	const char *name = json_string_value(json_object_get(plan, "name"));
	char *nm = xstrfmt("%s (bisect of alert group %lld)", name ? name : "nightly",
			   (long long)g->id);
	json_object_set_new(plan, "name", json_string(nm));
	free(nm);
	char *text = json_dumps(plan, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(plan);
	json_decref(key);
	return text;
}

/* the culprit a bisection found, stored with the one encoder (culprit.h) */
static char *culprit_json(struct db *db, const struct db_alert_group *g,
			  const struct db_bisect *b, json_t *result)
{
	struct db_culprit c;
	db_culprit_init(&c);
	const char *commit = json_string_value(json_object_get(result, "first_bad"));
	const char *subject = json_string_value(json_object_get(result, "subject"));
	c.commit = xstrdup(commit ? commit : "");
	c.subject = subject ? xstrdup(subject) : git_field(g->git_dir, c.commit, "%s");
	c.author = git_field(g->git_dir, c.commit, "%an <%ae>");
	json_t *e = json_object_get(result, "effect");
	if (json_is_number(json_object_get(e, "change_pct")))
		c.change_pct = json_number_value(json_object_get(e, "change_pct"));
	json_t *ci = json_object_get(e, "ci_pct");
	if (json_array_size(ci) == 2) {
		c.ci_lo = json_number_value(json_array_get(ci, 0));
		c.ci_hi = json_number_value(json_array_get(ci, 1));
	}
	if (json_is_number(json_object_get(e, "p")))
		c.p = json_number_value(json_object_get(e, "p"));
	c.bisect_id = b->id;
	c.error_bound = b->alpha;
	struct db_bisect_step *st = NULL;
	size_t nst = 0;
	c.builds = c.boots = 0;
	if (!db_bisect_steps(db, b->id, &st, &nst)) {
		char *tag = xstrfmt("bisect-%lld", (long long)b->id);
		c.steps = xcalloc(nst + 1, sizeof(*c.steps));
		for (size_t i = 0; i < nst; i++) {
			json_t *d = st[i].detail ? json_loads(st[i].detail, 0, NULL) : NULL;
			const char *why = json_string_value(json_object_get(d, "skip"));
			c.steps[c.nsteps++] = (struct db_culprit_step){
				xstrdup(st[i].commit), xstrdup(st[i].role),
				xstrdup(st[i].verdict ? st[i].verdict : "pending"),
				xstrdup(why ? why : "") };
			json_decref(d);
			struct db_bisect_session *ss;
			size_t nss;
			if (!db_bisect_sessions(db, tag, st[i].commit, &ss, &nss)) {
				c.boots += (long)nss;
				db_bisect_sessions_free(ss, nss);
			}
		}
		free(tag);
		c.builds = (long)nst;
		db_bisect_steps_free(st, nst);
	}
	char *t = db_culprit_encode(&c);
	db_culprit_free(&c);
	return t;
}

/* the range holds one commit: it is the culprit without a bisection */
static int one_commit(struct db *db, const struct db_alert_group *g, const struct db_alert *lead,
		      struct strbuf *said, struct strbuf *err)
{
	struct db_culprit c;
	db_culprit_init(&c);
	c.commit = xstrdup(g->bad_commit);
	c.subject = git_field(g->git_dir, g->bad_commit, "%s");
	c.author = git_field(g->git_dir, g->bad_commit, "%an <%ae>");
	c.why = xstrdup("the range holds this one commit: no bisection needed");
	c.change_pct = isfinite(lead->change_pct) ? lead->change_pct : 0.0;
	c.builds = c.boots = 0;
	char *t = db_culprit_encode(&c);
	int rc = -1;
	if (!t)
		strbuf_addf(err, "alert group %lld: its culprit cannot be stored", (long long)g->id);
	else if (db_alert_group_set_result(db, g->id, t, NULL))
		strbuf_addstr(err, db_errmsg(db));
	else
		rc = 0;
	/* new -> bisecting -> culprit found: a bisection of one commit */
	if (!rc)
		rc = move_group(db, g->id, ALERT_NEW, ALERT_BISECTING, "one commit in the range",
				err);
	if (!rc)
		rc = move_group(db, g->id, ALERT_BISECTING, ALERT_CULPRIT,
				"the range's one commit", err);
	if (!rc)
		strbuf_addf(said, "alert group %lld: one commit in the range: %.12s (%s) is the "
			    "culprit\n", (long long)g->id, g->bad_commit, c.subject);
	free(t);
	db_culprit_free(&c);
	return rc;
}

/* the child's command line: schedlab bisect of the lead alert's metric
 * and series over the group's range, with the plan at `path` */
static void bisect_argv(struct strvec *av, const struct robot_bisect_opts *o,
			const struct db_alert_group *g, const struct db_alert *lead,
			const char *path)
{
	char *metric = xstrfmt("%s.%s", lead->workload, lead->metric);
	strvec_pushv(av, (const char *const[]){ robot_self(), "bisect", "--db", o->dbpath,
						 "--plan", path, "--good", g->good_commit, "--bad",
						 g->bad_commit, "--metric", metric, NULL });
	free(metric);
	if (lead->series_where && *lead->series_where)
		strvec_pushv(av, (const char *const[]){ "--where", lead->series_where, NULL });
	if (o->max_steps > 0)
		strvec_pushf(av, "--max-steps=%d", o->max_steps);
	if (o->threshold_pct > 0)
		strvec_pushf(av, "--threshold=%g", o->threshold_pct);
	if (o->session_runs > 0)
		strvec_pushf(av, "--session-runs=%d", o->session_runs);
	if (o->repetitions > 0)
		strvec_pushf(av, "--repetitions=%d", o->repetitions);
	if (o->quiet)
		strvec_push(av, "--quiet");
}

/* run the bisection child within the budget; its stdout and stderr
 * appended to the log (every call: what it printed, then why it stopped),
 * its stderr echoed. proc_exec's result */
static int run_bisect(const struct robot_bisect_opts *o, struct strvec *av, const char *logpath,
		      struct proc_result *res, struct strbuf *err)
{
	struct child c = CHILD_INIT;
	c.argv = strvec_argv(av);
	c.in = PROC_NULL;
	c.out = PROC_PIPE;
	c.err = PROC_PIPE;
	c.stop_sig = SIGINT;       /* bisect stores its session interrupted */
	c.stop_grace_s = 120;
	c.pdeathsig = SIGINT;
	const char *env[] = { tlock_child_env(o->lock_key), NULL };
	c.env = env[0] ? env : NULL;
	c.keep_fd = tlock_child_fd(o->lock_key);
	struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT;
	struct proc_io io = PROC_IO_INIT;
	io.timeout_s = o->budget_s;
	io.out = &out;
	io.errout = &errout;
	io.abort_flag = o->abort_flag;
	int prc = proc_exec(&c, &io, res, err);
	int saved = errno;
	int lfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *lf = lfd < 0 ? NULL : fdopen(lfd, "a");
	if (!lf && lfd >= 0)
		close(lfd);
	if (lf) {
		fputs(out.buf, lf);
		fputs(errout.buf, lf);
		fclose(lf);
	}
	if (!o->quiet)
		fputs(errout.buf, stderr);
	strbuf_release(&out);
	strbuf_release(&errout);
	errno = saved;
	return prc;
}

/* why a finished bisection named no commit (malloc'd) */
static char *unresolved_why(const struct db_bisect *b, json_t *result)
{
	const char *outcome = json_string_value(json_object_get(result, "outcome"));
	const char *msg = json_string_value(json_object_get(result, "message"));
	size_t left = json_array_size(json_object_get(result, "candidates"));
	long long bid = (long long)b->id;
	if (outcome && !strcmp(outcome, "max-steps"))
		return xstrfmt("budget spent: --max-steps %d reached with %zu candidates left "
			       "(bisection %lld)", b->max_steps, left, bid);
	if (outcome && !strcmp(outcome, "ambiguous"))
		return xstrfmt("skipped or unclear commits leave %zu candidates (bisection %lld)",
			       left, bid);
	if (outcome && !strcmp(outcome, "refused"))
		return xstrfmt("the ends do not differ when measured again: the change was not "
			       "reproduced (bisection %lld)", bid);
	return xstrfmt("bisection %lld %s: %s", bid, b->status, msg ? msg : "see its log");
}

/* the group moves to unresolved, with why */
static int unresolved(struct db *db, int64_t gid, const char *why, struct strbuf *said,
		      struct strbuf *err)
{
	db_alert_group_set_result(db, gid, NULL, why);
	strbuf_addf(said, "alert group %lld: unresolved: %s\n", (long long)gid, why);
	return move_group(db, gid, ALERT_BISECTING, ALERT_UNRESOLVED, why, err);
}

/* the ended bisection `bid` written back to group g: its culprit, or
 * unresolved with why */
static int bisect_outcome(struct db *db, const struct db_alert_group *g, int64_t bid,
			  int exit_code, const char *logpath, struct strbuf *said,
			  struct strbuf *err)
{
	struct db_bisect b;
	char idtxt[32];
	snprintf(idtxt, sizeof(idtxt), "%lld", (long long)bid);
	if (bid <= 0 || db_bisect_load(db, idtxt, &b)) {
		char *why = xstrfmt("bisect exited %d before a bisection was stored (see %s)",
				    exit_code, logpath);
		int rc = unresolved(db, g->id, why, said, err);
		free(why);
		return rc;
	}
	int rc;
	json_t *result = b.result ? json_loads(b.result, 0, NULL) : NULL;
	const char *outcome = json_string_value(json_object_get(result, "outcome"));
	if (exit_code == 0 && outcome && !strcmp(outcome, "found")) {
		const char *first = json_string_value(json_object_get(result, "first_bad"));
		const char *subject = json_string_value(json_object_get(result, "subject"));
		char *cj = culprit_json(db, g, &b, result);
		rc = db_alert_group_set_result(db, g->id, cj, NULL) ? -1 : 0;
		if (rc)
			strbuf_addstr(err, db_errmsg(db));
		char *note = xstrfmt("bisection %lld: %s", (long long)bid, first ? first : "?");
		if (!rc)
			rc = move_group(db, g->id, ALERT_BISECTING, ALERT_CULPRIT, note, err);
		if (!rc)
			strbuf_addf(said, "alert group %lld: culprit found by bisection %lld: %s (%s)\n",
				    (long long)g->id, (long long)bid, first ? first : "?",
				    subject ? subject : "");
		free(note);
		free(cj);
	} else {
		char *why = unresolved_why(&b, result);
		rc = unresolved(db, g->id, why, said, err);
		free(why);
	}
	json_decref(result);
	db_bisect_free(&b);
	return rc;
}

/* whether group gid's narrowed plan is in the out-dir (dfd, checked):
 * 1 when this user wrote it (it is used again: the same file, the same
 * bisection), 0 when there is none, -1 with why when it is there but a
 * link, not a regular file, or not this user's alone (never read, never
 * run: another user may have planted it) */
static int plan_file(int dfd, const char *dir, int64_t gid, struct strbuf *err)
{
	char name[64];
	snprintf(name, sizeof(name), "alert-group-%lld.json", (long long)gid);
	struct strbuf why = STRBUF_INIT;
	int fd = privdir_openat(dfd, dir, name, O_RDONLY, 0, &why);
	int rc = fd >= 0 ? 1 : errno == ENOENT ? 0 : -1;
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		strbuf_addstr(err, why.buf);
	strbuf_release(&why);
	return rc;
}

int robot_bisect_group(struct db *db, int64_t gid, const struct robot_bisect_opts *o,
		       int *more, struct strbuf *said, struct strbuf *err)
{
	*more = 0;
	struct db_alert_group g;
	struct db_alert lead;
	memset(&lead, 0, sizeof(lead));
	if (db_alert_group_get(db, gid, &g)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	int rc = -1, dfd = -1;
	char *plan = NULL, *path = NULL, *logpath = NULL, *dir = NULL;
	if (!g.git_dir || !g.good_commit || !g.bad_commit) {
		int same = robot_group_same_kernel(db, gid) == 1;
		strbuf_addf(err, "alert group %lld is not a change of a kernel from git "
			    "(%s%s%s): there is nothing to bisect", (long long)gid, g.range_key,
			    same ? ", " : "", same ? ROBOT_NO_KERNEL_CHANGE : "");
		goto out;
	}
	if (lead_alert(db, gid, &lead, err))
		goto out;
	if (g.ncommits == 1) {
		rc = one_commit(db, &g, &lead, said, err);
		goto out;
	}
	/* the folder checked again from / down, and named by its canonical
	   path (no link left for anyone to re-point) in what the child opens */
	int have;
	if (robot_out_dir(o->dir, &dir, err) || privdir_open(dir, 0, 022, &dfd, err) ||
	    (have = plan_file(dfd, dir, gid, err)) < 0)
		goto out;
	path = xstrfmt("%s/alert-group-%lld.json", dir, (long long)gid);
	logpath = xstrfmt("%s/alert-group-%lld.log", dir, (long long)gid);
	if (!have) {
		/* the plan is written once: the same file, the same bisection */
		char name[64];
		snprintf(name, sizeof(name), "alert-group-%lld.json", (long long)gid);
		if (!(plan = narrowed_plan(db, &g, &lead, err)))
			goto out;
		if (privdir_write(dfd, dir, name, plan, strlen(plan), err))
			goto out;
	}
	/* the group names its narrowed plan before the child starts: a nightly
	   killed mid-bisection leaves the group pointing at what it ran */
	if (db_alert_group_set_bisect(db, gid, g.bisect_id, path)) {
		strbuf_addstr(err, db_errmsg(db));
		goto out;
	}
	if (move_group(db, gid, ALERT_NEW, ALERT_BISECTING, "bisection started", err))
		goto out;
	struct strvec av = STRVEC_INIT;
	bisect_argv(&av, o, &g, &lead, path);
	struct proc_result res;
	double t0 = now_mono();
	int prc = run_bisect(o, &av, logpath, &res, err);
	strvec_clear(&av);
	int64_t bid = db_bisect_by_plan_path(db, path);
	if (bid > 0)
		db_alert_group_set_bisect(db, gid, bid, NULL);
	if (prc && !res.timed_out && errno != EINTR)
		goto out;
	if (res.timed_out || (o->abort_flag && *o->abort_flag) || res.exit_code == 130) {
		*more = 1;
		strbuf_addf(said, "alert group %lld: bisection %lld paused after %.0f min (%s); "
			    "it goes on at the next call\n", (long long)gid, (long long)bid,
			    (now_mono() - t0) / 60, res.timed_out ? "the night's budget is spent"
								  : "interrupted");
		rc = 0;
		goto out;
	}
	rc = bisect_outcome(db, &g, bid, res.exit_code, logpath, said, err);
out:
	if (dfd >= 0)
		close(dfd);
	free(dir);
	free(plan);
	free(path);
	free(logpath);
	db_alert_free(&lead);
	db_alert_group_free(&g);
	return rc;
}

int robot_out_dir(const char *dir, char **canon, struct strbuf *err)
{
	if (mkdir(dir, 0755) && errno != EEXIST) {
		strbuf_addf(err, "--out-dir %s: %s", dir, strerror(errno));
		return -1;
	}
	/* what the robot reads back from here (a narrowed plan that a child
	   bisection builds and runs) must be this user's alone: the folder and
	   every folder above it out of other users' reach */
	struct strbuf why = STRBUF_INIT;
	if (privdir_path_safe(dir, 022, canon, &why)) {
		strbuf_addf(err, "--out-dir %s", why.buf);
		strbuf_release(&why);
		return -1;
	}
	strbuf_release(&why);
	if (access(dir, W_OK | X_OK)) {
		strbuf_addf(err, "--out-dir %s: cannot write there: %s", dir, strerror(errno));
		if (canon) {
			free(*canon);
			*canon = NULL;
		}
		return -1;
	}
	return 0;
}

/* the note of a person's move to bisecting */
static const char by_hand[] = "bisect by hand";

/* the refusals of `alerts bisect` for alert a, in order, nothing written
 * to the store: 0 with what the life cycle says of the alert's own move
 * and its group in *g (to be freed either way), or -1 with why in err */
static int bisect_refusals(struct db *db, const struct db_alert *a, const char *dir,
			   enum alert_move *mv, struct db_alert_group *g, struct strbuf *err)
{
	char why[400];
	enum alert_state dest;
	memset(g, 0, sizeof(*g));
	*mv = alert_move_decide(a->status, ALERT_BISECTING, ALERT_BY_PERSON, by_hand, 0, &dest,
				why, sizeof(why));
	if (*mv < ALERT_MOVE_NONE) {
		strbuf_addf(err, "alert %lld: %s", (long long)a->id, why);
		return -1;
	}
	if (db_alert_group_get(db, a->group_id, g)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	int same = robot_group_same_kernel(db, a->group_id) == 1;
	int git = g->git_dir && g->good_commit && g->bad_commit;
	if (same) {
		strbuf_addf(err, "alert %lld: %s (sessions %lld and %lld ran the same kernel, "
			    "configuration and knobs): there is nothing to bisect", (long long)a->id,
			    ROBOT_NO_KERNEL_CHANGE, (long long)a->good_session,
			    (long long)a->bad_session);
		if (!git)
			strbuf_addf(err, " (its group %lld is not a change of a kernel from git "
				    "either: %s)", (long long)g->id, g->range_key);
		return -1;
	}
	if (!git) {
		strbuf_addf(err, "alert group %lld is not a change of a kernel from git (%s): "
			    "there is nothing to bisect", (long long)g->id, g->range_key);
		return -1;
	}
	char *canon = NULL;
	int dfd = -1, rc = -1;
	if (!robot_out_dir(dir, &canon, err) && !privdir_open(canon, 0, 022, &dfd, err) &&
	    plan_file(dfd, canon, g->id, err) >= 0)
		rc = 0;
	if (dfd >= 0)
		close(dfd);
	free(canon);
	return rc;
}

int robot_bisect_alert_check(struct db *db, int64_t id, const char *dir, int64_t *gid,
			     struct strbuf *err)
{
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	struct db_alert_group g;
	enum alert_move mv;
	int rc = bisect_refusals(db, &a, dir, &mv, &g, err);
	*gid = a.group_id;
	db_alert_group_free(&g);
	db_alert_free(&a);
	return rc;
}

int robot_bisect_alert(struct db *db, int64_t id, const struct robot_bisect_opts *o,
		       int *more, struct strbuf *said, struct strbuf *err)
{
	*more = 0;
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	struct db_alert_group g;
	int rc = -1;
	enum alert_move mv;
	/* the refusals first: nothing is written before all have passed */
	if (bisect_refusals(db, &a, o->dir, &mv, &g, err))
		goto out;
	if (mv == ALERT_MOVE_DO &&
	    db_alert_move(db, id, ALERT_BISECTING, ALERT_BY_PERSON, by_hand, 0)) {
		strbuf_addstr(err, db_errmsg(db));
		goto out;
	}
	rc = robot_bisect_group(db, a.group_id, o, more, said, err);
	if (rc) {
		/* it did not start: the alerts do not stay "bisecting" */
		char *note = xstrfmt("the bisection did not start: %s", err->buf);
		db_alert_group_set_result(db, g.id, NULL, note);
		db_alert_group_move(db, g.id, ALERT_BISECTING, ALERT_UNRESOLVED, ALERT_BY_ROBOT,
				    note, 0, NULL);
		free(note);
	}
out:
	db_alert_group_free(&g);
	db_alert_free(&a);
	return rc;
}

int robot_child(const char *const *argv, const char *lock_key, volatile int *abort_flag,
		struct strbuf *errout, struct strbuf *err)
{
	struct child c = CHILD_INIT;
	c.argv = argv;
	c.in = PROC_NULL;
	c.out = errout ? PROC_NULL : PROC_INHERIT;
	c.err = errout ? PROC_PIPE : PROC_INHERIT;
	c.stop_sig = SIGINT;
	c.stop_grace_s = 120;
	c.pdeathsig = SIGTERM;
	const char *env[] = { tlock_child_env(lock_key), NULL };
	c.env = env[0] ? env : NULL;
	c.keep_fd = tlock_child_fd(lock_key);
	struct proc_result res;
	struct proc_io io = PROC_IO_INIT;
	io.errout = errout;
	io.err_max = errout ? 4096 : 0;
	io.abort_flag = abort_flag;
	int rc = proc_exec(&c, &io, &res, err);
	if (rc && errno == EINTR)
		return 130;
	if (rc)
		return -1;
	return res.exit_code >= 0 ? res.exit_code : 128 + res.term_signal;
}

int robot_session_complete(const struct db_session_brief *sb)
{
	int st = sb->status ? session_state_parse(sb->status) : -1;
	return st >= 0 && session_state_ended((enum session_state)st);
}

int robot_night_target(const char *const *targets, const char *target)
{
	for (const char *const *t = targets; t && *t; t++)
		if (target && !strcmp(*t, target))
			return 1;
	return 0;
}

int robot_tonight(const char *dbpath, const char *plan, const char *const *targets,
		  const char *tag, struct robot_tonight *t, struct strbuf *err)
{
	memset(t, 0, sizeof(*t));
	struct db *db;
	char *msg = NULL;
	/* no store yet, an empty file, one of another program or an older
	   schema (read only: not migrated here): the run's child opens it
	   and says what is wrong, or makes it */
	if (access(dbpath, F_OK) || db_open(dbpath, DB_READONLY, &db, &msg)) {
		free(msg);
		return 0;
	}
	struct db_night_session *ss = NULL;
	size_t n = 0;
	int rc = db_night_sessions(db, plan, tag, &ss, &n);
	if (rc && db_user_version(db) < db_latest_version())
		rc = 0; /* before session.nightly (schema 15): the run migrates it */
	else if (rc)
		strbuf_addstr(err, db_errmsg(db));
	for (size_t i = 0; !rc && i < n; i++) {
		if (!robot_night_target(targets, ss[i].target))
			continue;
		struct db_session_brief sb = { .status = ss[i].status };
		if (!robot_session_complete(&sb)) {
			t->unfinished = ss[i].id;
		} else {
			t->stored = ss[i].id;
			t->judged = ss[i].nightly;
		}
	}
	db_night_sessions_free(ss, n);
	db_close(db);
	return rc;
}

void robot_night_free(struct robot_night *n)
{
	if (n->judged)
		robot_result_free(&n->r);
	db_session_brief_free(&n->sb);
	free(n->runs);
	free(n->html);
	strbuf_release(&n->report_err);
	strbuf_release(&n->said);
	for (size_t i = 0; i < n->ncalls; i++)
		free(n->calls[i].text);
	free(n->calls);
	memset(n, 0, sizeof(*n));
}

/* the group is tonight's plan's and machine's, a kernel from git, and has
 * a regression in state st: the queue bisects it */
static int wants_bisection(struct db *db, int64_t gid, enum alert_state st,
			   const struct robot_result *r)
{
	struct db_alert_group g;
	if (db_alert_group_get(db, gid, &g))
		return 0;
	int mine = !strcmp(g.plan, r->s.plan) && g.machine_id == r->s.machine_id;
	int git = g.git_dir && g.good_commit && g.bad_commit && g.ncommits != 0;
	db_alert_group_free(&g);
	struct db_alert *al;
	size_t na;
	struct db_alert_filter f = { .status = (int)st, .group_id = gid };
	int regression = 0;
	if (!db_alerts_list(db, &f, &al, &na)) {
		for (size_t k = 0; k < na; k++)
			regression |= !strcmp(al[k].kind, "regression");
		db_alerts_free(al, na);
	}
	return mine && git && regression;
}

/* bisect the groups that need it, oldest first, within the budget: the
 * first group gets what there is; a later one starts with a minute left */
static void bisect_queue(struct db *db, const struct robot_night_opts *o,
			 const struct robot_result *r, struct strbuf *said, int64_t **touched,
			 size_t *ntouched)
{
	double end = now_mono() + 60.0 * (double)o->bisect_minutes;
	int started = 0;
	for (int pass = 0; pass < 2; pass++) {
		/* first the bisections under way, then the new groups */
		enum alert_state st = pass ? ALERT_NEW : ALERT_BISECTING;
		int64_t *ids;
		size_t n;
		if (db_alert_groups_with(db, st, &ids, &n))
			return;
		for (size_t i = 0; i < n && !*o->abort_flag; i++) {
			if (!wants_bisection(db, ids[i], st, r))
				continue;
			double left = end - now_mono();
			if (left <= 0 || (started && left < 60)) {
				strbuf_addf(said, "alert group %lld: not bisected tonight: the budget "
					    "of %zu min is spent\n", (long long)ids[i], o->bisect_minutes);
				continue;
			}
			started = 1;
			struct robot_bisect_opts bo = {
				.dbpath = o->dbpath, .dir = o->dir, .budget_s = left,
				.max_steps = (int)o->max_steps,
				.threshold_pct = o->bisect_threshold > 0 ? o->bisect_threshold
									 : o->threshold,
				.session_runs = (int)o->session_runs,
				.repetitions = (int)o->repetitions,
				.abort_flag = o->abort_flag,
				.lock_key = o->lock_key,
			};
			struct strbuf err = STRBUF_INIT;
			int more;
			fprintf(stderr, "schedlab nightly: bisecting alert group %lld (%.0f min "
					"left tonight)\n", (long long)ids[i], left / 60);
			if (robot_bisect_group(db, ids[i], &bo, &more, said, &err))
				strbuf_addf(said, "alert group %lld: not bisected: %s\n",
					    (long long)ids[i], err.buf);
			strbuf_release(&err);
			*touched = xrealloc(*touched, (*ntouched + 1) * sizeof(**touched));
			(*touched)[(*ntouched)++] = ids[i];
		}
		free(ids);
	}
}

/* what night `sid` did to group gid that its judgement decided: fixed
 * (an alert of the group fixed by the night) or raised */
static const char *group_event(struct db *db, int64_t gid, int64_t sid)
{
	const char *event = "raised";
	struct db_alert *al;
	size_t na;
	struct db_alert_filter f = { .status = ALERT_FIXED, .group_id = gid };
	if (!db_alerts_list(db, &f, &al, &na)) {
		for (size_t m = 0; m < na; m++)
			if (al[m].fixed_session == sid)
				event = "fixed";
		db_alerts_free(al, na);
	}
	return event;
}

/* the event's name as a constant (the store's text is the caller's to free) */
static const char *event_const(const char *e)
{
	return !strcmp(e, "fixed") ? "fixed" : !strcmp(e, "bisected") ? "bisected" : "raised";
}

int robot_hook_calls(struct db *db, const char *plan, int64_t machine_id,
		     struct robot_hook_call **calls, size_t *ncalls, struct strbuf *said)
{
	struct db_alert_hook *h;
	size_t n;
	if (db_alert_hooks_pending(db, plan, machine_id, &h, &n)) {
		strbuf_addf(said, "the --on-alert hook's calls: %s\n", db_errmsg(db));
		return -1;
	}
	pid_t me = getpid();
	unsigned long long mine = proc_start_time(me);
	for (size_t i = 0; i < n; i++) {
		/* taken by a nightly that still runs (this one: gathered already) */
		if (h[i].claim_pid && proc_alive((pid_t)h[i].claim_pid, h[i].claim_start))
			continue;
		int c = db_alert_hook_claim(db, h[i].id, h[i].claim_pid, h[i].claim_start, me, mine);
		if (c <= 0) {
			if (c < 0)
				strbuf_addf(said, "alert group %lld: the --on-alert hook's call: %s\n",
					    (long long)h[i].group_id, db_errmsg(db));
			continue;
		}
		struct strbuf text = STRBUF_INIT, e2 = STRBUF_INIT;
		if (!robot_group_report(db, h[i].group_id, &text, &e2)) {
			*calls = xrealloc(*calls, (*ncalls + 1) * sizeof(**calls));
			(*calls)[(*ncalls)++] = (struct robot_hook_call){
				h[i].group_id, event_const(h[i].event), strbuf_detach(&text, NULL),
				h[i].id, h[i].session_id };
		} else {
			strbuf_addf(said, "alert group %lld: no report for the hook: %s\n",
				    (long long)h[i].group_id, e2.buf);
		}
		strbuf_release(&text);
		strbuf_release(&e2);
	}
	db_alert_hooks_free(h, n);
	return 0;
}

int robot_hook_delivered(struct db *db, const struct robot_hook_call *call, struct strbuf *err)
{
	if (!call->hook_id || !db_alert_hook_delivered(db, call->hook_id))
		return 0;
	strbuf_addf(err, "alert group %lld: marking the hook's call delivered: %s",
		    (long long)call->gid, db_errmsg(db));
	return -1;
}

/* the store's write lock for the judgement: another nightly judging on
 * the same store is waited for (up to 30 min; SQLite's own busy wait is
 * 10 s a try) */
static int begin_turn(struct db *db, volatile int *abort_flag, struct strbuf *err)
{
	double end = now_mono() + 1800;
	while (db_begin(db)) {
		const char *m = db_errmsg(db);
		if (!(strstr(m, "locked") || strstr(m, "busy")) || now_mono() > end ||
		    (abort_flag && *abort_flag)) {
			strbuf_addf(err, "the store's write lock for the judgement: %s", m);
			return -1;
		}
		sleep(1);
	}
	return 0;
}

/* the night's page at n->html (report_night.c): 0, or -1 with why in
 * n->report_err (the last try's) */
static int night_page(struct db *db, struct robot_night *n, const struct robot_night_opts *o,
		      const char *said, const char *detail)
{
	const char *slash = detail ? strrchr(detail, '/') : NULL;
	struct robot_night_page pg = { .title = n->sb.tag ? n->sb.tag : o->tag, .runs = n->runs,
				       .bisections = said,
				       .detail_href = slash ? slash + 1 : detail,
				       .threshold_pct = o->threshold };
	struct strbuf page = STRBUF_INIT;
	strbuf_reset(&n->report_err);
	int rc = robot_night_html(db, &n->r, &pg, &page, &n->report_err) ||
		 outfile_write(n->html, page.buf, page.len, &n->report_err) ? -1 : 0;
	strbuf_release(&page);
	return rc;
}

int robot_night_session(struct db *db, int64_t sid, const struct robot_night_opts *o,
			const struct robot_options *ro, int several, int runs_failed,
			struct robot_night *n, struct strbuf *err)
{
	memset(n, 0, sizeof(*n));
	strbuf_init(&n->report_err, 0);
	strbuf_init(&n->said, 0);
	if (db_session_brief(db, sid, &n->sb)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	n->runs = db_session_runs_text(db, sid);
	if (!n->sb.has_results) {
		n->rc = 3;
		return 0;
	}
	/* a metric the session does not have is a mistake, not "0 metrics":
	   refused before the judgement writes anything */
	for (const char *const *m = ro->metrics; m && *m; m++) {
		int has = db_session_has_metric(db, sid, *m);
		if (has < 0) {
			strbuf_addstr(err, db_errmsg(db));
			return -1;
		}
		if (!has) {
			strbuf_addf(err, "--metric %s: session %lld stored no such metric (NAME or "
				    "WORKLOAD.NAME; `schedlab query` lists them)", *m, (long long)sid);
			return -1;
		}
	}
	/* the judgement is one write transaction: nightlies judging on one store
	   at once take turns, and each sees the alerts the one before raised
	   (an alert is raised once, a group made once) */
	if (begin_turn(db, o->abort_flag, err))
		return -1;
	if (robot_judge(db, sid, ro, &n->r, err)) {
		db_rollback(db);
		return -1;
	}
	/* the hook's calls with the judgement: a nightly killed before its
	   hook ran leaves them pending for the rerun or the next night */
	for (size_t i = 0; o->hooks && i < n->r.ngroups; i++)
		if (db_alert_hook_add(db, n->r.groups[i], sid,
				      group_event(db, n->r.groups[i], sid))) {
			strbuf_addf(err, "storing the hook's calls: %s", db_errmsg(db));
			db_rollback(db);
			robot_result_free(&n->r);
			return -1;
		}
	if (db_commit(db)) {
		strbuf_addf(err, "storing the judgement: %s", db_errmsg(db));
		db_rollback(db);
		robot_result_free(&n->r);
		return -1;
	}
	n->judged = 1;
	fault_point("nightly-judged");
	const char *tag = n->sb.tag ? n->sb.tag : o->tag;
	/* the night's page (docs/alerts.md "The night's report"), written
	   before the bisections (a night cut short keeps one) and after them;
	   beside it the session's own report (no judgement of its own). The
	   file is named by the session's tag when that is a valid one (a
	   session stored before run --tag was checked may have any text: it
	   is then named by its id), so that it stays in --out-dir */
	char sid_name[32];
	snprintf(sid_name, sizeof(sid_name), "session-%lld", (long long)sid);
	const char *fname = n->sb.tag && tag_valid(n->sb.tag) ? n->sb.tag
			    : !n->sb.tag && tag_valid(o->tag) ? o->tag : sid_name;
	n->html = several && fname != sid_name
			  ? xstrfmt("%s/%s-session-%lld.html", o->dir, fname, (long long)sid)
			  : xstrfmt("%s/%s.html", o->dir, fname);
	char *detail = xstrfmt("%.*s-detail.html", (int)(strlen(n->html) - 5), n->html);
	char *sel = xstrfmt("%lld", (long long)sid);
	struct strbuf cerr = STRBUF_INIT, derr = STRBUF_INIT;
	const char *av[] = { robot_self(), "report", "--db", o->dbpath, "--session", sel,
			     "--title", tag, "--out", detail, NULL };
	int drc = robot_child(av, o->lock_key, o->abort_flag, &derr, &cerr);
	strbuf_release(&cerr);
	strbuf_release(&derr);
	free(sel);
	/* the bisections */
	int64_t *touched = NULL;
	size_t ntouched = 0;
	if (!o->no_bisect && o->bisect_minutes) {
		night_page(db, n, o, NULL, drc ? NULL : detail);
		bisect_queue(db, o, &n->r, &n->said, &touched, &ntouched);
	}
	n->report_rc = night_page(db, n, o, n->said.buf, drc ? NULL : detail);
	free(detail);
	/* a group bisected tonight: its call says so (one a group and night) */
	for (size_t i = 0; o->hooks && i < ntouched; i++)
		if (db_alert_hook_add(db, touched[i], sid, "bisected"))
			strbuf_addf(&n->said, "alert group %lld: the hook's call: %s\n",
				    (long long)touched[i], db_errmsg(db));
	if (o->hooks)
		robot_hook_calls(db, n->r.s.plan, n->r.s.machine_id, &n->calls, &n->ncalls,
				 &n->said);
	free(touched);
	if (*o->abort_flag)
		n->rc = 130;
	else if (n->r.new_regressions)
		n->rc = 1;
	else if (runs_failed)
		n->rc = 3;
	return 0;
}

enum robot_hook_end robot_hook(const char *cmd, int64_t gid, const char *event,
			       const char *text, double timeout_s, volatile int *abort_flag,
			       double *wall_s, struct strbuf *err)
{
	*wall_s = 0;
	/* the report from a file, not a pipe: a hook that never reads its
	   stdin cannot keep the night waiting for it */
	int in = memfd_create("schedlab-alert-report", MFD_CLOEXEC);
	size_t left = strlen(text);
	const char *p = text;
	while (in >= 0 && left) {
		ssize_t k = write(in, p, left);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		p += k;
		left -= (size_t)k;
	}
	if (in < 0 || left || lseek(in, 0, SEEK_SET)) {
		strbuf_addf(err, "--on-alert: the report for its stdin: %s", strerror(errno));
		if (in >= 0)
			close(in);
		return ROBOT_HOOK_FAILED;
	}
	char *g = xstrfmt("SCHEDLAB_ALERT_GROUP=%lld", (long long)gid);
	char *e = xstrfmt("SCHEDLAB_ALERT_EVENT=%s", event);
	const char *env[] = { g, e, NULL };
	const char *argv[] = { "/bin/sh", "-c", cmd, "schedlab-on-alert", NULL };
	struct child c = CHILD_INIT;
	c.argv = argv;
	c.env = env;
	c.in = PROC_FD;
	c.in_src = in;
	c.out = PROC_INHERIT;
	c.err = PROC_INHERIT;
	/* the hook and all it starts: one group, stopped as one (TERM, KILL
	   2 s later) at its time limit or when the night is interrupted, and
	   gone with the nightly even when that is killed with SIGKILL */
	c.new_pgrp = 1;
	c.group_guard = 1;
	struct proc_result res;
	struct strbuf perr = STRBUF_INIT, oerr = STRBUF_INIT;
	enum robot_hook_end end = ROBOT_HOOK_OK;
	struct proc_io io = PROC_IO_INIT;
	io.timeout_s = timeout_s;
	io.abort_flag = abort_flag;
	/* what leaves the group (setsid, a double fork) is adopted by this
	   process meanwhile, and ended when the hook is: TERM, KILL 2 s later */
	struct proc_orphans orph;
	int adopt = !proc_orphans_begin(&orph, &oerr);
	int rc = proc_exec(&c, &io, &res, &perr);
	if (adopt)
		proc_orphans_end(&orph, SIGTERM, 2, 5);
	*wall_s = res.wall_s;
	if (rc && errno == EINTR) {
		strbuf_addstr(err, "--on-alert hook stopped: interrupted");
		end = ROBOT_HOOK_STOPPED;
	} else if (rc) {
		strbuf_addf(err, "--on-alert: %s", perr.buf);
		end = ROBOT_HOOK_FAILED;
	} else if (res.timed_out) {
		strbuf_addf(err, "--on-alert hook killed after %.0f s (its time limit, "
			    "--on-alert-timeout)", timeout_s);
		end = ROBOT_HOOK_KILLED;
	} else if (res.exit_code != 0) {
		strbuf_addf(err, "--on-alert command exited %d",
			    res.exit_code >= 0 ? res.exit_code : 128 + res.term_signal);
		end = ROBOT_HOOK_FAILED;
	}
	/* what it started: ended, or said not to be */
	if (adopt && orph.left) {
		strbuf_addf(err, "%s%d process%s it started could not be ended: %s",
			    err->len ? "; " : "--on-alert hook: ", orph.left,
			    orph.left == 1 ? "" : "es", orph.left_desc);
		if (end == ROBOT_HOOK_OK)
			end = ROBOT_HOOK_FAILED;
	} else if (!adopt && end == ROBOT_HOOK_KILLED) {
		strbuf_addf(err, "; its process group was ended, but what left the group may "
			    "remain (%s)", oerr.buf);
	} else if (end == ROBOT_HOOK_KILLED) {
		strbuf_addstr(err, "; it and what it started were ended");
	}
	close(in);
	strbuf_release(&perr);
	strbuf_release(&oerr);
	free(g);
	free(e);
	return end;
}
