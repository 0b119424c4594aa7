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
 * marks the boot's next run running (execute_run: one commit a run). The
 * controller only waits while a measurement runs.
 *
 * The state of a session being worked through is a struct exec_ctx, that of
 * one boot a struct boot_ctx, that of one run a struct run_ctx; each step is
 * a function of its own (do_boot: boot_row, boot_target, store_boot, then
 * skip_boot_runs or run_boot_runs; execute_run: measure, settle, store_run,
 * summarize). Interruption comes only through session_opts.abort_flag.
 * A batch target (lava) runs a boot's runs as one job instead:
 * session_batch.c, through the steps and state of session_internal.h.
 */
#include "harness/orchestrate/session.h"
#include "harness/orchestrate/session_internal.h"
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

void target_init(struct target *t, struct plan *p, const struct session_opts *o)
{
	memset(t, 0, sizeof(*t));
	t->ops = p->tops;
	t->conf = json_deep_copy(p->target);
	t->abort_flag = o->abort_flag;
	t->agent_path = o->agent_path;
	t->tools = p->tools.nr ? (const char *const *)p->tools.v : NULL;
}

void target_fini(struct target *t)
{
	if (t->ops && t->priv)
		t->ops->close(t);
	json_decref(t->conf);
	t->conf = NULL;
}

void boot_spec_of(const struct plan_boot *b, int index, struct boot_spec *s)
{
	s->index = index;
	s->kernel = b->kernel;
	s->preempt = b->preempt;
	s->cmdline = b->cmdline ? b->cmdline : "";
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
	target_init(&t, p, o);
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
			target_fini(&t);
			return -1;
		}
		strbuf_release(&e);
		si = json_incref(bi.sysinfo);
		boot_info_release(&bi);
	}
	for (size_t i = 0; i < p->nboots; i++) {
		struct boot_spec bs;
		struct strbuf why = STRBUF_INIT;
		boot_spec_of(&p->boots[i], (int)i, &bs);
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
			boot_spec_of(&p->boots[i], (int)i, &bs[i]);
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
	target_fini(&t);
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

static json_t *string_array(const struct strvec *sv)
{
	json_t *a = json_array();
	for (size_t i = 0; i < sv->nr; i++)
		json_array_append_new(a, json_string(sv->v[i]));
	return a;
}

static char *argv_json(const struct strvec *sv)
{
	json_t *a = string_array(sv);
	char *s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

static const char *better_str(enum better b)
{
	return b == BETTER_LOWER ? "lower" : b == BETTER_HIGHER ? "higher" : "none";
}

int store_simple(struct db *db, int64_t run_id, const char *status, const char *error,
		 enum skip_reason skip, struct strbuf *err)
{
	struct db_run_result r;
	memset(&r, 0, sizeof(r));
	r.status = status;
	r.error = error;
	r.skip = skip;
	r.exit_code = -1;
	if (db_run_finish(db, run_id, &r)) {
		strbuf_addf(err, "database: %s", db_errmsg(db));
		return -1;
	}
	return 0;
}

void run_ctx_init(struct run_ctx *c, struct db *db, struct target *t, const struct plan *p,
			 const struct session_opts *o, const struct db_pending_run *pr)
{
	memset(c, 0, sizeof(*c));
	c->db = db;
	c->t = t;
	c->p = p;
	c->o = o;
	c->pr = pr;
	c->ops = workload_find(pr->workload);
	c->params = json_loads(pr->params, 0, NULL);
	c->evidence = json_incref(json_object_get(c->params, "evidence"));
	if (c->evidence)
		json_object_del(c->params, "evidence");
	c->knob = json_loads(pr->knobs, 0, NULL);
	c->applied = json_array();
	wl_exec_init(&c->ex);
	wl_exec_init(&c->lex);
	metric_set_init(&c->ms);
	strbuf_init(&c->e, 0);
	strbuf_init(&c->notes, 0);
	c->status = "failed";
	c->out = RUN_FAILED;
}

void run_ctx_release(struct run_ctx *c)
{
	json_decref(c->res);
	json_decref(c->params);
	json_decref(c->evidence);
	json_decref(c->knob);
	json_decref(c->applied);
	metric_set_release(&c->ms);
	json_decref(c->trace_summary);
	wl_exec_release(&c->ex);
	wl_exec_release(&c->lex);
	strbuf_release(&c->e);
	strbuf_release(&c->notes);
}

/* one note of the run (run.notes: one a line, so a note's own line breaks
 * become spaces) */
void run_note(struct run_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	strbuf_addf(&c->notes, "%s%s", c->notes.len ? "\n" : "", s);
	free(s);
}

/* the run is skipped, and why (db/runstate.h decides from it whether
 * --resume redoes it) */
void run_skip(struct run_ctx *c, enum skip_reason why)
{
	c->status = "skipped";
	c->skip = why;
	c->out = RUN_SKIPPED;
}

/* a knob write the kernel refused: an absent tunable or sysctl file means
 * the kernel lacks it, and the run is skipped rather than failed */
void knob_refused(struct run_ctx *c)
{
	struct strbuf *e = &c->e;
	if (!strstr(e->buf, "unsupported by this kernel") && !strstr(e->buf, "No such file"))
		return;
	if (!strstr(e->buf, "unsupported by this kernel")) {
		char *m = xstrfmt("unsupported by this kernel: %s", e->buf);
		strbuf_reset(e);
		strbuf_addstr(e, m);
		free(m);
	}
	run_skip(c, SKIP_UNSUPPORTED);
}

/* the run's knobs, through the agent (which records them for restore);
 * -1 when the run ends here */
static int apply_knobs(struct run_ctx *c)
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
			c->out = RUN_LOST;
		else if (rc)
			knob_refused(c);
		if (rc) {
			ret = -1;
			break;
		}
		json_array_append_new(c->applied, info);
	}
	json_decref(writes);
	return ret;
}

/* the agent's exec request: argv, timeout, files, background load,
 * schedstat; NULL when the workload or its load cannot be built */
