/*
 * Session orchestration: preflight against the target, planning into the
 * database, and execution of the planned boots and runs (also on resume).
 *
 * For each boot in execution order: bring the target into the boot
 * configuration, verify what is in force (sysinfo), store the boot; a boot
 * that failed or does not match the request skips its runs with the reason.
 * For each run: apply its knobs (through the agent, which records them for
 * restore), ask the agent to execute the workload with its background load
 * and schedstat snapshots, restore the knobs, parse, and store the run with
 * its metrics, histograms and raw output in one transaction, which also
 * marks the boot's next run running (run_one: one commit a run). The
 * controller only waits while a measurement runs.
 *
 * The boots are worked through by the session engine's one loop
 * (engine.h: engine_execute, the state of a session, a boot and a run, and
 * the steps) with one of two drivers. This file holds the live one: a boot
 * whose runs complete at once (live_boot: engine_boot_begin,
 * engine_boot_store, then engine_boot_skipped or run_boot_runs; run_one:
 * engine_mark_next, measure, engine_settle, engine_run_collect). A batch
 * target (lava, sealed qemu) runs a boot's runs as one job instead:
 * session_batch.c's driver, the same loop and steps. Interruption comes
 * only through session_opts.abort_flag.
 */
#include "harness/orchestrate/session.h"
#include "harness/orchestrate/engine.h"
#include "harness/orchestrate/session_batch.h"
#include "harness/orchestrate/tlock.h"

#include <stdarg.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/schedstat.h"
#include "analysis/trace.h"
#include "harness/orchestrate/evidence.h"
#include "harness/orchestrate/owner.h"
#include "harness/orchestrate/kbuild.h"
#include "harness/orchestrate/kgit.h"
#include "harness/util/numfmt.h"
#include "harness/util/proc.h"
#include "harness/util/sigstop.h"
#include "harness/orchestrate/progress.h"
#include "harness/orchestrate/seqrun.h"
#include "harness/agent/preempt_offer.h"
#include "harness/agent/sysinfo.h"
#include "harness/targets/target.h"

volatile sig_atomic_t session_abort;

/* the targets watch the flag through a `volatile int *` */
_Static_assert(_Generic((sig_atomic_t)0, int: 1, default: 0), "sig_atomic_t is not int");

static void on_signal(int sig)
{
	session_abort = sig;
}

void session_install_signals(void)
{
	sigstop_catch(on_signal, SIGSTOP_IGNORE_PIPE);
}

