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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/orchestrate/lab.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/session.h"
#include "harness/targets/target.h"

static const char usage_text[] =
	"usage: schedlab run PLAN.json [--db FILE] [--tag TAG] [--target SPEC] [--quiet]\n"
	"       schedlab run --resume SESSION|last|lab:LAB [--db FILE]\n"
	"\n"
	"Runs every boot and run of PLAN.json and stores them in the database, each run\n"
	"in its own transaction as it finishes. Ctrl-C stops the current run, restores\n"
	"the knobs, and leaves the session resumable. A plan with \"targets\" (a lab)\n"
	"runs one session per target, in parallel, with progress lines prefixed by\n"
	"the target.\n"
	"  --db FILE       database (default schedlab.db; created when absent)\n"
	"  --tag TAG       label the session (e.g. nightly-2026-12-01)\n"
	"  --target SPEC   override the plan's target: local, qemu:KERNEL,\n"
	"                  ssh://[user@]host[:port] (not for a lab plan)\n"
	"  --resume S      finish session S (a number or \"last\"): runs that did not\n"
	"                  finish are run again, finished runs are kept;\n"
	"                  lab:ID, lab:SESSION or lab:last: every session of a lab,\n"
	"                  in parallel\n"
	"  --quiet         no progress lines\n"
	"Exit status: 0 every run ok, 1 some runs failed or were skipped,\n"
	"2 bad input or a setup error, 130 interrupted (resumable); for a lab the\n"
	"worst of its members in the order 2, 130, 1, 0.\n";

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "tag", required_argument, NULL, 'g' },
		{ "target", required_argument, NULL, 't' },
		{ "resume", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dbpath = DEFAULT_DB, *tag = NULL, *target = NULL, *resume = NULL;
	int quiet = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dbpath = optarg; break;
		case 'g': tag = optarg; break;
		case 't': target = optarg; break;
		case 'r': resume = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': fputs(usage_text, stdout); return cmd_finish(0);
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (resume ? optind != argc : optind != argc - 1) {
		cmd_error("run", resume ? "--resume takes no plan file" : "expected one plan file");
		fputs(usage_text, stderr);
		return 2;
	}
	if (resume && (tag || target)) {
		cmd_error("run", "--resume continues a session as it was planned; "
			  "--tag and --target cannot change it");
		return 2;
	}
	struct strbuf err = STRBUF_INIT;
	struct plan p;
	struct db *db = NULL;
	char *msg = NULL;
	int rc = 2;
	int64_t sid = -1;
	memset(&p, 0, sizeof(p));
	struct session_opts so = { .tag = tag, .quiet = quiet, .abort_flag = &session_abort };

	if (!resume) {
		if (plan_load(argv[optind], &p, &err)) {
			fprintf(stderr, "%s\n", err.buf);
			goto out;
		}
		if (target) {
			json_t *t = target_spec_parse(target, &err);
			if (!t || plan_set_target(&p, t, &err)) {
				cmd_error("run", "--target %s", err.buf);
				json_decref(t);
				goto out;
			}
			json_decref(t);
		}
	}
	if (db_open(dbpath, DB_READWRITE, &db, &msg)) {
		cmd_error("run", "%s: %s", dbpath, msg ? msg : "cannot open");
		goto out;
	}
	session_install_signals();
	if (resume && !strncmp(resume, "lab:", 4)) {
		struct lab lab;
		if (lab_find(db, resume + 4, &lab, &err)) {
			cmd_error("run", "--resume %s: %s", resume, err.buf);
			goto out;
		}
		rc = lab_resume(&lab, &db, dbpath, &so, &err);
		if (err.len)
			cmd_error("run", "%s", err.buf);
		lab_release(&lab);
		goto out;
	}
	if (resume) {
		char *plan_json = NULL, *plan_path = NULL, *stag = NULL, *status = NULL;
		sid = db_session_resolve(db, resume);
		if (sid < 0) {
			cmd_error("run", "--resume %s: %s", resume, db_errmsg(db));
			goto out;
		}
		if (db_session_load(db, sid, &plan_json, &plan_path, &stag, &status)) {
			cmd_error("run", "%s", db_errmsg(db));
			goto out;
		}
		char *label = xstrfmt("%s (session %lld)", plan_path ? plan_path : "plan",
				      (long long)sid);
		int bad = plan_load_string(plan_json, label, &p, &err);
		free(label);
		free(plan_json);
		free(plan_path);
		free(stag);
		if (bad) {
			fprintf(stderr, "schedlab run: the stored plan no longer validates: %s\n",
				err.buf);
			free(status);
			goto out;
		}
		int planned, ok, failed, skipped;
		if (!db_session_counts(db, sid, &planned, &ok, &failed, &skipped) && !planned) {
			fprintf(stderr, "session %lld (%s) has nothing left to run: %d ok, %d failed, "
				"%d skipped\n", (long long)sid, status, ok, failed, skipped);
			free(status);
			rc = failed || skipped ? 1 : 0;
			goto out;
		}
		free(status);
		if (!quiet)
			fprintf(stderr, "resuming session %lld: %d runs done, %d to do\n",
				(long long)sid, ok + failed + skipped, planned);
	} else {
		/* kernel variants are built (or found in the cache) first, so that the
		 * stored plan and boots name the built folders; a target that cannot
		 * boot kernels refuses them in the preflight instead */
		int kernels = !!(p.tops->caps & TCAP_KERNEL);
		for (size_t i = 0; i < p.ntargets; i++) {
			const struct target_ops *o = target_find(json_string_value(
				json_object_get(plan_lab_target(&p, i), "type")));
			kernels |= o && (o->caps & TCAP_KERNEL);
		}
		if (kernels && session_build_kernels(&p, quiet, so.abort_flag, &err)) {
			cmd_error("run", "%s", err.buf);
			goto out;
		}
		if (session_preflight(&p, &so, &err)) {
			fprintf(stderr, "%s\n", err.buf);
			goto out;
		}
		if (session_aborted(&so))
			goto out;
		if (p.targets) {
			rc = lab_run(&db, dbpath, &p, &so, &err);
			if (err.len)
				cmd_error("run", "%s", err.buf);
			goto out;
		}
		sid = session_start(db, &p, &so, &err);
		if (sid < 0) {
			cmd_error("run", "%s", err.buf);
			goto out;
		}
	}
	rc = session_execute(db, sid, &p, &so, &err);
	if (err.len)
		cmd_error("run", "%s", err.buf);
	if (!quiet) {
		int planned, ok, failed, skipped;
		if (!db_session_counts(db, sid, &planned, &ok, &failed, &skipped))
			fprintf(stderr, "session %lld: %d ok, %d failed, %d skipped, %d not run; "
				"results in %s (schedlab query --db %s \"SELECT * FROM results "
				"WHERE session = %lld\")\n", (long long)sid, ok, failed, skipped,
				planned, dbpath, dbpath, (long long)sid);
	}
out:
	free(msg);
	db_close(db);
	plan_release(&p);
	strbuf_release(&err);
	return cmd_finish(rc);
}
