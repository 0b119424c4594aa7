/*
 * Unit tests of labs in harness/orchestrate/plan.c: a plan with "targets" (several
 * machines driven in parallel, one session each). Validation: "target" and
 * "targets" are mutually exclusive, the list must be a non-empty array,
 * every member is resolved with its type's check (defaults filled in, the
 * plan's "switch" handed over) and errors name the member's JSON path
 * (targets[1].host); --target cannot replace a lab's list; plan_lab_member
 * makes a member's one-target plan with the "lab" marker, which validates
 * again as stored (resume); the marker itself is checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/orchestrate/lab.h"
#include "harness/orchestrate/plan.h"
#include "harness/targets/target.h"
#include "tests/unit/tap.h"

#define WL "\"workloads\": [{\"type\": \"hackbench\", \"groups\": 1, \"loops\": 10}]"

static int load_ok(const char *text, struct plan *p)
{
	struct strbuf err = STRBUF_INIT;
	int r = plan_load_string(text, "lab.json", p, &err);
	if (r)
		printf("#   unexpected error: %s\n", err.buf);
	strbuf_release(&err);
	return r;
}

static void check_err(const char *text, const char *expect)
{
	struct plan p;
	struct strbuf err = STRBUF_INIT;
	CHECK(plan_load_string(text, "lab.json", &p, &err) == -1);
	CHECK_CONTAINS(err.buf, expect);
	plan_release(&p);
	strbuf_release(&err);
}

static const char *type_of(const json_t *t)
{
	return json_string_value(json_object_get(t, "type"));
}

TEST(two_local_targets)
{
	struct plan p;
	CHECK(load_ok("{\"targets\": [\"local\", {\"type\": \"local\"}], " WL "}", &p) == 0);
	CHECK(p.ntargets == 2);
	CHECK(json_array_size(p.targets) == 2);
	CHECK_STR(type_of(json_array_get(p.targets, 0)), "local");
	CHECK_STR(type_of(json_array_get(p.targets, 1)), "local");
	/* the single target of the common case stands for the first member */
	CHECK_STR(type_of(p.target), "local");
	CHECK(p.tops == &local_target);
	CHECK(plan_lab_target(&p, 1) == json_array_get(p.targets, 1));
	CHECK(plan_lab_target(&p, 2) == NULL);
	/* the matrix is the same for every member */
	CHECK(p.nboots == 1 && plan_run_count(&p) == 1);
	plan_release(&p);
}

TEST(single_target_plan_is_no_lab)
{
	struct plan p;
	CHECK(load_ok("{\"target\": \"local\", " WL "}", &p) == 0);
	CHECK(p.targets == NULL && p.ntargets == 0);
	CHECK(plan_lab_target(&p, 0) == p.target);
	CHECK(plan_lab_target(&p, 1) == NULL);
	plan_release(&p);
	/* a lab of one is allowed */
	CHECK(load_ok("{\"targets\": [\"local\"], " WL "}", &p) == 0);
	CHECK(p.ntargets == 1);
	plan_release(&p);
}

TEST(members_resolved_with_their_check)
{
	struct plan p;
	CHECK(load_ok("{\"switch\": \"kexec\", \"targets\": [\"ssh://root@lab1:2222\", "
		      "{\"type\": \"ssh\", \"host\": \"lab2\", \"switch\": \"reboot\", "
		      "\"reboot_hook\": [\"/usr/local/sbin/next\"]}], " WL "}", &p) == 0);
	CHECK(p.ntargets == 2);
	const json_t *a = plan_lab_target(&p, 0), *b = plan_lab_target(&p, 1);
	CHECK_STR(type_of(a), "ssh");
	CHECK_STR(json_string_value(json_object_get(a, "host")), "lab1");
	CHECK_STR(json_string_value(json_object_get(a, "user")), "root");
	CHECK(json_integer_value(json_object_get(a, "port")) == 2222);
	/* the plan's switch lands in the member; the member's own one wins */
	CHECK_STR(json_string_value(json_object_get(a, "switch")), "kexec");
	CHECK_STR(json_string_value(json_object_get(b, "switch")), "reboot");
	/* defaults of the ssh check filled in for each */
	CHECK_STR(json_string_value(json_object_get(a, "agent_dir")), ".cache/schedlab");
	CHECK_STR(json_string_value(json_object_get(b, "agent_dir")), ".cache/schedlab");
	CHECK(p.tops == &ssh_target);
	plan_release(&p);
}