json_t *build_request(struct run_ctx *c, int schedstat_ok)
{
	if (c->ops->build(c->params, &c->ex, &c->e))
		return NULL;
	json_t *req = json_object();
	json_object_set_new(req, "argv", string_array(&c->ex.argv));
	json_object_set_new(req, "timeout_s", json_real(c->ex.timeout_s));
	if (c->ex.stop_sigint)
		json_object_set_new(req, "stop_signal", json_string("INT"));
	json_object_set_new(req, "files", string_array(&c->ex.files));
	/* matrix.scheduler, carried in the run's knobs (plan.c): the agent
	   starts it around the run and checks the kernel runs it (scx.h) */
	json_t *sched = json_object_get(c->knob, "scheduler");
	if (json_is_string(sched))
		json_object_set(req, "scheduler", sched);
	if (c->ex.inputs)
		json_object_set(req, "inputs", c->ex.inputs);
	json_t *load = json_object_get(c->params, "load");
	if (load) {
		const struct workload_ops *lops = workload_find(json_string_value(json_object_get(load, "type")));
		if (!lops || !lops->build_load || lops->build_load(load, &c->lex, &c->e)) {
			json_decref(req);
			return NULL;
		}
		json_object_set_new(req, "load", json_pack("[{s:o}]", "argv", string_array(&c->lex.argv)));
	}
	if (schedstat_ok && c->p->schedstat)
		json_object_set_new(req, "schedstat", json_true());
	/* the repetition's perturbation (docs/virtual-time.md "Seeds") */
	if (c->pr->seed >= 0)
		json_object_set_new(req, "seed", json_integer(c->pr->seed));
	if (c->evidence)
		json_object_set_new(req, "trace", json_pack("{s:O,s:O,s:I}", "events",
			json_object_get(c->evidence, "events"), "buffer_kb",
			json_object_get(c->evidence, "buffer_kb"), "max_bytes",
			(json_int_t)json_integer_value(json_object_get(c->evidence, "max_kb")) * 1024));
	return req;
}

/* what the workload left: aborted, timed out, failed, or its metrics;
 * sets the outcome */
static void judge_output(struct run_ctx *c)
{
	json_t *res = c->res;
	struct wl_output wo;
	memset(&wo, 0, sizeof(wo));
	wo.exit_code = (int)json_integer_value(json_object_get(res, "exit_code"));
	wo.term_signal = (int)json_integer_value(json_object_get(res, "signal"));
	wo.timed_out = json_is_true(json_object_get(res, "timed_out"));
	wo.wall_s = json_number_value(json_object_get(res, "wall_s"));
	wo.out = json_string_value(json_object_get(res, "stdout"));
	wo.err = json_string_value(json_object_get(res, "stderr"));
	wo.files = json_object_get(res, "files");
	if (json_object_get(res, "aborted")) {
		strbuf_addf(&c->e, "%s", json_string_value(json_object_get(res, "aborted")));
		c->status = "interrupted";
		c->out = RUN_INTERRUPTED;
		return;
	}
	if (wo.timed_out) {
		strbuf_addf(&c->e, "%s timed out after %.0f s and was killed", c->ex.argv.v[0],
			    c->ex.timeout_s);
		c->status = "timeout";
		return;
	}
	if (wo.exit_code != 0) {
		int why = c->ops->explain ? c->ops->explain(c->params, &wo, &c->e) : 0;
		if (why == 2) /* the kernel lacks what the tool needs: skipped */
			run_skip(c, SKIP_UNSUPPORTED);
		if (why)
			return;
		const char *tail = wo.err && *wo.err ? wo.err : wo.out ? wo.out : "";
		size_t tl = strlen(tail);
		strbuf_addf(&c->e, "%s exited with %s %d: %s", c->ex.argv.v[0],
			    wo.term_signal ? "signal" : "status",
			    wo.term_signal ? wo.term_signal : wo.exit_code, tl > 300 ? tail + tl - 300 : tail);
		return;
	}
	if (c->ops->parse(c->params, &wo, &c->ms, &c->e))
		return;
	json_t *loads = json_object_get(res, "loads");
	size_t li;
	json_t *lv;
	json_array_foreach(loads, li, lv) {
		if (json_is_true(json_object_get(lv, "ended_early"))) {
			strbuf_addf(&c->e, "background load %s ended before the measurement did (exit %d)",
				    json_string_value(json_object_get(lv, "argv0")),
				    (int)json_integer_value(json_object_get(lv, "exit_code")));
			return;
		}
	}
	/* a sched_ext scheduler's run is stored only when the agent says the
	   kernel ran it (harness/agent/scx.h); an agent that ignored the key
	   ran it under the kernel's own class */
	const char *want = json_string_value(json_object_get(c->knob, "scheduler"));
	const json_t *sx = json_object_get(res, "scheduler");
	const char *ran = json_string_value(json_object_get(sx, "name"));
	if (want && strcmp(want, "eevdf") && !(ran && !strcmp(ran, want))) {
		strbuf_addf(&c->e, "sched_ext: the agent did not confirm that %s ran the run (it "
			    "said %s)", want, ran ? ran : "nothing");
		return;
	}
	c->status = "ok";
	c->out = RUN_OK;
	if (ran)
		run_note(c, "sched_ext: %s enabled for the run (root/ops %.80s), the kernel back "
			 "on its own class after (state %.20s)", ran,
			 json_string_value(json_object_get(sx, "ops")) ?: "?",
			 json_string_value(json_object_get(sx, "state_after")) ?: "?");
	/* kept with the run (run.notes): evidence the run could not give,
	   and why (no placement evidence without schedstats) */
	if (c->ms.note.len)
		run_note(c, "%s", c->ms.note.buf);
	/* kept with the run (run.notes): what the tool left running after it
	   exited competed with the measurement */
	const char *left = json_string_value(json_object_get(res, "killed_leftovers"));
	if (left)
		run_note(c, "the tool left processes running that held its output; killed: %.300s",
			 left);
}

/*
 * A traced run's evidence: the trace's text kept with the run's files
 * (schedlab-trace.txt), its summary over the last trace_s seconds as trace_*
 * metrics and schedlab-trace.json (the busiest tasks), and a note that says
 * the run was traced, why (its trigger's decision) and what was cut. A
 * trace that is missing or cannot be read fails an ok run: a traced run
 * without its trace has no reason to be. A traced run that failed or timed
 * out (what "flagged" may ask to see again) keeps the summary of the trace
 * the agent still brought back, without metrics.
 */
