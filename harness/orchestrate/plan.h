/*
 * Plans: loading, validation and expansion (pure: no target, no database).
 *
 * A plan (docs/plan-format.md) names a target, the matrix dimensions and the
 * workloads. Validation happens before anything runs: JSON syntax errors are
 * reported as FILE:LINE:COLUMN, everything else by JSON path
 * ("FILE: workloads[1].duration_s: must be a positive integer").
 *
 * Expansion: boot configurations are kernel x preempt x cmdline; inside a
 * boot, runs are knobs x workloads x repetitions. With "order":
 * "interleaved" (the default) every round visits every boot configuration
 * once and runs every knobs x workload pair once, the order of boots and of
 * runs shuffled per round with the plan's seed, so that drift hits every
 * configuration alike. "sequential" runs each boot configuration once, with
 * all repetitions back to back, in plan order.
 */
#ifndef SL_PLAN_H
#define SL_PLAN_H

#include <jansson.h>
#include <stdint.h>

#include "analysis/sequential.h"
#include "harness/util/strbuf.h"
#include "workloads/workload.h"

struct target_ops;

/* the largest expansion a plan may have (docs/plan-format.md "Limits"):
 * boots are visits of a boot configuration (interleaved: configurations x
 * repetitions), runs every run of every boot. Real plans have thousands of
 * runs; a plan past these is refused before its expansion is allocated. */
#define PLAN_MAX_BOOTS 100000
#define PLAN_MAX_RUNS 1000000
/* the longest a single run may be estimated to take (its workload's
 * estimate_s; docs/plan-format.md "Limits"): a day of measurement, the
 * longest duration_s any workload takes, with a day's room for its setup
 * (pgbench's initialisation). Past it the plan is refused naming the
 * workload's size keys: a run whose own timeout is days away is a typo */
#define PLAN_MAX_RUN_S 172800
/* the largest plan file read */
#define PLAN_MAX_BYTES (16 << 20)
/* matrix.cmdline: the kernel's command line is at most 2048 bytes on x86
 * (COMMAND_LINE_SIZE), and the target's own parameters come first */
#define PLAN_CMDLINE_MAX 1024

/* when a configuration's traced run is made (evidence "when",
 * docs/plan-format.md): always; for every configuration, naming its worst
 * untraced run; only where a check flags a run (harness/orchestrate/evidence.h) */
enum evidence_when { EVIDENCE_ALWAYS, EVIDENCE_WORST, EVIDENCE_FLAGGED };
const char *evidence_when_name(enum evidence_when w);

struct plan_workload {
	const struct workload_ops *ops;
	json_t *params;        /* resolved, defaults filled in, includes "type" */
	json_t *evidence;      /* NULL, or the resolved "evidence" object: one traced
				  run per configuration (docs/plan-format.md); what
				  the traced run's params carry: how it is traced,
				  not when (below), so that a traced series is the
				  same whichever trigger asked for it */
	enum evidence_when when;  /* evidence "when" */
	double outlier_k;      /* evidence "outlier_k" (with "flagged") */
};

/* the defaults of "evidence" (docs/plan-format.md) */
#define EVIDENCE_EVENTS { "sched_switch", "sched_waking", "sched_wakeup", \
			  "sched_migrate_task" }

struct plan_boot {
	const char *kernel;    /* NULL: the target's default; a variant not yet
	                          built: its label "variant:minimal:hz1000+..." */
	int kernel_index;      /* index into matrix.kernel, -1 when none */
	const char *preempt;   /* NULL: leave as is */
	const char *cmdline;   /* "" for none */
};

struct plan_run {
	int knob;              /* index into plan.knobs */
	int wl;                /* index into plan.wl */
	int rep;               /* 0-based repetition (a traced run: repetitions) */
	int traced;            /* the configuration's extra traced run ("evidence") */
};

struct plan_visit {            /* one boot of the execution order */
	int cfg;               /* index into plan.boots */
	int round;
	struct plan_run *runs;
	size_t nruns;
};

struct plan {
	char *path;
	char *name;
	json_t *root;          /* the file as parsed */
	json_t *target;        /* resolved target object (a lab: its first member) */
	const struct target_ops *tops;
	json_t *targets;       /* a lab ("targets"): the resolved target objects in plan
	                          order; NULL for a plan with one "target" */
	size_t ntargets;       /* 0 unless a lab */
	char *switch_method;   /* "runtime" | "reboot" | "kexec" */
	char *order;           /* "interleaved" | "sequential" */
	int repetitions;       /* rounds planned (with until decided: the max) */
	/* "repetitions": {"min", "max", "until": "decided", ...}: rounds stop
	 * for a configuration once its comparisons are decided (seqrun.h) */
	int until_decided;
	int user_file;         /* loaded from a plan file the user wrote (not a stored plan) */
	struct seq_design seq;
	struct strvec seq_metrics;  /* "workload.metric" looked at; empty: each
				       workload's primary metric */
	double seq_max_wall_s;      /* repetitions.max_wall_s: no round starts once a
				       run of the session has been going this long
				       (0: no cap) */
	uint64_t seed;
	int schedstat;
	struct plan_boot *boots;
	size_t nboots;
	json_t *knobs;         /* array of knob objects (at least one: {}) */
	struct plan_workload *wl;
	size_t nwl;
	struct plan_visit *visits;
	size_t nvisits;
	struct strvec tools;   /* plan_tools(): what the workloads run on a target */
	/* "matrix.impossible": a boot configuration asking a kernel for a
	 * preemption mode its config does not offer (preempt_offer.h) refuses
	 * the plan ("refuse", the default) or is left out ("drop") */
	int drop_impossible;
	int offers_stored;     /* a stored plan with matrix.dropped: those pairs are
				  left out as its session decided, configs unread */
	struct strvec offer_notes;  /* one line per pair left out, then a summary */
	json_t *dropped;       /* [{"kernel", "preempt", "offers"}] of the pairs left out */
};

