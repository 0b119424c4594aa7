/*
 * The regression robot's actions shared by `schedlab nightly` and
 * `schedlab alerts` (robot_cli.h): bisecting an alert group with a child
 * `schedlab bisect` under a wall-time budget and writing its outcome back,
 * counting a range's commits, and the site's hook.
 */
#include "harness/cli/robot_cli.h"

#include <errno.h>
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
#include "harness/agent/preempt_offer.h"
#include "harness/orchestrate/kgit.h"
#include "harness/orchestrate/tlock.h"
#include "harness/results/robot.h"
#include "harness/util/atomicfile.h"
#include "harness/util/proc.h"

const char *robot_self(void)
{
	static char self[PATH_MAX];
	if (!self[0]) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n > 0)
			self[n] = '\0';
		else
			snprintf(self, sizeof(self), "schedlab");
	}
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

/* "git log -1 --format=F commit" in dir, or "" */
static char *git_field(const char *dir, const char *commit, const char *fmt)
{
	char *f = xstrfmt("--format=%s", fmt);
	const char *args[] = { "-C", dir, "log", "-1", f, commit, "--", NULL };
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

/* move every alert of the group in state `from` (ALERT_NSTATES: any open
 * one but acknowledged) to `to`, as the nightly */
static int move_group(struct db *db, int64_t gid, enum alert_state from, enum alert_state to,
		      const char *note, struct strbuf *err)
{
	struct db_alert *al;
	size_t n;
	struct db_alert_filter f = { .status = from == ALERT_NSTATES ? ALERT_NSTATES : (int)from,
				     .group_id = gid };
	if (db_alerts_list(db, &f, &al, &n)) {
		strbuf_addstr(err, db_errmsg(db));
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (al[i].status == to || al[i].status == ALERT_ACKNOWLEDGED ||
		    !alert_transition_ok(al[i].status, to, ALERT_BY_ROBOT, (char[8]){ 0 }, 8))
			continue;
		if (db_alert_move(db, al[i].id, to, ALERT_BY_ROBOT, note, 0)) {
			strbuf_addstr(err, db_errmsg(db));
			rc = -1;
		}
	}
	db_alerts_free(al, n);
	return rc;
}

static int first_row(void *ctx, int nc, const char *const *nm, const char *const *v)
{
	(void)nm;
	struct strbuf *sb = ctx;
	if (v && nc && v[0] && !sb->len)
		strbuf_addstr(sb, v[0]);
	return 0;
}

/* the plan of the bad session narrowed to the alert's configuration and
 * workload, its git kernel without what `schedlab run` added (commit,
 * describe, image): what the bisection runs at each commit */
static char *narrowed_plan(struct db *db, const struct db_alert_group *g,
			   const struct db_alert *lead, struct strbuf *err)
{
	char *sql = xstrfmt("SELECT plan_json FROM session WHERE id = %lld",
			    (long long)g->bad_session);
	struct strbuf pj = STRBUF_INIT;
	int rc = db_query(db, sql, first_row, &pj);
	free(sql);
	json_t *plan = rc ? NULL : json_loads(pj.buf, 0, NULL);
	strbuf_release(&pj);
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

static char *culprit_json(struct db *db, const struct db_alert_group *g,
			  const struct db_bisect *b, json_t *result)
{
	const char *commit = json_string_value(json_object_get(result, "first_bad"));
	char *author = git_field(g->git_dir, commit, "%an <%ae>");
	json_t *c = json_object();
	json_object_set_new(c, "commit", json_string(commit));
	json_object_set(c, "subject", json_object_get(result, "subject"));
	json_object_set_new(c, "author", json_string(author));
	if (json_object_get(result, "effect"))
		json_object_set(c, "effect", json_object_get(result, "effect"));
	json_object_set_new(c, "bisect_id", json_integer(b->id));
	json_object_set_new(c, "error_bound", json_real(b->alpha));
	struct db_bisect_step *st = NULL;
	size_t nst = 0;
	json_t *steps = json_array();
	long boots = 0;
	if (!db_bisect_steps(db, b->id, &st, &nst)) {
		char *tag = xstrfmt("bisect-%lld", (long long)b->id);
		for (size_t i = 0; i < nst; i++) {
			json_t *d = st[i].detail ? json_loads(st[i].detail, 0, NULL) : NULL;
			const char *why = json_string_value(json_object_get(d, "skip"));
			json_array_append_new(steps, json_pack("{s:s, s:s, s:s, s:s}", "commit",
							       st[i].commit, "role", st[i].role,
							       "verdict", st[i].verdict ? st[i].verdict : "pending",
							       "why", why ? why : ""));
			json_decref(d);
			struct db_bisect_session *ss;
			size_t nss;
			if (!db_bisect_sessions(db, tag, st[i].commit, &ss, &nss)) {
				boots += (long)nss;
				db_bisect_sessions_free(ss, nss);
			}
		}
		free(tag);
		db_bisect_steps_free(st, nst);
	}
	json_object_set_new(c, "steps", steps);
	json_object_set_new(c, "builds", json_integer((json_int_t)nst));
	json_object_set_new(c, "boots", json_integer(boots));
	char *t = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(c);
	free(author);
	return t;
}

/* the range holds one commit: it is the culprit without a bisection */
static int one_commit(struct db *db, const struct db_alert_group *g, const struct db_alert *lead,
		      struct strbuf *said, struct strbuf *err)
{
	char *subject = git_field(g->git_dir, g->bad_commit, "%s");
	char *author = git_field(g->git_dir, g->bad_commit, "%an <%ae>");
	json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:{s:f}, s:i, s:i}", "commit", g->bad_commit,
			      "subject", subject, "author", author, "why",
			      "the range holds this one commit: no bisection needed", "effect",
			      "change_pct", isfinite(lead->change_pct) ? lead->change_pct : 0.0,
			      "builds", 0, "boots", 0);
	char *t = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
	int rc = db_alert_group_set_result(db, g->id, t, NULL) ? -1 : 0;
	if (rc)
		strbuf_addstr(err, db_errmsg(db));
	/* new -> bisecting -> culprit found: a bisection of one commit */
	if (!rc)
		rc = move_group(db, g->id, ALERT_NEW, ALERT_BISECTING, "one commit in the range",
				err);
	if (!rc)
		rc = move_group(db, g->id, ALERT_BISECTING, ALERT_CULPRIT,
				"the range's one commit", err);
	if (!rc)
		strbuf_addf(said, "alert group %lld: one commit in the range: %.12s (%s) is the "
			    "culprit\n", (long long)g->id, g->bad_commit, subject);
	json_decref(c);
	free(t);
	free(subject);
	free(author);
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
	int rc = -1;
	char *plan = NULL, *path = NULL, *logpath = NULL;
	if (!g.git_dir || !g.good_commit || !g.bad_commit) {
		strbuf_addf(err, "alert group %lld is not a change of a kernel from git "
			    "(%s%s%s): there is nothing to bisect", (long long)gid, g.range_key,
			    robot_group_same_kernel(db, gid) == 1 ? ", " : "",
			    robot_group_same_kernel(db, gid) == 1 ? ROBOT_NO_KERNEL_CHANGE : "");
		goto out;
	}
	if (lead_alert(db, gid, &lead, err))
		goto out;
	if (g.ncommits == 1) {
		rc = one_commit(db, &g, &lead, said, err);
		goto out;
	}
	path = xstrfmt("%s/alert-group-%lld.json", o->dir, (long long)gid);
	logpath = xstrfmt("%s/alert-group-%lld.log", o->dir, (long long)gid);
	struct stat st;
	if (stat(path, &st)) {
		/* the plan is written once: the same file, the same bisection */
		if (!(plan = narrowed_plan(db, &g, &lead, err)))
			goto out;
		if (outfile_write(path, plan, strlen(plan), err))
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
	char metric[256];
	snprintf(metric, sizeof(metric), "%s.%s", lead.workload, lead.metric);
	char steps[32], thr[32], sruns[32], reps[32];
	snprintf(steps, sizeof(steps), "%d", o->max_steps);
	snprintf(thr, sizeof(thr), "%g", o->threshold_pct);
	snprintf(sruns, sizeof(sruns), "%d", o->session_runs);
	snprintf(reps, sizeof(reps), "%d", o->repetitions);
	struct strvec av = STRVEC_INIT;
	strvec_pushv(&av, (const char *const[]){ robot_self(), "bisect", "--db", o->dbpath,
						  "--plan", path, "--good", g.good_commit, "--bad",
						  g.bad_commit, "--metric", metric, NULL });
	if (lead.series_where && *lead.series_where)
		strvec_pushv(&av, (const char *const[]){ "--where", lead.series_where, NULL });
	if (o->max_steps > 0)
		strvec_pushv(&av, (const char *const[]){ "--max-steps", steps, NULL });
	if (o->threshold_pct > 0)
		strvec_pushv(&av, (const char *const[]){ "--threshold", thr, NULL });
	if (o->session_runs > 0)
		strvec_pushv(&av, (const char *const[]){ "--session-runs", sruns, NULL });
	if (o->repetitions > 0)
		strvec_pushv(&av, (const char *const[]){ "--repetitions", reps, NULL });
	if (o->quiet)
		strvec_push(&av, "--quiet");
	struct child c = CHILD_INIT;
	c.argv = strvec_argv(&av);
	c.in = PROC_NULL;
	c.out = PROC_PIPE;
	c.err = PROC_INHERIT;
	c.stop_sig = SIGINT;       /* bisect stores its session interrupted */
	c.stop_grace_s = 120;
	c.pdeathsig = SIGINT;
	const char *env[] = { tlock_child_env(o->lock_key), NULL };
	c.env = env[0] ? env : NULL;
	c.keep_fd = tlock_child_fd(o->lock_key);
	struct strbuf out = STRBUF_INIT;
	struct proc_result res;
	double t0 = now_mono();
	int prc = proc_run(&c, o->budget_s, &out, 0, NULL, 0, -1, o->abort_flag, &res, err);
	strvec_clear(&av);
	/* the bisection's log, every call appended */
	FILE *lf = fopen(logpath, "ae");
	if (lf) {
		fputs(out.buf, lf);
		fclose(lf);
	}
	strbuf_release(&out);
	int64_t bid = db_bisect_by_plan_path(db, path);
	if (bid > 0)
		db_alert_group_set_bisect(db, gid, bid, NULL);
	if (prc && !res.timed_out && errno != EINTR) {
		goto out;
	}
	if (res.timed_out || (o->abort_flag && *o->abort_flag) || res.exit_code == 130) {
		*more = 1;
		strbuf_addf(said, "alert group %lld: bisection %lld paused after %.0f min (%s); "
			    "it goes on at the next call\n", (long long)gid, (long long)bid,
			    (now_mono() - t0) / 60, res.timed_out ? "the night's budget is spent"
								  : "interrupted");
		rc = 0;
		goto out;
	}
	struct db_bisect b;
	char idtxt[32];
	snprintf(idtxt, sizeof(idtxt), "%lld", (long long)bid);
	if (bid <= 0 || db_bisect_load(db, idtxt, &b)) {
		char *why = xstrfmt("bisect exited %d before a bisection was stored (see %s)",
				    res.exit_code, logpath);
		db_alert_group_set_result(db, gid, NULL, why);
		rc = move_group(db, gid, ALERT_BISECTING, ALERT_UNRESOLVED, why, err);
		strbuf_addf(said, "alert group %lld: unresolved: %s\n", (long long)gid, why);
		free(why);
		goto out;
	}
	json_t *result = b.result ? json_loads(b.result, 0, NULL) : NULL;
	const char *outcome = json_string_value(json_object_get(result, "outcome"));
	if (res.exit_code == 0 && outcome && !strcmp(outcome, "found")) {
		char *cj = culprit_json(db, &g, &b, result);
		rc = db_alert_group_set_result(db, gid, cj, NULL) ? -1 : 0;
		if (rc)
			strbuf_addstr(err, db_errmsg(db));
		char *note = xstrfmt("bisection %lld: %s", (long long)bid,
				     json_string_value(json_object_get(result, "first_bad")));
		if (!rc)
			rc = move_group(db, gid, ALERT_BISECTING, ALERT_CULPRIT, note, err);
		if (!rc)
			strbuf_addf(said, "alert group %lld: culprit found by bisection %lld: %s "
				    "(%s)\n", (long long)gid, (long long)bid,
				    json_string_value(json_object_get(result, "first_bad")),
				    json_string_value(json_object_get(result, "subject")) ? json_string_value(json_object_get(result, "subject")) : "");
		free(note);
		free(cj);
	} else {
		const char *msg = json_string_value(json_object_get(result, "message"));
		char *why;
		if (outcome && !strcmp(outcome, "max-steps"))
			why = xstrfmt("budget spent: --max-steps %d reached with %zu candidates left "
				      "(bisection %lld)", b.max_steps,
				      json_array_size(json_object_get(result, "candidates")),
				      (long long)bid);
		else if (outcome && !strcmp(outcome, "ambiguous"))
			why = xstrfmt("skipped or unclear commits leave %zu candidates (bisection "
				      "%lld)", json_array_size(json_object_get(result, "candidates")),
				      (long long)bid);
		else if (outcome && !strcmp(outcome, "refused"))
			why = xstrfmt("the ends do not differ when measured again: the change was "
				      "not reproduced (bisection %lld)", (long long)bid);
		else
			why = xstrfmt("bisection %lld %s: %s", (long long)bid, b.status,
				      msg ? msg : "see its log");
		db_alert_group_set_result(db, gid, NULL, why);
		rc = move_group(db, gid, ALERT_BISECTING, ALERT_UNRESOLVED, why, err);
		strbuf_addf(said, "alert group %lld: unresolved: %s\n", (long long)gid, why);
		free(why);
	}
	json_decref(result);
	db_bisect_free(&b);
out:
	free(plan);
	free(path);
	free(logpath);
	db_alert_free(&lead);
	db_alert_group_free(&g);
	return rc;
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
	struct strbuf perr = STRBUF_INIT;
	enum robot_hook_end end = ROBOT_HOOK_OK;
	int rc = proc_run(&c, timeout_s, NULL, 0, NULL, 0, -1, abort_flag, &res, &perr);
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
	close(in);
	strbuf_release(&perr);
	free(g);
	free(e);
	return end;
}
