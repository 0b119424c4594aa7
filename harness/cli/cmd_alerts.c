/*
 * schedlab alerts: the regression robot's alerts (docs/alerts.md). Lists
 * them, shows one with its evidence and history, moves them through the
 * life cycle a person may (ack, expect, invalid, reopen: the store refuses
 * any other move with the reason), starts or continues the bisection of an
 * alert's group by hand (harness/orchestrate/robot_act.h), and prints the
 * culprit report of a group. Parses and prints only; text from notes and
 * repositories is printed with its control characters escaped. A store of
 * an older schema is read as it is; only a verb that writes opens it for
 * writing (which migrates it), and only once its input has been checked.
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
#include "db/culprit.h"
#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/orchestrate/robot_act.h"
#include "harness/results/robot.h"
#include "harness/util/sigstop.h"

static const char usage_text[] =
	"usage: schedlab alerts [list] [--status S] [--machine NAME] [--metric M]\n"
	"                       [--since DATE] [--format table|csv|json] [--db FILE]\n"
	"       schedlab alerts show N [--format text|json] [--db FILE]\n"
	"       schedlab alerts ack|expect|invalid N --note TEXT [--db FILE]\n"
	"       schedlab alerts reopen N [--note TEXT] [--db FILE]\n"
	"       schedlab alerts bisect N [--out-dir DIR] [--bisect-minutes M]\n"
	"                       [--bisect-max-steps K] [--bisect-threshold PCT] [--db FILE]\n"
	"       schedlab alerts report N [--format text|json] [--db FILE]\n"
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

/* text from a note, a plan or a repository: control characters escaped */
static void put(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addprintable(&sb, s, 1);
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
}

