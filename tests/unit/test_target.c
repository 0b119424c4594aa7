/*
 * Unit tests of the pure decisions behind runtime switching on targets that
 * can also boot (harness/targets/target.c): when "auto" (or "runtime") can
 * write the preempt mode instead of booting (target_runtime_possible), the
 * comparison of command lines without their preempt= words, the plan-level
 * rule of "switch": "runtime" (only the preempt mode may change between
 * boot configurations), and how a plan's "switch" reaches qemu/ssh/local
 * targets (harness/orchestrate/plan.c); qemu's -version and the rule of
 * vCPUs on a virtual clock and of a "topology" (harness/targets/qemu_vt.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/util/cmdline.h"
#include "harness/orchestrate/plan.h"
#include "harness/targets/qemu_vt.h"
#include "harness/targets/target.h"
#include "tests/unit/tap.h"

/* a sysinfo object as the agent reports it: {"field": {"value": ...}} */
static json_t *si_of(const char *preempt, int dynamic, const char *modes_json)
{
	json_t *si = json_object();
	if (preempt)
		json_object_set_new(si, "preempt", json_pack("{s:s}", "value", preempt));
	else
		json_object_set_new(si, "preempt",
				    json_pack("{s:s}", "error", "/sys/kernel/debug/sched/preempt: "
						       "Permission denied"));
	if (dynamic >= 0)
		json_object_set_new(si, "preempt_dynamic",
				    json_pack("{s:b}", "value", dynamic));
	json_object_set_new(si, "preempt_build", json_pack("{s:s}", "value", "voluntary"));
	if (modes_json)
		json_object_set_new(si, "preempt_modes",
				    json_pack("{s:o}", "value", json_loads(modes_json, 0, NULL)));
	return si;
}

TEST(runtime_possible_when_only_preempt_changes)
{
	json_t *si = si_of("none", 1, "[\"none\", \"voluntary\", \"full\"]");
	struct strbuf why = STRBUF_INIT;
	CHECK(target_runtime_possible(1, "full", si, &why) == 1);
	CHECK(why.len == 0);
	CHECK(target_runtime_possible(1, "voluntary", si, &why) == 1);
	CHECK(target_runtime_possible(1, "none", si, &why) == 1);
	/* no preempt requested: leave the mode as it is, nothing to write */
	CHECK(target_runtime_possible(1, NULL, si, &why) == 1);
	json_decref(si);
	strbuf_release(&why);
}

TEST(runtime_refused_with_the_reason)
{
	struct strbuf why = STRBUF_INIT;
	json_t *si = si_of("none", 1, "[\"none\", \"voluntary\", \"full\"]");
	/* the kernel or the other parameters change: a boot is needed */
	CHECK(target_runtime_possible(0, "full", si, &why) == 0);
	CHECK_CONTAINS(why.buf, "the kernel or its other parameters change");
	strbuf_reset(&why);
	/* a mode the kernel does not offer (6.1 has no lazy) */
	CHECK(target_runtime_possible(1, "lazy", si, &why) == 0);
	CHECK_CONTAINS(why.buf, "preempt=lazy is not offered by the running kernel (it offers: "
				"none voluntary full)");
	json_decref(si);
	strbuf_reset(&why);
	/* no PREEMPT_DYNAMIC */
	si = si_of("voluntary", 0, "[\"voluntary\"]");
	CHECK(target_runtime_possible(1, "full", si, &why) == 0);
	CHECK_CONTAINS(why.buf, "built without PREEMPT_DYNAMIC");
	json_decref(si);
	strbuf_reset(&why);
	/* PREEMPT_DYNAMIC unknown (no kernel config): not assumed */
	si = si_of("none", -1, "[\"none\", \"full\"]");
	CHECK(target_runtime_possible(1, "full", si, &why) == 0);
	CHECK_CONTAINS(why.buf, "not known to have PREEMPT_DYNAMIC");
	json_decref(si);
	strbuf_reset(&why);
	/* debugfs not readable (lockdown, not root, not mounted) */
	si = si_of(NULL, 1, NULL);
	CHECK(target_runtime_possible(1, "full", si, &why) == 0);
	CHECK_CONTAINS(why.buf, "/sys/kernel/debug/sched/preempt cannot be used: "
				"/sys/kernel/debug/sched/preempt: Permission denied");
	json_decref(si);
	strbuf_reset(&why);
	/* no sysinfo at all */
	CHECK(target_runtime_possible(1, "full", NULL, &why) == 0);
	strbuf_release(&why);
}