static void trace_evidence(struct run_ctx *c)
{
	int was_ok = c->out == RUN_OK;
	const json_t *tr = json_object_get(c->res, "trace");
	const char *text = json_string_value(json_object_get(tr, "text"));
	const char *terr = json_string_value(json_object_get(tr, "error"));
	if (!text) {
		strbuf_addf(&c->e, "%strace: the agent returned no trace%s%s", c->e.len ? "; " : "",
			    terr ? ": " : "", terr ? terr : "");
		goto fail;
	}
	double win = json_number_value(json_object_get(c->evidence, "trace_s"));
	struct trace_summary ts;
	char perr[256];
	if (trace_parse(text, json_string_length(json_object_get(tr, "text")), win, &ts, perr,
			sizeof(perr))) {
		strbuf_addf(&c->e, "%strace (schedlab-trace.txt): %s", c->e.len ? "; " : "", perr);
		goto fail;
	}
	metric_add(&c->ms, "trace_wakeup_lat_p50_us", ts.lat_p50_us, "us", BETTER_LOWER);
	metric_add(&c->ms, "trace_wakeup_lat_p99_us", ts.lat_p99_us, "us", BETTER_LOWER);
	metric_add(&c->ms, "trace_wakeup_lat_max_us", ts.lat_max_us, "us", BETTER_LOWER);
	metric_add(&c->ms, "trace_wakeups", (double)ts.wakeups, "count", BETTER_NONE);
	metric_add(&c->ms, "trace_switches", (double)ts.switches, "count", BETTER_NONE);
	metric_add(&c->ms, "trace_preemptions", (double)ts.preemptions, "count", BETTER_NONE);
	metric_add(&c->ms, "trace_migrations", (double)ts.migrations, "count", BETTER_NONE);
	metric_add(&c->ms, "trace_span_s", ts.span_s, "s", BETTER_NONE);
	json_t *sum = trace_summary_json(&ts, 20);
	json_object_set_new(sum, "bytes", json_integer(json_integer_value(json_object_get(tr, "bytes"))));
	json_object_set(sum, "truncated", json_object_get(tr, "truncated"));
	json_object_set_new(sum, "overrun", json_integer(json_integer_value(json_object_get(tr, "overrun"))));
	if (c->why && c->why->why.len) {
		json_t *t = json_pack("{s:s,s:s}", "when", evidence_when_name(c->why->when), "why",
				      c->why->why.buf);
		if (c->why->of > 0)
			json_object_set_new(t, "of_run", json_integer(c->why->of));
		json_object_set_new(sum, "trigger", t);
	}
	c->trace_summary = sum;
	struct strbuf tn = STRBUF_INIT;
	strbuf_addf(&tn, "traced run (evidence, %.3g s window): not pooled with untraced runs",
		    win);
	if (ts.span_s + 0.05 < win)
		strbuf_addf(&tn, "; the trace covers only %.3g s%s", ts.span_s,
			    json_is_true(json_object_get(tr, "truncated")) ?
			    " (its start was cut at evidence.max_kb)" :
			    json_integer_value(json_object_get(tr, "overrun")) ?
			    " (the ring buffer overwrote its start: raise evidence.buffer_kb)" :
			    " (the run was shorter)");
	else if (json_is_true(json_object_get(tr, "truncated")))
		strbuf_addf(&tn, "; the trace text was cut to its last %lld KiB (evidence.max_kb)",
			    (long long)json_integer_value(json_object_get(c->evidence, "max_kb")));
	if (ts.lost)
		strbuf_addf(&tn, "; the trace lost %zu events", ts.lost);
	run_note(c, "%s", tn.buf);
	strbuf_release(&tn);
	trace_summary_release(&ts);
	return;
fail:
	if (!was_ok)
		return;
	c->status = "failed";
	c->out = RUN_FAILED;
}

/* the kernel tracer the workload needs (rtla's timerlat, osnoise) among
 * those the booted kernel offers (sysinfo "tracers", null when the kernel
 * has no tracefs); 0 when it is there or the agent did not say (rtla then
 * tells itself: explain), -1 with the run skipped and the reason */
static int tracer_missing(struct run_ctx *c, const json_t *si)
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
	run_skip(c, SKIP_UNSUPPORTED);
	return -1;
}

/* the reply half of a run: the exec's return code (rc, as from the target's
 * exec) and its result in c->res; the outcome in c->out and c->status */
void take_reply(struct run_ctx *c, int rc)
{
	if (rc == -1) {
		c->out = session_aborted(c->o) ? RUN_INTERRUPTED : RUN_LOST;
		c->status = "interrupted";
		return;
	}
	if (rc) {
		/* the agent could not run it: name the package when a tool is missing */
		if (strstr(c->e.buf, "not found in PATH"))
			strbuf_addf(&c->e, " (install the Debian package %s)", c->ops->package);
		return;
	}
	judge_output(c);
	if (c->evidence && (c->out == RUN_OK || (c->out == RUN_FAILED &&
	    json_object_get(json_object_get(c->res, "trace"), "text"))))
		trace_evidence(c);
	/* why it was traced, also when it failed (run.evidence_why has it too) */
	if (c->why && c->why->why.len && c->out != RUN_INTERRUPTED)
		run_note(c, "traced for evidence, %s", c->why->why.buf);
}

/* the stored row is readable; else the run fails here */
int run_readable(struct run_ctx *c)
{
	if (c->ops && c->params && c->knob)
		return 1;
	strbuf_addf(&c->e, "stored run is unreadable (workload %s)", c->pr->workload);
	return 0;
}

/* knobs, request, exec, judgement: the outcome in c->out and c->status */
static void measure(struct run_ctx *c, const json_t *si)
{
	int schedstat_ok = sysinfo_int(si, "schedstats", 0) == 1;
	if (!run_readable(c))
		return;
	if (tracer_missing(c, si) || apply_knobs(c))
		return;
	json_t *req = build_request(c, schedstat_ok);
	if (!req)
		return;
	take_reply(c, c->t->ops->exec(c->t, req, c->ex.timeout_s, &c->res, &c->e));
}

/* after the measurement: a lost target is said so, and the knobs are
 * restored before anything else happens on the target */
void settle(struct run_ctx *c)
{
	/* the target went away (connection dropped, machine gone, agent hung):
	   the run failed, but not because of what it measured; it stays
	   resumable (status interrupted) and says why */
	if (c->out == RUN_LOST) {
		char *why = xstrfmt("failed: target lost: %s", c->e.len ? c->e.buf : "connection lost");
		strbuf_reset(&c->e);
		strbuf_addstr(&c->e, why);
		free(why);
		c->status = "interrupted";
	}
	if (c->knobs_touched && c->out != RUN_LOST && c->out != RUN_INTERRUPTED) {
		struct strbuf re = STRBUF_INIT;
		if (c->t->ops->knob_restore(c->t, &re)) {
			strbuf_addf(&c->e, "%sknob restore failed: %s", c->e.len ? "; " : "", re.buf);
			if (c->out == RUN_OK) {
				c->status = "failed";
				c->out = RUN_FAILED;
			}
		}
		strbuf_release(&re);
	}
}