/* load, validate and expand; -1 with a message naming file and place, and
 * then *p holds nothing (plan_release on it is still allowed) */
int plan_load(const char *path, struct plan *p, struct strbuf *err);
/* same from a string (tests, resume); `name_for_errors` stands for the file.
 * A stored plan may hold what `schedlab run` wrote into it (a kernel's
 * "commit", "describe", "image"), which plan_load refuses in a plan file. */
int plan_load_string(const char *text, const char *name_for_errors, struct plan *p,
		     struct strbuf *err);
/* `run --until-decided`: a plan with "repetitions": N becomes
 * {"min": min(3, N), "max": N, "until": "decided"} (its JSON too, so that
 * the session stores it); -1 with a message when N < 2 */
int plan_set_until_decided(struct plan *p, struct strbuf *err);
void plan_release(struct plan *p);

/* override the plan's target (--target SPEC); re-validates; refused for a lab
 * (a plan with "targets": its machines are chosen in the plan) */
int plan_set_target(struct plan *p, json_t *target, struct strbuf *err);

/*
 * Labs. A plan with "targets": [T1, T2, ...] instead of "target" is run as
 * one session per target, in parallel (harness/orchestrate/lab.c). plan_lab_member()
 * makes the plan of member `index`: the same plan with "target" set to that
 * member's resolved object, no "targets", and the marker
 * "lab": {"id": ID, "target": index, "targets": N, "label": LABEL}
 * (which is what the member's session stores, so that --resume, sessions and
 * compare treat it as an ordinary one-target session). `out` is loaded
 * afresh; -1 with a message. A "lab" key in a plan is accepted only in this
 * form and only without "targets".
 */
int plan_lab_member(const struct plan *lab, size_t index, const char *id, const char *label,
		    struct plan *out, struct strbuf *err);
/* the resolved target object of member `index` of a lab (borrowed) */
const json_t *plan_lab_target(const struct plan *p, size_t index);

/* a variant spec matrix.kernel[index] was built into folder `image`: record
 * it in the plan's JSON (so the stored plan names it) and in its boots */
int plan_set_kernel_image(struct plan *p, size_t index, const char *image, struct strbuf *err);
/* the kernels whose config became known since the plan was loaded (variants
 * just built) are checked against the preemption modes asked of them: -1
 * with a message naming each impossible pair and what its kernel offers, or
 * (with "matrix.impossible": "drop") those boot configurations left out,
 * noted in p->offer_notes, and the execution order expanded again */
int plan_check_offers(struct plan *p, struct strbuf *err);
/* what the kernel folder `spec` offers, from its config (kernel.json
 * "config", else SPEC/config): 1 decided (`src` names the config), 0 unknown
 * (no folder or no config: checked when it boots), -1 with a message */
struct preempt_offer;
int plan_kernel_offer(const char *spec, struct preempt_offer *o, char *src, size_t srclen,
		      struct strbuf *why);
/* matrix.kernel[index] as an object or string (borrowed), NULL when none */
const json_t *plan_kernel_spec(const struct plan *p, int index);
/* a spec changed (a git ref resolved to its commit): its boots' label again */
void plan_set_kernel_label(struct plan *p, size_t index);

/*
 * The programs the plan's workloads run on a target: the .tool and
 * .also_tools of every workload and of every background load among its
 * parameters (PARAM_LOAD),
 * sorted and without repeats, appended to out ("cyclictest", "hackbench",
 * "sl-pingpong", ...). Pure; plan_load keeps the result in p->tools, which
 * session.c hands to the target (struct target.tools) so that a VM's
 * initramfs carries only these.
 */
void plan_tools(const struct plan *p, struct strvec *out);

/* estimated wall time in seconds, boots included */
double plan_estimate_s(const struct plan *p);
/* host seconds a second of the target's guest takes, by its clock: 1 for a
 * real clock, the measured ratio of a virtual one (docs/virtual-time.md) */
double plan_clock_factor(const json_t *target);
size_t plan_run_count(const struct plan *p);

/* a knob object -> list of {path, value} writes in order; -1 with message */
int knobs_to_writes(const json_t *knob, json_t **writes, struct strbuf *err);
/* validate one knob object; `path` like "matrix.knobs[1]" */
int knob_object_check(const json_t *knob, const char *path, struct strbuf *err);
/* validate extra kernel parameters; `path` like "matrix.cmdline[0]" */
int cmdline_check(const char *cmdline, const char *path, struct strbuf *err);
/* a short label for a knob object ("{}" -> "default") */
char *knob_label(const json_t *knob);

/* the keys of a plan's top level, one line each (harness/util/opts.h): what
 * checks them, `schedlab help plan` and docs/plan-format.md's first table */
extern const struct param_spec plan_options[];

/* seeded PRNG used for shuffles (splitmix64) */
uint64_t plan_rand(uint64_t *state);

/* the seed of repetition rep (0-based) of a plan whose "seed" is plan_seed:
 * 0 .. 2^32 - 1, a function of these two alone (the same for every
 * configuration, so the sides of an A/B pair by it), different for every
 * rep of one plan seed. It travels in the run's exec request, the agent
 * perturbs the run with it (docs/virtual-time.md "Seeds") and it is stored
 * as run.seed */
int64_t plan_rep_seed(uint64_t plan_seed, int rep);

#endif
