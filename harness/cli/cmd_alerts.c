/*
 * schedlab alerts: the regression robot's alerts (docs/alerts.md). Lists
 * them, shows one with its evidence and history, moves them through the
 * life cycle a person may (ack, expect, invalid, reopen: the store refuses
 * any other move with the reason), starts or continues the bisection of an
 * alert's group by hand, and prints the culprit report of a group.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db/alert_store.h"
#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/cli/robot_cli.h"
#include "harness/results/robot.h"

static const char usage_text[] =
	"usage: schedlab alerts [list] [--status S] [--machine NAME] [--metric M]\n"
	"                       [--since DATE] [--format table|csv|json] [--db FILE]\n"
	"       schedlab alerts show N [--db FILE]\n"
	"       schedlab alerts ack|expect|invalid N --note TEXT [--db FILE]\n"
	"       schedlab alerts reopen N [--note TEXT] [--db FILE]\n"
	"       schedlab alerts bisect N [--out-dir DIR] [--bisect-minutes M]\n"
	"                       [--bisect-max-steps K] [--bisect-threshold PCT] [--db FILE]\n"
	"       schedlab alerts report N [--db FILE]\n"
	"\n"
	"The alerts `schedlab nightly` raised (docs/alerts.md). list: the open ones by\n"
	"default (--status new|bisecting|culprit|unresolved|acknowledged|expected|\n"
	"invalid|fixed|open|all). show: the numbers, the range, the group's bisection\n"
	"and every status change. ack, expect (a deliberate change: later nightly\n"
	"baselines start after it), invalid (noise, a broken machine): a person's\n"
	"decision, with a note saying why; reopen undoes one. bisect: start or go on\n"
	"with the bisection of the alert's group now. report: the group's culprit\n"
	"report, plain text, ready to mail.\n"
	"Exit status: 0 done, 2 bad input or a move the life cycle refuses.\n";

struct aopts {
	const char *dbpath, *status, *machine, *metric, *since, *note, *dir;
	enum out_format fmt;
	size_t bisect_minutes, max_steps;
	double bisect_threshold;
};

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static char *num(double v, const char *fmt)
{
	return isfinite(v) ? xstrfmt(fmt, v) : xstrdup("");
}

static int do_list(struct db *db, const struct aopts *o)
{
	struct db_alert_filter f = { .status = ALERT_NSTATES, .machine = o->machine,
				     .metric = o->metric, .since = o->since };
	if (o->status && !strcmp(o->status, "all"))
		f.status = -1;
	else if (o->status && strcmp(o->status, "open")) {
		int s = alert_state_parse(o->status);
		if (s < 0) {
			cmd_error("alerts", "--status %s: one of new, bisecting, culprit, unresolved, "
					    "acknowledged, expected, invalid, fixed, open, all", o->status);
			return 2;
		}
		f.status = s;
	}
	struct db_alert *al;
	size_t n;
	if (db_alerts_list(db, &f, &al, &n)) {
		/* read-only, a database of an older schema is not migrated */
		if (strstr(db_errmsg(db), "no such table")) {
			printf("no alerts: schedlab nightly has not judged a session in %s\n",
			       o->dbpath);
			return 0;
		}
		cmd_error("alerts", "%s", db_errmsg(db));
		return 2;
	}
	static const char *const cols[] = { "alert", "group", "status", "kind", "metric", "series",
					    "change_pct", "ci", "p", "good_session", "bad_session",
					    "culprit", "created_at" };
	struct rowset rs;
	rowset_init(&rs, sizeof(cols) / sizeof(cols[0]), cols);
	for (size_t i = 0; i < n; i++) {
		struct db_alert_group g;
		memset(&g, 0, sizeof(g));
		db_alert_group_get(db, al[i].group_id, &g);
		json_t *c = g.culprit ? json_loads(g.culprit, 0, NULL) : NULL;
		const char *cc = json_string_value(json_object_get(c, "commit"));
		char *id = xstrfmt("%lld", (long long)al[i].id), *gid = xstrfmt("%lld", (long long)al[i].group_id);
		char *m = xstrfmt("%s.%s", al[i].workload, al[i].metric);
		char *ch = num(al[i].change_pct, "%+.1f");
		char *ci = isfinite(al[i].ci_lo) ? xstrfmt("[%+.1f, %+.1f]", al[i].ci_lo, al[i].ci_hi)
						 : xstrdup("");
		char *p = num(al[i].p, "%.2g");
		char *gs = xstrfmt("%lld", (long long)al[i].good_session);
		char *bs = xstrfmt("%lld", (long long)al[i].bad_session);
		char *cul = cc ? xstrfmt("%.12s", cc) : xstrdup("");
		const char *row[] = { id, gid, alert_state_name(al[i].status), al[i].kind, m,
				      al[i].series_label, ch, ci, p, gs, bs, cul, al[i].created_at };
		rowset_add(&rs, row);
		char *fr[] = { id, gid, m, ch, ci, p, gs, bs, cul };
		for (size_t k = 0; k < sizeof(fr) / sizeof(fr[0]); k++)
			free(fr[k]);
		json_decref(c);
		db_alert_group_free(&g);
	}
	if (!n && o->fmt == FMT_TABLE)
		printf("no %s alerts\n", o->status ? o->status : "open");
	else
		rowset_print(&rs, o->fmt, stdout);
	rowset_release(&rs);
	db_alerts_free(al, n);
	return 0;
}

