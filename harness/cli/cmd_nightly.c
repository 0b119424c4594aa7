/*
 * schedlab nightly: one night of the regression robot (docs/alerts.md).
 * The command parses, holds the target for the night, and prints; the
 * robot's actions are harness/orchestrate/robot_act.h: the plan run as
 * `schedlab run` (a child: its own signals, its own resumable session),
 * the judgement against the rolling baseline and the open alerts, the HTML
 * report, the bisections within the night's budget (one cut short goes on
 * the next night), and the site's hook. Prints the one-screen summary,
 * open alerts first. contrib/schedlab-nightly and its systemd units call
 * this.
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
#include "db/culprit.h"
#include "db/db.h"
#include "db/night_store.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/orchestrate/lab.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/robot_act.h"
#include "harness/orchestrate/session.h"
#include "harness/orchestrate/tlock.h"
#include "harness/results/robot.h"
#include "harness/util/sigstop.h"
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
	"judged, whatever its tag; one a night: the plan on its target with the\n"
	"tag, never run twice: one left unfinished is resumed, one not yet judged\n"
	"is judged, one judged is left as it is), and turns what moved into alerts:\n"
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
	"                         sent by default. The calls are stored with the\n"
	"                         judgement: a nightly killed before its hook ran\n"
	"                         leaves them to the rerun or the next night.\n"
	"  --on-alert-timeout SECONDS  the hook's time limit, each call (default 300):\n"
	"                         then it and all it started (setsid ones too) get\n"
	"                         SIGTERM, 2 s later SIGKILL, and the night says so\n"
	"                         (exit status 4). The\n"
	"                         hook is stopped too when the night is interrupted\n"
	"                         and never outlives the nightly, even killed by SIGKILL.\n"
	"                         A hook that exits non-zero is named in the summary\n"
	"                         (\"the --on-alert hook failed\") and exits 4 too\n"
	"The summary names the metrics the night left inconclusive on a line of its\n"
	"own (\"undecided: N metrics ...\", with the repetitions a side that would\n"
	"decide each); they do not change the exit status.\n"
	"A series whose effective preemption model changed since the last night (its\n"
	"kernel's default mode moved, voluntary -> lazy) says so (\"effective\n"
	"preemption model changed: voluntary -> lazy at session N\"): that night it\n"
	"is not judged against the old model's baseline, a new baseline starts.\n"
	"Exit status: 0 ok (no new regression; the first night), 1 a new regression\n"
	"alert tonight, 2 setup failure (bad plan or options, the target could not be\n"
	"used), 3 runs failed and nothing new regressed, 4 the --on-alert hook failed\n"
	"(it exited non-zero or was killed at its time limit: the site may not have\n"
	"been told; nothing worse happened), 130 interrupted.\n";

static volatile sig_atomic_t stop_flag;
/* the target's lock, held for the night and handed to the children */
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

/* text from a plan, a note or a repository, printed: no control character
 * reaches the terminal raw (newlines kept) */
static void put(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addprintable(&sb, s, 1);
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
}

/* open alerts of the plan on the machine, one line each */
static void print_open(struct db *db, const struct robot_result *r)
{
	struct db_alert *al;
	size_t n;
	if (db_alerts_open_of(db, r->s.plan, r->s.machine_id, &al, &n))
		return;
	printf("open alerts: %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		struct db_alert_group g;
		struct db_culprit c;
		memset(&g, 0, sizeof(g));
		int culprit = !db_alert_group_get(db, al[i].group_id, &g) &&
			      !db_culprit_decode(g.culprit, &c);
		struct strbuf line = STRBUF_INIT;
		strbuf_addf(&line, "  alert %lld [%s] %s %s.%s %s: %+.1f%% since session %lld",
			    (long long)al[i].id, alert_state_name(al[i].status), al[i].kind,
			    al[i].workload, al[i].metric, al[i].series_label, al[i].change_pct,
			    (long long)al[i].bad_session);
		if (culprit)
			strbuf_addf(&line, "; culprit %.12s", c.commit);
		else if (al[i].status == ALERT_UNRESOLVED && g.why)
			strbuf_addf(&line, "; %s", g.why);
		put(line.buf);
		putchar('\n');
		strbuf_release(&line);
		if (culprit)
			db_culprit_free(&c);
		db_alert_group_free(&g);
	}
	db_alerts_free(al, n);
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
		CLI_PERCENT_OF("bisect-threshold", &o->bisect_threshold),
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
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "undecided: %zu metric%s left inconclusive tonight:", r->undecided.nr,
		    r->undecided.nr == 1 ? "" : "s");
	for (size_t i = 0; i < r->undecided.nr && i < 6; i++)
		strbuf_addf(&sb, "%s %s", i ? "," : "", r->undecided.v[i]);
	if (r->undecided.nr > 6)
		strbuf_addf(&sb, " and %zu more", r->undecided.nr - 6);
	strbuf_addstr(&sb, " (~N: about N repetitions a side would decide it)\n");
	put(sb.buf);
	strbuf_release(&sb);
}