/* a store made before the alerts' tables (an older schema, read as it is) */
static int no_alert_tables(struct db *db)
{
	return strstr(db_errmsg(db), "no such table") != NULL;
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
		/* read-only, a database of an older schema is not migrated: no
		   alerts, in the format asked for */
		if (!no_alert_tables(db)) {
			cmd_error("alerts", "%s", db_errmsg(db));
			return 2;
		}
		if (o->fmt == FMT_TABLE) {
			printf("no alerts: schedlab nightly has not judged a session in %s\n",
			       o->dbpath);
			return 0;
		}
		al = NULL;
		n = 0;
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
		struct db_culprit c;
		int has = !db_culprit_decode(g.culprit, &c);
		const char *cc = has ? c.commit : NULL;
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
		db_culprit_free(&c);
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

/* the alert from the store: 0, or 2 after saying why (an older store: no
 * alerts, not an SQL error) */
static int get_alert(struct db *db, int64_t id, struct db_alert *a)
{
	if (!db_alert_get(db, id, a))
		return 0;
	if (no_alert_tables(db))
		cmd_error("alerts", "no alert %lld: the store has no alerts (schedlab nightly has "
				    "not judged a session in it)", (long long)id);
	else
		cmd_error("alerts", "%s", db_errmsg(db));
	return 2;
}

static json_t *jtext(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static void print_json(json_t *o)
{
	char *t = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (t)
		printf("%s\n", t);
	free(t);
	json_decref(o);
}

static int do_show(struct db *db, int64_t id, enum out_format fmt)
{
	struct db_alert a;
	if (get_alert(db, id, &a))
		return 2;
	struct db_alert_group g;
	memset(&g, 0, sizeof(g));
	db_alert_group_get(db, a.group_id, &g);
	int same_kernel = robot_group_same_kernel(db, g.id) == 1;
	struct db_culprit c;
	int culprit = !db_culprit_decode(g.culprit, &c);
	struct db_alert_event *ev = NULL;
	size_t n = 0;
	int have_ev = !db_alert_events(db, id, &ev, &n);
	if (fmt == FMT_JSON) {
		json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
				      " s:o, s:I, s:I, s:o, s:o, s:o, s:o}",
				      "alert", (json_int_t)a.id, "group", (json_int_t)a.group_id,
				      "kind", a.kind, "status", alert_state_word(a.status),
				      "detector", a.detector, "metric",
				      json_sprintf("%s.%s", a.workload, a.metric), "unit",
				      jtext(a.unit), "series", jtext(a.series_label), "base_value",
				      jnum(a.base_value), "value", jnum(a.value), "change_pct",
				      jnum(a.change_pct), "p", jnum(a.p), "selector",
				      jtext(a.series_where), "good_session", (json_int_t)a.good_session,
				      "bad_session", (json_int_t)a.bad_session, "range",
				      jtext(g.range_key), "culprit",
				      culprit ? json_loads(g.culprit, 0, NULL) : json_null(), "why",
				      jtext(g.why), "history", json_array());
		json_object_set_new(o, "no_kernel_change", json_boolean(same_kernel));
		json_t *h = json_object_get(o, "history");
		for (size_t i = 0; have_ev && i < n; i++)
			json_array_append_new(h, json_pack("{s:o, s:o, s:o, s:o, s:o}", "at",
							   jtext(ev[i].at), "from",
							   jtext(ev[i].from_status), "to",
							   jtext(ev[i].to_status), "actor",
							   jtext(ev[i].actor), "note",
							   jtext(ev[i].note)));
		print_json(o);
		goto out;
	}
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "alert %lld: %s %s, %s\n", (long long)a.id, a.kind,
		    alert_state_name(a.status), a.detector);
	strbuf_addf(&sb, "metric:   %s.%s (%s)\n", a.workload, a.metric, a.unit ? a.unit : "");
	strbuf_addf(&sb, "series:   %s\n", a.series_label);
	strbuf_addf(&sb, "change:   %.6g -> %.6g", a.base_value, a.value);
	if (isfinite(a.change_pct))
		strbuf_addf(&sb, ", %+.2f%%", a.change_pct);
	if (isfinite(a.ci_lo))
		strbuf_addf(&sb, " [%+.2f, %+.2f]", a.ci_lo, a.ci_hi);
	if (isfinite(a.p))
		strbuf_addf(&sb, ", p=%.3g", a.p);
	strbuf_addf(&sb, "\nsessions: good %lld .. bad %lld; baseline %s; last seen %lld",
		    (long long)a.good_session, (long long)a.bad_session, a.baseline,
		    (long long)a.last_seen_session);
	if (a.fixed_session)
		strbuf_addf(&sb, "; fixed by %lld", (long long)a.fixed_session);
	strbuf_addf(&sb, "\ngroup %lld: plan %s, %s", (long long)g.id, g.plan ? g.plan : "?",
		    g.range_key ? g.range_key : "?");
	if (g.ncommits >= 0)
		strbuf_addf(&sb, " (%d commit%s)", g.ncommits, g.ncommits == 1 ? "" : "s");
	if (same_kernel)
		strbuf_addf(&sb, ": %s (nothing to bisect)", ROBOT_NO_KERNEL_CHANGE);
	strbuf_addch(&sb, '\n');
	if (g.bisect_id)
		strbuf_addf(&sb, "bisection: %lld (schedlab bisect --resume %lld shows its log)\n",
			    (long long)g.bisect_id, (long long)g.bisect_id);
	if (culprit)
		strbuf_addf(&sb, "culprit:  %s %s (%s)\n", c.commit, c.subject ? c.subject : "",
			    c.author ? c.author : "");
	if (g.why)
		strbuf_addf(&sb, "why:      %s\n", g.why);
	strbuf_addf(&sb, "selector: %s\n", a.series_where);
	if (have_ev) {
		strbuf_addstr(&sb, "history:\n");
		for (size_t i = 0; i < n; i++) {
			strbuf_addf(&sb, "  %s %-8s %s -> %s", ev[i].at, ev[i].actor,
				    ev[i].from_status ? ev[i].from_status : "(raised)",
				    ev[i].to_status);
			if (ev[i].session)
				strbuf_addf(&sb, " (session %lld)", (long long)ev[i].session);
			if (ev[i].note) {
				/* a note is one line of the history */
				strbuf_addstr(&sb, ": ");
				strbuf_addprintable(&sb, ev[i].note, 0);
			}
			strbuf_addch(&sb, '\n');
		}
	}
	put(sb.buf);
	strbuf_release(&sb);
out:
	if (have_ev)
		db_alert_events_free(ev, n);
	if (culprit)
		db_culprit_free(&c);
	db_alert_group_free(&g);
	db_alert_free(&a);
	return 0;
}

