/*
 * One owner per session: who this controller is (pid, the pid's start
 * time, host, boot id) and whether a recorded owner still runs. The
 * database records the owner (db_session_claim, db/db.h); this file only
 * knows processes. An owner on another host cannot be checked from here
 * and counts as alive: `run --resume --take-over` overrides that.
 */
#ifndef SL_ORCHESTRATE_OWNER_H
#define SL_ORCHESTRATE_OWNER_H

#include <stdint.h>

#include "db/db.h"
#include "harness/util/strbuf.h"

/* this process */
void owner_self(struct db_owner *me);
/* 1 while the recorded owner runs (or cannot be checked), 0 when it is gone */
int owner_alive(const struct db_owner *o);
/*
 * Claim session sid for this process: 0 claimed (a dead owner taken over
 * is said on stderr with prefix), 1 held by a live owner (err says by whom
 * and what to do), -1 on a database error (in err).
 */
int owner_claim(struct db *db, int64_t sid, int take_over, const char *prefix,
		struct strbuf *err);
/* give it back at the end of the session (nothing when another has it) */
int owner_release(struct db *db, int64_t sid, struct strbuf *err);

#endif
