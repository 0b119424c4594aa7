/*
 * The session engine's steps (engine.h): what a session, a boot and a run
 * go through whatever runs them, written once. session.c's live path (a
 * target with an agent, run by run) and session_batch.c's batch path (lava,
 * sealed qemu: a boot's runs as one job) are two ways of driving the same
 * steps:
 *
 *   a boot:  engine_boot_begin (its row, new on resume; the target brought
 *            into its configuration), engine_boot_store (ok, mismatch or
 *            failed), engine_boot_skipped (a boot that is not ok stores its
 *            runs skipped with the reason);
 *   a run:   engine_run_init, engine_build_request (the agent's exec
 *            request), engine_take_reply (the judgement), engine_settle
 *            (a lost target, the knobs restored), engine_run_collect (stored
 *            with its metrics in one commit, its progress line, what the
 *            session makes of its outcome);
 *   marks:   engine_mark (runs marked running, or back to planned, in one
 *            commit), engine_mark_next (the live path's: the run about to
 *            start), and the mark engine_run_collect commits with a run.
 *
 * The crash-safe order (docs/reliability.md) lives here: every run is marked
 * running in a commit before the target gets it, and stored exactly once.
 * Nothing here calls session.c or session_batch.c.
 */
#include "harness/orchestrate/engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/schedstat.h"
#include "analysis/trace.h"
#include "harness/agent/preempt_offer.h"
#include "harness/agent/sysinfo.h"
#include "harness/util/numfmt.h"
#include "harness/util/proc.h"

void engine_target_init(struct target *t, struct plan *p, const struct session_opts *o)
{
	memset(t, 0, sizeof(*t));
	t->ops = p->tops;
	t->conf = json_deep_copy(p->target);
	t->abort_flag = o->abort_flag;
	t->agent_path = o->agent_path;
	t->tools = p->tools.nr ? (const char *const *)p->tools.v : NULL;
}

void engine_target_fini(struct target *t)
{
	if (t->ops && t->priv)
		t->ops->close(t);
	json_decref(t->conf);
	t->conf = NULL;
}

void engine_boot_spec(const struct plan_boot *b, int index, struct boot_spec *s)
{
	s->index = index;
	s->kernel = b->kernel;
	s->preempt = b->preempt;
	s->cmdline = b->cmdline ? b->cmdline : "";
}

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

