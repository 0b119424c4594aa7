/*
 * schedlab run: run a plan into the database, or finish an interrupted
 * session with --resume. The plan is validated and checked against the
 * target before anything is stored; then every planned boot and run is
 * written to the database and worked through (harness/orchestrate/session.c). Kernel
 * variants in matrix.kernel are built first (session_build_kernels).
 *
 * A lab (a plan with "targets": [...]) is checked as a whole (every member's
 * preflight before anything is stored), then every member gets a session of
 * its own (the member's plan, with "target" and a "lab" marker, see
 * plan_lab_member), all created by this process, and one forked child per
 * member works through its session in parallel with the others, opening the
 * database itself (WAL, busy timeout; every run is its own transaction).
 * The parent forwards SIGINT/SIGTERM/SIGHUP to the children, waits, and
 * combines their exit codes: 2 if any member had a setup error, else 130 if
 * any was interrupted, else 1 if any had failed or skipped runs, else 0.
 * `--resume lab:ID|lab:SESSION|lab:last` resumes every session of a lab the
 * same way.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "harness/cli/cmd.h"
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

/* ---- labs ----------------------------------------------------------------- */

struct lab_member {
	struct plan p;
	int64_t sid;
	char *label;            /* "local#1", "ssh:lab3" */
	char *prefix;           /* "[ssh:lab3] " */
	pid_t pid;
	int rc;
};

static void lab_members_free(struct lab_member *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++) {
		plan_release(&m[i].p);
		free(m[i].label);
		free(m[i].prefix);
	}
	free(m);
}

static void lab_set_label(struct lab_member *m, const char *label)
{
	m->label = xstrdup(label);
	m->prefix = xstrfmt("[%s] ", label);
}

/* a member's session, in a child process of its own */
static int lab_child(struct lab_member *m, const char *dbpath, const struct session_opts *so)
{
	struct db *db = NULL;
	char *msg = NULL;
	struct strbuf err = STRBUF_INIT;
	int rc = 2;
	struct session_opts mo = *so;
	mo.prefix = m->prefix;
	if (db_open(dbpath, DB_READWRITE, &db, &msg)) {
		fprintf(stderr, "%sschedlab run: %s: %s\n", m->prefix, dbpath, msg ? msg : "cannot open");
		goto out;
	}
	rc = session_execute(db, m->sid, &m->p, &mo, &err);
	if (err.len)
		fprintf(stderr, "%sschedlab run: %s\n", m->prefix, err.buf);
	int planned, ok, failed, skipped;
	if (!so->quiet && !db_session_counts(db, m->sid, &planned, &ok, &failed, &skipped))
		fprintf(stderr, "%ssession %lld: %d ok, %d failed, %d skipped, %d not run\n",
			m->prefix, (long long)m->sid, ok, failed, skipped, planned);
out:
	free(msg);
	db_close(db);
	strbuf_release(&err);
	return rc;
}

