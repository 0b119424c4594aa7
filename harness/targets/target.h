/*
 * Targets: how a test machine is reached and brought into a boot
 * configuration. A target is a transport to an agent plus a boot method,
 * written as a `const struct target_ops` (like fio's ioengine_ops) and
 * registered in harness/targets/target.c. Everything the agent does (sysinfo, exec,
 * knobs) goes through the same protocol for every target, so the default
 * hooks target_agent_* serve all of them; a target overrides only what
 * differs.
 *
 * Lifecycle, driven by harness/orchestrate/session.c:
 *   check   validate the plan's "target" object (pure; at plan time)
 *   open    allocate state; nothing is booted or started yet
 *   boot    bring the machine into a boot configuration (boot a VM, kexec,
 *           reboot, or write the runtime preempt mode) and leave
 *           a connected agent in t->agent; fills struct boot_info
 *   sysinfo/exec/knob_set/knob_restore   through the agent
 *   batch_* (optional) every run of a boot at once as a job, several jobs in
 *           flight, for targets without a live agent (lava); boot then only
 *           prepares
 *   close   stop the agent, kill the VM, restore anything touched; always safe
 *
 * Checklist for a new target: harness/target_<name>.c with
 * `const struct target_ops <name>_target` (.name, .check, .open, .boot,
 * .close required), add it to targets[] in harness/targets/target.c, document it in
 * docs/plan-format.md, add an end-to-end test under tests/e2e/.
 */
#ifndef SL_TARGET_H
#define SL_TARGET_H

#include <jansson.h>

#include "harness/agent/protocol.h"
#include "harness/util/opts.h"
#include "harness/util/strbuf.h"

/* what a target can switch between boots */
enum target_caps {
	TCAP_PREEMPT_RUNTIME = 1 << 0,  /* /sys/kernel/debug/sched/preempt, no reboot */
	TCAP_PREEMPT_BOOT    = 1 << 1,  /* preempt= on a new kernel command line */
	TCAP_CMDLINE         = 1 << 2,  /* arbitrary extra kernel parameters */
	TCAP_KERNEL          = 1 << 3,  /* a different kernel image */
	TCAP_KEXEC           = 1 << 4,
	TCAP_REBOOT          = 1 << 5,
};

/* one boot configuration of the expanded matrix */
struct boot_spec {
	int index;                /* position in the plan's boot list */
	const char *kernel;       /* kernel spec (path/folder) or NULL = the target's default */
	const char *preempt;      /* none|voluntary|full|lazy|laziest or NULL = leave as is */
	const char *cmdline;      /* extra kernel parameters, "" for none */
};

/* what a boot achieved, for the boot row */
struct boot_info {
	char method[16];          /* "initial", "runtime", "reboot", "kexec", "boot" */
	double switch_s;          /* time the switch took */
	json_t *sysinfo;          /* effective configuration reported by the agent (owned) */
	char boot_id[64];
	char accel[16];           /* qemu: "kvm" or "tcg"; "" otherwise */
	char clock[16];           /* qemu: "real" or "virtual" (docs/virtual-time.md);
				   * "" otherwise (the machine's own, real, clock) */
	int clock_shift;          /* "virtual": qemu's icount shift (an instruction
				   * takes 2^shift ns); -1 otherwise */
	char qemu_version[32];    /* qemu: the emulator's version ("10.0.13", from
				   * `qemu -version`); "" otherwise or unknown. A
				   * series dimension like the clock */
	struct strbuf console;    /* console log of this boot (tail), when there is one */
	long long lava_job_id;    /* lava: the job that ran the boot (0 = none) */
	char lava_job_url[600];   /* lava: its web page, "" = none */
	int lab_fault;            /* batch_collect: the boot failed for the lab's
				   * reason, not the kernel's (lava: an
				   * Infrastructure error before the agent's
				   * sysinfo); the session submits it again, up to
				   * target.lab_retries times */
};
void boot_info_init(struct boot_info *bi);
void boot_info_release(struct boot_info *bi);

