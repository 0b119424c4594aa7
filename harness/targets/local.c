/*
 * The local target: the machine schedlab runs on. The agent is a child
 * process (bin/schedlab-agent) over pipes, in its own process group so that a
 * terminal's Ctrl-C reaches only the controller, which then closes the pipe:
 * the agent sees EOF, kills the workload, restores the knobs and exits.
 *
 * Boot-level switching is runtime only: a requested preempt mode is written
 * to /sys/kernel/debug/sched/preempt (and restored on close). Kernels and
 * command lines cannot be changed; feasible() refuses them at plan time with
 * the reason, as it refuses a preempt mode the running kernel cannot switch
 * to (no PREEMPT_DYNAMIC, debugfs unreadable, mode not offered).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/util/proc.h"
#include "harness/agent/knobs.h"
#include "harness/agent/sysinfo.h"
#include "harness/targets/target.h"

struct local_priv {
	struct child agent;
	struct agent_conn conn;
	int connected;
	char current_preempt[32];
};

static json_t *agent_value(json_t *v, const char *path, struct strbuf *err)
{
	if (!json_is_string(v) || !json_string_length(v)) {
		strbuf_addf(err, "%s: must be the path of a schedlab-agent binary", path);
		return NULL;
	}
	return json_incref(v);
}

static const struct param_spec local_options[] = {
	{ "agent", PT_JSON, .kind = "path", .value = agent_value,
	  .def_doc = "next to schedlab", .help = "the schedlab-agent binary to run" },
	PARAM_END,
};

static json_t *local_check(const json_t *conf, const char *path, struct strbuf *err)
{
	return target_conf_resolve(&local_target, conf, path, err);
}

static int local_feasible(struct target *t, const struct boot_spec *b, const json_t *si,
			  struct strbuf *why)
{
	if (b->kernel) {
		strbuf_addf(why, "the local target cannot boot another kernel (%s); use a qemu or "
			    "ssh target", b->kernel);
		return 0;
	}
	if (b->cmdline && *b->cmdline) {
		strbuf_addf(why, "the local target cannot change the kernel command line (\"%s\"); "
			    "use a qemu or ssh target", b->cmdline);
		return 0;
	}
	if (!b->preempt)
		return 1;
	const char *cur = sysinfo_str(si, "preempt");
	if (cur && !strcmp(cur, b->preempt))
		return 1;
	json_t *dyn = sysinfo_value(si, "preempt_dynamic");
	const char *build = sysinfo_str(si, "preempt_build");
	if (json_is_false(dyn)) {
		strbuf_addf(why, "preempt=%s: the running kernel is built with preemption model "
			    "\"%s\" and without PREEMPT_DYNAMIC, so it cannot switch at run time; "
			    "use a qemu or ssh target to boot with preempt=%s", b->preempt,
			    build ? build : "unknown", b->preempt);
		return 0;
	}
	if (!cur) {
		json_t *f = json_object_get(si, "preempt");
		const char *e = json_string_value(json_object_get(f, "error"));
		strbuf_addf(why, "preempt=%s: the preemption mode cannot be switched at run time "
			    "here: %s (debugfs not mounted, not readable under lockdown, or not "
			    "root); use a qemu or ssh target", b->preempt, e ? e : "unknown mode");
		return 0;
	}
	json_t *modes = sysinfo_value(si, "preempt_modes");
	size_t i;
	json_t *m;
	json_array_foreach(modes, i, m)
		if (!strcmp(json_string_value(m), b->preempt))
			return 1;
	strbuf_addf(why, "preempt=%s: not offered by the running kernel (it offers:", b->preempt);
	json_array_foreach(modes, i, m)
		strbuf_addf(why, " %s", json_string_value(m));
	strbuf_addch(why, ')');
	return 0;
}

static int local_open(struct target *t, struct strbuf *err)
{
	struct local_priv *lp = xcalloc(1, sizeof(*lp));
	t->priv = lp;
	return 0;
}

static int start_agent(struct target *t, struct local_priv *lp, struct strbuf *err)
{
	const char *path = target_agent_binary(t);
	if (access(path, X_OK)) {
		strbuf_addf(err, "agent %s: %s (run make first)", path, strerror(errno));
		return -1;
	}
	static const char *argv[2];
	argv[0] = path;
	argv[1] = NULL;
	struct child c = CHILD_INIT;
	c.argv = argv;
	c.in = PROC_PIPE;
	c.out = PROC_PIPE;
	c.err = PROC_INHERIT;
	c.new_pgrp = 1;
	c.pdeathsig = SIGTERM;
	if (proc_start(&c, err))
		return -1;
	lp->agent = c;
	agent_conn_init(&lp->conn, c.out_fd, c.in_fd);
	lp->conn.abort_flag = t->abort_flag;
	lp->agent.in_fd = lp->agent.out_fd = -1; /* owned by conn now */
	if (agent_wait_banner(&lp->conn, 30, err)) {
		agent_conn_release(&lp->conn);
		proc_stop(&lp->agent, 2);
		return -1;
	}
	lp->connected = 1;
	t->agent = &lp->conn;
	return 0;
}