/* the metrics of an ok run for the database: the workload's, then the
 * schedstat deltas; returns how many (dm has room for ms.nr + 4) */
static size_t collect_metrics(const struct run_ctx *c, struct db_metric *dm)
{
	size_t k = 0;
	if (c->out != RUN_OK)
		return 0;
	const struct metric_set *ms = &c->ms;
	for (size_t m = 0; m < ms->nr; m++)
		dm[k++] = (struct db_metric){ c->ops->name, ms->m[m].name, ms->m[m].unit,
					      better_str(ms->m[m].better), ms->m[m].note,
					      ms->m[m].value, ms->m[m].censored };
	struct schedstat sb, sa;
	struct schedstat_delta sd;
	const char *ssb = json_string_value(json_object_get(c->res, "schedstat_before"));
	const char *ssa = json_string_value(json_object_get(c->res, "schedstat_after"));
	if (ssb && ssa && !schedstat_parse(ssb, &sb) && !schedstat_parse(ssa, &sa) &&
	    !schedstat_delta(&sb, &sa, &sd)) {
		dm[k++] = (struct db_metric){ "schedstat", "ttwu_count", "count", "none", NULL,
					      sd.ttwu_count, 0 };
		if (sd.ttwu_count > 0)
			dm[k++] = (struct db_metric){ "schedstat", "ttwu_local_pct", "%", "none",
						      NULL, sd.ttwu_local_pct, 0 };
		dm[k++] = (struct db_metric){ "schedstat", "run_delay_ms", "ms", "lower", NULL,
					      sd.run_delay_ms, 0 };
		dm[k++] = (struct db_metric){ "schedstat", "sched_count", "count", "none", NULL,
					      sd.sched_count, 0 };
	}
	return k;
}

/* which programs ran (the agent's record: argv0, path, sha256, from
 * "bundle" or "target"): {"workload": {...}, "loads": [{...}]}, NULL when
 * the agent said nothing (an older agent) */
/* a record as the agent sends it: an object of short strings (the reply
 * check saw the workload's, not the loads') */
static int tool_ok(const json_t *t)
{
	const char *k;
	json_t *v;
	if (!json_is_object(t) || json_object_size(t) > 8)
		return 0;
	json_object_foreach((json_t *)t, k, v)
		if (!json_is_string(v) || json_string_length(v) > 4096)
			return 0;
	return 1;
}

static json_t *tools_ran(const struct run_ctx *c)
{
	json_t *w = c->res ? json_object_get(c->res, "tool") : NULL, *loads = json_array(), *lv;
	size_t i;
	if (!tool_ok(w))
		w = NULL;
	json_array_foreach(c->res ? json_object_get(c->res, "loads") : NULL, i, lv)
		if (tool_ok(json_object_get(lv, "tool")))
			json_array_append(loads, json_object_get(lv, "tool"));
	if (!json_is_object(w) && !json_array_size(loads)) {
		json_decref(loads);
		return NULL;
	}
	json_t *t = json_object();
	if (json_is_object(w))
		json_object_set(t, "workload", w);
	json_object_set_new(t, "loads", loads);
	return t;
}

/* the files the agent brought back, the inputs the tool read (rt-app's task
 * description; unless the tool rewrote a file of that name), structured
 * results (e.g. a step curve) as "schedlab-extra.json", and which programs
 * ran as "schedlab-tools.json"; NULL when there are none */
static char *files_json(const struct run_ctx *c)
{
	json_t *files = c->res ? json_object_get(c->res, "files") : NULL;
	json_t *tools = tools_ran(c);
	const json_t *trace = c->res ? json_object_get(c->res, "trace") : NULL;
	if (!c->ms.extra && !c->ex.inputs && !tools && !trace && !c->trace_summary)
		return files ? json_dumps(files, JSON_COMPACT) : NULL;
	json_t *f = files ? json_deep_copy(files) : json_object();
	if (c->ex.inputs)
		json_object_update_missing(f, c->ex.inputs);
	if (c->ms.extra) {
		char *x = json_dumps(c->ms.extra, JSON_COMPACT);
		json_object_set_new(f, "schedlab-extra.json", json_string(x));
		free(x);
	}
	if (tools) {
		char *x = json_dumps(tools, JSON_COMPACT | JSON_SORT_KEYS);
		json_object_set_new(f, "schedlab-tools.json", json_string(x));
		free(x);
		json_decref(tools);
	}
	/* a traced run's raw trace (as the agent kept it) and its summary */
	if (json_object_get(trace, "text"))
		json_object_set(f, "schedlab-trace.txt", json_object_get(trace, "text"));
	if (c->trace_summary) {
		char *x = json_dumps(c->trace_summary, JSON_COMPACT);
		json_object_set_new(f, "schedlab-trace.json", json_string(x));
		free(x);
	}
	char *s = json_dumps(f, JSON_COMPACT);
	json_decref(f);
	return s;
}

/* the background load's argv and what became of it; NULL without a load */
static char *load_json(const struct run_ctx *c)
{
	if (!c->lex.argv.nr)
		return NULL;
	char *la = argv_json(&c->lex.argv);
	json_t *loadinfo = json_pack("{s:s,s:O?}", "argv", la, "result",
				     c->res ? json_object_get(c->res, "loads") : NULL);
	free(la);
	char *s = loadinfo ? json_dumps(loadinfo, JSON_COMPACT) : NULL;
	json_decref(loadinfo);
	return s;
}

/* the run row with its metrics, histograms and raw output, in one
 * transaction, and the run `next` marked running in it (none when 0); -1
 * with a message */