/* the summary of one judged session of the night */
static void print_night(struct db *db, struct robot_night *n, const char *tag,
			double t0)
{
	const struct robot_result *r = &n->r;
	const char *machine = n->sb.machine ? n->sb.machine : "?";
	struct strbuf sb = STRBUF_INIT;
	if (!n->judged) {
		strbuf_addf(&sb, "\n=== schedlab nightly %s: session %lld, plan %s ===\nruns: %s\n"
			    "no results stored: every run failed\n", tag, (long long)n->sb.id,
			    n->sb.plan, n->runs ? n->runs : "?");
		put(sb.buf);
		strbuf_release(&sb);
		return;
	}
	strbuf_addf(&sb, "\n=== schedlab nightly %s: session %lld, plan %s, machine %s (%.0f min) "
		    "===\nruns: %s\n", tag, (long long)n->sb.id, n->sb.plan, machine,
		    (now_mono() - t0) / 60, n->runs ? n->runs : "?");
	put(sb.buf);
	strbuf_reset(&sb);
	print_open(db, r);
	if (!r->nbaseline) {
		strbuf_addf(&sb, "%s\n", r->no_baseline ? r->no_baseline : "no baseline");
	} else {
		strbuf_addstr(&sb, "baseline: sessions");
		for (size_t i = 0; i < r->nbaseline; i++)
			strbuf_addf(&sb, " %lld", (long long)r->baseline[i]);
		strbuf_addf(&sb, " (%zu previous nightly runs of this plan and machine",
			    r->nbaseline);
		if (r->expected_since)
			strbuf_addf(&sb, ", from session %lld on: the expected change",
				    (long long)r->expected_since);
		strbuf_addstr(&sb, ")\n");
		for (size_t i = 0; i < r->breaks.nr; i++)
			strbuf_addf(&sb, "%s\n", r->breaks.v[i]);
		strbuf_addf(&sb, "%zu metrics, %zu worse, %zu better, %zu no change, %zu "
			    "inconclusive, %zu followed by open alerts", r->nmetrics, r->nworse,
			    r->nbetter, r->nsame, r->ninconclusive, r->nknown_metrics);
		if (r->nrestarted)
			strbuf_addf(&sb, "; %zu not judged: a new baseline after a change of the "
				    "preemption model", r->nrestarted);
		strbuf_addch(&sb, '\n');
	}
	put(sb.buf);
	strbuf_reset(&sb);
	if (r->nbaseline)
		print_undecided(r);
	for (size_t i = 0; i < r->lines.nr; i++)
		strbuf_addf(&sb, "%s\n", r->lines.v[i]);
	strbuf_addstr(&sb, n->said.buf);
	if (!n->report_rc) {
		strbuf_addf(&sb, "report: %s\n", n->html);
	} else {
		strbuf_trim(&n->report_err);
		strbuf_addf(&sb, "report: not written%s%s%s\n", n->report_err.len ? " (" : "",
			    n->report_err.buf, n->report_err.len ? ")" : "");
	}
	put(sb.buf);
	strbuf_release(&sb);
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

/* the hook's calls of the night, in turn: 1 when one failed (exited
 * non-zero, could not start, or was killed at its time limit). Not started
 * once the night is interrupted, and the one running then is stopped */
static int tell_hooks(struct db *db, const struct nopts *o, const struct robot_hook_call *calls,
		      size_t n)
{
	int failed = 0;
	/* the summary first: the hook writes to the same stdout */
	fflush(stdout);
	fflush(stderr);
	for (size_t i = 0; i < n; i++) {
		const struct robot_hook_call *h = &calls[i];
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
			failed = 1;
			printf("alert group %lld (%s): %s\n",
			       (long long)h->gid, h->event, err.buf);
		} else if (end == ROBOT_HOOK_FAILED) {
			failed = 1;
			printf("alert group %lld (%s): the --on-alert hook failed: %s\n",
			       (long long)h->gid, h->event, err.buf);
		} else if (end != ROBOT_HOOK_OK) {
			cmd_error("nightly", "alert group %lld: %s", (long long)h->gid, err.buf);
		}
		/* the hook ran: its call is made (one stopped by an interruption
		   stays pending for the next nightly) */
		strbuf_reset(&err);
		if (end != ROBOT_HOOK_STOPPED && robot_hook_delivered(db, h, &err))
			cmd_error("nightly", "%s", err.buf);
		fflush(stdout);
		strbuf_release(&err);
	}
	return failed;
}