/* one target (p->target); `who` names it in messages ("" or "targets[1]: ") */
static int preflight_one(struct plan *p, const struct session_opts *o, const char *who,
			 struct strbuf *err)
{
	struct target t;
	json_t *si = NULL;
	int ret = 0;
	if (!p->tops->feasible)
		return 0;
	engine_target_init(&t, p, o);
	/* a target that only switches at run time is asked now (the others
	 * would have to boot) */
	if ((p->tops->caps & TCAP_PREEMPT_RUNTIME) && !(p->tops->caps & TCAP_PREEMPT_BOOT)) {
		struct boot_info bi;
		struct boot_spec none = { -1, NULL, NULL, "" };
		boot_info_init(&bi);
		struct strbuf e = STRBUF_INIT;
		if (t.ops->open(&t, &e) || t.ops->boot(&t, &none, &bi, &e)) {
			if (*who)
				strbuf_addf(err, "%s: %s", p->path, who);
			strbuf_add(err, e.buf, e.len);
			strbuf_release(&e);
			boot_info_release(&bi);
			engine_target_fini(&t);
			return -1;
		}
		strbuf_release(&e);
		si = json_incref(bi.sysinfo);
		boot_info_release(&bi);
	}
	for (size_t i = 0; i < p->nboots; i++) {
		struct boot_spec bs;
		struct strbuf why = STRBUF_INIT;
		engine_boot_spec(&p->boots[i], (int)i, &bs);
		if (!p->tops->feasible(&t, &bs, si, &why)) {
			strbuf_addf(err, "%s%s: %starget %s cannot run boot configuration %zu: %s",
				    ret ? "\n" : "", p->path, who, p->tops->name, i + 1, why.buf);
			ret = -1;
		}
		strbuf_release(&why);
	}
	/* "switch": "runtime" on a target that can boot: only preempt may change */
	const char *sw = json_string_value(json_object_get(t.conf, "switch"));
	if (sw && !strcmp(sw, "runtime") && (p->tops->caps & TCAP_PREEMPT_BOOT)) {
		struct boot_spec *bs = xcalloc(p->nboots + 1, sizeof(*bs));
		struct strbuf why = STRBUF_INIT;
		for (size_t i = 0; i < p->nboots; i++)
			engine_boot_spec(&p->boots[i], (int)i, &bs[i]);
		if (target_runtime_plan_check(bs, p->nboots,
					      json_string_value(json_object_get(t.conf, "kernel")),
					      &why)) {
			strbuf_addf(err, "%s%s: %sswitch: \"runtime\" (target %s) changes only the "
				    "preempt mode between boot configurations, but %s (use \"auto\": "
				    "run time where only the preempt mode changes)", ret ? "\n" : "",
				    p->path, who, p->tops->name, why.buf);
			ret = -1;
		}
		strbuf_release(&why);
		free(bs);
	}
	/* every knob file must be readable on a target we can ask now */
	for (size_t k = 0; t.agent && k < json_array_size(p->knobs); k++) {
		json_t *writes = NULL;
		knobs_to_writes(json_array_get(p->knobs, k), &writes, err);
		size_t i;
		json_t *w;
		json_array_foreach(writes, i, w) {
			const char *path = json_string_value(json_object_get(w, "path"));
			struct strbuf e = STRBUF_INIT;
			if (agent_call(t.agent, "knob_get", json_pack("{s:s}", "path", path), 30, NULL,
				       &e)) {
				strbuf_addf(err, "%s%s: %starget %s cannot apply matrix.knobs[%zu]: %s",
					    ret ? "\n" : "", p->path, who, p->tops->name, k, e.buf);
				ret = -1;
			}
			strbuf_release(&e);
		}
		json_decref(writes);
	}
	json_decref(si);
	engine_target_fini(&t);
	return ret;
}

int session_preflight(struct plan *p, const struct session_opts *o, struct strbuf *err)
{
	if (!p->targets)
		return preflight_one(p, o, "", err);
	/* a lab: every member, each as the plan's target for the moment */
	json_t *first = p->target;
	const struct target_ops *first_ops = p->tops;
	int ret = 0;
	for (size_t i = 0; i < p->ntargets; i++) {
		struct strbuf e = STRBUF_INIT;
		char who[48];
		snprintf(who, sizeof(who), "targets[%zu]: ", i);
		p->target = json_array_get(p->targets, i);
		p->tops = target_find(json_string_value(json_object_get(p->target, "type")));
		if (p->tops && preflight_one(p, o, who, &e)) {
			strbuf_addf(err, "%s%s", ret ? "\n" : "", e.buf);
			ret = -1;
		}
		strbuf_release(&e);
		if (session_aborted(o))
			break;
	}
	p->target = first;
	p->tops = first_ops;
	return ret;
}

char *session_target_label(const json_t *t)
{
	const char *type = json_string_value(json_object_get(t, "type"));
	const char *host = json_string_value(json_object_get(t, "host"));
	const char *kernel = json_string_value(json_object_get(t, "kernel"));
	if (host)
		return xstrfmt("%s:%s", type, host);
	if (kernel) {
		const char *base = strrchr(kernel, '/');
		return xstrfmt("%s:%s", type, base && base[1] ? base + 1 : kernel);
	}
	return xstrdup(type ? type : "unknown");
}

