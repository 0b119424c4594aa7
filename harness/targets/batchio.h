/*
 * What a batch target (target.h batch_*) sends the agent's batch mode and
 * how the replies come back, shared by the lava target and the qemu
 * target's sealed runs: the requests file (one JSON request a line: the
 * boot's sysinfo, then each run's knob writes, its exec and the knob
 * restore), and the replies, decoded from a console log (lava_job.h's
 * lava_log, frame.h's framed lines), handed to each run.
 */
#ifndef SL_TARGETS_BATCHIO_H
#define SL_TARGETS_BATCHIO_H

#include <stddef.h>

#include "harness/targets/lava_job.h"
#include "harness/targets/target.h"

/* the request ids of one run in a requests file (0 = none) */
struct batch_ids {
	long first_knob, nknobs, exec, restore;
};

/* the requests for runs[0..n) into `file` (sysinfo is id 1), their ids in
 * ids[0..n) and the highest in *max_id: 0, or -1 with "WHO: file: why" */
int batch_write_requests(const char *file, const char *who, struct target *t,
			 struct batch_run *runs, size_t n, struct batch_ids *ids, long *max_id,
			 struct strbuf *err);

/* a console log file (at most max bytes of it) decoded into l, which the
 * caller has lava_log_init'ed: 0, or -1 with "WHO: file: why" */
int batch_read_log(const char *file, const char *who, long max, struct lava_log *l,
		   struct strbuf *err);

/* each run's replies from the decoded log d into runs[i] (applied, res, rc,
 * restore_failed, err); `where` (the job, its health and LAVA's reason)
 * is added to the error of a run that got no reply */
void batch_take_replies(const struct lava_log *d, const struct batch_ids *ids,
			struct batch_run *runs, size_t n, const char *where);

#endif