/* lazy like the other modes: at run time where the running kernel offers
 * it (6.13 x86: "none voluntary (full) lazy "; 6.13 RT and 7.0 x86:
 * "(full) lazy "), at boot as preempt=lazy on the command line; a boot
 * that differs only in preempt=lazy is a runtime switch for "auto" */
TEST(lazy_at_run_time_and_at_boot)
{
	struct strbuf why = STRBUF_INIT;
	json_t *si = si_of("full", 1, "[\"none\", \"voluntary\", \"full\", \"lazy\"]");
	CHECK(target_runtime_possible(1, "lazy", si, &why) == 1);
	json_decref(si);
	si = si_of("full", 1, "[\"full\", \"lazy\"]");
	CHECK(target_runtime_possible(1, "lazy", si, &why) == 1);
	CHECK(why.len == 0);
	CHECK(target_runtime_possible(1, "voluntary", si, &why) == 0);
	CHECK_CONTAINS(why.buf, "preempt=voluntary is not offered by the running kernel (it "
				"offers: full lazy)");
	json_decref(si);
	CHECK(target_preempt_known("lazy") && !target_preempt_known("rt-lazy"));
	struct target t;
	memset(&t, 0, sizeof(t));
	t.conf = json_pack("{s:s}", "append", "console=ttyS0");
	struct boot_spec b = { .index = 0, .preempt = "lazy", .cmdline = "" };
	struct strbuf cl = STRBUF_INIT;
	target_boot_params(&t, &b, &cl);
	CHECK_STR(cl.buf, " preempt=lazy console=ttyS0");
	CHECK(cmdline_same_but_preempt("console=ttyS0 preempt=lazy", "console=ttyS0 preempt=full"));
	json_decref(t.conf);
	strbuf_release(&cl);
	strbuf_release(&why);
}

TEST(params_same_but_preempt)
{
	CHECK(cmdline_same_but_preempt("console=ttyS0 panic=-1 preempt=none",
					     "console=ttyS0 panic=-1 preempt=full"));
	CHECK(cmdline_same_but_preempt("console=ttyS0  panic=-1", "preempt=full "
					     "console=ttyS0 panic=-1"));
	CHECK(cmdline_same_but_preempt(NULL, ""));
	CHECK(cmdline_same_but_preempt("preempt=none", NULL));
	CHECK(!cmdline_same_but_preempt("console=ttyS0 preempt=none",
					      "console=ttyS0 preempt=full mitigations=off"));
	CHECK(!cmdline_same_but_preempt("a=1", "a=10"));
	CHECK(!cmdline_same_but_preempt("threadirqs", ""));
}

TEST(runtime_plan_check)
{
	struct strbuf why = STRBUF_INIT;
	struct boot_spec ok[] = {
		{ 0, NULL, "none", "" },
		{ 1, NULL, "full", "" },
		{ 2, "kernels/out/debian", "voluntary", "" },
	};
	CHECK(target_runtime_plan_check(ok, 3, "kernels/out/debian", &why) == 0);
	CHECK(target_runtime_plan_check(ok, 1, NULL, &why) == 0);
	struct boot_spec cmd[] = {
		{ 0, NULL, "none", "" },
		{ 1, NULL, "full", "" },
		{ 2, NULL, "none", "mitigations=off" },
	};
	CHECK(target_runtime_plan_check(cmd, 3, "k", &why) == -1);
	CHECK_CONTAINS(why.buf, "boot configuration 3 has cmdline \"mitigations=off\", boot "
				"configuration 1 \"\"");
	strbuf_reset(&why);
	struct boot_spec kern[] = {
		{ 0, NULL, "none", "" },
		{ 1, "kernels/out/other", "none", "" },
	};
	CHECK(target_runtime_plan_check(kern, 2, "kernels/out/debian", &why) == -1);
	CHECK_CONTAINS(why.buf, "boot configuration 2 has kernel kernels/out/other, boot "
				"configuration 1 kernels/out/debian");
	strbuf_reset(&why);
	/* ssh: NULL is the running kernel, a path another one */
	CHECK(target_runtime_plan_check(kern, 2, NULL, &why) == -1);
	CHECK_CONTAINS(why.buf, "kernel kernels/out/other, boot configuration 1 (the target's)");
	strbuf_release(&why);
}