int64_t session_start(struct db *db, struct plan *p, const struct session_opts *o,
		      struct strbuf *err)
{
	json_t *stored = json_deep_copy(p->root);
	json_object_set(stored, "target", p->target);
	char *plan_json = json_dumps(stored, JSON_COMPACT);
	json_decref(stored);
	char *label = session_target_label(p->target);
	struct db_session s = { p->name, p->path, plan_json, o->tag, label, SCHEDLAB_VERSION,
				(long long)p->seed };
	int64_t sid = -1;
	if (db_begin(db))
		goto fail;
	sid = db_session_create(db, &s);
	if (sid < 0)
		goto fail_tx;
	/* born owned: no --resume can take it between here and execute (the
	   database's message is added below) */
	struct strbuf oe = STRBUF_INIT;
	int claimed = owner_claim(db, sid, 0, o->prefix, &oe);
	strbuf_release(&oe);
	if (claimed)
		goto fail_tx;
	int seq = 0;
	for (size_t v = 0; v < p->nvisits; v++) {
		const struct plan_visit *vi = &p->visits[v];
		const struct plan_boot *b = &p->boots[vi->cfg];
		int64_t bid = db_boot_plan(db, sid, (int)v, vi->cfg, b->kernel, b->preempt, b->cmdline);
		if (bid < 0)
			goto fail_tx;
		const json_t *ks = plan_kernel_spec(p, b->kernel_index);
		const char *commit = json_string_value(json_object_get(ks, "commit"));
		if (commit && db_boot_set_git(db, bid, commit,
					      json_string_value(json_object_get(ks, "describe"))))
			goto fail_tx;
		for (size_t r = 0; r < vi->nruns; r++) {
			const struct plan_run *pr = &vi->runs[r];
			/* a traced run carries its "evidence" in its params: a series of its
			   own, never pooled with the untraced runs (docs/metrics.md) */
			json_t *pj = json_copy(p->wl[pr->wl].params);
			if (pr->traced)
				json_object_set(pj, "evidence", p->wl[pr->wl].evidence);
			char *params = json_dumps(pj, JSON_COMPACT | JSON_SORT_KEYS);
			json_decref(pj);
			char *knobs = json_dumps(json_array_get(p->knobs, (size_t)pr->knob),
						 JSON_COMPACT | JSON_SORT_KEYS);
			int64_t rid = db_run_plan_seeded(db, sid, bid, seq++, vi->round,
							 p->wl[pr->wl].ops->name, params, knobs,
							 pr->rep, plan_rep_seed(p->seed, pr->rep));
			free(params);
			free(knobs);
			if (rid < 0)
				goto fail_tx;
		}
	}
	if (db_commit(db))
		goto fail_tx;
	free(plan_json);
	free(label);
	return sid;
fail_tx:
	db_rollback(db);
fail:
	strbuf_addf(err, "database: %s", db_errmsg(db));
	free(plan_json);
	free(label);
	return -1;
}

/* ---- execution ---------------------------------------------------------- */

/* the run's knobs, through the agent (which records them for restore);
 * -1 when the run ends here */
static int apply_knobs(struct engine_run *c)
{
	json_t *writes = NULL;
	knobs_to_writes(c->knob, &writes, &c->e);
	size_t i;
	json_t *w;
	int ret = 0;
	json_array_foreach(writes, i, w) {
		json_t *info = NULL;
		c->knobs_touched = 1;
		int rc = c->t->ops->knob_set(c->t, json_string_value(json_object_get(w, "path")),
					     json_string_value(json_object_get(w, "value")), &info,
					     &c->e);
		if (rc == -1)
			c->out = ENG_LOST;
		else if (rc)
			engine_knob_refused(c);
		if (rc) {
			ret = -1;
			break;
		}
		json_array_append_new(c->applied, info);
	}
	json_decref(writes);
	return ret;
}

/* the kernel tracer the workload needs (rtla's timerlat, osnoise) among
 * those the booted kernel offers (sysinfo "tracers", null when the kernel
 * has no tracefs); 0 when it is there or the agent did not say (rtla then
 * tells itself: explain), -1 with the run skipped and the reason */
static int tracer_missing(struct engine_run *c, const json_t *si)
{
	const char *need = c->ops->tracer;
	json_t *f = json_object_get(si, "tracers");
	json_t *have = sysinfo_value(si, "tracers");
	if (!need || !f || (!json_is_array(have) && !json_is_null(have)))
		return 0;
	size_t i;
	json_t *v;
	json_array_foreach(have, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), need))
			return 0;
	const char *upper = !strcmp(need, "timerlat") ? "TIMERLAT" : "OSNOISE";
	if (json_is_null(have)) /* no tracefs at all: a kernel without FTRACE */
		strbuf_addf(&c->e, "unsupported by this kernel: no tracefs (%.200s), so no %s "
			    "tracer (CONFIG_FTRACE and CONFIG_%s_TRACER: build a variant with the "
			    "\"tracing\" fragment, kernels/fragments/tracing.config)",
			    json_string_value(json_object_get(f, "error")) ?
			    json_string_value(json_object_get(f, "error")) : "unreadable", need, upper);
	else
		strbuf_addf(&c->e, "unsupported by this kernel: no %s tracer in available_tracers "
			    "(CONFIG_%s_TRACER: build a variant with the \"tracing\" fragment, "
			    "kernels/fragments/tracing.config)", need, upper);
	engine_run_skip(c, SKIP_UNSUPPORTED);
	return -1;
}