static int parse_id(const char *s, int64_t *id)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v <= 0) {
		cmd_error("alerts", "'%s': an alert number (schedlab alerts lists them)", s);
		return 2;
	}
	*id = v;
	return 0;
}

static int do_show(struct db *db, int64_t id)
{
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		cmd_error("alerts", "%s", db_errmsg(db));
		return 2;
	}
	struct db_alert_group g;
	memset(&g, 0, sizeof(g));
	db_alert_group_get(db, a.group_id, &g);
	printf("alert %lld: %s %s, %s\n", (long long)a.id, a.kind, alert_state_name(a.status),
	       a.detector);
	printf("metric:   %s.%s (%s)\n", a.workload, a.metric, a.unit ? a.unit : "");
	printf("series:   %s\n", a.series_label);
	printf("change:   %.6g -> %.6g", a.base_value, a.value);
	if (isfinite(a.change_pct))
		printf(", %+.2f%%", a.change_pct);
	if (isfinite(a.ci_lo))
		printf(" [%+.2f, %+.2f]", a.ci_lo, a.ci_hi);
	if (isfinite(a.p))
		printf(", p=%.3g", a.p);
	printf("\nsessions: good %lld .. bad %lld; baseline %s; last seen %lld", (long long)a.good_session,
	       (long long)a.bad_session, a.baseline, (long long)a.last_seen_session);
	if (a.fixed_session)
		printf("; fixed by %lld", (long long)a.fixed_session);
	printf("\ngroup %lld: plan %s, %s", (long long)g.id, g.plan ? g.plan : "?",
	       g.range_key ? g.range_key : "?");
	if (g.ncommits >= 0)
		printf(" (%d commit%s)", g.ncommits, g.ncommits == 1 ? "" : "s");
	if (robot_group_same_kernel(db, g.id) == 1)
		printf(": %s (nothing to bisect)", ROBOT_NO_KERNEL_CHANGE);
	putchar('\n');
	if (g.bisect_id)
		printf("bisection: %lld (schedlab bisect --resume %lld shows its log)\n",
		       (long long)g.bisect_id, (long long)g.bisect_id);
	if (g.culprit)
		printf("culprit:  %s\n", g.culprit);
	if (g.why)
		printf("why:      %s\n", g.why);
	printf("selector: %s\n", a.series_where);
	struct db_alert_event *ev;
	size_t n;
	if (!db_alert_events(db, id, &ev, &n)) {
		printf("history:\n");
		for (size_t i = 0; i < n; i++) {
			printf("  %s %-8s %s -> %s", ev[i].at, ev[i].actor,
			       ev[i].from_status ? ev[i].from_status : "(raised)", ev[i].to_status);
			if (ev[i].session)
				printf(" (session %lld)", (long long)ev[i].session);
			if (ev[i].note)
				printf(": %s", ev[i].note);
			putchar('\n');
		}
		db_alert_events_free(ev, n);
	}
	db_alert_group_free(&g);
	db_alert_free(&a);
	return 0;
}

static int do_move(struct db *db, int64_t id, enum alert_state to, const char *note,
		   const char *verb)
{
	if (to != ALERT_NEW && (!note || !*note)) {
		cmd_error("alerts", "%s %lld: --note TEXT is required (why: it stays in the alert's "
				    "history)", verb, (long long)id);
		return 2;
	}
	if (db_alert_move(db, id, to, ALERT_BY_PERSON, note, 0)) {
		cmd_error("alerts", "%s: %s", verb, db_errmsg(db));
		return 2;
	}
	struct db_alert a;
	if (!db_alert_get(db, id, &a)) {
		printf("alert %lld: %s\n", (long long)id, alert_state_name(a.status));
		if (to == ALERT_EXPECTED)
			printf("the nightly baseline of this plan and machine now starts at session "
			       "%lld\n", (long long)a.bad_session);
		db_alert_free(&a);
	}
	return 0;
}