static char *load(const char *text, struct plan *p, int *rc)
{
	struct strbuf err = STRBUF_INIT;
	*rc = plan_load_string(text, "p.json", p, &err);
	return strbuf_detach(&err, NULL);
}

TEST(plan_switch_reaches_the_target)
{
	struct plan p;
	int rc;
	/* ssh accepts runtime; the plan's switch lands in the target object */
	char *e = load("{\"target\": {\"type\": \"ssh\", \"host\": \"h\"}, \"switch\": \"runtime\", "
		       "\"workloads\": [{\"type\": \"hackbench\"}]}", &p, &rc);
	CHECK(rc == 0);
	if (rc)
		printf("#   %s\n", e);
	else
		CHECK_STR(json_string_value(json_object_get(p.target, "switch")), "runtime");
	plan_release(&p);
	free(e);
	/* auto stays auto on ssh (runtime when it can, else kexec) */
	e = load("{\"target\": {\"type\": \"ssh\", \"host\": \"h\"}, "
		 "\"workloads\": [{\"type\": \"hackbench\"}]}", &p, &rc);
	CHECK(rc == 0);
	if (!rc)
		CHECK_STR(json_string_value(json_object_get(p.target, "switch")), "auto");
	plan_release(&p);
	free(e);
	/* the target's own key is checked too */
	e = load("{\"target\": {\"type\": \"ssh\", \"host\": \"h\", \"switch\": \"warp\"}, "
		 "\"workloads\": [{\"type\": \"hackbench\"}]}", &p, &rc);
	CHECK(rc == -1);
	CHECK_CONTAINS(e, "switch: must be one of \"auto\", \"runtime\", \"kexec\", \"reboot\"");
	plan_release(&p);
	free(e);
	/* the local target still only switches at run time */
	e = load("{\"target\": \"local\", \"switch\": \"kexec\", "
		 "\"workloads\": [{\"type\": \"hackbench\"}]}", &p, &rc);
	CHECK(rc == -1);
	CHECK_CONTAINS(e, "switch: the local target cannot kexec (valid: auto, runtime)");
	plan_release(&p);
	free(e);
	e = load("{\"target\": \"local\", \"switch\": \"runtime\", "
		 "\"workloads\": [{\"type\": \"hackbench\"}]}", &p, &rc);
	CHECK(rc == 0);
	plan_release(&p);
	free(e);
}

/* `qemu-system-x86_64 -version` as Debian's qemus answer it, and what is not */
TEST(qemu_version_parse_and_admit)
{
	struct qemu_version v;
	struct strbuf e = STRBUF_INIT;
	CHECK(qemu_version_parse("QEMU emulator version 10.0.13 (Debian 1:10.0.13+ds-0+deb13u1)\n"
				 "Copyright (c) 2003-2025 Fabrice Bellard and the QEMU Project "
				 "developers\n", &v) == 0);
	CHECK(v.major == 10 && v.minor == 0 && v.micro == 13);
	CHECK_STR(v.text, "10.0.13");
	CHECK(qemu_version_at_least(&v, 8, 1));
	CHECK(qemu_version_parse("QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\n",
				 &v) == 0);
	CHECK_STR(v.text, "7.2.22");
	CHECK(!qemu_version_at_least(&v, 8, 1));
	CHECK(qemu_version_parse("QEMU emulator version 8.1\n", &v) == 0);
	CHECK_STR(v.text, "8.1.0");
	CHECK(qemu_version_at_least(&v, 8, 1));
	CHECK(qemu_version_parse("QEMU emulator version 8.0.5\n", &v) == 0);
	CHECK(!qemu_version_at_least(&v, 8, 1));
	/* not a version: refused, never read as 0.0 */
	CHECK(qemu_version_parse("", &v) == -1);
	CHECK(qemu_version_parse(NULL, &v) == -1);
	CHECK(qemu_version_parse("qemu-system-x86_64: command not found\n", &v) == -1);
	CHECK(qemu_version_parse("QEMU emulator version x.y\n", &v) == -1);
	CHECK(qemu_version_parse("QEMU emulator version -1.2\n", &v) == -1);
	CHECK(qemu_version_parse("warning: something\nQEMU emulator version 9.2.0\n", &v) == -1);
	/* the admission: 1 vCPU always; 2-8 from 8.1; never 9 */
	struct qemu_version old = { 7, 2, 22, "7.2.22" }, ok = { 8, 1, 0, "8.1.0" };
	CHECK(qemu_vt_admit(1, NULL, "no qemu", "q", 1, "t.", &e) == 0);
	CHECK(qemu_vt_admit(2, &ok, NULL, "q", 0, "t.", &e) == 0);
	CHECK(qemu_vt_admit(8, &ok, NULL, "q", 0, "t.", &e) == 0);
	CHECK_STR(e.buf, "");
	CHECK(qemu_vt_admit(9, &ok, NULL, "q", 0, "t.", &e) == -1);
	CHECK_CONTAINS(e.buf, "t.cpus: a virtual clock runs 1 to 8 vCPUs, not 9");
	strbuf_reset(&e);
	CHECK(qemu_vt_admit(2, &old, NULL, "/usr/bin/qemu-system-x86_64", 1, "t.", &e) == -1);
	CHECK_STR(e.buf, "t.cpus: 2 vCPUs on a virtual clock need qemu >= 8.1 (older ones hang a "
			 "guest's CPU bring-up under icount; docs/virtual-time.md); "
			 "/usr/bin/qemu-system-x86_64 is 7.2.22, and the provided qemu is missing: "
			 "run `make -C kernels qemu`");
	strbuf_reset(&e);
	CHECK(qemu_vt_admit(4, NULL, "cannot run q -version: No such file", "q", 0, "t.", &e) == -1);
	CHECK_CONTAINS(e.buf, "cannot run q -version: No such file: run `make -C kernels qemu`");
	strbuf_release(&e);
}