static int do_move(struct db *db, int64_t id, enum alert_state to, const char *note,
		   const char *verb, enum out_format fmt)
{
	if (db_alert_move(db, id, to, ALERT_BY_PERSON, note, 0)) {
		cmd_error("alerts", "%s: %s", verb, db_errmsg(db));
		return 2;
	}
	struct db_alert a;
	if (db_alert_get(db, id, &a)) {
		cmd_error("alerts", "%s: %s", verb, db_errmsg(db));
		return 2;
	}
	if (fmt == FMT_JSON) {
		json_t *o = json_pack("{s:I, s:s}", "alert", (json_int_t)id, "status",
				      alert_state_word(a.status));
		if (to == ALERT_EXPECTED)
			json_object_set_new(o, "baseline_from", json_integer(a.bad_session));
		print_json(o);
	} else {
		printf("alert %lld: %s\n", (long long)id, alert_state_name(a.status));
		if (to == ALERT_EXPECTED)
			printf("the nightly baseline of this plan and machine now starts at session "
			       "%lld\n", (long long)a.bad_session);
	}
	db_alert_free(&a);
	return 0;
}

/* a move checked on the store as it is, before it is opened for writing
 * (which migrates an older one), by the life cycle (a note included): 0, or
 * 2 after saying why */
static int check_move(struct db *db, int64_t id, enum alert_state to, const char *note,
		      const char *verb)
{
	struct db_alert a;
	if (get_alert(db, id, &a))
		return 2;
	char why[400];
	enum alert_state dest;
	int rc = 0;
	if (alert_move_decide(a.status, to, ALERT_BY_PERSON, note, 0, &dest, why, sizeof(why)) !=
	    ALERT_MOVE_DO) {
		cmd_error("alerts", "%s: alert %lld: %s", verb, (long long)id, why);
		rc = 2;
	}
	db_alert_free(&a);
	return rc;
}

static int do_bisect(struct db *db, int64_t id, const struct aopts *o)
{
	sigstop_catch(on_signal, 0);
	struct robot_bisect_opts bo = { .dbpath = o->dbpath, .dir = o->dir,
					.budget_s = 60.0 * (double)o->bisect_minutes,
					.max_steps = (int)o->max_steps,
					.threshold_pct = o->bisect_threshold,
					.abort_flag = &stop_flag };
	struct strbuf said = STRBUF_INIT, err = STRBUF_INIT;
	int more, rc = 0;
	if (robot_bisect_alert(db, id, &bo, &more, &said, &err)) {
		cmd_error("alerts", "bisect: %s", err.buf);
		rc = 2;
	}
	put(said.buf);
	if (!rc && (more || stop_flag))
		rc = 130;
	strbuf_release(&said);
	strbuf_release(&err);
	return rc;
}

static int do_report(struct db *db, int64_t id, enum out_format fmt)
{
	struct db_alert a;
	if (get_alert(db, id, &a))
		return 2;
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	int rc = 0;
	if (robot_group_report(db, a.group_id, &out, &err)) {
		cmd_error("alerts", "report: %s", err.buf);
		rc = 2;
	} else if (fmt == FMT_JSON) {
		struct db_alert_group g;
		json_t *c = NULL;
		if (!db_alert_group_get(db, a.group_id, &g)) {
			c = g.culprit ? json_loads(g.culprit, 0, NULL) : NULL;
			db_alert_group_free(&g);
		}
		print_json(json_pack("{s:I, s:o, s:s}", "group", (json_int_t)a.group_id,
				     "culprit", c ? c : json_null(), "text", out.buf));
	} else {
		put(out.buf);
	}
	strbuf_release(&out);
	strbuf_release(&err);
	db_alert_free(&a);
	return rc;
}

/* the verbs: what each does, and the move a person makes with it */
enum act { ACT_LIST, ACT_SHOW, ACT_MOVE, ACT_BISECT, ACT_REPORT };
struct verb {
	const char *name;
	enum act act;
	enum alert_state to;    /* ACT_MOVE */
};
static const struct verb verbs[] = {
	{ "list", ACT_LIST, 0 },
	{ "show", ACT_SHOW, 0 },
	{ "ack", ACT_MOVE, ALERT_ACKNOWLEDGED },
	{ "expect", ACT_MOVE, ALERT_EXPECTED },
	{ "invalid", ACT_MOVE, ALERT_INVALID },
	{ "reopen", ACT_MOVE, ALERT_NEW },
	{ "bisect", ACT_BISECT, 0 },
	{ "report", ACT_REPORT, 0 },
};

