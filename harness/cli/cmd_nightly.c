/*
 * schedlab nightly: one night of the regression robot (docs/alerts.md).
 * Runs the plan as `schedlab run` (a child: its own signals, its own
 * resumable session), judges the session against the rolling baseline
 * and the open alerts (harness/results/robot.c), writes the HTML report,
 * bisects the alert groups of kernels from git within the night's budget
 * (harness/cli/robot_cli.c; a bisection cut short goes on the next night),
 * tells the site's hook, and prints the one-screen summary, open alerts
 * first. contrib/schedlab-nightly and its systemd units call this.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/alert_store.h"
#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/cli/robot_cli.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/tlock.h"
#include "harness/results/robot.h"
#include "harness/util/atomicfile.h"
#include "harness/util/proc.h"
#include "workloads/workload.h"

static const char usage_text[] =
	"usage: schedlab nightly --plan PLAN.json [--db FILE] [--tag TAG] [--baseline N]\n"
	"                        [--out-dir DIR] [--threshold PCT] [--session ID]\n"
	"                        [--no-bisect] [--bisect-minutes M] [--bisect-max-steps K]\n"
	"                        [--bisect-threshold PCT] [--bisect-session-runs R]\n"
	"                        [--bisect-repetitions N] [--metric M[,M...]] [--on-alert CMD]\n"
	"                        [--on-alert-timeout SECONDS]\n"
	"\n"
	"One night of the regression robot (docs/alerts.md): runs PLAN tagged TAG\n"
	"(default nightly-YYYY-MM-DD), compares the session with the previous N\n"
	"nights of the plan on the machine (the rolling baseline, which starts\n"
	"after the newest `expected` alert; a night is a session a nightly ran or\n"
	"judged, whatever its tag), and turns what moved into alerts:\n"
	"a new alert per series and metric, grouped by the change's commit range (a\n"
	"kernel from git) or sessions; an open alert is not raised again (\"known:\n"
	"alert N\") and is marked fixed when its series returns to its level. New\n"
	"groups of a kernel from git are bisected automatically within the budget; a\n"
	"bisection cut short (budget, reboot, crash) goes on the next night.\n"
	"\n"
	"  --plan FILE            the nightly plan\n"
	"  --tag TAG              the session's tag (nightly-YYYY-MM-DD; letters, digits, . _ -)\n"
	"  --baseline N           nightly sessions in the rolling baseline (default 7)\n"
	"  --out-dir DIR          report, bisection plans and logs (default reports)\n"
	"  --threshold PCT        noise threshold of the verdicts in % (default 2)\n"
	"  --session ID           judge this stored session instead of running the plan\n"
	"  --metric M[,M...]      judge only these metrics (NAME or WORKLOAD.NAME)\n"
	"  --no-bisect            raise alerts, bisect nothing\n"
	"  --bisect-minutes M     the night's wall-time budget for bisections (default 240)\n"
	"  --bisect-max-steps K   commits a bisection may measure between its ends\n"
	"  --bisect-threshold PCT the bisection's noise threshold (default: --threshold)\n"
	"  --bisect-session-runs R, --bisect-repetitions N   the bisection's unit\n"
	"                         (schedlab bisect --session-runs, --repetitions)\n"
	"  --on-alert CMD         run CMD (by /bin/sh) with the report of each alert group\n"
	"                         raised, fixed, or bisected tonight on its stdin;\n"
	"                         SCHEDLAB_ALERT_GROUP and SCHEDLAB_ALERT_EVENT in its\n"
	"                         environment, after the target is let go. Nothing is\n"
	"                         sent by default.\n"
	"  --on-alert-timeout SECONDS  the hook's time limit, each call (default 300):\n"
	"                         then it and all it started get SIGTERM, 2 s later\n"
	"                         SIGKILL, and the night says so (exit status 4). The\n"
	"                         hook is stopped too when the night is interrupted\n"
	"                         and never outlives the nightly, even killed by SIGKILL\n"
	"The summary names the metrics the night left inconclusive on a line of its\n"
	"own (\"undecided: N metrics ...\", with the repetitions a side that would\n"
	"decide each); they do not change the exit status.\n"
	"A series whose effective preemption model changed since the last night (its\n"
	"kernel's default mode moved, voluntary -> lazy) says so (\"effective\n"
	"preemption model changed: voluntary -> lazy at session N\"): that night it\n"
	"is not judged against the old model's baseline, a new baseline starts.\n"
	"Exit status: 0 ok (no new regression; the first night), 1 a new regression\n"
	"alert tonight, 2 setup failure (bad plan or options, the target could not be\n"
	"used), 3 runs failed and nothing new regressed, 4 the --on-alert hook was\n"
	"killed at its time limit (nothing worse happened), 130 interrupted.\n";

static volatile sig_atomic_t stop_flag;
/* the target's lock, held for the whole night and handed to the children */
static char *lock_key;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct nopts {
	const char *plan, *dbpath, *tag, *dir, *session, *on_alert, *metrics;
	size_t baseline, bisect_minutes, max_steps, session_runs, repetitions;
	size_t hook_timeout;
	double threshold, bisect_threshold;
	int no_bisect;
};