struct target;
struct batch_job;   /* a batch target's job in flight (the target's own) */

/*
 * One run of a boot for a batch target (batch_submit): what the session
 * prepared (the knob writes, the exec request) and what came back. A target
 * that runs a whole boot at once (lava: the runs travel with the job) gets
 * every run of the boot before any result is needed.
 */
struct batch_run {
	/* prepared by the session */
	json_t *writes;           /* [{"path", "value"}]: the run's knob writes, in order */
	json_t *req;              /* the exec request (argv, timeout_s, files, load, ...) */
	double timeout_s;
	/* filled by batch_collect */
	json_t *applied;          /* the agent's answers to the knob writes (owned) */
	json_t *res;              /* the exec result (owned), NULL when there is none */
	int rc;                   /* 0 res is the reply; 1 the agent refused (a knob
				   * write or the exec; message in err); -1 no reply
				   * (the job ended first; LAVA's reason in err) */
	int restore_failed;       /* the knob restore after the run failed (err says why) */
	struct strbuf err;
};

struct target_ops {
	const char *name;
	const char *summary;
	unsigned caps;
	/* the keys of its plan object, one line each (harness/util/opts.h;
	 * "type" is implicit): check() resolves the object with them first
	 * (target_conf_resolve), `schedlab help targets` prints them, and the
	 * table in .doc is written from them (tests/unit/test_opts.c) */
	const struct param_spec *options;
	const char *doc;          /* the docs' file with its table: "docs/qemu.md" */
	/* validate and fill defaults of the plan's target object; return new object */
	json_t *(*check)(const json_t *conf, const char *path, struct strbuf *err);
	/* can this boot spec be honoured at all? (plan time, given sysinfo when connected) */
	int (*feasible)(struct target *t, const struct boot_spec *b, const json_t *sysinfo,
			struct strbuf *why);
	int (*open)(struct target *t, struct strbuf *err);
	int (*boot)(struct target *t, const struct boot_spec *b, struct boot_info *bi,
		    struct strbuf *err);
	int (*sysinfo)(struct target *t, json_t **out, struct strbuf *err);
	/* run a request of op "exec" (see agent.c), result object returned */
	int (*exec)(struct target *t, json_t *req, double timeout_s, json_t **out,
		    struct strbuf *err);
	int (*knob_set)(struct target *t, const char *path, const char *value, json_t **out,
			struct strbuf *err);
	int (*knob_restore)(struct target *t, struct strbuf *err);
	/*
	 * optional, for a target without a live agent (lava): every run of a
	 * boot at once, as a job, with several boots in flight (boot then only
	 * prepares). The session keeps up to batch_slots jobs in flight and
	 * stores each boot and its runs exactly once when its job ends:
	 *   batch_slots    how many jobs at once (>= 1; the plan's max_jobs or
	 *                  what the lab has); -1 with err when it cannot say
	 *   batch_submit   start boot b with its runs: bi gets the job's id and
	 *                  URL (the session records them at once); the job, or
	 *                  NULL with err (nothing runs)
	 *   batch_wait     block until one of jobs[0..n) ended, or Ctrl-C; its
	 *                  index (any one on Ctrl-C: collect cancels it)
	 *   batch_collect  what job brought back: bi (sysinfo, method, console:
	 *                  the job's log) and each run's reply; 0 when the boot
	 *                  came up (even when some runs got no reply), -1 when
	 *                  it did not (err: why, e.g. LAVA's reason and the job
	 *                  URL; bi->lab_fault when the lab, not the kernel,
	 *                  failed it). cancel (or Ctrl-C) cancels a job still
	 *                  running. Frees job.
	 *   batch_orphan   a job an earlier controller submitted and did not
	 *                  collect (it was killed; --resume): cancel it if it
	 *                  still runs; what became of it in why
	 */
	int (*batch_slots)(struct target *t, struct strbuf *err);
	struct batch_job *(*batch_submit)(struct target *t, const struct boot_spec *b,
					  struct boot_info *bi, struct batch_run *runs, size_t n,
					  struct strbuf *err);
	size_t (*batch_wait)(struct target *t, struct batch_job *const *jobs, size_t n);
	int (*batch_collect)(struct target *t, struct batch_job *job, int cancel,
			     struct boot_info *bi, struct batch_run *runs, size_t n,
			     struct strbuf *err);
	void (*batch_orphan)(struct target *t, long long job_id, struct strbuf *why);
	/* optional, with batch_submit: whether a plan's target object `conf`
	 * runs its boots as batches (NULL: always); a target that runs both
	 * ways says which here (qemu: "sealed" runs). Ask target_batch() */
	int (*batch_on)(const json_t *conf);
	/* optional, with batch_submit: what batch_submit would submit for these
	 * runs, for review (`schedlab plan --lava-job`); NULL with a message */
	json_t *(*batch_job)(struct target *t, const struct boot_spec *b,
			     struct batch_run *runs, size_t n, struct strbuf *err);
	void (*close)(struct target *t);
};