static int do_bisect(struct db *db, int64_t id, const struct aopts *o)
{
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		cmd_error("alerts", "%s", db_errmsg(db));
		return 2;
	}
	int rc = 0;
	if (robot_group_same_kernel(db, a.group_id) == 1) {
		cmd_error("alerts", "bisect: alert %lld: %s (sessions %lld and %lld ran the same "
				    "kernel, configuration and knobs): there is nothing to bisect",
			  (long long)id, ROBOT_NO_KERNEL_CHANGE, (long long)a.good_session,
			  (long long)a.bad_session);
		db_alert_free(&a);
		return 2;
	}
	if (a.status == ALERT_UNRESOLVED || a.status == ALERT_NEW) {
		if (db_alert_move(db, id, ALERT_BISECTING, ALERT_BY_PERSON, "bisect by hand", 0)) {
			cmd_error("alerts", "bisect: %s", db_errmsg(db));
			rc = 2;
		}
	} else if (a.status != ALERT_BISECTING) {
		char why[400];
		alert_transition_ok(a.status, ALERT_BISECTING, ALERT_BY_PERSON, why, sizeof(why));
		cmd_error("alerts", "bisect: alert %lld: %s", (long long)id, why);
		rc = 2;
	}
	if (!rc && mkdir(o->dir, 0755) && errno != EEXIST) {
		cmd_error("alerts", "--out-dir %s: %m", o->dir);
		rc = 2;
	}
	if (!rc) {
		struct sigaction sa = { 0 };
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		struct robot_bisect_opts bo = { .dbpath = o->dbpath, .dir = o->dir,
						.budget_s = 60.0 * (double)o->bisect_minutes,
						.max_steps = (int)o->max_steps,
						.threshold_pct = o->bisect_threshold,
						.abort_flag = &stop_flag };
		struct strbuf said = STRBUF_INIT, err = STRBUF_INIT;
		int more;
		if (robot_bisect_group(db, a.group_id, &bo, &more, &said, &err)) {
			cmd_error("alerts", "bisect: %s", err.buf);
			rc = 2;
		}
		fputs(said.buf, stdout);
		if (!rc && (more || stop_flag))
			rc = 130;
		strbuf_release(&said);
		strbuf_release(&err);
	}
	db_alert_free(&a);
	return rc;
}

static int do_report(struct db *db, int64_t id)
{
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		cmd_error("alerts", "%s", db_errmsg(db));
		return 2;
	}
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	int rc = 0;
	if (robot_group_report(db, a.group_id, &out, &err)) {
		cmd_error("alerts", "report: %s", err.buf);
		rc = 2;
	} else {
		fputs(out.buf, stdout);
	}
	strbuf_release(&out);
	strbuf_release(&err);
	db_alert_free(&a);
	return rc;
}

int cmd_alerts(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct aopts o = { .fmt = FMT_TABLE, .dir = "reports", .bisect_minutes = 240 };
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath), CLI_STR("status", &o.status), CLI_STR("machine", &o.machine),
		CLI_STR("metric", &o.metric), CLI_SINCE(&o.since), CLI_STR("note", &o.note),
		CLI_FORMAT(&o.fmt, 1), CLI_STR("out-dir", &o.dir),
		CLI_RANGE("bisect-minutes", &o.bisect_minutes, 1, 100000),
		CLI_RANGE("bisect-max-steps", &o.max_steps, 1, 1000),
		{ "bisect-threshold", CLI_PERCENT, &o.bisect_threshold, 0, 0, NULL, NULL, NULL, 1 },
		CLI_END,
	};
	int first, rc = cli_parse("alerts", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	const char *verb = first < argc ? argv[first] : "list";
	static const char *const verbs[] = { "list", "show", "ack", "expect", "invalid", "reopen",
					     "bisect", "report", NULL };
	int vi = -1;
	for (int i = 0; verbs[i]; i++)
		if (!strcmp(verb, verbs[i]))
			vi = i;
	if (vi < 0) {
		cmd_error("alerts", "'%s': expected list, show, ack, expect, invalid, reopen, "
				    "bisect or report (schedlab alerts --help)", verb);
		return 2;
	}
	int nargs = argc - first - (first < argc);
	if ((vi == 0 && nargs > 0) || (vi > 0 && nargs != 1)) {
		cmd_error("alerts", vi ? "%s takes one alert number" : "%s takes no argument",
			  verb);
		return 2;
	}
	int64_t id = 0;
	if (vi > 0 && parse_id(argv[first + 1], &id))
		return 2;
	/* the moves and bisect write to an existing database, the rest read */
	o.dbpath = ctx->dbpath;
	int write = vi >= 2 && vi <= 6;
	if (!write)
		ctx->flags = CMD_DB_RO;
	struct db *db = cmd_db(ctx, 1);
	if (!db)
		return 2;
	switch (vi) {
	case 0: rc = do_list(db, &o); break;
	case 1: rc = do_show(db, id); break;
	case 2: rc = do_move(db, id, ALERT_ACKNOWLEDGED, o.note, verb); break;
	case 3: rc = do_move(db, id, ALERT_EXPECTED, o.note, verb); break;
	case 4: rc = do_move(db, id, ALERT_INVALID, o.note, verb); break;
	case 5: rc = do_move(db, id, ALERT_NEW, o.note, verb); break;
	case 6: rc = do_bisect(db, id, &o); break;
	default: rc = do_report(db, id); break;
	}
	return cmd_finish(rc);
}
