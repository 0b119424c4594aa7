/*
 * Labs: one forked session per member of a plan with "targets", signal
 * forwarding, the worst exit code, and `run --resume lab:...`; see lab.h.
 * The parent creates the sessions and closes the database before it forks;
 * each child opens its own connection and runs session_execute. The child
 * is a copy of the controller, no exec, so it is forked here rather than
 * through harness/util/proc.h (which starts programs).
 */
#include "harness/orchestrate/lab.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/orchestrate/owner.h"

struct lab_member {
	struct plan p;
	int64_t sid;
	char *label;            /* "local#1", "ssh:lab3" */
	char *prefix;           /* "[ssh:lab3] " */
	pid_t pid;
	int rc;
};

/* frees and zeroes; releasing a zeroed member is harmless */
static void lab_member_release(struct lab_member *m)
{
	plan_release(&m->p);
	free(m->label);
	free(m->prefix);
	memset(m, 0, sizeof(*m));
}

void lab_release(struct lab *lab)
{
	for (size_t i = 0; lab->m && i < lab->n; i++)
		lab_member_release(&lab->m[i]);
	free(lab->m);
	free(lab->id);
	memset(lab, 0, sizeof(*lab));
}

static void lab_set_label(struct lab_member *m, const char *label)
{
	m->label = xstrdup(label);
	m->prefix = xstrfmt("[%s] ", label);
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

/* ---- running the members ------------------------------------------------ */

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
		fprintf(stderr, "%sschedlab run: %s\n", m->prefix, msg ? msg : dbpath);
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

/* one child per member; a member that cannot be forked gets exit code 2 */
static void lab_fork(struct lab_member *m, size_t n, const char *dbpath,
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
}

/* reap the children that have ended; returns how many did */
static size_t lab_reap(struct lab_member *m, size_t n)
{
	size_t ended = 0;
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
		ended++;
	}
	return ended;
}

int exit_worse(int a, int b)
{
	static const int order[] = { 2, 130, 1, 3, 4 };
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (a == order[i] || b == order[i])
			return order[i];
	return a || b ? 2 : 0;
}

/* the worst exit code of the members (exit_worse; a member's 3 or 4 is
 * none of its own: 2) */
static int lab_worst(const struct lab_member *m, size_t n)
{
	int rc = 0;
	for (size_t i = 0; i < n; i++)
		rc = exit_worse(rc, m[i].rc < 0 || m[i].rc == 3 || m[i].rc == 4 ? 2 : m[i].rc);
	return rc;
}

/* fork one child per member, forward signals, wait, combine the exit codes */
static int lab_drive(struct lab_member *m, size_t n, const char *dbpath,
		     const struct session_opts *so)
{
	lab_fork(m, n, dbpath, so);
	size_t alive = 0;
	for (size_t i = 0; i < n; i++)
		alive += m[i].pid > 0;
	int forwarded = 0;
	while (alive) {
		alive -= lab_reap(m, n);
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
	return lab_worst(m, n);
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

/* ---- a new lab ------------------------------------------------------------ */

/* "local", "local" -> "local#1", "local#2"; distinct labels stay as they are */
static void lab_label_members(struct lab_member *m, const struct plan *p, size_t n)
{
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
}

/* a new lab: the members' plans and sessions (nothing runs yet) */
static int lab_start(struct db *db, struct plan *p, const struct session_opts *so,
		     struct lab *lab, struct strbuf *err)
{
	lab->n = p->ntargets;
	lab->m = xcalloc(lab->n, sizeof(*lab->m));
	struct lab_member *m = lab->m;
	lab_label_members(m, p, lab->n);
	for (size_t i = 0; i < lab->n; i++) {
		if (plan_lab_member(p, i, lab->id, m[i].label, &m[i].p, err))
			return -1;
	}
	for (size_t i = 0; i < lab->n; i++) {
		m[i].sid = session_start(db, &m[i].p, so, err);
		if (m[i].sid < 0) {
			/* the sessions made so far stay, resumable; say which */
			for (size_t j = 0; j < i; j++)
				db_session_set_status(db, m[j].sid, SESSION_ST_INTERRUPTED);
			return -1;
		}
		/* each member's process claims its session itself (owner.h) */
		if (owner_release(db, m[i].sid, err))
			return -1;
	}
	return 0;
}

static void lab_announce(const struct lab *lab)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < lab->n; i++)
		strbuf_addf(&sb, "%s%s: session %lld", i ? ", " : "", lab->m[i].label,
			    (long long)lab->m[i].sid);
	fprintf(stderr, "lab %s: %zu targets in parallel (%s)\n", lab->id, lab->n, sb.buf);
	strbuf_release(&sb);
}