struct target {
	const struct target_ops *ops;
	json_t *conf;             /* the resolved plan "target" object */
	struct agent_conn *agent; /* connected agent, or NULL */
	void *priv;
	volatile int *abort_flag; /* set by SIGINT/SIGTERM handlers */
	const char *agent_path;   /* the agent binary on the controller side */
	int lab_retries;          /* batch targets: how many times a boot that failed
				   * for the lab's reason (boot_info.lab_fault) is
				   * submitted again in the session (set by open) */
	int knob_keep;            /* knob changes that belong to the boot (kept by
				   * knob_restore after each run) */
	/* the programs the plan's workloads run (plan_tools: "cyclictest",
	 * "sl-pingpong", ...), NULL-terminated, borrowed from the plan; NULL
	 * when not known (the target then assumes its defaults) */
	const char *const *tools;
	/* host seconds one second of the guest's clock may take (a virtual
	 * clock runs slower or faster than the host's): the waits for an exec
	 * are stretched by it; 0 means 1 (set by open) */
	double wall_per_s;
	/* runs start no sooner than exec_settle_s after the guest's boot, at a
	 * multiple of exec_align_s of its clock (the agent's exec settle_s,
	 * align_s); 0 = at once (set by open: a virtual clock) */
	double exec_settle_s, exec_align_s;
};

const struct target_ops *target_find(const char *name);
/* 1 when a target of these ops and this plan object runs each boot's runs
 * as one batch (the session's batch path: session_batch.c) */
int target_batch(const struct target_ops *ops, const json_t *conf);
const char *target_names(void);
/* every registered target, NULL-terminated */
const struct target_ops *const *target_all(void);
int target_check_registry(struct strbuf *err);
/* a plan's target object of ops checked against ops->options (unknown keys
 * "PATH.KEY: unknown key for the NAME target (valid: ...)", types, ranges)
 * with its defaults filled in: a new object, or NULL with the message;
 * `path` "target" or "targets[1]" */
json_t *target_conf_resolve(const struct target_ops *ops, const json_t *conf, const char *path,
			    struct strbuf *err);

/* default hooks that talk to t->agent */
int target_agent_sysinfo(struct target *t, json_t **out, struct strbuf *err);
int target_agent_exec(struct target *t, json_t *req, double timeout_s, json_t **out,
		      struct strbuf *err);
int target_agent_knob_set(struct target *t, const char *path, const char *value,
			  json_t **out, struct strbuf *err);
int target_agent_knob_restore(struct target *t, struct strbuf *err);

/* ------------------------------------------------------------------ */
/* helpers the targets share                                            */

/* 1 when a plan's target object runs its guest on a virtual clock
 * ("clock": "virtual", docs/virtual-time.md) */
int target_clock_virtual(const json_t *target);

/* none, voluntary, full, lazy or laziest: a preempt= mode a target can boot with */
int target_preempt_known(const char *mode);
/* the agent binary for t: the plan's "agent", else t->agent_path, else the
 * one next to the running schedlab */