/* knobs, request, exec, judgement: the outcome in c->out and c->status */
static void measure(struct engine_run *c, const json_t *si)
{
	int schedstat_ok = sysinfo_int(si, "schedstats", 0) == 1;
	if (!engine_run_readable(c))
		return;
	if (tracer_missing(c, si) || apply_knobs(c))
		return;
	json_t *req = engine_build_request(c, schedstat_ok);
	if (!req)
		return;
	engine_take_reply(c, c->t->ops->exec(c->t, req, c->ex.timeout_s, &c->res, &c->e));
}

/* reset what a crash left running, list what is left, mark the session
 * running; the exit code 2 on a database error */
static int exec_begin(struct engine *c)
{
	/* one owner: a live controller of this session refuses us (before
	   anything is reset, so that its running runs stay its own) */
	int held = owner_claim(c->db, c->sid, c->o->take_over, c->o->prefix, c->err);
	if (held)
		return 2;
	/* one session a target machine (tlock.h): wait for the one there */
	if (c->lock_key) {
		char *what = xstrfmt("schedlab run, session %lld (plan %s)", (long long)c->sid,
				     c->p->name ? c->p->name : "?");
		int lrc = tlock_take(c->lock_key, what, c->o->prefix, c->o->abort_flag, c->err);
		free(what);
		if (lrc) {
			struct strbuf e2 = STRBUF_INIT;
			owner_release(c->db, c->sid, &e2);
			strbuf_release(&e2);
			return session_aborted(c->o) ? 130 : 2;
		}
	}
	if (db_session_reset_running(c->db, c->sid) ||
	    db_pending_runs(c->db, c->sid, &c->runs, &c->n)) {
		strbuf_addf(c->err, "database: %s", db_errmsg(c->db));
		tlock_release(c->lock_key);
		return 2;
	}
	if (db_session_set_status(c->db, c->sid, SESSION_ST_RUNNING)) {
		strbuf_addf(c->err, "database: %s", db_errmsg(c->db));
		db_pending_runs_free(c->runs, c->n);
		tlock_release(c->lock_key);
		return 2;
	}
	return 0;
}

/* the estimate of every run, and the first progress line */
static void progress_begin(struct engine *c)
{
	double est_total = 0;
	c->est = xcalloc(c->n + 1, sizeof(double));
	for (size_t i = 0; i < c->n; i++) {
		json_t *pj = json_loads(c->runs[i].params, 0, NULL);
		const struct workload_ops *w = workload_find(c->runs[i].workload);
		c->est[i] = ((w && pj ? w->estimate_s(pj) : 0) + 0.3) *
			    plan_clock_factor(c->p->target);
		est_total += c->est[i];
		json_decref(pj);
	}
	progress_init(&c->pg, c->n, est_total, c->o->quiet);
	progress_set_prefix(&c->pg, c->o->prefix);
	char eta[32];
	progress_fmt_dur(est_total, eta, sizeof(eta));
	progress_say(&c->pg, "session %lld: %zu runs to do, estimated %s", (long long)c->sid, c->n,
		     eta);
}

/*
 * Run k, with its progress line: marked running in a commit of its own
 * before it is measured, unless the previous run's commit marked it
 * (c->marked); stored in one commit that also marks `next_id` running, the
 * run the session starts after this one (0: none or not known), when the
 * session goes on to it: not after Ctrl-C, a lost target or a database error
 * (engine_run_collect). Either way every run is marked durably before it
 * starts, and a crash at any point leaves at most the run being measured (or
 * about to be) running, for --resume (docs/reliability.md).
 */