int store_run(struct run_ctx *c, int64_t next, struct strbuf *err)
{
	int ok = c->out == RUN_OK;
	const struct metric_set *ms = &c->ms;
	struct db_metric *dm = xcalloc(ms->nr + 4, sizeof(*dm));
	size_t nm = collect_metrics(c, dm);
	struct db_hist *dh = xcalloc(ms->nhist + 1, sizeof(*dh));
	json_t **hj = xcalloc(ms->nhist + 1, sizeof(json_t *));
	for (size_t h = 0; ok && h < ms->nhist; h++) {
		hj[h] = hist_to_json(&ms->hist[h].h);
		dh[h] = (struct db_hist){ ms->hist[h].name, ms->hist[h].unit, hj[h] };
	}
	char *argvj = c->ex.argv.nr ? argv_json(&c->ex.argv) : NULL;
	char *filesj = files_json(c);
	char *appliedj = json_dumps(c->applied, JSON_COMPACT);
	char *loadj = load_json(c);
	const json_t *res = c->res;
	struct db_run_result r = {
		.status = c->status,
		.error = c->e.len ? c->e.buf : NULL,
		.skip = c->out == RUN_SKIPPED ? c->skip : SKIP_NONE,
		.notes = c->notes.len ? c->notes.buf : NULL,
		.wall_s = json_number_value(json_object_get(res, "wall_s")),
		.exit_code = res ? (int)json_integer_value(json_object_get(res, "exit_code")) : -1,
		.argv_json = argvj,
		.out = json_string_value(json_object_get(res, "stdout")),
		.err = json_string_value(json_object_get(res, "stderr")),
		.files_json = filesj,
		.knobs_applied_json = appliedj,
		.load_json = loadj,
		.schedstat_before = ok ? json_string_value(json_object_get(res, "schedstat_before")) : NULL,
		.schedstat_after = ok ? json_string_value(json_object_get(res, "schedstat_after")) : NULL,
		.metrics = dm,
		.nmetrics = nm,
		.hists = dh,
		.nhists = ok ? ms->nhist : 0,
	};
	int ret = 0;
	if (db_run_finish_start(c->db, c->pr->run_id, &r, next)) {
		strbuf_addf(err, "database: %s", db_errmsg(c->db));
		ret = -1;
	}
	for (size_t h = 0; h < ms->nhist; h++)
		json_decref(hj[h]);
	free(hj);
	free(dh);
	free(dm);
	free(argvj);
	free(filesj);
	free(appliedj);
	free(loadj);
	return ret;
}

/* the end of the progress line: the headline metrics, or what went wrong */
void summarize(const struct run_ctx *c, struct strbuf *summary, struct strbuf *notes)
{
	if (c->out != RUN_OK) {
		strbuf_addf(summary, " %s", c->e.len ? c->e.buf : c->status);
		return;
	}
	/* what a run that went well still says (run.notes): for the caller
	   to show once, not on every run's line */
	strbuf_addstr(notes, c->notes.buf);
	static const char *const show[] = { "lat_p99_us", "lat_max_us", "time_s", "usecs_per_op",
					    "bogo_ops_per_s", "rps", "tps", "wakeup_p99_us", "max_jops",
					    "critical_jops", NULL };
	for (const char *const *s = show; *s; s++) {
		const struct metric *m = metric_find(&c->ms, *s);
		if (m) {
			char num[32];
			fmt_num(num, sizeof(num), m->value); /* as the tables print it */
			strbuf_addf(summary, " %s%s=%s", m->name, m->censored ? ">" : "", num);
		}
	}
	/* a histogram too small for the run's data says so, with the remedy */
	for (size_t i = 0; i < c->ms.nhist; i++) {
		const struct named_hist *nh = &c->ms.hist[i];
		double f = hist_overflow_fraction(&nh->h);
		if (!(f > HIST_OVERFLOW_WARN))
			continue;
		char end[32];
		fmt_num(end, sizeof(end), hist_range_end(&nh->h));
		strbuf_addf(summary, "; warning: %.3g%% of %s beyond the histogram range (>= %s %s)",
			    100 * f, nh->name, end, nh->unit ? nh->unit : "");
		if (c->ops->range_param)
			strbuf_addf(summary, ", raise %s", c->ops->range_param);
	}
}

/*
 * Run pr: marked running in a commit of its own before it is measured,
 * unless the previous run's commit marked it (`marked`); stored in one
 * commit that also marks `next` running, the run the session starts after
 * this one (0: none or not known), when the session goes on to it: not
 * after Ctrl-C, a lost target or a database error. *next_marked says
 * whether it did. Either way every run is marked durably before it starts,
 * and a crash at any point leaves at most the run being measured (or about
 * to be) running, for --resume (docs/reliability.md).
 */
static enum run_outcome execute_run(struct db *db, struct target *t, const struct plan *p,
				    const struct session_opts *o, const struct db_pending_run *pr,
				    int marked, int64_t next, int *next_marked, const json_t *si,
				    const struct evidence_decision *why,
				    struct strbuf *summary, struct strbuf *notes, struct strbuf *err)
{
	struct run_ctx c;
	run_ctx_init(&c, db, t, p, o, pr);
	c.why = why;
	*next_marked = 0;
	if (!marked && db_run_start(db, pr->run_id)) {
		strbuf_addf(err, "database: %s", db_errmsg(db));
		c.out = RUN_DBERR;
	} else {
		measure(&c, si);
		settle(&c);
		int go_on = next > 0 && !session_aborted(o) &&
			    (c.out == RUN_OK || c.out == RUN_FAILED || c.out == RUN_SKIPPED);
		if (store_run(&c, go_on ? next : 0, err))
			c.out = RUN_DBERR;
		else
			*next_marked = go_on;
		summarize(&c, summary, notes);
	}
	enum run_outcome out = c.out;
	run_ctx_release(&c);
	return out;
}

/* requested vs effective: "" when they agree, else the difference */
static void verify_boot(const struct db_boot_row *b, const json_t *si, struct strbuf *why)
{
	json_t *modes = sysinfo_value(si, "preempt_modes");
	/* the mode the kernel runs: the (current) choice of its preempt file,
	   or without PREEMPT_DYNAMIC (no runtime mode to read) its built model
	   (a PREEMPT_RT build: full, docs/kernels.md "What a kernel offers"),
	   which the plan check let through; on an RT kernel full and lazy are
	   stored as rt and rt-lazy (preempt_offer.h), but preempt= asks for
	   the mode */
	struct preempt_effective pe;
	preempt_effective_sysinfo(si, &pe);
	const char *eff = pe.mode;
	int offered = !json_is_array(modes);
	size_t i;
	json_t *m;
	json_array_foreach(modes, i, m)
		if (b->preempt && !strcmp(json_string_value(m), b->preempt))
			offered = 1;
	if (b->preempt && !offered) {
		/* newer kernels drop none/voluntary, older ones lack lazy */
		strbuf_addf(why, "unsupported: preempt=%s is not offered by this kernel (it offers:",
			    b->preempt);
		json_array_foreach(modes, i, m)
			strbuf_addf(why, " %s", json_string_value(m));
		strbuf_addch(why, ')');
	} else if (b->preempt && (!eff || strcmp(eff, b->preempt))) {
		strbuf_addf(why, "requested preempt=%s, effective %s", b->preempt,
			    eff ? eff : "unknown");
	}
	const char *cmd = sysinfo_str(si, "cmdline");
	if (b->cmdline && *b->cmdline) {
		char *copy = xstrdup(b->cmdline), *save;
		for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			int found = 0;
			size_t n = strlen(tok);
			for (const char *q = cmd; q && (q = strstr(q, tok)); q += n)
				if ((q == cmd || q[-1] == ' ') && (q[n] == ' ' || !q[n]))
					found = 1;
			if (!found)
				strbuf_addf(why, "%srequested parameter \"%s\" is not in /proc/cmdline",
					    why->len ? "; " : "", tok);
		}
		free(copy);
	}
}

