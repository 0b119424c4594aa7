/*
 * schedlab run: run a plan into the database, or finish an interrupted
 * session with --resume. This file parses the options and calls the
 * orchestration: the plan is validated and checked against the target before
 * anything is stored (session_preflight); then every planned boot and run is
 * written to the database and worked through (harness/orchestrate/session.c).
 * Kernel variants in matrix.kernel are built first (session_build_kernels).
 * A lab (a plan with "targets": [...]) and `--resume lab:...` are run by
 * harness/orchestrate/lab.c: one session per member, in parallel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/orchestrate/lab.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/session.h"
#include "harness/targets/target.h"

static const char usage_text[] =
	"usage: schedlab run PLAN.json [--db FILE] [--tag TAG] [--target SPEC]\n"
	"                    [--until-decided] [--quiet]\n"
	"       schedlab run --resume SESSION|last|lab:LAB [--db FILE] [--take-over]\n"
	"\n"
	"Runs every boot and run of PLAN.json and stores them in the database, each run\n"
	"in its own transaction as it finishes. Ctrl-C stops the current run, restores\n"
	"the knobs, and leaves the session resumable. A plan with \"targets\" (a lab)\n"
	"runs one session per target, in parallel, with progress lines prefixed by\n"
	"the target.\n"
	"  --db FILE       database (default schedlab.db; created when absent)\n"
	"  --tag TAG       label the session (e.g. nightly-2026-12-01): letters, digits, . _ -\n"
	"  --target SPEC   override the plan's target: local, qemu:KERNEL,\n"
	"                  ssh://[user@]host[:port] (not for a lab plan)\n"
	"  --resume S      finish session S (a number or \"last\"): runs that did not\n"
	"                  finish are run again, finished runs are kept;\n"
	"                  lab:ID, lab:SESSION or lab:last: every session of a lab,\n"
	"                  in parallel\n"
	"  --take-over     with --resume: take the session from its recorded owner\n"
	"                  even when that cannot be seen to have ended (a controller\n"
	"                  on another host); one on this host that still runs is\n"
	"                  never displaced without it, one that ended always is\n"
	"  --until-decided sequential repetitions: the plan's \"repetitions\": N\n"
	"                  becomes the most rounds; after each round (from the 3rd)\n"
	"                  a configuration whose comparisons are decided gets no\n"
	"                  more (docs/plan-format.md, docs/statistics.md)\n"
	"  --quiet         no progress lines\n"
	"Exit status: 0 every run ok, 1 some runs failed or were skipped,\n"
	"2 bad input or a setup error, 130 interrupted (resumable); for a lab the\n"
	"worst of its members in the order 2, 130, 1, 0.\n";

struct run_args {
	const char *tag, *target, *resume;
	const char *plan;       /* the plan file; NULL with --resume */
	int quiet, take_over, until_decided;
};

/* CMD_GO, else the exit code (--help, bad usage) */
static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, struct run_args *a)
{
	memset(a, 0, sizeof(*a));
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath), CLI_STR("tag", &a->tag), CLI_STR("target", &a->target),
		CLI_STR("resume", &a->resume), CLI_BOOL("quiet", &a->quiet),
		CLI_BOOL("take-over", &a->take_over), CLI_BOOL("until-decided", &a->until_decided),
		CLI_END,
	};
	int first, rc = cli_parse("run", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (a->resume ? first != argc : first != argc - 1) {
		cmd_error("run", a->resume ? "--resume takes no plan file" : "expected one plan file");
		fputs(usage_text, stderr);
		return 2;
	}
	if (a->take_over && !a->resume) {
		cmd_error("run", "--take-over goes with --resume");
		return 2;
	}
	if (a->resume && (a->tag || a->target || a->until_decided)) {
		cmd_error("run", "--resume continues a session as it was planned; "
			  "--tag, --target and --until-decided cannot change it");
		return 2;
	}
	if (a->tag && !cli_valid_tag(a->tag)) {
		cmd_error("run", "--tag: 1 to %d letters, digits, . _ - (not . or ..): the tag "
			  "names files (nightly's report TAG.html)", CLI_TAG_MAX);
		return 2;
	}
	a->plan = a->resume ? NULL : argv[first];
	return CMD_GO;
}

