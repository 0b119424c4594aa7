/*
 * The batch path of a session (a target with batch_submit, the lava target
 * and the qemu target's sealed runs: docs/lab.md, docs/virtual-time.md):
 * every run of a boot goes to the target at once as one job, whose replies
 * come back together; the boot and its runs are begun, marked, stored and
 * skipped by the session engine's steps (engine.h), the ones the live path
 * (session.c) takes. Also the job a plan would submit, written without a
 * database (session_batch_job: `schedlab plan --lava-job`).
 */
#include "harness/orchestrate/session_batch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/agent/sysinfo.h"

/* the prepare half of run c for a batch: its knob writes and exec request
 * in br; 0, or -1 when the run ends here (c says why) */
static int batch_prepare(struct engine_run *c, struct batch_run *br)
{
	strbuf_init(&br->err, 0);
	if (!engine_run_readable(c))
		return -1;
	json_t *writes = NULL;
	if (knobs_to_writes(c->knob, &writes, &c->e)) {
		json_decref(writes);
		return -1;
	}
	/* the boot's sysinfo comes back with the batch: schedstat snapshots
	   are asked for as the plan says, and a kernel without schedstats
	   answers without them (the agent's schedstat_error) */
	json_t *req = engine_build_request(c, 1);
	if (!req) {
		json_decref(writes);
		return -1;
	}
	c->knobs_touched = json_array_size(writes) > 0;
	br->writes = writes ? writes : json_array();
	br->req = req;
	br->timeout_s = c->ex.timeout_s;
	return 0;
}

/* the reply half: what batch_collect brought back for run c */
static void batch_take(struct engine_run *c, struct batch_run *br)
{
	if (br->applied) {
		json_decref(c->applied);
		c->applied = json_incref(br->applied);
	}
	if (br->rc) {
		strbuf_addstr(&c->e, br->err.len ? br->err.buf : "no reply");
		if (br->rc == 1)
			engine_knob_refused(c);
		engine_take_reply(c, br->rc == -1 ? -1 : 1);
	} else {
		c->res = json_incref(br->res);
		engine_take_reply(c, 0);
	}
	/* the agent restored the knobs itself after the run */
	c->knobs_touched = 0;
	engine_settle(c);
	if (br->restore_failed) {
		strbuf_addf(&c->e, "%sknob restore failed: %s", c->e.len ? "; " : "", br->err.buf);
		if (c->out == ENG_OK) {
			c->status = "failed";
			c->out = ENG_FAILED;
		}
	}
}

static void batch_run_release(struct batch_run *br)
{
	json_decref(br->writes);
	json_decref(br->req);
	json_decref(br->applied);
	json_decref(br->res);
	strbuf_release(&br->err);
}

/* a boot of a batch target, from its submission to its stored rows */
struct batch_boot {
	struct engine_boot b;
	size_t m;               /* runs handed over */
	struct engine_run *rc;
	struct batch_run *br;
	size_t *idx;            /* their index in c->runs */
	size_t i, j;            /* the boot's runs in c->runs: [i, j) */
	int *prep;              /* run r was prepared (else it failed already) */
	struct batch_job *job;  /* in flight, or NULL (nothing was submitted) */
};

static void batch_boot_release(struct batch_boot *x)
{
	for (size_t r = 0; r < x->m; r++) {
		engine_run_release(&x->rc[r]);
		batch_run_release(&x->br[r]);
	}
	free(x->rc);
	free(x->br);
	free(x->idx);
	free(x->prep);
	engine_boot_release(&x->b);
	memset(x, 0, sizeof(*x));
}

/* the runs handed over marked running (start) or back to planned, in one
 * commit (engine_mark); -1 with the database's message */
static int batch_mark(struct engine *c, const struct batch_boot *x, int start)
{
	int64_t *ids = xcalloc(x->m + 1, sizeof(*ids));
	for (size_t r = 0; r < x->m; r++)
		ids[r] = x->rc[r].pr->run_id;
	int rc = engine_mark(c, ids, x->m, start);
	free(ids);
	return rc;
}

/*
 * The start of a boot of a batch target: its row (a new one on resume), the
 * runs [i, j) still needed prepared and marked running, and its job
 * submitted, whose id is recorded with the boot at once (a controller that
 * dies now leaves it for --resume to find). 0, or -1 on a database error
 * before anything was submitted.
 */
