/*
 * The batch path of a session (session_batch.c), for session.c: a batch
 * target's boots (target_batch: lava, sealed qemu) each as one job, up to
 * batch_slots in flight, through the engine's steps (engine.h).
 */
#ifndef SL_SESSION_BATCH_H
#define SL_SESSION_BATCH_H

#include <jansson.h>

#include "harness/orchestrate/engine.h"
#include "harness/orchestrate/session_opts.h"

/* every boot of the session c on a batch target, each as one job; the
 * exit code in c->exit_code as session_execute's */
void session_batch_execute(struct engine *c);

/* the job a batch target (lava) would submit for the plan's first boot, for
 * review: its runs prepared as for `schedlab run`, the initramfs built;
 * -1 with a message (also when the target runs no batches) */
int session_batch_job(struct plan *p, const struct session_opts *o, json_t **job,
		      struct strbuf *err);

#endif