/* the plan file, with --target in place of its target; -1 after printing why */
static int load_plan(const struct run_args *a, struct plan *p, struct strbuf *err)
{
	if (plan_load(a->plan, p, err)) {
		fprintf(stderr, "%s\n", err->buf);
		return -1;
	}
	if (a->until_decided && plan_set_until_decided(p, err)) {
		cmd_error("run", "%s: %s", a->plan, err->buf);
		return -1;
	}
	if (!a->target)
		return 0;
	json_t *t = target_spec_parse(a->target, err);
	if (!t || plan_set_target(p, t, err)) {
		cmd_error("run", "--target %s", err->buf);
		json_decref(t);
		return -1;
	}
	json_decref(t);
	return 0;
}

/* kernel variants are built (or found in the cache) first, so that the
 * stored plan and boots name the built folders; a target that cannot boot
 * kernels refuses them in the preflight instead. Then the preflight.
 * -1 after printing why */
static int build_and_check(struct plan *p, const struct session_opts *so, struct strbuf *err)
{
	int kernels = !!(p->tops->caps & TCAP_KERNEL);
	for (size_t i = 0; i < p->ntargets; i++) {
		const struct target_ops *o = target_find(json_string_value(
			json_object_get(plan_lab_target(p, i), "type")));
		kernels |= o && (o->caps & TCAP_KERNEL);
	}
	if (kernels && session_build_kernels(p, so->quiet, so->abort_flag, err)) {
		cmd_error("run", "%s", err->buf);
		return -1;
	}
	if (session_preflight(p, so, err)) {
		fprintf(stderr, "%s\n", err->buf);
		return -1;
	}
	/* the pairs left out by "matrix.impossible": "drop", said before anything runs */
	for (size_t i = 0; i < p->offer_notes.nr; i++)
		fprintf(stderr, "%s: %s\n", p->path, p->offer_notes.v[i]);
	return 0;
}

/* work through session `sid` and say where the results are */
static int execute(struct db *db, int64_t sid, struct plan *p, const char *dbpath,
		   const struct session_opts *so)
{
	struct strbuf err = STRBUF_INIT;
	int rc = session_execute(db, sid, p, so, &err);
	if (err.len)
		cmd_error("run", "%s", err.buf);
	strbuf_release(&err);
	int planned, ok, failed, skipped;
	if (!so->quiet && !db_session_counts(db, sid, &planned, &ok, &failed, &skipped))
		fprintf(stderr, "session %lld: %d ok, %d failed, %d skipped, %d not run; "
			"results in %s (schedlab query --db %s \"SELECT * FROM results "
			"WHERE session = %lld\")\n", (long long)sid, ok, failed, skipped,
			planned, dbpath, dbpath, (long long)sid);
	return rc;
}

/* schedlab run PLAN.json: a new session, or a new lab, in the database
 * main opened once build_and_check passed (run_before_db) */
static int run_plan(struct cmd_ctx *ctx, struct plan *p, const struct session_opts *so)
{
	struct strbuf err = STRBUF_INIT;
	int rc = 2;
	if (p->targets) {
		rc = lab_run(&ctx->db, ctx->dbpath, p, so, &err);
		if (err.len)
			cmd_error("run", "%s", err.buf);
		goto out;
	}
	int64_t sid = session_start(ctx->db, p, so, &err);
	if (sid < 0) {
		cmd_error("run", "%s", err.buf);
		goto out;
	}
	rc = execute(ctx->db, sid, p, ctx->dbpath, so);
out:
	strbuf_release(&err);
	return rc;
}

/* the plan stored with session `sid`, and the session's status; -1 after
 * printing why */
static int load_stored_plan(struct db *db, int64_t sid, struct plan *p, char **status)
{
	char *plan_json = NULL, *plan_path = NULL, *stag = NULL;
	if (db_session_load(db, sid, &plan_json, &plan_path, &stag, status)) {
		cmd_error("run", "%s", db_errmsg(db));
		return -1;
	}
	char *label = xstrfmt("%s (session %lld)", plan_path ? plan_path : "plan", (long long)sid);
	struct strbuf err = STRBUF_INIT;
	int bad = plan_load_string(plan_json, label, p, &err);
	if (bad)
		fprintf(stderr, "schedlab run: the stored plan no longer validates: %s\n", err.buf);
	strbuf_release(&err);
	free(label);
	free(plan_json);
	free(plan_path);
	free(stag);
	return bad ? -1 : 0;
}

