/*
 * Labs: a plan with "targets": [...] runs as one session per member, in
 * parallel. The lab is checked as a whole first (session_preflight: every
 * member before anything is stored); then every member gets a session of its
 * own (the member's plan, with "target" and a "lab" marker, see
 * plan_lab_member), all created by this process, and one forked child per
 * member works through its session, opening the database itself (WAL, busy
 * timeout; every run is its own transaction) and writing its progress as
 * whole lines behind the member's prefix ("[ssh:lab3] ", session_opts.prefix).
 * The parent forwards SIGINT/SIGTERM/SIGHUP (whatever sets the interrupt flag
 * of session_opts) to the children, waits, and combines their exit codes: 2 if
 * any member had a setup error, else 130 if any was interrupted, else 1 if
 * any had failed or skipped runs, else 0. Children have a parent-death signal
 * (SIGTERM), so that killing the controller outright stops them too.
 *
 * `run --resume lab:ID|lab:SESSION|lab:last` finds the sessions by their
 * marker (db_lab_resolve, db_lab_sessions) and drives the ones with runs left
 * the same way.
 */
#ifndef SL_LAB_H
#define SL_LAB_H

#include <stddef.h>

#include "db/db.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/session.h"
#include "harness/util/strbuf.h"

struct lab_member;

struct lab {
	char *id;                /* the marker's lab.id */
	struct lab_member *m;    /* the members, in member order */
	size_t n;
};

/* run lab plan `p` (kernels built, preflight passed): create every member's
 * session in *db, close *db (set to NULL), run the members in parallel and
 * report; returns the exit code, 2 with a message in err when the sessions
 * could not be created */
int lab_run(struct db **db, const char *dbpath, struct plan *p, const struct session_opts *so,
	    struct strbuf *err);

/* the lab named by `spec` (what follows "lab:"), its sessions and their
 * stored plans, in member order; -1 with a message (nothing to release) */
int lab_find(struct db *db, const char *spec, struct lab *lab, struct strbuf *err);
/* resume the members of `lab` that have runs left, in parallel; closes *db
 * (set to NULL) before the members start; returns the exit code (a member
 * with nothing left counts 1 if it had failed or skipped runs), 2 with a
 * message in err on a database error */
int lab_resume(struct lab *lab, struct db **db, const char *dbpath, const struct session_opts *so,
	       struct strbuf *err);
void lab_release(struct lab *lab);

/*
 * The worse of two exit codes, for a lab's members and a night's sessions
 * alike (one order): 2 (setup failure, and any code not listed here), 130
 * (interrupted), 1 (regression), 3 (runs failed: nightly), 4 (the hook
 * failed: nightly), 0.
 */
int exit_worse(int a, int b);

#endif