/* the night's last line: its exit status and why */
static void night_end(int rc, size_t new_regressions)
{
	switch (rc) {
	case 2:
		printf("exit status 2: setup failure\n");
		break;
	case 130:
		printf("exit status 130: interrupted (the bisection goes on the next night)\n");
		break;
	case 1:
		printf("exit status 1: regression (%zu new alert%s)\n", new_regressions,
		       new_regressions == 1 ? "" : "s");
		break;
	case 3:
		printf("exit status 3: runs failed\n");
		break;
	case 4:
		printf("exit status 4: the --on-alert hook failed (see above; "
		       "--on-alert-timeout is its time limit)\n");
		break;
	default:
		printf("exit status 0: ok\n");
	}
}

/* the plan checked and its target held for the night: 0, or the exit
 * code. The night's plan name and target labels into *plan_name and
 * *targets (docs/alerts.md "One night") */
static int hold_target(const struct nopts *o, char **plan_name, struct strvec *targets)
{
	struct plan p;
	struct strbuf perr = STRBUF_INIT;
	if (plan_load(o->plan, &p, &perr)) {
		cmd_error("nightly", "%s", perr.buf);
		strbuf_release(&perr);
		printf("exit status 2: setup failure\n");
		return 2;
	}
	*plan_name = xstrdup(p.name);
	for (size_t i = 0; i < (p.targets ? p.ntargets : 1); i++) {
		char *label = session_target_label(p.targets ? plan_lab_target(&p, i) : p.target);
		strvec_push(targets, label);
		free(label);
	}
	lock_key = p.targets ? NULL : tlock_key(p.target, NULL);
	char *what = xstrfmt("schedlab nightly %s (plan %s)", o->tag, o->plan);
	int lrc = lock_key ? tlock_take(lock_key, what, NULL, &stop_flag, &perr) : 0;
	free(what);
	plan_release(&p);
	if (lrc)
		cmd_error("nightly", "%s", perr.buf);
	strbuf_release(&perr);
	return lrc ? (stop_flag ? 130 : 2) : 0;
}

/* the options checked beyond their syntax: 0 with *sid (--session, or 0),
 * else the exit code */
static int check_nightly(struct nopts *o, char *deftag, size_t ntag, int64_t *sid)
{
	time_t now = time(NULL);
	struct tm tm;
	strftime(deftag, ntag, "nightly-%Y-%m-%d", localtime_r(&now, &tm));
	if (!o->tag)
		o->tag = deftag;
	if (!o->plan && !o->session) {
		cmd_error("nightly", "--plan is required (or --session ID to judge a stored "
				     "session)");
		return 2;
	}
	if (!cli_valid_tag(o->tag)) {
		cmd_error("nightly", "--tag '%s': 1 to %d letters, digits, . _ - (not . or ..)",
			  o->tag, CLI_TAG_MAX);
		return 2;
	}
	*sid = 0;
	if (o->session) {
		char *end;
		long long v = strtoll(o->session, &end, 10);
		if (*end || v <= 0 || v > (1LL << 53)) {
			cmd_error("nightly", "--session %s: a session id (schedlab sessions)", o->session);
			return 2;
		}
		*sid = v;
	}
	struct strbuf derr = STRBUF_INIT;
	int rc = robot_out_dir(o->dir, NULL, &derr);
	/* before the night runs: its report and logs would have nowhere to go */
	if (rc)
		cmd_error("nightly", "%s", derr.buf);
	strbuf_release(&derr);
	return rc ? 2 : 0;
}

/* tonight's run: 0, 1 (runs failed), or the night's exit code (2, 130)
 * after saying why. A night is one session (docs/alerts.md "One night":
 * the plan, its target, the tag): one left unfinished by a nightly that
 * was killed is finished, not started again beside it, and one stored
 * already is not run again (what is left of it is judged) */