/* schedlab run --resume SESSION|last */
static int resume_session(struct cmd_ctx *ctx, const struct run_args *a,
			  const struct session_opts *so)
{
	struct plan p;
	struct db *db = ctx->db;
	char *status = NULL;
	int rc = 2;
	memset(&p, 0, sizeof(p));
	int64_t sid = db_session_resolve(db, a->resume);
	if (sid < 0) {
		cmd_error("run", "--resume %s: %s", a->resume, db_errmsg(db));
		goto out;
	}
	if (load_stored_plan(db, sid, &p, &status))
		goto out;
	int planned = 0, ok = 0, failed = 0, skipped = 0;
	if (!db_session_counts(db, sid, &planned, &ok, &failed, &skipped) && !planned) {
		int st = session_state_parse(status);
		int unfinished = st < 0 || !session_state_ended((enum session_state)st);
		rc = failed || skipped ? 1 : 0;
		if (unfinished) {
			/* its controller was lost after storing the last run */
			struct strbuf err = STRBUF_INIT;
			rc = session_settle(db, sid, failed || skipped, so, &err);
			if (rc == 2)
				cmd_error("run", "--resume %s: %s", a->resume, err.buf);
			strbuf_release(&err);
			if (rc == 2)
				goto out;
		}
		fprintf(stderr, "session %lld (%s) has nothing left to run: %d ok, %d failed, "
			"%d skipped%s\n", (long long)sid, status, ok, failed, skipped,
			unfinished ? "; its controller was lost after the last run: now done" : "");
		goto out;
	}
	if (!a->quiet)
		fprintf(stderr, "resuming session %lld: %d runs done, %d to do\n",
			(long long)sid, ok + failed + skipped, planned);
	rc = execute(db, sid, &p, ctx->dbpath, so);
out:
	free(status);
	plan_release(&p);
	return rc;
}

/* schedlab run --resume lab:ID|lab:SESSION|lab:last */
static int resume_lab(struct cmd_ctx *ctx, const struct run_args *a,
		      const struct session_opts *so)
{
	struct strbuf err = STRBUF_INIT;
	struct lab lab;
	int rc = 2;
	if (lab_find(ctx->db, a->resume + 4, &lab, &err)) {
		cmd_error("run", "--resume %s: %s", a->resume, err.buf);
		goto out;
	}
	rc = lab_resume(&lab, &ctx->db, ctx->dbpath, so, &err);
	if (err.len)
		cmd_error("run", "%s", err.buf);
	lab_release(&lab);
out:
	strbuf_release(&err);
	return rc;
}

/* the options, the plan and the session's settings, from parse to the work */
static struct {
	struct run_args a;
	struct plan plan; /* loaded by parse; not with --resume */
	struct session_opts so;
} args;

/* before a new session's database is opened (c->db: the store read-only
 * when its file exists, so that a bad one is refused at once): the kernels
 * built and the preflight, so that a run refused before anything is stored
 * makes no file */
static int run_before_db(struct cmd_ctx *ctx)
{
	(void)ctx;
	struct strbuf err = STRBUF_INIT;
	session_install_signals();
	int bad = build_and_check(&args.plan, &args.so, &err) || session_aborted(&args.so);
	strbuf_release(&err);
	return bad ? 2 : CMD_GO;
}

int cmd_run_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct run_args *a = &args.a;
	int rc = parse_args(argc, argv, ctx, a);
	if (rc != CMD_GO)
		return rc;
	args.so = (struct session_opts){ .tag = a->tag, .quiet = a->quiet,
					 .abort_flag = &session_abort,
					 .take_over = a->take_over };
	if (a->resume) {
		/* --resume continues what is stored: never a new file */
		ctx->db_existing = 1;
		return CMD_GO;
	}
	/* the plan is checked before anything is opened: a bad one makes no file */
	struct strbuf err = STRBUF_INIT;
	if (load_plan(a, &args.plan, &err)) {
		plan_release(&args.plan);
		strbuf_release(&err);
		return 2;
	}
	strbuf_release(&err);
	ctx->before_db = run_before_db;
	return CMD_GO;
}

int cmd_run(struct cmd_ctx *ctx)
{
	const struct run_args *a = &args.a;
	int rc;
	/* Ctrl-C caught from here on */
	session_install_signals();
	if (!a->resume) {
		rc = run_plan(ctx, &args.plan, &args.so);
		plan_release(&args.plan);
	} else if (!strncmp(a->resume, "lab:", 4)) {
		rc = resume_lab(ctx, a, &args.so);
	} else {
		rc = resume_session(ctx, a, &args.so);
	}
	return cmd_finish(rc);
}