static int topo(const char *json, long long cpus, int vt, int tcg, const struct qemu_version *v,
		struct qemu_topology *t, struct strbuf *e, long long *cpus_out)
{
	json_t *j = json_loads(json, JSON_DECODE_ANY, NULL);
	strbuf_reset(e);
	int rc = qemu_topology_check(j, &cpus, vt, tcg, v, "no qemu here", "p.json: target.", e, t);
	json_decref(j);
	*cpus_out = cpus;
	return rc;
}

/* a qemu target's "topology": levels filled in, cpus derived or matched,
 * and what qemu (or the guest under TCG) cannot do refused by name */
TEST(qemu_topology_rule)
{
	struct qemu_version q10 = { 10, 0, 13, "10.0.13" }, q40 = { 4, 0, 0, "4.0.0" };
	struct qemu_topology t;
	struct strbuf e = STRBUF_INIT;
	long long c;
	CHECK(topo("{\"sockets\": 2, \"cores\": 2}", 0, 1, 1, NULL, &t, &e, &c) == 0);
	CHECK(c == 4 && t.sockets == 2 && t.dies == 1 && t.cores == 2 && t.threads == 1);
	CHECK(topo("{\"sockets\": 2}", 4, 1, 1, NULL, &t, &e, &c) == 0);
	CHECK(c == 4 && t.sockets == 2 && t.cores == 2);      /* cores fill up */
	CHECK(topo("{\"cores\": 2}", 6, 0, 0, NULL, &t, &e, &c) == 0);
	CHECK(c == 6 && t.sockets == 3 && t.cores == 2);      /* then sockets */
	CHECK(topo("{}", 3, 0, 0, NULL, &t, &e, &c) == 0);
	CHECK(c == 3 && t.sockets == 1 && t.cores == 3);
	CHECK(topo("{\"sockets\": 2, \"cores\": 2, \"threads\": 2}", 8, 0, 0, NULL, &t, &e,
		   &c) == 0);
	CHECK(topo("{\"dies\": 2, \"cores\": 2}", 0, 1, 1, &q10, &t, &e, &c) == 0);
	CHECK(c == 4 && t.dies == 2);
	CHECK_STR(e.buf, "");
	/* the product against cpus */
	CHECK(topo("{\"sockets\": 2, \"cores\": 3}", 4, 0, 0, NULL, &t, &e, &c) == -1);
	CHECK_STR(e.buf, "p.json: target.topology: sockets x dies x cores x threads = 2x1x3x1 = 6, "
			 "but cpus is 4: the product must equal cpus (leave out cpus, or cores, "
			 "to have it follow)");
	CHECK(topo("{\"sockets\": 4}", 6, 0, 0, NULL, &t, &e, &c) == -1);
	CHECK_STR(e.buf, "p.json: target.topology: cpus 6 is not a multiple of the levels given "
			 "(their product is 4): the cores would not be whole");
	/* a virtual clock's limit */
	CHECK(topo("{\"sockets\": 2, \"cores\": 8}", 0, 1, 1, NULL, &t, &e, &c) == -1);
	CHECK_STR(e.buf, "p.json: target.topology: 2x1x8x1 = 16 vCPUs; a virtual clock runs 1 "
			 "to 8");
	CHECK(topo("{\"sockets\": 2, \"cores\": 8}", 0, 0, 0, NULL, &t, &e, &c) == 0);
	/* what each level must be */
	static const char *const bad[][2] = {
		{ "{\"sockets\": 0}", "p.json: target.topology.sockets: must be an integer in 1..256" },
		{ "{\"cores\": -2}", "p.json: target.topology.cores: must be an integer in 1..256" },
		{ "{\"cores\": 1.5}", "p.json: target.topology.cores: must be an integer in 1..256" },
		{ "{\"dies\": \"2\"}", "p.json: target.topology.dies: must be an integer in 1..256" },
		{ "{\"threads\": true}",
		  "p.json: target.topology.threads: must be an integer in 1..256" },
		{ "{\"sockts\": 2}", "p.json: target.topology.sockts: unknown key (valid: sockets, "
				      "dies, cores, threads)" },
		{ "{\"clusters\": 2}", "p.json: target.topology.clusters: unknown key (valid: "
					"sockets, dies, cores, threads)" },
		{ "[2, 2]", "p.json: target.topology: must be an object {\"sockets\": S, \"dies\": "
			    "D, \"cores\": C, \"threads\": T} (each optional, an integer >= 1)" },
		{ "{\"sockets\": 64, \"cores\": 64}",
		  "p.json: target.topology: more than 256 vCPUs (the product of sockets, dies, "
		  "cores and threads)" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(topo(bad[i][0], 0, 0, 0, NULL, &t, &e, &c) == -1);
		CHECK_STR(e.buf, bad[i][1]);
	}
	/* threads under TCG make no SMT level in the guest: refused there */
	CHECK(topo("{\"cores\": 2, \"threads\": 2}", 4, 1, 1, NULL, &t, &e, &c) == -1);
	CHECK_CONTAINS(e.buf, "p.json: target.topology.threads: 2 threads a core under TCG (a "
			      "virtual clock runs TCG): its CPU (qemu64, an AMD model without "
			      "topoext) shows the guest no SMT siblings");
	CHECK(topo("{\"cores\": 2, \"threads\": 2}", 4, 0, 1, NULL, &t, &e, &c) == -1);
	CHECK(topo("{\"cores\": 2, \"threads\": 2}", 4, 0, 0, NULL, &t, &e, &c) == 0);
	/* dies: qemu >= 4.1, asked of the version */
	CHECK(topo("{\"dies\": 2}", 2, 0, 0, &q40, &t, &e, &c) == -1);
	CHECK_STR(e.buf, "p.json: target.topology.dies: more than one die needs qemu >= 4.1 on "
			 "x86; this qemu is 4.0.0 (use sockets instead)");
	CHECK(topo("{\"dies\": 2}", 2, 0, 0, NULL, &t, &e, &c) == -1);
	CHECK_CONTAINS(e.buf, "cannot tell this qemu's version: no qemu here");
	CHECK(topo("{\"dies\": 1, \"sockets\": 2}", 2, 0, 0, NULL, &t, &e, &c) == 0);
	json_t *j = json_loads("{\"dies\": 2}", 0, NULL);
	CHECK(qemu_topology_wants_dies(j));
	json_decref(j);
	j = json_loads("{\"dies\": 1}", 0, NULL);
	CHECK(!qemu_topology_wants_dies(j));
	json_decref(j);
	strbuf_release(&e);
}

int main(void)
{
	RUN(runtime_possible_when_only_preempt_changes);
	RUN(runtime_refused_with_the_reason);
	RUN(params_same_but_preempt);
	RUN(lazy_at_run_time_and_at_boot);
	RUN(runtime_plan_check);
	RUN(plan_switch_reaches_the_target);
	RUN(qemu_version_parse_and_admit);
	RUN(qemu_topology_rule);
	return tap_done();
}