int engine_store_simple(struct db *db, int64_t run_id, const char *status, const char *error,
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

void engine_run_init(struct engine_run *c, struct db *db, struct target *t, const struct plan *p,
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
	c->out = ENG_FAILED;
}

void engine_run_release(struct engine_run *c)
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
static void engine_run_note(struct engine_run *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void engine_run_note(struct engine_run *c, const char *fmt, ...)
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
void engine_run_skip(struct engine_run *c, enum skip_reason why)
{
	c->status = "skipped";
	c->skip = why;
	c->out = ENG_SKIPPED;
}

/* a knob write the kernel refused: an absent tunable or sysctl file means
 * the kernel lacks it, and the run is skipped rather than failed */
void engine_knob_refused(struct engine_run *c)
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
	engine_run_skip(c, SKIP_UNSUPPORTED);
}

/* the agent's exec request: argv, timeout, files, background load,
 * schedstat; NULL when the workload or its load cannot be built */
json_t *engine_build_request(struct engine_run *c, int schedstat_ok)
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
static void judge_output(struct engine_run *c)
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
		c->out = ENG_INTERRUPTED;
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
			engine_run_skip(c, SKIP_UNSUPPORTED);
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
	c->out = ENG_OK;
	if (ran)
		engine_run_note(c, "sched_ext: %s enabled for the run (root/ops %.80s), the kernel "
				"back on its own class after (state %.20s)", ran,
				json_string_value(json_object_get(sx, "ops")) ?: "?",
				json_string_value(json_object_get(sx, "state_after")) ?: "?");
	/* kept with the run (run.notes): evidence the run could not give,
	   and why (no placement evidence without schedstats) */
	if (c->ms.note.len)
		engine_run_note(c, "%s", c->ms.note.buf);
	/* kept with the run (run.notes): what the tool left running after it
	   exited competed with the measurement */
	const char *left = json_string_value(json_object_get(res, "killed_leftovers"));
	if (left)
		engine_run_note(c, "the tool left processes running that held its output; killed: %.300s",
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
static void trace_evidence(struct engine_run *c)
{
	int was_ok = c->out == ENG_OK;
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
	engine_run_note(c, "%s", tn.buf);
	strbuf_release(&tn);
	trace_summary_release(&ts);
	return;
fail:
	if (!was_ok)
		return;
	c->status = "failed";
	c->out = ENG_FAILED;
}

/* the reply half of a run: the exec's return code (rc, as from the target's
 * exec) and its result in c->res; the outcome in c->out and c->status */
void engine_take_reply(struct engine_run *c, int rc)
{
	if (rc == -1) {
		c->out = session_aborted(c->o) ? ENG_INTERRUPTED : ENG_LOST;
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
	if (c->evidence && (c->out == ENG_OK || (c->out == ENG_FAILED &&
	    json_object_get(json_object_get(c->res, "trace"), "text"))))
		trace_evidence(c);
	/* why it was traced, also when it failed (run.evidence_why has it too) */
	if (c->why && c->why->why.len && c->out != ENG_INTERRUPTED)
		engine_run_note(c, "traced for evidence, %s", c->why->why.buf);
}

/* the stored row is readable; else the run fails here */
int engine_run_readable(struct engine_run *c)
{
	if (c->ops && c->params && c->knob)
		return 1;
	strbuf_addf(&c->e, "stored run is unreadable (workload %s)", c->pr->workload);
	return 0;
}

/* after the measurement: a lost target is said so, and the knobs are
 * restored before anything else happens on the target */
void engine_settle(struct engine_run *c)
{
	/* the target went away (connection dropped, machine gone, agent hung):
	   the run failed, but not because of what it measured; it stays
	   resumable (status interrupted) and says why */
	if (c->out == ENG_LOST) {
		char *why = xstrfmt("failed: target lost: %s", c->e.len ? c->e.buf : "connection lost");
		strbuf_reset(&c->e);
		strbuf_addstr(&c->e, why);
		free(why);
		c->status = "interrupted";
	}
	if (c->knobs_touched && c->out != ENG_LOST && c->out != ENG_INTERRUPTED) {
		struct strbuf re = STRBUF_INIT;
		if (c->t->ops->knob_restore(c->t, &re)) {
			strbuf_addf(&c->e, "%sknob restore failed: %s", c->e.len ? "; " : "", re.buf);
			if (c->out == ENG_OK) {
				c->status = "failed";
				c->out = ENG_FAILED;
			}
		}
		strbuf_release(&re);
	}
}

/* the metrics of an ok run for the database: the workload's, then the
 * schedstat deltas; returns how many (dm has room for ms.nr + 4) */
static size_t collect_metrics(const struct engine_run *c, struct db_metric *dm)
{
	size_t k = 0;
	if (c->out != ENG_OK)
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

static json_t *tools_ran(const struct engine_run *c)
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
static char *files_json(const struct engine_run *c)
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
static char *load_json(const struct engine_run *c)
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
static int engine_store_run(struct engine_run *c, int64_t next, struct strbuf *err)
{
	int ok = c->out == ENG_OK;
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
		.skip = c->out == ENG_SKIPPED ? c->skip : SKIP_NONE,
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
static void engine_summarize(const struct engine_run *c, struct strbuf *summary,
			     struct strbuf *notes)
{
	if (c->out != ENG_OK) {
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
static void engine_say_notes(struct engine *c, const char *notes)
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

void engine_boot_init(struct engine_boot *b)
{
	memset(b, 0, sizeof(*b));
	boot_info_init(&b->bi);
	strbuf_init(&b->be, 0);
	strbuf_init(&b->why, 0);
}

void engine_boot_release(struct engine_boot *b)
{
	boot_info_release(&b->bi);
	strbuf_release(&b->be);
	strbuf_release(&b->why);
	db_boot_row_free(&b->br);
}

void engine_count_done(struct engine *c, size_t k)
{
	c->pg.done++;
	c->pg.est_done += c->est[k];
}

/* a planned boot with a job recorded: the controller that submitted it was
 * killed before the job ended (--resume). The job is canceled if it still
 * runs (its results are not taken: its runs are submitted again) and the
 * row stored failed with what became of the job; -1 on a database error */
static int orphan_boot(struct engine *c, struct engine_boot *b)
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
static int engine_boot_row(struct engine *c, size_t i, size_t j, struct engine_boot *b)
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
static void engine_boot_target(struct engine *c, struct engine_boot *b)
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

const char *engine_boot_error(const struct engine_boot *b)
{
	return b->be.len ? b->be.buf : "boot failed";
}

/* what the boot came to: failed (the target did not come up), mismatch
 * (not the configuration asked for) or ok */
static enum boot_state engine_boot_outcome(const struct engine_boot *b)
{
	return !b->booted ? BOOT_ST_FAILED : b->why.len ? BOOT_ST_MISMATCH : BOOT_ST_OK;
}

/* the error of the runs of a boot that is not ok ("boot failed: ...",
 * "boot mismatch: ...", malloc'd) and their skip reason in *skip, from
 * which the state table says whether --resume redoes them */
static char *engine_boot_skip_text(const struct engine_boot *b, enum skip_reason *skip)
{
	*skip = boot_skip_reason(engine_boot_outcome(b));
	return xstrfmt("%s: %s", b->booted ? "boot mismatch" : "boot failed",
		       b->booted ? b->why.buf : engine_boot_error(b));
}

/* a kernel from git whose running kernel names its commit in the release
 * (build-variant.sh --tag: "-g0123456789ab"): the kernel row gets the commit
 * too. A kernel that does not say so (a prebuilt image) is left alone: its
 * row may stand for builds of other commits. */
static void kernel_row_git(struct engine *c, const struct engine_boot *b, int64_t kernel_id)
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
static int engine_store_boot(struct engine *c, struct engine_boot *b)
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
		bres.status = boot_state_word(engine_boot_outcome(b));
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
		bres.status = boot_state_word(engine_boot_outcome(b));
		bres.error = engine_boot_error(b);
	}
	return db_boot_finish(c->db, b->id, &bres);
}

/* sequential repetitions: before the first boot of a round, look at what
 * is stored and say what got decided; 0, or -1 on a database error */
int engine_seq_look(struct engine *c, int round)
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
int engine_seq_needed(struct engine *c, size_t k)
{
	const struct db_pending_run *r = &c->runs[k];
	const char *why = NULL;
	if (!c->seq || seqrun_needed(c->seq, r->cfg, r->knobs, r->workload, r->params, &why))
		return 1;
	char *reason = xstrfmt("%s (sequential repetitions): %s",
			       strncmp(why, "stopped at the wall-time cap", 28) ? "decided" : "not run",
			       why);
	int rc = engine_store_simple(c->db, r->run_id, "skipped", reason, SKIP_DECIDED, c->err);
	free(reason);
	if (rc)
		return -1;
	c->seq_skipped++;
	engine_count_done(c, k);
	return 0;
}

/* a boot that failed or does not match stores the runs idx[0..m) skipped
 * with the reason (`named`: the line names the boot too, as a batch path's
 * boots end apart from their first line); a mismatch is final, a boot that
 * failed (the target did not come up or could not be reached) is tried
 * again by --resume (skip reason boot-failed: db/runstate.c) */
static void skip_runs(struct engine *c, const struct engine_boot *b, const size_t *idx,
		      size_t m, int named)
{
	enum skip_reason skip;
	char *reason = engine_boot_skip_text(b, &skip);
	int todo = run_todo(RUN_ST_SKIPPED, skip);
	int say = named && !b->booted;
	progress_say(&c->pg, "  %s%s%s; %s %zu runs", say ? b->desc : "", say ? ": " : "", reason,
		     todo ? "leaving resumable" : "skipping", m);
	if (todo)
		c->resumable += (int)m;
	for (size_t r = 0; r < m; r++) {
		if (engine_store_simple(c->db, c->runs[idx[r]].run_id, "skipped", reason, skip,
					c->err)) {
			c->exit_code = 2;
			break;
		}
		engine_count_done(c, idx[r]);
	}
	free(reason);
	c->exit_code = c->exit_code ? c->exit_code : 1;
}

int engine_boot_skipped(struct engine *c, const struct engine_boot *b, const size_t *idx,
			size_t m, int named)
{
	if (b->booted && !b->why.len)
		return 0;
	skip_runs(c, b, idx, m, named);
	return 1;
}

static void dberr(struct engine *c)
{
	strbuf_addf(c->err, "database: %s", db_errmsg(c->db));
	c->exit_code = 2;
}

int engine_boot_begin(struct engine *c, size_t i, size_t j, struct engine_boot *b)
{
	if (engine_boot_row(c, i, j, b)) {
		dberr(c);
		return -1;
	}
	engine_boot_target(c, b);
	return 0;
}

int engine_boot_store(struct engine *c, struct engine_boot *b)
{
	if (engine_store_boot(c, b)) {
		dberr(c);
		return -1;
	}
	return 0;
}

size_t engine_boot_end(const struct engine *c, size_t i)
{
	size_t j = i;
	while (j < c->n && c->runs[j].boot_id == c->runs[i].boot_id)
		j++;
	return j;
}

int engine_boot_needed(struct engine *c, size_t i, size_t j)
{
	const char *why;
	if (!c->seq)
		return 1;
	for (size_t k = i; k < j; k++)
		if (seqrun_needed(c->seq, c->runs[k].cfg, c->runs[k].knobs, c->runs[k].workload,
				  c->runs[k].params, &why))
			return 1;
	for (size_t k = i; k < j && c->exit_code != 2; k++)
		if (engine_seq_needed(c, k) < 0)
			c->exit_code = 2;
	return 0;
}

int engine_mark(struct engine *c, const int64_t *ids, size_t n, int start)
{
	if (!n)
		return 0;
	int bad = db_begin(c->db);
	for (size_t r = 0; r < n && !bad; r++)
		bad = start ? db_run_start(c->db, ids[r]) : db_run_unstart(c->db, ids[r]);
	if (bad || db_commit(c->db)) {
		strbuf_addf(c->err, "database: %s", db_errmsg(c->db));
		db_rollback(c->db);
		return -1;
	}
	return 0;
}

int engine_mark_next(struct engine *c, int64_t run_id)
{
	if (c->marked == run_id)
		return 0;
	/* (a mark for another run than this one cannot be: the live path goes
	   to the run it marked, or stops) */
	if (c->marked && db_run_unstart(c->db, c->marked) == 0)
		c->marked = 0;
	return engine_mark(c, &run_id, 1, 1);
}

int engine_unmark_next(struct engine *c)
{
	int64_t id = c->marked;
	c->marked = 0;
	if (!id || db_run_unstart(c->db, id) == 0)
		return 0;
	if (c->exit_code != 2) /* (a database error is said once) */
		dberr(c);
	c->exit_code = 2;
	return -1;
}

char *engine_run_what(const struct db_pending_run *r)
{
	int traced = r->params && strstr(r->params, "\"evidence\":");
	return traced ? xstrfmt("%s traced run (evidence) knobs=%s", r->workload, r->knobs)
		      : xstrfmt("%s rep %d knobs=%s", r->workload, r->rep + 1, r->knobs);
}

enum engine_outcome engine_run_collect(struct engine *c, size_t k, struct engine_run *rx,
				       int64_t next, const char *what, double secs)
{
	struct strbuf sum = STRBUF_INIT, notes = STRBUF_INIT;
	c->marked = 0;
	if (rx->out != ENG_DBERR) {
		/* the next run is marked in this commit only when the session
		   goes on to it: not after Ctrl-C, a lost target or an interrupted run */
		int go_on = next > 0 && !session_aborted(c->o) &&
			    (rx->out == ENG_OK || rx->out == ENG_FAILED || rx->out == ENG_SKIPPED);
		if (engine_store_run(rx, go_on ? next : 0, c->err))
			rx->out = ENG_DBERR;
		else
			c->marked = go_on ? next : 0;
		engine_summarize(rx, &sum, &notes);
	}
	enum engine_outcome oc = rx->out;
	int whole = c->pg.tty || c->pg.prefix;
	char *line = xstrfmt("%s%s%s (%.1f s)%s", whole ? what : "", whole ? ": " : "",
			     oc == ENG_OK ? "ok" : oc == ENG_SKIPPED ? "skipped"
			     : oc == ENG_INTERRUPTED ? "interrupted" : "FAILED", secs, sum.buf);
	progress_run_end(&c->pg, c->est[k], line);
	engine_say_notes(c, notes.buf);
	free(line);
	strbuf_release(&sum);
	strbuf_release(&notes);
	/* what the session makes of it */
	if (oc == ENG_DBERR) {
		c->exit_code = 2;
		return oc;
	}
	if (oc == ENG_LOST) {
		c->lost = 1;
		c->resumable++;
	}
	if (oc != ENG_OK && oc != ENG_INTERRUPTED)
		c->exit_code = c->exit_code ? c->exit_code : 1;
	return oc;
}

void engine_execute(struct engine *c, const struct engine_driver *d)
{
	size_t slots = d->slots(c);
	void **fl = xcalloc(slots + 1, sizeof(*fl));      /* the boots in flight */
	size_t *fl_i = xcalloc(slots + 1, sizeof(*fl_i)); /* the first run of each */
	size_t nfl = 0, i = 0;
	size_t *again = xcalloc(c->n + 1, sizeof(*again)), nagain = 0; /* boots to begin again */
	int *tries = xcalloc(c->n + 1, sizeof(*tries)); /* of the boot starting at run k */
	int fl_round = 0;
	for (;;) {
		while (nfl < slots && (nagain || i < c->n) && !session_aborted(c->o) &&
		       c->exit_code != 2) {
			size_t s = nagain ? again[nagain - 1] : i, j = engine_boot_end(c, s);
			/* sequential repetitions: a new round waits for the last one */
			if (c->seq && nfl && c->runs[s].round != fl_round)
				break;
			if (engine_seq_look(c, c->runs[s].round)) {
				c->exit_code = 2;
				break;
			}
			if (nagain)
				nagain--;
			else
				i = j;
			if (!engine_boot_needed(c, s, j))
				continue;
			fl_round = c->runs[s].round;
			void *boot = d->begin(c, s, j);
			if (boot) {
				fl[nfl] = boot;
				fl_i[nfl++] = s;
			}
		}
		if (!nfl)
			break;
		size_t k = c->exit_code == 2 ? 0 : d->wait(c, fl, nfl);
		if (k >= nfl)
			k = 0;
		size_t s = fl_i[k];
		if (d->end(c, fl[k], c->exit_code == 2, tries[s])) {
			tries[s]++;
			again[nagain++] = s;
		}
		nfl--;
		fl[k] = fl[nfl];
		fl_i[k] = fl_i[nfl];
	}
	free(fl);
	free(fl_i);
	free(again);
	free(tries);
}