TEST(target_and_targets_exclusive)
{
	check_err("{\"target\": \"local\", \"targets\": [\"local\"], " WL "}",
		  "lab.json: target, targets: a plan names either one \"target\" or a lab of "
		  "\"targets\", not both");
	check_err("{\"targets\": [\"local\"], \"target\": {\"type\": \"local\"}, " WL "}",
		  "target, targets:");
}

TEST(targets_shape_errors)
{
	check_err("{\"targets\": [], " WL "}", "lab.json: targets: must be a non-empty array");
	check_err("{\"targets\": \"local\", " WL "}", "lab.json: targets: must be a non-empty array");
	check_err("{\"targets\": {\"type\": \"local\"}, " WL "}", "targets: must be a non-empty array");
	check_err("{\"targets\": [\"local\", 3], " WL "}",
		  "lab.json: targets[1]: must be \"local\", a target spec string or an object");
	check_err("{\"targets\": [\"local\", \"local\", \"vm:x\"], " WL "}",
		  "lab.json: targets[2]: \"vm:x\": unknown target spec");
}

TEST(member_errors_name_their_path)
{
	check_err("{\"targets\": [\"local\", {\"type\": \"ssh\"}], " WL "}",
		  "lab.json: targets[1].host: must be a host name");
	check_err("{\"targets\": [\"local\", {\"type\": \"ssh\", \"host\": \"-oProxyCommand=x\"}], "
		  WL "}", "lab.json: targets[1].host:");
	check_err("{\"targets\": [{\"type\": \"local\", \"cpus\": 2}, \"local\"], " WL "}",
		  "lab.json: targets[0].cpus: unknown key for the local target");
	check_err("{\"targets\": [\"local\", {\"type\": \"local\", \"agent\": 7}], " WL "}",
		  "lab.json: targets[1].agent: must be the path");
	check_err("{\"targets\": [\"local\", {\"host\": \"x\"}], " WL "}",
		  "lab.json: targets[1].type: missing (valid: ");
	check_err("{\"targets\": [{\"type\": \"vm\"}], " WL "}",
		  "lab.json: targets[0].type: unknown target \"vm\"");
	check_err("{\"targets\": [\"ssh://lab1\", \"local\"], \"switch\": \"kexec\", " WL "}",
		  "lab.json: switch: the local target of targets[1] cannot kexec");
	/* the one-target message is unchanged */
	check_err("{\"target\": {\"type\": \"ssh\"}, " WL "}", "lab.json: target.host:");
}

TEST(set_target_refused_for_a_lab)
{
	struct plan p;
	struct strbuf err = STRBUF_INIT;
	CHECK(load_ok("{\"targets\": [\"local\", \"local\"], " WL "}", &p) == 0);
	json_t *t = json_pack("{s:s}", "type", "local");
	CHECK(plan_set_target(&p, t, &err) == -1);
	CHECK_CONTAINS(err.buf, "cannot replace the 2 targets of a lab plan");
	CHECK(p.ntargets == 2);
	json_decref(t);
	plan_release(&p);
	strbuf_release(&err);
}

