/*
 * The batch path of a session (session_batch.c), for session.c: a batch
 * target's boots (target_batch: lava, sealed qemu) each as one job, up to
 * batch_slots in flight, driven by the engine's loop through its steps
 * (engine.h).
 */
#ifndef SL_SESSION_BATCH_H
#define SL_SESSION_BATCH_H

#include <jansson.h>

#include "harness/orchestrate/engine.h"
#include "harness/orchestrate/session_opts.h"

/* the engine's driver (engine_execute) for a batch target: every boot
 * of the session as one job, up to batch_slots in flight */
extern const struct engine_driver session_batch_driver;

/* the job a batch target (lava) would submit for the plan's first boot, for
 * review: its runs prepared as for `schedlab run`, the initramfs built;
 * -1 with a message (also when the target runs no batches) */
int session_batch_job(struct plan *p, const struct session_opts *o, json_t **job,
		      struct strbuf *err);

#endif