static int night_run(const struct nopts *o, const char *plan, const char *const *targets)
{
	struct robot_tonight t;
	struct strbuf terr = STRBUF_INIT;
	if (robot_tonight(o->dbpath, plan, targets, o->tag, &t, &terr)) {
		cmd_error("nightly", "%s", terr.buf);
		strbuf_release(&terr);
		printf("exit status 2: setup failure\n");
		return 2;
	}
	strbuf_release(&terr);
	if (!t.unfinished && t.stored) {
		fprintf(stderr, "schedlab nightly: the night %s of plan %s on %s is session %lld, "
				"run already (a night is one session): not run again; %s\n",
			o->tag, plan, targets[0], (long long)t.stored,
			t.judged ? "it was judged too (`schedlab nightly --session N` judges a "
				   "session again; another --tag is another night)"
				 : "judging it");
		return 0;
	}
	int64_t left = t.unfinished;
	char lefttxt[32];
	snprintf(lefttxt, sizeof(lefttxt), "%lld", (long long)left);
	const char *av_new[] = { robot_self(), "run", o->plan, "--db", o->dbpath, "--tag", o->tag,
				 NULL };
	const char *av_resume[] = { robot_self(), "run", "--resume", lefttxt, "--db", o->dbpath,
				    NULL };
	if (left)
		fprintf(stderr, "schedlab nightly: session %lld tagged %s was left unfinished (an "
				"earlier nightly was stopped): resuming it\n", (long long)left, o->tag);
	else
		fprintf(stderr, "schedlab nightly: running %s as %s into %s\n", o->plan, o->tag,
			o->dbpath);
	struct strbuf cerr = STRBUF_INIT;
	int rc = robot_child(left ? av_resume : av_new, lock_key, (volatile int *)&stop_flag,
			     NULL, &cerr);
	if (rc < 0)
		cmd_error("nightly", "%s", cerr.buf);
	strbuf_release(&cerr);
	if (rc == 130 || stop_flag) {
		cmd_error("nightly", "interrupted: `schedlab run --resume last --db %s` finishes the "
				     "session", o->dbpath);
		return 130;
	}
	if (rc && rc != 1) {
		cmd_error("nightly", "schedlab run exited %d", rc);
		printf("exit status 2: setup failure\n");
		return 2;
	}
	return rc;
}

/* what the nightly judges: --session, or the complete sessions tagged
 * tonight (a lab made one per member); the number of those left out as
 * unfinished, or -1 after saying why */
static int night_sessions(struct db *db, const struct nopts *o, const char *plan,
			  const char *const *targets, int64_t sid, int64_t **sids, size_t *nsids,
			  int64_t **judged, size_t *njudged)
{
	int unfinished = 0;
	*sids = NULL;
	*nsids = 0;
	*judged = NULL;
	*njudged = 0;
	if (sid) {
		*sids = xcalloc(1, sizeof(**sids));
		(*sids)[(*nsids)++] = sid;
		return 0;
	}
	struct db_night_session *all = NULL;
	size_t n = 0, mine = 0;
	if (db_night_sessions(db, plan, o->tag, &all, &n)) {
		cmd_error("nightly", "%s", db_errmsg(db));
		return -1;
	}
	*sids = xcalloc(n + 1, sizeof(**sids));
	*judged = xcalloc(n + 1, sizeof(**judged));
	for (size_t i = 0; i < n; i++) {
		if (!robot_night_target(targets, all[i].target))
			continue;
		mine++;
		struct db_session_brief sb = { .status = all[i].status };
		/* only complete sessions are judged (one left unfinished is
		   resumed by `schedlab run --resume`), and once by a nightly of
		   the night (--session judges one again) */
		if (!robot_session_complete(&sb)) {
			printf("session %lld tagged %s is %s: not judged\n", (long long)all[i].id,
			       o->tag, all[i].status);
			unfinished++;
		} else if (all[i].nightly) {
			printf("session %lld tagged %s was judged by an earlier nightly of the night: "
			       "not judged again (`schedlab nightly --session %lld` would)\n",
			       (long long)all[i].id, o->tag, (long long)all[i].id);
			(*judged)[(*njudged)++] = all[i].id;
		} else {
			(*sids)[(*nsids)++] = all[i].id;
		}
	}
	db_night_sessions_free(all, n);
	if (!mine) {
		cmd_error("nightly", "no session of plan %s tagged %s in %s", plan, o->tag,
			  o->dbpath);
		return -1;
	}
	return unfinished;
}

/* the options, from parse through the night's run to its judgement */
static struct {
	struct nopts o;
	char deftag[64];
	int64_t sid;     /* --session, or 0 */
	double t0;       /* when the night began */
	int runs_failed; /* tonight's run: 1 when some runs failed */
	char *plan_name; /* the night (with --plan): its plan's name, */
	struct strvec targets; /* its targets' labels */
} args;

/* before the store is opened for the judgement: the plan checked and its
 * target held for the night, and tonight's run (whose child makes the
 * database); 2 or 130 when the night ends here */