static int batch_begin(struct engine *c, struct batch_boot *x, size_t i, size_t j)
{
	size_t n = j - i;
	memset(x, 0, sizeof(*x));
	x->i = i;
	x->j = j;
	engine_boot_init(&x->b);
	x->rc = xcalloc(n + 1, sizeof(*x->rc));
	x->br = xcalloc(n + 1, sizeof(*x->br));
	x->idx = xcalloc(n + 1, sizeof(*x->idx));
	x->prep = xcalloc(n + 1, sizeof(int));
	struct engine_boot *b = &x->b;
	c->lost = 0; /* nothing live to lose: the target stays open for the jobs in flight */
	if (engine_boot_begin(c, i, j, b))
		goto fail;
	for (size_t k = i; k < j; k++) {
		int need = engine_seq_needed(c, k);
		if (need < 0)
			goto dberr;
		if (!need)
			continue;
		size_t m = x->m++;
		engine_run_init(&x->rc[m], c->db, &c->t, c->p, c->o, &c->runs[k]);
		x->idx[m] = k;
		x->prep[m] = batch_prepare(&x->rc[m], &x->br[m]) == 0;
	}
	/* the batch's runs are marked running in one commit, before the
	   target gets them */
	if (batch_mark(c, x, 1)) {
		c->exit_code = 2;
		goto fail;
	}
	if (!b->booted)
		return 0;
	progress_say(&c->pg, "  %zu runs in one job", x->m);
	x->job = c->t.ops->batch_submit(&c->t, &(struct boot_spec){ b->br.cfg, b->br.kernel,
					b->br.preempt, b->br.cmdline ? b->br.cmdline : "" },
					&b->bi, x->br, x->m, &b->be);
	b->booted = x->job != NULL;
	if (x->job && b->bi.lava_job_id > 0 &&
	    db_boot_set_job(c->db, b->id, b->bi.lava_job_id,
			    b->bi.lava_job_url[0] ? b->bi.lava_job_url : NULL)) {
		strbuf_addf(c->err, "database: %s", db_errmsg(c->db));
		c->exit_code = 2; /* the caller cancels the job */
	}
	return 0;
dberr:
	c->exit_code = 2;
fail:
	batch_boot_release(x);
	return -1;
}

/*
 * The end of a boot of a batch target: its job collected (canceled first
 * when cancel), and the boot and every run stored exactly once from what
 * came back (not stored after a database error: --resume redoes them).
 * A boot the lab failed (boot_info.lab_fault: LAVA's Infrastructure error)
 * that has been submitted fewer than 1 + target.lab_retries times is
 * stored failed, with its job's log, and its runs go back to planned: 1,
 * and the caller submits the boot again (a new row, engine_boot_row); else 0.
 */
static int batch_end(struct engine *c, struct batch_boot *x, int cancel, int tries)
{
	struct engine_boot *b = &x->b;
	size_t m = x->m;
	int again = 0;
	if (x->job) {
		b->booted = c->t.ops->batch_collect(&c->t, x->job, cancel, &b->bi, x->br, m,
						    &b->be) == 0;
		x->job = NULL;
		if (b->booted)
			progress_say(&c->pg, "%s: job %lld ended after %.0f s", b->desc,
				     (long long)b->bi.lava_job_id, b->bi.switch_s);
	}
	if (c->exit_code == 2)
		goto out;
	again = !b->booted && b->bi.lab_fault && !cancel && !session_aborted(c->o) &&
		tries < c->t.lab_retries;
	if (engine_boot_store(c, b)) {
		again = 0;
		goto out;
	}
	if (again) {
		if (batch_mark(c, x, 0)) {
			c->exit_code = 2;
			again = 0;
			goto out;
		}
		progress_say(&c->pg, "%s: %s; submitting it again (%d of %d)", b->desc,
			     engine_boot_error(b), tries + 1, c->t.lab_retries);
		goto out;
	}
	if (engine_boot_skipped(c, b, x->idx, m, 1))
		goto out;
	for (size_t r = 0; r < m; r++) {
		struct engine_run *rx = &x->rc[r];
		char *what = engine_run_what(rx->pr);
		progress_run_start(&c->pg, b->desc, what);
		if (x->prep[r])
			batch_take(rx, &x->br[r]);
		enum engine_outcome oc = engine_run_collect(c, x->idx[r], rx, 0, what,
				json_number_value(json_object_get(rx->res, "wall_s")));
		free(what);
		if (oc == ENG_DBERR)
			break;
	}
out:
	batch_boot_release(x);
	return again;
}