/* fork one child per member, forward signals, wait, combine the exit codes */
static int lab_drive(struct lab_member *m, size_t n, const char *dbpath,
		     const struct session_opts *so)
{
	pid_t parent = getpid();
	fflush(NULL);
	for (size_t i = 0; i < n; i++) {
		m[i].rc = -1;
		m[i].pid = fork();
		if (m[i].pid == 0) {
			/* the controller killed outright: the members stop too (as
			   interrupted sessions) instead of running on unattended */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != parent && so->abort_flag)
				*so->abort_flag = SIGTERM;
			int rc = lab_child(&m[i], dbpath, so);
			fflush(NULL);
			_exit(rc);
		}
		if (m[i].pid < 0) {
			fprintf(stderr, "%sschedlab run: fork: %s\n", m[i].prefix, strerror(errno));
			m[i].rc = 2;
		}
	}
	size_t alive = 0;
	for (size_t i = 0; i < n; i++)
		alive += m[i].pid > 0;
	int forwarded = 0;
	while (alive) {
		for (size_t i = 0; i < n; i++) {
			int st;
			if (m[i].pid <= 0 || waitpid(m[i].pid, &st, WNOHANG) != m[i].pid)
				continue;
			if (WIFEXITED(st)) {
				m[i].rc = WEXITSTATUS(st);
			} else {
				fprintf(stderr, "%sschedlab run: the member process died of signal %d; "
					"its session is resumable\n", m[i].prefix, WTERMSIG(st));
				m[i].rc = 2;
			}
			m[i].pid = 0;
			alive--;
		}
		if (session_aborted(so) && forwarded != session_aborted(so)) {
			forwarded = session_aborted(so);
			for (size_t i = 0; i < n; i++)
				if (m[i].pid > 0)
					kill(m[i].pid, forwarded);
		}
		if (alive) {
			struct timespec ts = { 0, 50 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	int any2 = 0, any130 = 0, any1 = 0;
	for (size_t i = 0; i < n; i++) {
		any2 |= m[i].rc == 2 || m[i].rc < 0 || (m[i].rc != 0 && m[i].rc != 1 && m[i].rc != 130);
		any130 |= m[i].rc == 130;
		any1 |= m[i].rc == 1;
	}
	return any2 ? 2 : any130 ? 130 : any1 ? 1 : 0;
}

static void lab_report(const char *id, struct lab_member *m, size_t n, int rc, int quiet)
{
	if (quiet && rc != 130)
		return;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%s: session %lld exit %d", i ? "; " : "", m[i].label,
			    (long long)m[i].sid, m[i].rc);
	fprintf(stderr, "lab %s: %s\n", id, sb.buf);
	if (rc == 130 || rc == 2)
		fprintf(stderr, "lab %s: `schedlab run --resume lab:%s` resumes every session of "
			"the lab that has runs left\n", id, id);
	strbuf_release(&sb);
}

/* a new lab: the members' plans and sessions (nothing runs yet) */
static int lab_start(struct db *db, struct plan *p, const struct session_opts *so,
		     const char *id, struct lab_member **out, struct strbuf *err)
{
	size_t n = p->ntargets;
	struct lab_member *m = xcalloc(n, sizeof(*m));
	char **labels = xcalloc(n, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		labels[i] = session_target_label(plan_lab_target(p, i));
	for (size_t i = 0; i < n; i++) {
		int dup = 0;
		for (size_t j = 0; j < n; j++)
			dup |= j != i && !strcmp(labels[i], labels[j]);
		char *l = dup ? xstrfmt("%s#%zu", labels[i], i + 1) : xstrdup(labels[i]);
		lab_set_label(&m[i], l);
		free(l);
	}
	for (size_t i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
	for (size_t i = 0; i < n; i++) {
		if (plan_lab_member(p, i, id, m[i].label, &m[i].p, err))
			goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		m[i].sid = session_start(db, &m[i].p, so, err);
		if (m[i].sid < 0) {
			/* the sessions made so far stay, resumable; say which */
			for (size_t j = 0; j < i; j++)
				db_session_set_status(db, m[j].sid, "interrupted");
			goto fail;
		}
	}
	*out = m;
	return 0;
fail:
	lab_members_free(m, n);
	return -1;
}

/* "lab:ID", "lab:SESSION", "lab:last" -> the lab's sessions, in member order */
static int lab_find(struct db *db, const char *spec, char **id_out, struct lab_member **out,
		    size_t *nout, struct strbuf *err)
{
	sqlite3 *h = db_handle(db);
	sqlite3_stmt *s = NULL;
	char *id = NULL;
	int ret = -1;
	const char *q = spec;
	size_t digits = strspn(q, "0123456789");
	if (!strcmp(q, "last") || (digits && !q[digits])) {
		const char *sql = !strcmp(q, "last")
			? "SELECT json_extract(plan_json, '$.lab.id') FROM session WHERE "
			  "json_extract(plan_json, '$.lab.id') IS NOT NULL ORDER BY id DESC LIMIT 1"
			: "SELECT json_extract(plan_json, '$.lab.id') FROM session WHERE id = ?1";
		if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK)
			goto sqlerr;
		if (strcmp(q, "last"))
			sqlite3_bind_int64(s, 1, strtoll(q, NULL, 10));
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
			id = xstrdup((const char *)sqlite3_column_text(s, 0));
		sqlite3_finalize(s);
		s = NULL;
		if (!id) {
			strbuf_addstr(err, strcmp(q, "last")
				      ? "no such session, or it is not part of a lab"
				      : "no session in this database is part of a lab");
			return -1;
		}
	} else {
		id = xstrdup(q);
	}
	if (sqlite3_prepare_v2(h, "SELECT id, plan_json, plan_path, json_extract(plan_json, "
			       "'$.lab.label') FROM session WHERE json_extract(plan_json, "
			       "'$.lab.id') = ?1 ORDER BY json_extract(plan_json, '$.lab.target'), id",
			       -1, &s, NULL) != SQLITE_OK)
		goto sqlerr;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	struct lab_member *m = NULL;
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		m = xrealloc(m, (n + 1) * sizeof(*m));
		memset(&m[n], 0, sizeof(*m));
		m[n].sid = sqlite3_column_int64(s, 0);
		const char *lab = (const char *)sqlite3_column_text(s, 3);
		char *fallback = xstrfmt("session %lld", (long long)m[n].sid);
		lab_set_label(&m[n], lab ? lab : fallback);
		free(fallback);
		const char *path = (const char *)sqlite3_column_text(s, 2);
		char *name = xstrfmt("%s (session %lld)", path ? path : "plan", (long long)m[n].sid);
		int bad = plan_load_string((const char *)sqlite3_column_text(s, 1), name, &m[n].p, err);
		free(name);
		n++;
		if (bad) {
			struct strbuf t = STRBUF_INIT;
			strbuf_addf(&t, "the stored plan no longer validates: %s", err->buf);
			strbuf_reset(err);
			strbuf_addstr(err, t.buf);
			strbuf_release(&t);
			lab_members_free(m, n);
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		lab_members_free(m, n);
		goto sqlerr;
	}
	if (!n) {
		strbuf_addstr(err, "no session of this lab in the database (a lab is named by its "
			      "id, a member session's number, or \"last\")");
		goto out;
	}
	*out = m;
	*nout = n;
	*id_out = id;
	id = NULL;
	ret = 0;
	goto out;
sqlerr:
	strbuf_addf(err, "database: %s", sqlite3_errmsg(h));
out:
	sqlite3_finalize(s);
	free(id);
	return ret;
}

static char *lab_new_id(void)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	return xstrfmt("%s-%ld", ts, (long)getpid());
}

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
		struct lab_member *m = NULL;
		size_t n = 0;
		char *id = NULL;
		if (lab_find(db, resume + 4, &id, &m, &n, &err)) {
			cmd_error("run", "--resume %s: %s", resume, err.buf);
			goto out;
		}
		/* only the sessions with runs left */
		size_t k = 0;
		int done_rc = 0;
		for (size_t i = 0; i < n; i++) {
			int planned, ok, failed, skipped;
			if (db_session_counts(db, m[i].sid, &planned, &ok, &failed, &skipped)) {
				cmd_error("run", "%s", db_errmsg(db));
				lab_members_free(m, n);
				free(id);
				goto out;
			}
			if (!planned) {
				if (!quiet)
					fprintf(stderr, "%ssession %lld has nothing left to run: %d ok, "
						"%d failed, %d skipped\n", m[i].prefix,
						(long long)m[i].sid, ok, failed, skipped);
				if (failed || skipped)
					done_rc = 1;
				plan_release(&m[i].p);
				free(m[i].label);
				free(m[i].prefix);
				continue;
			}
			if (!quiet)
				fprintf(stderr, "%sresuming session %lld: %d runs done, %d to do\n",
					m[i].prefix, (long long)m[i].sid, ok + failed + skipped, planned);
			m[k++] = m[i];
		}
		db_close(db);
		db = NULL;
		rc = k ? lab_drive(m, k, dbpath, &so) : 0;
		if (!rc)
			rc = done_rc;
		if (k)
			lab_report(id, m, k, rc, quiet);
		lab_members_free(m, k);
		free(id);
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
			struct lab_member *m = NULL;
			size_t n = p.ntargets;
			char *id = lab_new_id();
			if (lab_start(db, &p, &so, id, &m, &err)) {
				cmd_error("run", "%s", err.buf);
				free(id);
				goto out;
			}
			if (!quiet) {
				struct strbuf sb = STRBUF_INIT;
				for (size_t i = 0; i < n; i++)
					strbuf_addf(&sb, "%s%s: session %lld", i ? ", " : "", m[i].label,
						    (long long)m[i].sid);
				fprintf(stderr, "lab %s: %zu targets in parallel (%s)\n", id, n, sb.buf);
				strbuf_release(&sb);
			}
			db_close(db);
			db = NULL;
			rc = lab_drive(m, n, dbpath, &so);
			lab_report(id, m, n, rc, quiet);
			if (!quiet) {
				struct strbuf ids = STRBUF_INIT;
				for (size_t i = 0; i < n; i++)
					strbuf_addf(&ids, "%s%lld", i ? "," : "", (long long)m[i].sid);
				fprintf(stderr, "results in %s (schedlab query --db %s \"SELECT * FROM "
					"results WHERE session IN (%s)\")\n", dbpath, dbpath, ids.buf);
				strbuf_release(&ids);
			}
			lab_members_free(m, n);
			free(id);
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