/* the options and the verb, from parse to the work */
static struct {
	struct aopts o;
	const struct verb *v;
	int64_t id;
} args;

/* a move or a bisection checked in the store as it is (c->db read-only,
 * NULL when there is no file: then main's opening says so): the store is
 * opened for writing, and an older one migrated, only once it passes */
static int alerts_check(struct cmd_ctx *ctx)
{
	const struct verb *v = args.v;
	if (!ctx->db)
		return CMD_GO;
	if (v->act == ACT_MOVE && check_move(ctx->db, args.id, v->to, args.o.note, v->name))
		return 2;
	if (v->act == ACT_BISECT) {
		struct db_alert a;
		if (get_alert(ctx->db, args.id, &a))
			return 2;
		db_alert_free(&a);
	}
	return CMD_GO;
}

int cmd_alerts_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct aopts *o = &args.o;
	memset(&args, 0, sizeof(args));
	o->fmt = FMT_TABLE;
	o->dir = "reports";
	o->bisect_minutes = 240;
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath), CLI_STR("status", &o->status), CLI_STR("machine", &o->machine),
		CLI_STR("metric", &o->metric), CLI_SINCE(&o->since), CLI_STR("note", &o->note),
		CLI_FORMAT(&o->fmt, 1), CLI_STR("out-dir", &o->dir),
		CLI_RANGE("bisect-minutes", &o->bisect_minutes, 1, 100000),
		CLI_RANGE("bisect-max-steps", &o->max_steps, 1, 1000),
		CLI_PERCENT_OF("bisect-threshold", &o->bisect_threshold),
		CLI_END,
	};
	int first, rc = cli_parse("alerts", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	const char *verb = first < argc ? argv[first] : "list";
	const struct verb *v = NULL;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]) && !v; i++)
		if (!strcmp(verb, verbs[i].name))
			v = &verbs[i];
	if (!v) {
		cmd_error("alerts", "'%s': expected list, show, ack, expect, invalid, reopen, "
				    "bisect or report (schedlab alerts --help)", verb);
		return 2;
	}
	int nargs = argc - first - (first < argc);
	if ((v->act == ACT_LIST && nargs > 0) || (v->act != ACT_LIST && nargs != 1)) {
		cmd_error("alerts", v->act != ACT_LIST ? "%s takes one alert number"
						       : "%s takes no argument", verb);
		return 2;
	}
	if (o->fmt == FMT_CSV && v->act != ACT_LIST) {
		cmd_error("alerts", "%s: --format text or json (csv is for the list)", verb);
		return 2;
	}
	if (v->act != ACT_LIST && parse_id(argv[first + 1], &args.id))
		return 2;
	args.v = v;
	o->dbpath = ctx->dbpath;
	/* every verb reads the store as it is first, never a new file; one
	   that writes checks its input there (alerts_check), and only then is
	   it opened for writing (an older store is migrated then, not before a
	   refusal) */
	ctx->db_existing = 1;
	if (v->act == ACT_MOVE || v->act == ACT_BISECT)
		ctx->before_db = alerts_check;
	else
		ctx->flags = CMD_DB_RO;
	return CMD_GO;
}

int cmd_alerts(struct cmd_ctx *ctx)
{
	const struct aopts *o = &args.o;
	struct db *db = ctx->db;
	int64_t id = args.id;
	int rc = 2;
	switch (args.v->act) {
	case ACT_LIST: rc = do_list(db, o); break;
	case ACT_SHOW: rc = do_show(db, id, o->fmt); break;
	case ACT_MOVE: rc = do_move(db, id, args.v->to, o->note, args.v->name, o->fmt); break;
	case ACT_BISECT: rc = do_bisect(db, id, o); break;
	case ACT_REPORT: rc = do_report(db, id, o->fmt); break;
	}
	return cmd_finish(rc);
}