/* the night's hook calls, made once the target is let go */
struct hook_call {
	int64_t gid;
	const char *event;
	char *text;
};

/* what the sessions of the night add up to */
struct night {
	size_t new_regressions;
	struct hook_call *calls;
	size_t ncalls;
};

/* the worse of two exit codes of a night: 2, 130, 1, 3, 4, 0 */
static int worse_rc(int a, int b)
{
	static const int order[] = { 2, 130, 1, 3, 4 };
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (a == order[i] || b == order[i])
			return order[i];
	return 0;
}

/* run a child schedlab command with inherited output: its exit code, 130
 * when we were stopped, -1 when it could not start */
static int run_child(const char *const *argv, int quiet_out)
{
	struct child c = CHILD_INIT;
	c.argv = argv;
	c.in = PROC_NULL;
	c.out = quiet_out ? PROC_NULL : PROC_INHERIT;
	c.err = quiet_out ? PROC_NULL : PROC_INHERIT;
	c.stop_sig = SIGINT;
	c.stop_grace_s = 120;
	c.pdeathsig = SIGTERM;
	const char *env[] = { tlock_child_env(lock_key), NULL };
	c.env = env[0] ? env : NULL;
	c.keep_fd = tlock_child_fd(lock_key);
	struct proc_result res;
	struct strbuf err = STRBUF_INIT;
	int rc = proc_run(&c, 0, NULL, 0, NULL, 0, -1, (volatile int *)&stop_flag, &res, &err);
	if (rc && errno == EINTR)
		rc = 130;
	else if (rc) {
		cmd_error("nightly", "%s", err.buf);
		rc = -1;
	} else {
		rc = res.exit_code >= 0 ? res.exit_code : 128 + res.term_signal;
	}
	strbuf_release(&err);
	return rc;
}

/* open alerts of the plan on the machine, one line each */
static void print_open(struct db *db, const struct robot_result *r)
{
	struct db_alert *al;
	size_t n;
	struct db_alert_filter f = { .status = ALERT_NSTATES, .plan = r->s.plan,
				     .machine_id = r->s.machine_id };
	if (db_alerts_list(db, &f, &al, &n))
		return;
	printf("open alerts: %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		struct db_alert_group g;
		const char *culprit = NULL;
		memset(&g, 0, sizeof(g));
		if (!db_alert_group_get(db, al[i].group_id, &g))
			culprit = g.culprit;
		printf("  alert %lld [%s] %s %s.%s %s: %+.1f%% since session %lld", (long long)al[i].id,
		       alert_state_name(al[i].status), al[i].kind, al[i].workload, al[i].metric,
		       al[i].series_label, al[i].change_pct, (long long)al[i].bad_session);
		if (culprit) {
			const char *c = strstr(culprit, "\"commit\":\"");
			if (c)
				printf("; culprit %.12s", c + 10);
		} else if (al[i].status == ALERT_UNRESOLVED && g.why) {
			printf("; %s", g.why);
		}
		putchar('\n');
		db_alert_group_free(&g);
	}
	db_alerts_free(al, n);
}