/* the notes of a good run (one a line, as run.notes keeps them): each one
 * the session has not shown yet is said once */
void say_notes(struct exec_ctx *c, const char *notes)
{
	const char *n = notes;
	while (*n) {
		size_t len = strcspn(n, "\n");
		char *one = xstrfmt("%.*s", (int)len, n);
		/* (why a run was traced: its line and the evidence lines say so) */
		int seen = !*one || !strncmp(one, "traced for evidence", 19);
		for (size_t i = 0; i < c->notes_said.nr && !seen; i++)
			seen = !strcmp(c->notes_said.v[i], one);
		if (!seen) {
			progress_say(&c->pg, "  note: %s (said once; every such run keeps it in "
				     "run.notes)", one);
			strvec_push(&c->notes_said, one);
		}
		free(one);
		n += len + (n[len] == '\n');
	}
}

void boot_ctx_init(struct boot_ctx *b)
{
	memset(b, 0, sizeof(*b));
	boot_info_init(&b->bi);
	strbuf_init(&b->be, 0);
	strbuf_init(&b->why, 0);
}

void boot_ctx_release(struct boot_ctx *b)
{
	boot_info_release(&b->bi);
	strbuf_release(&b->be);
	strbuf_release(&b->why);
	db_boot_row_free(&b->br);
}

/* reset what a crash left running, list what is left, mark the session
 * running; the exit code 2 on a database error */
static int exec_begin(struct exec_ctx *c)
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
static void progress_begin(struct exec_ctx *c)
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

void count_done(struct exec_ctx *c, size_t k)
{
	c->pg.done++;
	c->pg.est_done += c->est[k];
}

/* a planned boot with a job recorded: the controller that submitted it was
 * killed before the job ended (--resume). The job is canceled if it still
 * runs (its results are not taken: its runs are submitted again) and the
 * row stored failed with what became of the job; -1 on a database error */
static int orphan_boot(struct exec_ctx *c, struct boot_ctx *b)
{
	struct strbuf why = STRBUF_INIT;
	if (!c->opened && c->t.ops->open(&c->t, &why) == 0)
		c->opened = 1;
	if (c->opened && c->t.ops->batch_orphan)
		c->t.ops->batch_orphan(&c->t, (long long)b->br.lava_job_id, &why);
	char *msg = xstrfmt("orphaned: the controller ended while job %lld ran (%s): %s",
			    (long long)b->br.lava_job_id,
			    b->br.lava_job_url ? b->br.lava_job_url : "no URL",
			    why.len ? why.buf : "left alone");
	progress_say(&c->pg, "boot %d: %s; submitted again", b->br.seq + 1, msg);
	struct db_boot_result r;
	memset(&r, 0, sizeof(r));
	r.status = boot_state_word(BOOT_ST_FAILED);
	r.error = msg;
	r.lava_job_id = b->br.lava_job_id;
	r.lava_job_url = b->br.lava_job_url;
	int rc = db_boot_finish(c->db, b->br.id, &r);
	free(msg);
	strbuf_release(&why);
	return rc;
}

/* the boot row of runs [i, j): a boot that happened before (resume) is
 * planned again in a new row and the runs moved to it; -1 on a database error */
int boot_row(struct exec_ctx *c, size_t i, size_t j, struct boot_ctx *b)
{
	if (db_boot_load(c->db, c->runs[i].boot_id, &b->br))
		return -1;
	b->id = b->br.id;
	int tried = boot_tried((enum boot_state)boot_state_parse(b->br.status));
	int orphan = !tried && b->br.lava_job_id > 0;
	if (orphan && orphan_boot(c, b))
		return -1;
	if (orphan || tried) {
		b->id = db_boot_replan(c->db, b->br.id);
		for (size_t k = i; k < j && b->id > 0; k++)
			if (db_run_set_boot(c->db, c->runs[k].run_id, b->id))
				b->id = -1;
	}
	return b->id < 0 ? -1 : 0;
}

/* bring the target into the boot configuration, reopening it when it was
 * lost */
void boot_target(struct exec_ctx *c, struct boot_ctx *b)
{
	const struct db_boot_row *br = &b->br;
	struct boot_spec bs = { br->cfg, br->kernel, br->preempt, br->cmdline ? br->cmdline : "" };
	const char *kdesc = br->kernel ? br->kernel
			  : json_string_value(json_object_get(c->p->target, "kernel"));
	snprintf(b->desc, sizeof(b->desc), "boot %d: %s%s%s%s%s", br->seq + 1,
		 kdesc ? kdesc : "running kernel", br->preempt ? ", preempt=" : "",
		 br->preempt ? br->preempt : "", br->cmdline && *br->cmdline ? ", cmdline: " : "",
		 br->cmdline && *br->cmdline ? br->cmdline : "");
	progress_say(&c->pg, "%s", b->desc);
	if (c->lost && c->opened) {
		c->t.ops->close(&c->t);
		c->opened = 0;
	}
	if (!c->opened && c->t.ops->open(&c->t, &b->be) == 0)
		c->opened = 1;
	b->booted = c->opened && c->t.ops->boot(&c->t, &bs, &b->bi, &b->be) == 0;
	c->lost = !b->booted;
}

const char *boot_error(const struct boot_ctx *b)
{
	return b->be.len ? b->be.buf : "boot failed";
}

/* what the boot came to: failed (the target did not come up), mismatch
 * (not the configuration asked for) or ok */
enum boot_state boot_outcome(const struct boot_ctx *b)
{
	return !b->booted ? BOOT_ST_FAILED : b->why.len ? BOOT_ST_MISMATCH : BOOT_ST_OK;
}

/* the error of the runs of a boot that is not ok ("boot failed: ...",
 * "boot mismatch: ...", malloc'd) and their skip reason in *skip, from
 * which the state table says whether --resume redoes them */
char *boot_skip_text(const struct boot_ctx *b, enum skip_reason *skip)
{
	*skip = boot_skip_reason(boot_outcome(b));
	return xstrfmt("%s: %s", b->booted ? "boot mismatch" : "boot failed",
		       b->booted ? b->why.buf : boot_error(b));
}