const char *target_agent_binary(const struct target *t);

/* append the boot's kernel parameters to cl, each after a space:
 * preempt=<b->preempt>, the target's "append", b->cmdline (those set) */
void target_boot_params(const struct target *t, const struct boot_spec *b, struct strbuf *cl);

/*
 * Runtime switching on targets that can also boot ("switch": "runtime" or
 * "auto" on qemu and ssh). The running configuration can be brought to
 * boot b by writing /sys/kernel/debug/sched/preempt when nothing but the
 * preempt mode changes (same_rest: the same kernel and the same kernel
 * parameters other than preempt=) and the running kernel (its sysinfo si)
 * is PREEMPT_DYNAMIC, its debugfs preempt file readable (root, debugfs
 * mounted, no lockdown: then it is writable too) and b's mode on offer.
 * 1 when so, else 0 with the reason in why. Pure.
 */
int target_runtime_possible(int same_rest, const char *preempt, const json_t *si,
			    struct strbuf *why);
/*
 * With "switch": "runtime" every boot configuration must differ from the
 * first only in its preempt mode: the kernel (NULL = the target's
 * default_kernel) and the extra parameters the same. 0 when so, else -1 and
 * why names the first configuration (1-based) that differs and how. Pure.
 */
int target_runtime_plan_check(const struct boot_spec *b, size_t n, const char *default_kernel,
			      struct strbuf *why);

struct child;
/* wait up to seconds for c to exit by itself (c->pid = -1 once reaped); the
 * caller then proc_stop()s what is left */
void target_reap_within(struct child *c, double seconds);
/* read a non-blocking fd (a transport's stderr) until it has nothing more,
 * keeping the last max bytes in tail */
void target_drain_tail(int fd, struct strbuf *tail, size_t max);

/* a string of a nested object (lava's "artifacts") that must be one of
 * allowed (NULL-terminated), def when absent; else -1 and "<prefix><name>:
 * must be one of ...". A target's own keys are its options table's */
int conf_choice(json_t *obj, const char *name, const char *def, const char *const *allowed,
		const char *prefix, struct strbuf *err);

/* every key of obj must be in valid (NULL-terminated); otherwise -1 and
 * "PATH.KEY: unknown key[ for WHAT] (valid: a, b, ...)". Plans and every
 * target's check() use it. */
int conf_check_keys(const json_t *obj, const char *const *valid, const char *path,
		    const char *what, struct strbuf *err);

/* "local", "qemu:/path/kernel", "ssh://user@host:port" -> target object */
json_t *target_spec_parse(const char *spec, struct strbuf *err);
/* path of bin/schedlab-agent next to the running schedlab binary */
const char *target_default_agent_path(void);

/*
 * The programs a qemu guest gets (pure), for the resolved target object conf
 * and the plan's tools (plan_tools, NULL when not known): the target's
 * "tools" when the plan names them (with every sl-* next to the agent), else
 * the plan's tools, split into host programs (hosts) and the native sl-*
 * ones (natives, found next to the agent), else cyclictest, hackbench and
 * stress-ng with every sl-*; and kexec when conf's "switch" is "kexec".
 * *all_natives is 1 when every sl-* next to the agent goes in.
 */
void qemu_guest_tools(const json_t *conf, const char *const *plan_tools, struct strvec *hosts,
		      struct strvec *natives, int *all_natives);

/* qemu.c's, shared with the lava target: the kernel image (and its config
 * and release, "" when unknown) of a kernel spec, and the binaries of a
 * guest initramfs (the agent, the sl-* and host tools qemu_guest_tools
 * names) */
int qemu_kernel_image(const char *spec, char *image, size_t ilen, char *config, size_t clen,
		      char *release, size_t rlen, struct strbuf *err);
int qemu_guest_binaries(struct target *t, struct strvec *bins, struct strbuf *err);

extern const struct target_ops local_target;
extern const struct target_ops qemu_target;
extern const struct target_ops ssh_target;
extern const struct target_ops lava_target;

#endif