static enum engine_outcome run_one(struct engine *c, size_t k, int64_t next_id,
				   const struct engine_boot *b, const struct evidence_decision *why)
{
	const struct db_pending_run *r = &c->runs[k];
	double t0 = now_mono();
	char *what = engine_run_what(r);
	progress_run_start(&c->pg, b->desc, what);
	struct engine_run rc;
	engine_run_init(&rc, c->db, &c->t, c->p, c->o, r);
	rc.why = why;
	if (engine_mark_next(c, r->run_id)) {
		rc.out = ENG_DBERR;
	} else {
		measure(&rc, b->bi.sysinfo);
		engine_settle(&rc);
	}
	enum engine_outcome oc = engine_run_collect(c, k, &rc, next_id, what, now_mono() - t0);
	engine_run_release(&rc);
	free(what);
	return oc;
}

/*
 * A traced run whose workload's evidence has a trigger ("worst",
 * "flagged"; evidence.h): decide from the configuration's stored runs,
 * store the decision with it, and say it. 1: run it (d holds the
 * decision); 0: it was stored (skipped as not needed, or interrupted to
 * wait for its configuration's runs, which --resume does first); -1 on a
 * database error.
 */
static int evidence_gate(struct engine *c, size_t k, struct evidence_decision *d)
{
	const struct db_pending_run *r = &c->runs[k];
	if (!r->params || !strstr(r->params, "\"evidence\":"))
		return 1;
	if (evidence_for_run(c->db, c->sid, c->p, r, d, c->err))
		return -1;
	if (d->when == EVIDENCE_ALWAYS)
		return 1;
	if (db_run_set_evidence(c->db, r->run_id, d->of, d->why.buf)) {
		strbuf_addf(c->err, "database: %s", db_errmsg(c->db));
		return -1;
	}
	const char *say = d->verdict == EVIDENCE_TRACE ? "traced run follows"
			: d->verdict == EVIDENCE_SKIP ? "no traced run" : "traced run waits";
	progress_say(&c->pg, "  evidence for %s knobs=%s: %s: %s", r->workload, r->knobs, say,
		     d->why.buf);
	if (d->verdict == EVIDENCE_TRACE) {
		c->ev_traced++;
		return 1;
	}
	char *reason = xstrfmt("%s: %s", d->verdict == EVIDENCE_SKIP ? "evidence not needed"
				       : "not run: evidence", d->why.buf);
	int rc = d->verdict == EVIDENCE_SKIP
		? engine_store_simple(c->db, r->run_id, "skipped", reason, SKIP_NOT_NEEDED, c->err)
		: engine_store_simple(c->db, r->run_id, "interrupted", reason, SKIP_NONE, c->err);
	free(reason);
	if (rc)
		return -1;
	if (d->verdict == EVIDENCE_SKIP) {
		c->ev_skipped++;
	} else {
		c->ev_waiting++;
		c->resumable++;
	}
	engine_count_done(c, k);
	return 0;
}

/* the run of [k, j) that run_boot_runs starts next, as things stand (the
 * decisions of sequential repetitions change only between rounds, and a
 * round's runs of one boot are consecutive); j when none, or when it is a
 * traced run: its evidence trigger decides at its turn, from what is
 * stored by then, whether it runs at all (evidence_gate), so it is marked
 * in a commit of its own */
static size_t next_needed(const struct engine *c, size_t k, size_t j)
{
	const char *why;
	for (; k < j; k++) {
		const struct db_pending_run *r = &c->runs[k];
		if (!c->seq || seqrun_needed(c->seq, r->cfg, r->knobs, r->workload, r->params, &why))
			return r->params && strstr(r->params, "\"evidence\":") ? j : k;
	}
	return j;
}

/* the runs of a good boot, until the target is lost or Ctrl-C; after a loss
 * the rest stay resumable. The first run is marked running in a commit of
 * its own, each later one in the commit that stored the run before it */