/* a kernel from git whose running kernel names its commit in the release
 * (build-variant.sh --tag: "-g0123456789ab"): the kernel row gets the commit
 * too. A kernel that does not say so (a prebuilt image) is left alone: its
 * row may stand for builds of other commits. */
static void kernel_row_git(struct exec_ctx *c, const struct boot_ctx *b, int64_t kernel_id)
{
	if (kernel_id <= 0 || b->br.cfg < 0 || (size_t)b->br.cfg >= c->p->nboots)
		return;
	const json_t *ks = plan_kernel_spec(c->p, c->p->boots[b->br.cfg].kernel_index);
	const char *commit = json_string_value(json_object_get(ks, "commit"));
	const char *rel = sysinfo_str(b->bi.sysinfo, "kernel_release");
	if (!commit || !rel)
		return;
	char tag[16];
	snprintf(tag, sizeof(tag), "-g%.12s", commit);
	if (strstr(rel, tag))
		db_kernel_set_git(c->db, kernel_id, commit,
				  json_string_value(json_object_get(ks, "describe")));
}

/* the boot row: ok, mismatch (with the difference) or failed; -1 on a
 * database error */
int store_boot(struct exec_ctx *c, struct boot_ctx *b)
{
	struct boot_info *bi = &b->bi;
	struct db_boot_result bres;
	memset(&bres, 0, sizeof(bres));
	bres.method = bi->method[0] ? bi->method : NULL;
	bres.switch_s = bi->switch_s;
	bres.accel = bi->accel[0] ? bi->accel : NULL;
	bres.clock = bi->clock[0] ? bi->clock : NULL;
	bres.clock_shift = bi->clock_shift;
	bres.qemu_version = bi->qemu_version[0] ? bi->qemu_version : NULL;
	bres.console = bi->console.len ? bi->console.buf : NULL;
	bres.lava_job_id = bi->lava_job_id;
	bres.lava_job_url = bi->lava_job_url[0] ? bi->lava_job_url : NULL;
	if (b->booted) {
		verify_boot(&b->br, bi->sysinfo, &b->why);
		bres.status = boot_state_word(boot_outcome(b));
		bres.error = b->why.len ? b->why.buf : NULL;
		bres.sysinfo = bi->sysinfo;
		/* the verified effective model: lazy, rt, rt-lazy, ... (what
		   compare preempt=... and the trends select on) */
		struct preempt_effective pe;
		preempt_effective_sysinfo(bi->sysinfo, &pe);
		bres.preempt = pe.model;
		bres.cmdline = sysinfo_str(bi->sysinfo, "cmdline");
		bres.boot_uuid = bi->boot_id;
		bres.machine_id = db_machine_get(c->db, bi->sysinfo);
		bres.kernel_id = db_kernel_get(c->db, bi->sysinfo);
		kernel_row_git(c, b, bres.kernel_id);
	} else {
		bres.status = boot_state_word(boot_outcome(b));
		bres.error = boot_error(b);
	}
	return db_boot_finish(c->db, b->id, &bres);
}

/* a boot that failed or does not match skips its runs with the reason; a
 * mismatch is final, a boot that failed (the target did not come up or
 * could not be reached) is tried again by --resume (skip reason
 * boot-failed: db/runstate.c) */
static void skip_boot_runs(struct exec_ctx *c, const struct boot_ctx *b, size_t i, size_t j)
{
	enum skip_reason skip;
	char *reason = boot_skip_text(b, &skip);
	int todo = run_todo(RUN_ST_SKIPPED, skip);
	progress_say(&c->pg, "  %s; %s %zu runs", reason, todo ? "leaving resumable" : "skipping",
		     j - i);
	if (todo)
		c->resumable += (int)(j - i);
	for (size_t k = i; k < j; k++) {
		if (store_simple(c->db, c->runs[k].run_id, "skipped", reason, skip, c->err)) {
			c->exit_code = 2;
			break;
		}
		count_done(c, k);
	}
	free(reason);
	c->exit_code = c->exit_code ? c->exit_code : 1;
}

/* sequential repetitions: before the first boot of a round, look at what
 * is stored and say what got decided; 0, or -1 on a database error */
int seq_look(struct exec_ctx *c, int round)
{
	if (!c->seq || round <= c->seq_looked)
		return 0;
	c->seq_looked = round;
	struct strvec said = STRVEC_INIT;
	int rc = seqrun_update(c->seq, c->db, c->sid, &said, c->err);
	for (size_t i = 0; i < said.nr; i++)
		progress_say(&c->pg, "%s", said.v[i]);
	strvec_clear(&said);
	/* the cap is looked at between rounds only: a round once begun ends,
	   so that every configuration has the same number of rounds */
	double gone = now_mono() - c->seq_t0;
	/* round is 0-based: `round` rounds have begun before it */
	if (!rc && c->p->seq_max_wall_s > 0 && gone >= c->p->seq_max_wall_s &&
	    seqrun_cap(c->seq, round, gone)) {
		const char *why = NULL;
		seqrun_needed(c->seq, 0, NULL, NULL, NULL, &why);
		progress_say(&c->pg, "sequential repetitions: %s", why);
	}
	return rc;
}

/* is run k still needed? when not, it is stored as skipped with the
 * decision (final: --resume does not redo it); -1 on a database error */
int seq_needed(struct exec_ctx *c, size_t k)
{
	const struct db_pending_run *r = &c->runs[k];
	const char *why = NULL;
	if (!c->seq || seqrun_needed(c->seq, r->cfg, r->knobs, r->workload, r->params, &why))
		return 1;
	char *reason = xstrfmt("%s (sequential repetitions): %s",
			       strncmp(why, "stopped at the wall-time cap", 28) ? "decided" : "not run",
			       why);
	int rc = store_simple(c->db, r->run_id, "skipped", reason, SKIP_DECIDED, c->err);
	free(reason);
	if (rc)
		return -1;
	c->seq_skipped++;
	count_done(c, k);
	return 0;
}

/* run k, with its progress line; run `next` is marked running with its
 * store when the session goes on to it (execute_run) */
