/*
 * Sequential repetitions in a session (plan "repetitions": {"min", "max",
 * "until": "decided"}): after every interleaved round, the values stored
 * so far are looked at (analysis/sequential.h) for every pair of
 * configurations, a configuration being a boot configuration with a knob
 * set, per workload series (workload with its parameters) and per looked-at
 * metric (the plan's "metrics", else the workload's primary one). A
 * configuration stops getting rounds of a series once every pair it is in
 * is decided (different or equivalent, or a pair's side has no values at
 * all); its remaining runs are stored as skipped with the decision, and a
 * round none of whose runs is needed is not booted at all.
 *
 * Everything is recomputed from the database, so --resume continues with
 * the same decisions. Looks use min(n_A, n_B) values, n counted in rounds
 * with an ok value.
 */
#ifndef SL_SEQRUN_H
#define SL_SEQRUN_H

#include <stdint.h>

#include "db/db.h"
#include "harness/orchestrate/plan.h"
#include "harness/util/strbuf.h"

struct seqrun;

struct seqrun *seqrun_new(const struct plan *p);
void seqrun_free(struct seqrun *s);

/* look again with what session sid stored; a line per pair decided since
 * the last look goes to `said` ("hackbench time_s K1 vs K2: worse ...");
 * -1 with a message on a database error */
int seqrun_update(struct seqrun *s, struct db *db, int64_t sid, struct strvec *said,
		  struct strbuf *err);

/* 1 when run (cfg, knobs, workload, params) still needs its rounds; 0 and
 * the reason (owned by s) when its configuration is decided */
int seqrun_needed(const struct seqrun *s, int cfg, const char *knobs, const char *workload,
		  const char *params, const char **why);

/* "12 of 30 rounds; 40 of 120 runs skipped as decided" for the end */
void seqrun_summary(const struct seqrun *s, size_t skipped, struct strbuf *out);
/* the plan's wall-time cap (repetitions.max_wall_s) was reached after
 * `rounds` rounds had begun: from now on no run is needed, the undecided
 * pairs stop undecided (seqrun_needed's reason says so; the summary counts
 * them). 1 the first time, 0 when it was capped already */
int seqrun_cap(struct seqrun *s, int rounds, double elapsed_s);

#endif