TEST(member_plan_and_marker)
{
	struct plan lab, m;
	struct strbuf err = STRBUF_INIT;
	CHECK(load_ok("{\"name\": \"l\", \"seed\": 7, \"switch\": \"kexec\", \"targets\": "
		      "[\"ssh://lab1\", \"ssh://lab2\"], " WL "}", &lab) == 0);
	CHECK(plan_lab_member(&lab, 1, "20260101-000000-1", "ssh:lab2", &m, &err) == 0);
	CHECK(m.targets == NULL && m.ntargets == 0);
	CHECK_STR(json_string_value(json_object_get(m.target, "host")), "lab2");
	CHECK_STR(m.name, "l");
	CHECK(m.seed == 7);
	CHECK_STR(m.path, lab.path);
	CHECK(json_object_get(m.root, "targets") == NULL);
	json_t *mk = json_object_get(m.root, "lab");
	CHECK_STR(json_string_value(json_object_get(mk, "id")), "20260101-000000-1");
	CHECK(json_integer_value(json_object_get(mk, "target")) == 1);
	CHECK(json_integer_value(json_object_get(mk, "targets")) == 2);
	CHECK_STR(json_string_value(json_object_get(mk, "label")), "ssh:lab2");
	/* the same execution order as the lab's plan */
	CHECK(m.nvisits == lab.nvisits && plan_run_count(&m) == plan_run_count(&lab));

	/* what session_start stores (root with the resolved target) validates again */
	json_t *stored = json_deep_copy(m.root);
	json_object_set(stored, "target", m.target);
	char *text = json_dumps(stored, JSON_COMPACT);
	struct plan again;
	CHECK(load_ok(text, &again) == 0);
	CHECK_STR(json_string_value(json_object_get(again.target, "host")), "lab2");
	CHECK(again.ntargets == 0);
	plan_release(&again);
	free(text);
	json_decref(stored);

	/* out of range */
	struct plan none;
	strbuf_reset(&err);
	CHECK(plan_lab_member(&lab, 2, "x", "x", &none, &err) == -1);
	CHECK_CONTAINS(err.buf, "targets[2]: no such member");
	plan_release(&none);
	plan_release(&m);
	plan_release(&lab);
	strbuf_release(&err);
}

TEST(marker_checked)
{
	struct plan p;
	CHECK(load_ok("{\"lab\": {\"id\": \"a\", \"target\": 0, \"targets\": 2, \"label\": \"x\"}, "
		      WL "}", &p) == 0);
	CHECK(p.ntargets == 0);
	plan_release(&p);
	check_err("{\"lab\": {\"id\": \"a\"}, \"targets\": [\"local\"], " WL "}",
		  "lab.json: lab: written by schedlab");
	check_err("{\"lab\": \"a\", " WL "}", "lab.json: lab: must be an object");
	check_err("{\"lab\": {\"id\": \"\"}, " WL "}", "lab.json: lab.id: must be a non-empty string");
	check_err("{\"lab\": {\"id\": \"a\", \"target\": -1}, " WL "}",
		  "lab.json: lab.target: must be a non-negative integer");
	check_err("{\"lab\": {\"id\": \"a\", \"who\": 1}, " WL "}",
		  "lab.json: lab.who: unknown key (valid: id, target, targets, label)");
}

TEST(unknown_key_list_unchanged)
{
	/* "lab" is accepted but not listed: only schedlab writes it */
	check_err("{\"targetz\": [], " WL "}",
		  "lab.json: targetz: unknown key (valid: name, target, targets, switch, repetitions, seed, "
		  "order, schedstat, matrix, workloads)");
}

/* one order of exit codes for a lab's members and a night (issue 41) */
TEST(exit_worse_order)
{
	static const int order[] = { 2, 130, 1, 3, 4, 0 };
	for (size_t i = 0; i < 6; i++)
		for (size_t j = i; j < 6; j++) {
			CHECK(exit_worse(order[i], order[j]) == order[i]);
			CHECK(exit_worse(order[j], order[i]) == order[i]);
		}
	CHECK(exit_worse(0, 7) == 2);   /* a code of no meaning here: setup failure */
	CHECK(exit_worse(0, 0) == 0);
}

int main(void)
{
	RUN(two_local_targets);
	RUN(single_target_plan_is_no_lab);
	RUN(members_resolved_with_their_check);
	RUN(target_and_targets_exclusive);
	RUN(targets_shape_errors);
	RUN(member_errors_name_their_path);
	RUN(set_target_refused_for_a_lab);
	RUN(member_plan_and_marker);
	RUN(marker_checked);
	RUN(unknown_key_list_unchanged);
	RUN(exit_worse_order);
	return tap_done();
}