static enum run_outcome run_one(struct exec_ctx *c, size_t k, int64_t next_id,
				 const char *bootdesc, const json_t *si,
				 const struct evidence_decision *why)
{
	const struct db_pending_run *r = &c->runs[k];
	struct strbuf sum = STRBUF_INIT, notes = STRBUF_INIT;
	double t0 = now_mono();
	int traced = r->params && strstr(r->params, "\"evidence\":");
	char *what = traced ? xstrfmt("%s traced run (evidence) knobs=%s", r->workload, r->knobs)
			    : xstrfmt("%s rep %d knobs=%s", r->workload, r->rep + 1, r->knobs);
	progress_run_start(&c->pg, bootdesc, what);
	int next_marked;
	/* (a mark for another run than this one cannot be: run_boot_runs goes
	   to the run it marked, or stops) */
	if (c->marked && c->marked != r->run_id && db_run_unstart(c->db, c->marked) == 0)
		c->marked = 0;
	enum run_outcome oc = execute_run(c->db, &c->t, c->p, c->o, r,
					  c->marked == r->run_id, next_id, &next_marked, si, why,
					  &sum, &notes, c->err);
	c->marked = next_marked ? next_id : 0;
	int whole = c->pg.tty || c->pg.prefix;
	char *line = xstrfmt("%s%s%s (%.1f s)%s", whole ? what : "", whole ? ": " : "",
			     oc == RUN_OK ? "ok" : oc == RUN_SKIPPED ? "skipped"
			     : oc == RUN_INTERRUPTED ? "interrupted" : "FAILED",
			     now_mono() - t0, sum.buf);
	progress_run_end(&c->pg, c->est[k], line);
	say_notes(c, notes.buf);
	free(line);
	free(what);
	strbuf_release(&sum);
	strbuf_release(&notes);
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
static int evidence_gate(struct exec_ctx *c, size_t k, struct evidence_decision *d)
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
		? store_simple(c->db, r->run_id, "skipped", reason, SKIP_NOT_NEEDED, c->err)
		: store_simple(c->db, r->run_id, "interrupted", reason, SKIP_NONE, c->err);
	free(reason);
	if (rc)
		return -1;
	if (d->verdict == EVIDENCE_SKIP) {
		c->ev_skipped++;
	} else {
		c->ev_waiting++;
		c->resumable++;
	}
	count_done(c, k);
	return 0;
}

/* the run of [k, j) that run_boot_runs starts next, as things stand (the
 * decisions of sequential repetitions change only between rounds, and a
 * round's runs of one boot are consecutive); j when none, or when it is a
 * traced run: its evidence trigger decides at its turn, from what is
 * stored by then, whether it runs at all (evidence_gate), so it is marked
 * in a commit of its own */
static size_t next_needed(const struct exec_ctx *c, size_t k, size_t j)
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
static void run_boot_runs(struct exec_ctx *c, const struct boot_ctx *b, size_t i, size_t j)
{
	c->marked = 0;
	for (size_t k = i; k < j; k++) {
		if (session_aborted(c->o))
			break;
		int need = seq_needed(c, k);
		if (need < 0) {
			c->exit_code = 2;
			break;
		}
		if (!need)
			continue;
		if (c->lost) {
			c->resumable++;
			if (store_simple(c->db, c->runs[k].run_id, "interrupted",
					 "not run: target lost earlier in this boot", SKIP_NONE,
					 c->err)) {
				c->exit_code = 2;
				break;
			}
			count_done(c, k);
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
		enum run_outcome oc = go ? run_one(c, k, next < j ? c->runs[next].run_id : 0, b->desc,
						   b->bi.sysinfo, &d)
					 : RUN_OK;
		evidence_decision_release(&d);
		if (oc == RUN_DBERR) {
			c->exit_code = 2;
			break;
		}
		if (oc == RUN_LOST) {
			c->lost = 1;
			c->resumable++;
		}
		if (oc != RUN_OK && oc != RUN_INTERRUPTED)
			c->exit_code = c->exit_code ? c->exit_code : 1;
	}
	/* Ctrl-C came after the commit that marked the next run: it goes back
	   to planned, as it would have stayed without the mark */
	if (c->marked && db_run_unstart(c->db, c->marked) && c->exit_code != 2) {
		strbuf_addf(c->err, "database: %s", db_errmsg(c->db));
		c->exit_code = 2;
	}
	c->marked = 0;
}

/* one boot: the runs [i, j) that share it */
static void do_boot(struct exec_ctx *c, size_t i, size_t j)
{
	struct boot_ctx b;
	boot_ctx_init(&b);
	int dberr = boot_row(c, i, j, &b);
	if (!dberr) {
		boot_target(c, &b);
		dberr = store_boot(c, &b);
	}
	if (dberr) {
		strbuf_addf(c->err, "database: %s", db_errmsg(c->db));
		c->exit_code = 2;
	} else if (!b.booted || b.why.len) {
		skip_boot_runs(c, &b, i, j);
	} else {
		run_boot_runs(c, &b, i, j);
	}
	boot_ctx_release(&b);
}

/* close the target, store the session's status, say what is left; the
 * exit code */
static int exec_finish(struct exec_ctx *c)
{
	int64_t sid = c->sid;
	const char *pfx = c->o->prefix ? c->o->prefix : "";
	progress_done(&c->pg);
	free(c->est);
	strvec_clear(&c->notes_said);
	if (c->opened)
		c->t.ops->close(&c->t);
	target_fini(&c->t);
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
	struct exec_ctx c = { .db = db, .sid = sid, .p = p, .o = o, .err = err };
	char *lkey = tlock_key(p->target, json_object_get(p->root, "lab"));
	c.lock_key = lkey;
	int rc = exec_begin(&c);
	if (rc) {
		free(lkey);
		return rc;
	}
	target_init(&c.t, p, o);
	progress_begin(&c);
	if (p->until_decided) {
		c.seq = seqrun_new(p);
		c.seq_t0 = now_mono();
		c.seq_looked = -1;
	}
	size_t i = 0;
	if (target_batch(c.t.ops, c.t.conf)) {
		batch_execute(&c);
		i = c.n;
	}
	while (i < c.n && !session_aborted(o) && c.exit_code != 2) {
		size_t j = i;
		while (j < c.n && c.runs[j].boot_id == c.runs[i].boot_id)
			j++;
		if (seq_look(&c, c.runs[i].round)) {
			c.exit_code = 2;
			break;
		}
		/* a boot none of whose runs is needed is not booted at all */
		const char *why;
		size_t need = 0;
		for (size_t k = i; k < j && c.seq; k++)
			need += seqrun_needed(c.seq, c.runs[k].cfg, c.runs[k].knobs,
					      c.runs[k].workload, c.runs[k].params, &why);
		if (c.seq && !need) {
			for (size_t k = i; k < j && c.exit_code != 2; k++)
				if (seq_needed(&c, k) < 0)
					c.exit_code = 2;
		} else {
			do_boot(&c, i, j);
		}
		i = j;
	}
	if (c.seq) {
		if (c.exit_code != 2 && seq_look(&c, INT32_MAX))
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