static void run_boot_runs(struct engine *c, const struct engine_boot *b, size_t i, size_t j)
{
	c->marked = 0;
	for (size_t k = i; k < j; k++) {
		if (session_aborted(c->o))
			break;
		int need = engine_seq_needed(c, k);
		if (need < 0) {
			c->exit_code = 2;
			break;
		}
		if (!need)
			continue;
		if (c->lost) {
			c->resumable++;
			if (engine_store_simple(c->db, c->runs[k].run_id, "interrupted",
					 "not run: target lost earlier in this boot", SKIP_NONE,
					 c->err)) {
				c->exit_code = 2;
				break;
			}
			engine_count_done(c, k);
			continue;
		}
		struct evidence_decision d;
		evidence_decision_init(&d);
		int go = evidence_gate(c, k, &d);
		if (go < 0) {
			evidence_decision_release(&d);
			c->exit_code = 2;
			break;
		}
		size_t next = next_needed(c, k + 1, j);
		enum engine_outcome oc = go ? run_one(c, k, next < j ? c->runs[next].run_id : 0, b, &d)
					    : ENG_OK;
		evidence_decision_release(&d);
		if (oc == ENG_DBERR)
			break;
	}
	/* Ctrl-C came after the commit that marked the next run: it goes back
	   to planned, as it would have stayed without the mark */
	engine_unmark_next(c);
}

/* the engine's live driver: one boot, the runs [i, j) that share it, run
 * one after the other as batches of one that complete at once; nothing is
 * left in flight */
static void *live_boot(struct engine *c, size_t i, size_t j)
{
	struct engine_boot b;
	size_t *idx = xcalloc(j - i + 1, sizeof(*idx));
	for (size_t k = i; k < j; k++)
		idx[k - i] = k;
	engine_boot_init(&b);
	if (engine_boot_begin(c, i, j, &b) == 0 && engine_boot_store(c, &b) == 0 &&
	    !engine_boot_skipped(c, &b, idx, j - i, 0))
		run_boot_runs(c, &b, i, j);
	engine_boot_release(&b);
	free(idx);
	return NULL;
}

static size_t live_slots(struct engine *c)
{
	return 1;
}

static const struct engine_driver live_driver = {
	.name = "live",
	.slots = live_slots,
	.begin = live_boot,
};

/* close the target, store the session's status, say what is left; the
 * exit code */
static int exec_finish(struct engine *c)
{
	int64_t sid = c->sid;
	const char *pfx = c->o->prefix ? c->o->prefix : "";
	progress_done(&c->pg);
	free(c->est);
	strvec_clear(&c->notes_said);
	if (c->opened)
		c->t.ops->close(&c->t);
	engine_target_fini(&c->t);
	db_pending_runs_free(c->runs, c->n);
	enum session_state final = session_aborted(c->o) || (c->resumable && c->exit_code != 2)
		? SESSION_ST_INTERRUPTED : c->exit_code == 2 ? SESSION_ST_FAILED : SESSION_ST_DONE;
	if ((db_session_set_status(c->db, sid, final) || owner_release(c->db, sid, c->err)) &&
	    c->exit_code != 2) {
		if (!c->err->len)
			strbuf_addf(c->err, "database: %s", db_errmsg(c->db));
		c->exit_code = 2;
	}
	if (c->resumable && !session_aborted(c->o) && c->exit_code != 2) {
		/* the first reason as stored, one line of it (a boot's error may
		   carry the console), so that --quiet says why too */
		char *why = NULL;
		if (db_session_first_resumable(c->db, sid, &why) || !why)
			why = xstrdup("(no reason stored)");
		size_t n = strcspn(why, "\n");
		fprintf(stderr, "%ssession %lld: %d runs were not done because the target was lost or "
			"did not boot (the first: %.*s%s); `schedlab run --resume %lld` redoes them "
			"once it is back\n", pfx, (long long)sid, c->resumable, (int)(n > 300 ? 300 : n),
			why, n > 300 ? "..." : "", (long long)sid);
		free(why);
	}
	if (session_aborted(c->o)) {
		fprintf(stderr, "%sinterrupted: session %lld is resumable with "
			"`schedlab run --resume %lld`\n", pfx, (long long)sid, (long long)sid);
		return 130;
	}
	return c->exit_code;
}

int session_settle(struct db *db, int64_t sid, int failed, const struct session_opts *o,
		   struct strbuf *err)
{
	if (owner_claim(db, sid, o->take_over, o->prefix, err))
		return 2;
	if (db_session_set_status(db, sid, SESSION_ST_DONE)) {
		strbuf_addf(err, "database: %s", db_errmsg(db));
		owner_release(db, sid, err);
		return 2;
	}
	if (owner_release(db, sid, err))
		return 2;
	return failed ? 1 : 0;
}