static void stop_agent(struct local_priv *lp, int graceful)
{
	if (!lp->connected)
		return;
	if (graceful) {
		struct strbuf e = STRBUF_INIT;
		agent_call(&lp->conn, "shutdown", NULL, 10, NULL, &e);
		strbuf_release(&e);
	}
	agent_conn_release(&lp->conn); /* EOF: the agent restores and exits */
	target_reap_within(&lp->agent, 5);
	proc_stop(&lp->agent, 1);
	lp->connected = 0;
}

static int local_boot(struct target *t, const struct boot_spec *b, struct boot_info *bi,
		      struct strbuf *err)
{
	struct local_priv *lp = t->priv;
	double t0 = now_mono();
	if (!lp->connected) {
		t->agent = NULL;
		if (start_agent(t, lp, err))
			return -1;
		snprintf(bi->method, sizeof(bi->method), "initial");
	} else {
		snprintf(bi->method, sizeof(bi->method), "runtime");
	}
	/* back to the state before any boot-level change, then apply this one */
	t->knob_keep = 0;
	if (target_agent_knob_restore(t, err))
		return -1;
	if (b->preempt) {
		json_t *si = NULL;
		if (target_agent_sysinfo(t, &si, err))
			return -1;
		const char *cur = sysinfo_str(si, "preempt");
		if (!cur || strcmp(cur, b->preempt)) {
			json_t *info = NULL;
			if (target_agent_knob_set(t, "/sys/kernel/debug/sched/preempt", b->preempt,
						  &info, err)) {
				json_decref(si);
				return -1;
			}
			t->knob_keep = (int)json_integer_value(json_object_get(info, "depth"));
			json_decref(info);
			snprintf(bi->method, sizeof(bi->method), "runtime");
		}
		json_decref(si);
	}
	if (target_agent_sysinfo(t, &bi->sysinfo, err))
		return -1;
	const char *bid = sysinfo_str(bi->sysinfo, "boot_id");
	snprintf(bi->boot_id, sizeof(bi->boot_id), "%s", bid ? bid : "");
	bi->switch_s = now_mono() - t0;
	return 0;
}

/* an agent killed before it could restore (SIGKILL) left its knob journal;
 * the next agent plays it back when it starts, and so does closing the
 * target, in case no agent follows */
static void recover_dead_agents(void)
{
	struct knobs k;
	struct strbuf r = STRBUF_INIT;
	knobs_init(&k, "");
	int fails = knobs_recover(&k, &r);
	if (r.len)
		fprintf(stderr, "schedlab: %s: %s\n",
			fails ? "knob journal" : "restored knobs of a dead agent", r.buf);
	knobs_release(&k);
	strbuf_release(&r);
}

static void local_close(struct target *t)
{
	struct local_priv *lp = t->priv;
	if (!lp)
		return;
	stop_agent(lp, !(t->abort_flag && *t->abort_flag));
	recover_dead_agents();
	free(lp);
	t->priv = NULL;
	t->agent = NULL;
}

const struct target_ops local_target = {
	.name = "local",
	.summary = "this machine; the agent runs as a child process; runtime switching only",
	.caps = TCAP_PREEMPT_RUNTIME,
	.options = local_options,
	.doc = "docs/plan-format.md",
	.check = local_check,
	.feasible = local_feasible,
	.open = local_open,
	.boot = local_boot,
	.sysinfo = target_agent_sysinfo,
	.exec = target_agent_exec,
	.knob_set = target_agent_knob_set,
	.knob_restore = target_agent_knob_restore,
	.close = local_close,
};