static int night_before_db(struct cmd_ctx *ctx)
{
	int prc;
	(void)ctx;
	sigstop_catch(on_signal, 0);
	args.t0 = now_mono();
	/* the plan is checked before anything runs, and its target held for
	   the night: no other session measures there meanwhile */
	if (args.o.plan && (prc = hold_target(&args.o, &args.plan_name, &args.targets)))
		return prc;
	if (!args.sid) {
		args.runs_failed = night_run(&args.o, args.plan_name, args.targets.v);
		if (args.runs_failed > 1)
			return args.runs_failed;
	}
	return CMD_GO;
}

int cmd_nightly_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct nopts *o = &args.o;
	memset(&args, 0, sizeof(args));
	args.targets = (struct strvec)STRVEC_INIT;
	*o = (struct nopts){ .dir = "reports", .baseline = 7, .bisect_minutes = 240,
			     .threshold = 2, .hook_timeout = 300 };
	int prc = opt_nightly(argc, argv, o, ctx);
	if (prc)
		return prc - 1;
	o->dbpath = ctx->dbpath;
	if ((prc = check_nightly(o, args.deftag, sizeof(args.deftag), &args.sid)))
		return prc;
	/* the run child makes the database; --session reads an existing one */
	ctx->db_existing = 1;
	ctx->before_db = night_before_db;
	return CMD_GO;
}

int cmd_nightly(struct cmd_ctx *ctx)
{
	const struct nopts o = args.o;
	struct db *db = ctx->db;
	int64_t sid = args.sid;
	double t0 = args.t0;
	int runs_failed = args.runs_failed;
	int64_t *sids, *judged;
	size_t nsids, njudged;
	int unfinished = night_sessions(db, &o, args.plan_name, args.targets.v, sid, &sids, &nsids,
					&judged, &njudged);
	free(args.plan_name);
	args.plan_name = NULL;
	strvec_clear(&args.targets);
	if (unfinished < 0)
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
	struct robot_night_opts no = {
		.dbpath = o.dbpath, .tag = o.tag, .dir = o.dir, .threshold = o.threshold,
		.bisect_threshold = o.bisect_threshold, .bisect_minutes = o.bisect_minutes,
		.max_steps = o.max_steps, .session_runs = o.session_runs,
		.repetitions = o.repetitions, .no_bisect = o.no_bisect, .hooks = !!o.on_alert,
		.lock_key = lock_key, .abort_flag = (volatile int *)&stop_flag,
	};
	/* an unfinished session left out: the night is not whole */
	int rc = unfinished ? 3 : 0;
	size_t new_regressions = 0;
	struct robot_hook_call *calls = NULL;
	size_t ncalls = 0;
	for (size_t i = 0; i < nsids && !stop_flag; i++) {
		struct robot_night n;
		struct strbuf err = STRBUF_INIT;
		if (robot_night_session(db, sids[i], &no, &ro, nsids > 1, runs_failed, &n, &err)) {
			cmd_error("nightly", "%s", err.buf);
			rc = exit_worse(rc, 2);
		} else {
			print_night(db, &n, n.sb.tag ? n.sb.tag : o.tag, t0);
			rc = exit_worse(rc, n.rc);
			if (n.judged)
				new_regressions += n.r.new_regressions;
			calls = xrealloc(calls, (ncalls + n.ncalls + 1) * sizeof(*calls));
			memcpy(calls + ncalls, n.calls, n.ncalls * sizeof(*calls));
			ncalls += n.ncalls;
			n.ncalls = 0;
		}
		robot_night_free(&n);
		strbuf_release(&err);
	}
	free(sids);
	strvec_clear(&mlist);
	/* a night judged by an earlier nightly: the hook's calls it left
	   (killed before its hook ran) are made now */
	for (size_t i = 0; o.on_alert && i < njudged && !stop_flag; i++) {
		struct db_session_brief sb;
		struct strbuf said = STRBUF_INIT;
		if (!db_session_brief(db, judged[i], &sb)) {
			robot_hook_calls(db, sb.plan, sb.machine_id, &calls, &ncalls, &said);
			db_session_brief_free(&sb);
		}
		put(said.buf);
		strbuf_release(&said);
	}
	free(judged);
	/* the target is let go before the hook runs: a hook takes the time it
	   takes (a mail server, a chat service), and no session waits for it */
	release_target();
	if (tell_hooks(db, &o, calls, ncalls))
		rc = exit_worse(rc, 4);
	if (stop_flag)
		rc = exit_worse(rc, 130);
	night_end(rc, new_regressions);
	for (size_t i = 0; i < ncalls; i++)
		free(calls[i].text);
	free(calls);
	return cmd_finish(rc);
}