int session_execute(struct db *db, int64_t sid, struct plan *p, const struct session_opts *o,
		    struct strbuf *err)
{
	struct engine c = { .db = db, .sid = sid, .p = p, .o = o, .err = err };
	char *lkey = tlock_key(p->target, json_object_get(p->root, "lab"));
	c.lock_key = lkey;
	int rc = exec_begin(&c);
	if (rc) {
		free(lkey);
		return rc;
	}
	engine_target_init(&c.t, p, o);
	progress_begin(&c);
	if (p->until_decided) {
		c.seq = seqrun_new(p);
		c.seq_t0 = now_mono();
		c.seq_looked = -1;
	}
	/* one loop, two drivers: a batch target's boots as jobs, a live one's
	   completing at once */
	engine_execute(&c, target_batch(c.t.ops, c.t.conf) ? &session_batch_driver : &live_driver);
	if (c.seq) {
		if (c.exit_code != 2 && engine_seq_look(&c, INT32_MAX))
			c.exit_code = 2;
		struct strbuf sum = STRBUF_INIT;
		seqrun_summary(c.seq, c.seq_skipped, &sum);
		progress_say(&c.pg, "%s", sum.buf);
		strbuf_release(&sum);
		seqrun_free(c.seq);
	}
	if (c.ev_traced || c.ev_skipped || c.ev_waiting) {
		char wait[120] = "";
		if (c.ev_waiting)
			snprintf(wait, sizeof(wait), "; %zu traced run%s wait for untraced runs of "
				 "their configuration (--resume)", c.ev_waiting,
				 c.ev_waiting == 1 ? "" : "s");
		progress_say(&c.pg, "evidence triggers: %zu traced run%s made, %zu configuration%s "
			     "with nothing flagged got none%s", c.ev_traced,
			     c.ev_traced == 1 ? "" : "s", c.ev_skipped, c.ev_skipped == 1 ? "" : "s",
			     wait);
	}
	rc = exec_finish(&c);
	tlock_release(lkey);
	free(lkey);
	return rc;
}

int session_build_kernels(struct plan *p, int quiet, volatile int *abort_flag, struct strbuf *err)
{
	json_t *ks = json_object_get(json_object_get(p->root, "matrix"), "kernel");
	size_t i, todo = 0, n = 0, nk = json_is_array(ks) ? json_array_size(ks) : ks ? 1 : 0;
	json_t *k;
	/* kernels from git: every ref is resolved to its commit once, before
	 * anything is built, and the id (not the name) is used from here on */
	for (i = 0; i < nk; i++) {
		k = json_is_array(ks) ? json_array_get(ks, i) : ks;
		char path[64];
		snprintf(path, sizeof(path), "matrix.kernel[%zu]", i);
		if (kgit_is_git(k) && !json_object_get(k, "image") &&
		    kgit_resolve(k, path, quiet, abort_flag, err))
			return -1;
		if (kgit_is_git(k))
			plan_set_kernel_label(p, i);
	}
	for (i = 0; i < nk; i++) {
		k = json_is_array(ks) ? json_array_get(ks, i) : ks;
		if (json_is_object(k) && !json_object_get(k, "image"))
			todo++;
	}
	for (i = 0; i < nk; i++) {
		k = json_is_array(ks) ? json_array_get(ks, i) : ks;
		if (!json_is_object(k) || json_object_get(k, "image"))
			continue;
		char *label = kbuild_label(k), *folder = NULL;
		char path[64];
		snprintf(path, sizeof(path), "matrix.kernel[%zu]", i);
		double t0 = now_mono();
		if (!quiet)
			fprintf(stderr, "kernel %zu/%zu: %s: building or finding it in the cache\n",
				++n, todo, label);
		if (kbuild_build(k, path, quiet, abort_flag, &folder, err)) {
			free(label);
			return -1;
		}
		if (!quiet)
			fprintf(stderr, "kernel %zu/%zu: %s: %s (%.0f s)\n", n, todo, label, folder,
				now_mono() - t0);
		int bad = plan_set_kernel_image(p, i, folder, err);
		free(folder);
		free(label);
		if (bad)
			return -1;
	}
	/* the built kernels' configs are known now: what they offer */
	return n ? plan_check_offers(p, err) : 0;
}