/* the session engine's driver (engine_execute) on a batch target: up to
 * batch_slots boots in flight, each one job; a boot is stored the moment its
 * job ends (while the others still run), and the next boot is submitted in
 * its place. A boot the lab failed is submitted again (batch_end). */
static size_t batch_boot_slots(struct engine *c)
{
	size_t slots = 1;
	struct strbuf oe = STRBUF_INIT; /* a target that does not open fails each boot, saying why */
	if (!c->opened && c->t.ops->open(&c->t, &oe) == 0)
		c->opened = 1;
	strbuf_release(&oe);
	if (c->opened) {
		struct strbuf e = STRBUF_INIT;
		int s = c->t.ops->batch_slots(&c->t, &e);
		if (s < 1)
			progress_say(&c->pg, "  one job at a time: %s", e.buf);
		slots = s < 1 ? 1 : (size_t)s;
		strbuf_release(&e);
	}
	if (slots > 1)
		progress_say(&c->pg, "  up to %zu jobs in flight", slots);
	return slots;
}

static void *batch_boot_begin(struct engine *c, size_t i, size_t j)
{
	struct batch_boot *x = xcalloc(1, sizeof(*x));
	if (batch_begin(c, x, i, j) == 0) {
		if (x->job)
			return x;
		batch_end(c, x, 0, 0);
	}
	free(x);
	return NULL;
}

static size_t batch_boot_wait(struct engine *c, void *const *boots, size_t n)
{
	struct batch_job **jobs = xcalloc(n + 1, sizeof(*jobs));
	for (size_t k = 0; k < n; k++)
		jobs[k] = ((struct batch_boot *)boots[k])->job;
	size_t k = c->t.ops->batch_wait(&c->t, jobs, n);
	free(jobs);
	return k;
}

static int batch_boot_end(struct engine *c, void *boot, int cancel, int tries)
{
	int again = batch_end(c, boot, cancel, tries);
	free(boot);
	return again;
}

const struct engine_driver session_batch_driver = {
	.name = "batch",
	.slots = batch_boot_slots,
	.begin = batch_boot_begin,
	.wait = batch_boot_wait,
	.end = batch_boot_end,
};

int session_batch_job(struct plan *p, const struct session_opts *o, json_t **job,
		      struct strbuf *err)
{
	*job = NULL;
	if (!p->tops->batch_job) {
		strbuf_addf(err, "the plan's target is %s, which submits no batch jobs (the lava "
			    "target does)", p->tops->name);
		return -1;
	}
	if (!p->nvisits) {
		strbuf_addstr(err, "the plan has no boots");
		return -1;
	}
	const struct plan_visit *vi = &p->visits[0];
	struct target t;
	struct boot_spec bs;
	size_t n = vi->nruns;
	struct db_pending_run *pr = xcalloc(n + 1, sizeof(*pr));
	struct engine_run *rc = xcalloc(n + 1, sizeof(*rc));
	struct batch_run *br = xcalloc(n + 1, sizeof(*br));
	int ret = -1;
	engine_target_init(&t, p, o);
	engine_boot_spec(&p->boots[vi->cfg], (int)vi->cfg, &bs);
	for (size_t r = 0; r < n; r++) {
		const struct plan_run *x = &vi->runs[r];
		pr[r].cfg = (int)vi->cfg;
		pr[r].rep = x->rep;
		pr[r].seed = plan_rep_seed(p->seed, x->rep);
		pr[r].workload = (char *)p->wl[x->wl].ops->name;
		pr[r].params = json_dumps(p->wl[x->wl].params, JSON_COMPACT | JSON_SORT_KEYS);
		pr[r].knobs = json_dumps(json_array_get(p->knobs, (size_t)x->knob),
					 JSON_COMPACT | JSON_SORT_KEYS);
		engine_run_init(&rc[r], NULL, &t, p, o, &pr[r]);
		if (batch_prepare(&rc[r], &br[r])) {
			strbuf_addf(err, "run %zu of boot 1: %s", r + 1, rc[r].e.buf);
			goto out;
		}
	}
	if (t.ops->open(&t, err) == 0) {
		*job = t.ops->batch_job(&t, &bs, br, n, err);
		ret = *job ? 0 : -1;
	}
out:
	for (size_t r = 0; r < n; r++) {
		engine_run_release(&rc[r]);
		batch_run_release(&br[r]);
		free(pr[r].params);
		free(pr[r].knobs);
	}
	free(pr);
	free(rc);
	free(br);
	engine_target_fini(&t);
	return ret;
}