/* bisect the groups that need it, oldest first, within the budget */
static void bisect_queue(struct db *db, const struct nopts *o, const struct robot_result *r,
			 struct strbuf *said, int64_t **touched, size_t *ntouched)
{
	double end = now_mono() + 60.0 * (double)o->bisect_minutes;
	for (int pass = 0; pass < 2; pass++) {
		/* first the bisections under way, then the new groups */
		int64_t *ids;
		size_t n;
		if (db_alert_groups_with(db, pass ? ALERT_NEW : ALERT_BISECTING, &ids, &n))
			return;
		for (size_t i = 0; i < n && !stop_flag; i++) {
			struct db_alert_group g;
			if (db_alert_group_get(db, ids[i], &g))
				continue;
			int mine = !strcmp(g.plan, r->s.plan) && g.machine_id == r->s.machine_id;
			int git = g.git_dir && g.good_commit && g.bad_commit && g.ncommits != 0;
			db_alert_group_free(&g);
			struct db_alert *al;
			size_t na;
			struct db_alert_filter f = { .status = pass ? ALERT_NEW : ALERT_BISECTING,
						     .group_id = ids[i] };
			int regression = 0;
			if (!db_alerts_list(db, &f, &al, &na)) {
				for (size_t k = 0; k < na; k++)
					regression |= !strcmp(al[k].kind, "regression");
				db_alerts_free(al, na);
			}
			if (!mine || !git || !regression)
				continue;
			double left = end - now_mono();
			if (left < 60) {
				strbuf_addf(said, "alert group %lld: not bisected tonight: the budget "
					    "of %zu min is spent\n", (long long)ids[i], o->bisect_minutes);
				continue;
			}
			struct robot_bisect_opts bo = {
				.dbpath = o->dbpath, .dir = o->dir, .budget_s = left,
				.max_steps = (int)o->max_steps,
				.threshold_pct = o->bisect_threshold > 0 ? o->bisect_threshold
									 : o->threshold,
				.session_runs = (int)o->session_runs,
				.repetitions = (int)o->repetitions,
				.abort_flag = (volatile int *)&stop_flag,
				.lock_key = lock_key,
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

/* 0 to go on, else 1 + the exit code (--help: 1) */
static int opt_nightly(int argc, char **argv, struct nopts *o, struct cmd_ctx *ctx)
{
	const struct cli_opt opts[] = {
		CLI_STR("plan", &o->plan), CLI_DB(&ctx->dbpath), CLI_STR("tag", &o->tag),
		CLI_RANGE("baseline", &o->baseline, 1, 1000), CLI_STR("out-dir", &o->dir),
		CLI_THRESHOLD(&o->threshold), CLI_STR("session", &o->session),
		CLI_BOOL("no-bisect", &o->no_bisect),
		CLI_RANGE("bisect-minutes", &o->bisect_minutes, 0, 100000),
		CLI_RANGE("bisect-max-steps", &o->max_steps, 1, 1000),
		{ "bisect-threshold", CLI_PERCENT, &o->bisect_threshold, 0, 0, NULL, NULL, NULL, 1 },
		CLI_RANGE("bisect-session-runs", &o->session_runs, 1, 1000),
		CLI_RANGE("bisect-repetitions", &o->repetitions, 2, 1000),
		CLI_STR("on-alert", &o->on_alert),
		CLI_RANGE("on-alert-timeout", &o->hook_timeout, 1, 86400),
		CLI_STR("metric", &o->metrics), CLI_END,
	};
	int first, rc = cli_parse("nightly", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return 1 + cli_parse_exit(rc);
	if (cli_no_args("nightly", argc, argv, first))
		return 1 + 2;
	return 0;
}

/* the night's judgement left metrics inconclusive: one line that says so
 * (the exit status does not: a night is judged as well as it can be) */
static void print_undecided(const struct robot_result *r)
{
	if (!r->undecided.nr)
		return;
	printf("undecided: %zu metric%s left inconclusive tonight:", r->undecided.nr,
	       r->undecided.nr == 1 ? "" : "s");
	for (size_t i = 0; i < r->undecided.nr && i < 6; i++)
		printf("%s %s", i ? "," : "", r->undecided.v[i]);
	if (r->undecided.nr > 6)
		printf(" and %zu more", r->undecided.nr - 6);
	printf(" (~N: about N repetitions a side would decide it)\n");
}

/* the night's page (docs/alerts.md "The night's report"): 0, or -1 said */
static int night_page(struct db *db, const struct robot_result *r, const struct nopts *o,
		      const char *path, const char *runs, const char *said, const char *detail)
{
	const char *slash = detail ? strrchr(detail, '/') : NULL;
	struct robot_night_page pg = { .title = r->s.tag ? r->s.tag : o->tag, .runs = runs,
				       .bisections = said,
				       .detail_href = slash ? slash + 1 : detail,
				       .threshold_pct = o->threshold };
	struct strbuf page = STRBUF_INIT, err = STRBUF_INIT;
	int rc = robot_night_html(db, r, &pg, &page, &err) ||
		 outfile_write(path, page.buf, page.len, &err) ? -1 : 0;
	if (rc)
		cmd_error("nightly", "the night's report %s: %s", path, err.buf);
	strbuf_release(&page);
	strbuf_release(&err);
	return rc;
}

/* judge session sid of tonight, bisect, print its summary, and add the
 * hook's calls for it to *n: the night's exit code for it (the exit status
 * line comes after the hooks, night_end) */
static int night_of(struct db *db, int64_t sid, const struct nopts *o,
		    const struct robot_options *ro, double t0, int runs_failed, int several,
		    struct night *n)
{
	struct robot_result r;
	struct strbuf err = STRBUF_INIT;
	int judged = 0;
	struct db_session_brief sb;
	int rc = 0;
	if (db_session_brief(db, sid, &sb)) {
		cmd_error("nightly", "%s", db_errmsg(db));
		return 2;
	}
	char *runs = db_session_runs_text(db, sid);
	if (!sb.has_results) {
		printf("\n=== schedlab nightly %s: session %lld, plan %s ===\nruns: %s\n"
		       "no results stored: every run failed\n",
		       sb.tag ? sb.tag : o->tag, (long long)sid, sb.plan, runs ? runs : "?");
		free(runs);
		db_session_brief_free(&sb);
		return 3;
	}
	if (robot_judge(db, sid, ro, &r, &err)) {
		cmd_error("nightly", "%s", err.buf);
		free(runs);
		db_session_brief_free(&sb);
		strbuf_release(&err);
		return 2;
	}
	judged = 1;
	/* the HTML report of the night: the session's own report now (no
	   judgement of its own), the night's page after the bisections. The
	   file is named by the session's tag when that is a valid one (a
	   session stored before run --tag was checked may have any text: it
	   is then named by its id), so that it stays in --out-dir */
	char sid_name[32];
	snprintf(sid_name, sizeof(sid_name), "session-%lld", (long long)sid);
	const char *fname = sb.tag && cli_valid_tag(sb.tag) ? sb.tag
			    : !sb.tag && cli_valid_tag(o->tag) ? o->tag : sid_name;
	char *html = several && fname != sid_name
			     ? xstrfmt("%s/%s-session-%lld.html", o->dir, fname, (long long)sid)
			     : xstrfmt("%s/%s.html", o->dir, fname);
	char *detail = xstrfmt("%.*s-detail.html", (int)(strlen(html) - 5), html);
	char *sel = xstrfmt("%lld", (long long)sid);
	const char *av[] = { robot_self(), "report", "--db", o->dbpath, "--session", sel,
			     "--title", sb.tag ? sb.tag : o->tag, "--out", detail, NULL };
	int drc = run_child(av, 1);
	/* the bisections */
	struct strbuf said = STRBUF_INIT;
	int64_t *touched = NULL;
	size_t ntouched = 0;
	if (!o->no_bisect && o->bisect_minutes) {
		/* a page before the bisections too: a night cut short keeps one */
		night_page(db, &r, o, html, runs, NULL, drc ? NULL : detail);
		bisect_queue(db, o, &r, &said, &touched, &ntouched);
	}
	int hrc = night_page(db, &r, o, html, runs, said.buf, drc ? NULL : detail);
	/* the summary */
	double el = now_mono() - t0;
	printf("\n=== schedlab nightly %s: session %lld, plan %s, machine %s (%.0f min) ===\n",
	       sb.tag ? sb.tag : o->tag, (long long)sid, sb.plan, sb.machine ? sb.machine : "?",
	       el / 60);
	printf("runs: %s\n", runs ? runs : "?");
	print_open(db, &r);
	if (!r.nbaseline) {
		printf("%s\n", r.no_baseline ? r.no_baseline : "no baseline");
	} else {
		printf("baseline: sessions");
		for (size_t i = 0; i < r.nbaseline; i++)
			printf(" %lld", (long long)r.baseline[i]);
		printf(" (%zu previous nightly runs of this plan and machine", r.nbaseline);
		if (r.expected_since)
			printf(", from session %lld on: the expected change", (long long)r.expected_since);
		printf(")\n");
		for (size_t i = 0; i < r.breaks.nr; i++)
			printf("%s\n", r.breaks.v[i]);
		printf("%zu metrics, %zu worse, %zu better, %zu no change, %zu inconclusive, "
		       "%zu followed by open alerts", r.nmetrics, r.nworse, r.nbetter, r.nsame,
		       r.ninconclusive, r.nknown_metrics);
		if (r.nrestarted)
			printf("; %zu not judged: a new baseline after a change of the preemption "
			       "model", r.nrestarted);
		printf("\n");
		print_undecided(&r);
	}
	for (size_t i = 0; i < r.lines.nr; i++)
		printf("%s\n", r.lines.v[i]);
	if (said.len)
		fputs(said.buf, stdout);
	if (!hrc)
		printf("report: %s\n", html);
	else
		printf("report: not written\n");
	/* the hook's calls: each group raised, fixed or bisected tonight, once,
	   with what happened last */
	if (o->on_alert) {
		size_t nall = r.ngroups + ntouched;
		int64_t *ids = xcalloc(nall + 1, sizeof(*ids));
		size_t k = 0;
		for (size_t i = 0; i < nall; i++) {
			int64_t g = i < r.ngroups ? r.groups[i] : touched[i - r.ngroups];
			int dup = 0;
			for (size_t m = 0; m < k; m++)
				dup |= ids[m] == g;
			if (!dup)
				ids[k++] = g;
		}
		for (size_t i = 0; i < k; i++) {
			const char *event = "raised";
			for (size_t m = 0; m < ntouched; m++)
				if (touched[m] == ids[i])
					event = "bisected";
			struct db_alert *al;
			size_t na;
			struct db_alert_filter f = { .status = ALERT_FIXED, .group_id = ids[i] };
			if (strcmp(event, "bisected") && !db_alerts_list(db, &f, &al, &na)) {
				for (size_t m = 0; m < na; m++)
					if (al[m].fixed_session == sid)
						event = "fixed";
				db_alerts_free(al, na);
			}
			struct strbuf text = STRBUF_INIT, e2 = STRBUF_INIT;
			if (!robot_group_report(db, ids[i], &text, &e2)) {
				n->calls = xrealloc(n->calls, (n->ncalls + 1) * sizeof(*n->calls));
				n->calls[n->ncalls++] = (struct hook_call){ ids[i], event,
									    strbuf_detach(&text, NULL) };
			} else {
				cmd_error("nightly", "alert group %lld: %s", (long long)ids[i], e2.buf);
			}
			strbuf_release(&text);
			strbuf_release(&e2);
		}
		free(ids);
	}
	if (stop_flag)
		rc = 130;
	else if (r.new_regressions)
		rc = 1;
	else if (runs_failed)
		rc = 3;
	n->new_regressions += r.new_regressions;
	free(touched);
	strbuf_release(&said);
	free(detail);
	free(html);
	free(sel);
	free(runs);
	if (judged)
		robot_result_free(&r);
	db_session_brief_free(&sb);
	strbuf_release(&err);
	return rc;
}

/* let go of the target held for the night (the run, the bisections) */
static void release_target(void)
{
	if (!lock_key)
		return;
	tlock_release(lock_key);
	free(lock_key);
	lock_key = NULL;
}

/* the hook's calls of the night, in turn: 1 when one was killed at its
 * time limit. Not started once the night is interrupted, and the one
 * running then is stopped */
static int tell_hooks(const struct nopts *o, struct night *n)
{
	int killed = 0;
	/* the summary first: the hook writes to the same stdout */
	fflush(stdout);
	fflush(stderr);
	for (size_t i = 0; i < n->ncalls; i++) {
		const struct hook_call *h = &n->calls[i];
		if (stop_flag) {
			printf("alert group %lld: the --on-alert hook not run: interrupted\n",
			       (long long)h->gid);
			continue;
		}
		struct strbuf err = STRBUF_INIT;
		double wall;
		enum robot_hook_end end = robot_hook(o->on_alert, h->gid, h->event, h->text,
						     (double)o->hook_timeout,
						     (volatile int *)&stop_flag, &wall, &err);
		if (end == ROBOT_HOOK_KILLED) {
			killed = 1;
			printf("alert group %lld (%s): %s; it and what it started were ended\n",
			       (long long)h->gid, h->event, err.buf);
		} else if (end != ROBOT_HOOK_OK) {
			cmd_error("nightly", "alert group %lld: %s", (long long)h->gid, err.buf);
		}
		fflush(stdout);
		strbuf_release(&err);
	}
	return killed;
}

/* the night's last line: its exit status and why */
static void night_end(int rc, const struct night *n)
{
	switch (rc) {
	case 2:
		printf("exit status 2: setup failure\n");
		break;
	case 130:
		printf("exit status 130: interrupted (the bisection goes on the next night)\n");
		break;
	case 1:
		printf("exit status 1: regression (%zu new alert%s)\n", n->new_regressions,
		       n->new_regressions == 1 ? "" : "s");
		break;
	case 3:
		printf("exit status 3: runs failed\n");
		break;
	case 4:
		printf("exit status 4: the --on-alert hook was killed at its time limit "
		       "(--on-alert-timeout)\n");
		break;
	default:
		printf("exit status 0: ok\n");
	}
}

int cmd_nightly(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct nopts o = { .dir = "reports", .baseline = 7, .bisect_minutes = 240,
			   .threshold = 2, .hook_timeout = 300 };
	int prc = opt_nightly(argc, argv, &o, ctx);
	if (prc)
		return prc - 1;
	o.dbpath = ctx->dbpath;
	char deftag[64];
	time_t now = time(NULL);
	struct tm tm;
	strftime(deftag, sizeof(deftag), "nightly-%Y-%m-%d", localtime_r(&now, &tm));
	if (!o.tag)
		o.tag = deftag;
	if (!o.plan && !o.session) {
		cmd_error("nightly", "--plan is required (or --session ID to judge a stored "
				     "session)");
		return 2;
	}
	if (!cli_valid_tag(o.tag)) {
		cmd_error("nightly", "--tag '%s': 1 to %d letters, digits, . _ - (not . or ..)",
			  o.tag, CLI_TAG_MAX);
		return 2;
	}
	int64_t sid = 0;
	if (o.session) {
		char *end;
		long long v = strtoll(o.session, &end, 10);
		if (*end || v <= 0 || v > (1LL << 53)) {
			cmd_error("nightly", "--session %s: a session id (schedlab sessions)", o.session);
			return 2;
		}
		sid = v;
	}
	if (mkdir(o.dir, 0755) && errno != EEXIST) {
		cmd_error("nightly", "--out-dir %s: %m", o.dir);
		return 2;
	}
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	double t0 = now_mono();
	int runs_failed = 0;
	if (o.plan) {
		/* the plan is checked before anything runs, and its target held
		   for the night: no other session measures there meanwhile */
		struct plan p;
		struct strbuf perr = STRBUF_INIT;
		if (plan_load(o.plan, &p, &perr)) {
			cmd_error("nightly", "%s", perr.buf);
			strbuf_release(&perr);
			printf("exit status 2: setup failure\n");
			return 2;
		}
		lock_key = p.targets ? NULL : tlock_key(p.target, NULL);
		char *what = xstrfmt("schedlab nightly %s (plan %s)", o.tag, o.plan);
		int lrc = lock_key ? tlock_take(lock_key, what, NULL, &stop_flag, &perr) : 0;
		free(what);
		plan_release(&p);
		if (lrc) {
			cmd_error("nightly", "%s", perr.buf);
			strbuf_release(&perr);
			return stop_flag ? 130 : 2;
		}
		strbuf_release(&perr);
	}
	if (!sid) {
		fprintf(stderr, "schedlab nightly: running %s as %s into %s\n", o.plan, o.tag,
			o.dbpath);
		const char *av[] = { robot_self(), "run", o.plan, "--db", o.dbpath, "--tag", o.tag,
				     NULL };
		int rc = run_child(av, 0);
		if (rc == 130 || stop_flag) {
			cmd_error("nightly", "interrupted: `schedlab run --resume last --db %s` "
					     "finishes the session", o.dbpath);
			return 130;
		}
		if (rc == 1)
			runs_failed = 1;
		else if (rc) {
			cmd_error("nightly", "schedlab run exited %d", rc);
			printf("exit status 2: setup failure\n");
			return 2;
		}
	}
	/* the run child made the database; --session reads an existing one */
	struct db *db = cmd_db(ctx, 1);
	if (!db)
		return 2;
	struct robot_options ro;
	robot_options_default(&ro);
	ro.baseline_n = o.baseline;
	ro.cmp.threshold_pct = o.threshold;
	ro.cmp.range_param = workload_range_param;
	ro.count_commits = robot_count_commits;
	struct strvec mlist = STRVEC_INIT;
	if (o.metrics) {
		char *copy = xstrdup(o.metrics), *save = NULL;
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (*t)
				strvec_push(&mlist, t);
		free(copy);
		ro.metrics = mlist.v;
	}
	/* a lab made one session per member, with tonight's tag: each judged */
	int64_t *sids = NULL;
	size_t nsids = 0;
	if (o.session) {
		sids = xcalloc(1, sizeof(*sids));
		sids[nsids++] = sid;
	} else if (db_sessions_by_tag(db, o.tag, &sids, &nsids) || !nsids) {
		cmd_error("nightly", "no session tagged %s in %s", o.tag, o.dbpath);
		free(sids);
		strvec_clear(&mlist);
		return 2;
	}
	int rc = 0;
	struct night nt = { 0 };
	for (size_t i = 0; i < nsids && !stop_flag; i++)
		rc = worse_rc(rc, night_of(db, sids[i], &o, &ro, t0, runs_failed, nsids > 1, &nt));
	free(sids);
	strvec_clear(&mlist);
	/* the target is let go before the hook runs: a hook takes the time it
	   takes (a mail server, a chat service), and no session waits for it */
	release_target();
	if (tell_hooks(&o, &nt))
		rc = worse_rc(rc, 4);
	if (stop_flag)
		rc = worse_rc(rc, 130);
	night_end(rc, &nt);
	for (size_t i = 0; i < nt.ncalls; i++)
		free(nt.calls[i].text);
	free(nt.calls);
	return cmd_finish(rc);
}