static void lab_results_hint(const struct lab *lab, const char *dbpath)
{
	struct strbuf ids = STRBUF_INIT;
	for (size_t i = 0; i < lab->n; i++)
		strbuf_addf(&ids, "%s%lld", i ? "," : "", (long long)lab->m[i].sid);
	fprintf(stderr, "results in %s (schedlab query --db %s \"SELECT * FROM "
		"results WHERE session IN (%s)\")\n", dbpath, dbpath, ids.buf);
	strbuf_release(&ids);
}

int lab_run(struct db **db, const char *dbpath, struct plan *p, const struct session_opts *so,
	    struct strbuf *err)
{
	struct lab lab = { lab_new_id(), NULL, 0 };
	int rc = 2;
	if (lab_start(*db, p, so, &lab, err))
		goto out;
	if (!so->quiet)
		lab_announce(&lab);
	db_close(*db);
	*db = NULL;
	rc = lab_drive(lab.m, lab.n, dbpath, so);
	lab_report(lab.id, lab.m, lab.n, rc, so->quiet);
	if (!so->quiet)
		lab_results_hint(&lab, dbpath);
out:
	lab_release(&lab);
	return rc;
}

/* ---- resuming a lab ------------------------------------------------------- */

/* a member from its stored session */
static int lab_member_load(struct lab_member *m, const struct db_lab_session *row,
			   struct strbuf *err)
{
	m->sid = row->sid;
	char *fallback = xstrfmt("session %lld", (long long)m->sid);
	lab_set_label(m, row->label ? row->label : fallback);
	free(fallback);
	char *name = xstrfmt("%s (session %lld)", row->plan_path ? row->plan_path : "plan",
			     (long long)m->sid);
	struct strbuf e = STRBUF_INIT;
	int bad = plan_load_string(row->plan_json, name, &m->p, &e);
	free(name);
	if (bad)
		strbuf_addf(err, "the stored plan no longer validates: %s", e.buf);
	strbuf_release(&e);
	return bad ? -1 : 0;
}

/* "lab:ID", "lab:SESSION", "lab:last" -> the lab's sessions, in member order */
int lab_find(struct db *db, const char *spec, struct lab *lab, struct strbuf *err)
{
	struct db_lab_session *rows = NULL;
	size_t n = 0;
	memset(lab, 0, sizeof(*lab));
	if (db_lab_resolve(db, spec, &lab->id) || db_lab_sessions(db, lab->id, &rows, &n)) {
		strbuf_addstr(err, db_errmsg(db));
		goto fail;
	}
	if (!n) {
		strbuf_addstr(err, "no session of this lab in the database (a lab is named by its "
			      "id, a member session's number, or \"last\")");
		goto fail;
	}
	lab->m = xcalloc(n, sizeof(*lab->m));
	lab->n = n;
	for (size_t i = 0; i < n; i++)
		if (lab_member_load(&lab->m[i], &rows[i], err))
			goto fail;
	db_lab_sessions_free(rows, n);
	return 0;
fail:
	db_lab_sessions_free(rows, n);
	lab_release(lab);
	return -1;
}

/* only the members with runs left stay in the lab; the others are reported
 * and dropped, *done_rc 1 when one of them had failed or skipped runs */
static int lab_keep_unfinished(struct lab *lab, struct db *db, int quiet, int *done_rc,
			       struct strbuf *err)
{
	size_t k = 0;
	for (size_t i = 0; i < lab->n; i++) {
		struct lab_member *m = &lab->m[i];
		int planned, ok, failed, skipped;
		if (db_session_counts(db, m->sid, &planned, &ok, &failed, &skipped)) {
			strbuf_addstr(err, db_errmsg(db));
			return -1;
		}
		if (!planned) {
			if (!quiet)
				fprintf(stderr, "%ssession %lld has nothing left to run: %d ok, "
					"%d failed, %d skipped\n", m->prefix, (long long)m->sid, ok,
					failed, skipped);
			if (failed || skipped)
				*done_rc = 1;
			lab_member_release(m);
			continue;
		}
		if (!quiet)
			fprintf(stderr, "%sresuming session %lld: %d runs done, %d to do\n",
				m->prefix, (long long)m->sid, ok + failed + skipped, planned);
		if (k != i) {
			lab->m[k] = *m;
			memset(m, 0, sizeof(*m));
		}
		k++;
	}
	lab->n = k;
	return 0;
}

int lab_resume(struct lab *lab, struct db **db, const char *dbpath, const struct session_opts *so,
	       struct strbuf *err)
{
	int done_rc = 0;
	if (lab_keep_unfinished(lab, *db, so->quiet, &done_rc, err))
		return 2;
	db_close(*db);
	*db = NULL;
	int rc = lab->n ? lab_drive(lab->m, lab->n, dbpath, so) : 0;
	if (!rc)
		rc = done_rc;
	if (lab->n)
		lab_report(lab->id, lab->m, lab->n, rc, so->quiet);
	return rc;
}
