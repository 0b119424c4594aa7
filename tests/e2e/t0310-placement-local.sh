#!/usr/bin/env bash
# End-to-end on the local target (run it under the local lock: it may write
# kernel.sched_schedstats): wakeup-placement evidence of sl-pingpong (issue
# 14, item 4). A plan runs pingpong with "placement" and "schedstat" on.
# On a kernel with schedstats the results view must carry the task_* sums
# with sane relations and kernel.sched_schedstats must be back at its old
# value; on one without (CONFIG_SCHEDSTATS=n: no sysctl) the run is ok,
# stores no task_* metric at all and says why in its note. Either way the
# raw dump is kept with the run. Then the agent itself, on a fake /proc
# tree (--root), turns the knob on for the run and back off afterwards.
. "$(dirname "$0")/lib.sh"
hold_local_target   # no other session changes a knob between its reads (lib.sh)
DB=$TMP/t.db
require sqlite3:sqlite3
require_built bin/sl-pingpong bin/schedlab-agent
KNOB=/proc/sys/kernel/sched_schedstats
before=$(cat $KNOB 2>/dev/null || echo none)

cat >"$TMP/plan.json" <<'P'
{ "name": "placement-local", "seed": 1, "schedstat": true,
  "workloads": [
    {"type": "pingpong", "duration_s": 1, "warmup_s": 0.2, "stages": 2, "work_us": 20}
  ] }
P
expect_exit 0 "run pingpong with placement evidence on the local target" schedlab run "$TMP/plan.json" --db "$DB" --tag pl
equals "the run is ok" "$(sql "SELECT status FROM run")" ok
equals "the raw dump is kept with the run (start and end of every task)" \
	"$(sql "SELECT json_extract(files, '\$.\"task-sched.txt\"') LIKE 'schedlab-task-sched 1%@@ start %@@ end %se.nr_migrations%' FROM run")" 1
equals "the argv asked for it" "$(sql "SELECT argv LIKE '%--sched-out=task-sched.txt%' FROM run")" 1
if [ "$before" = none ]; then
	echo "# this kernel has no $KNOB (CONFIG_SCHEDSTATS=n): the metrics and their relations are checked in a guest by t0530-qemu-placement; here the run without them"
	equals "no schedstats: no task_* metric at all (never zeros)" "$(sql "SELECT count(*) FROM results WHERE metric LIKE 'task_%'")" 0
	contains "no schedstats: the run's note says why" <(sql "SELECT notes FROM run") \
		"no wakeup-placement evidence: the tasks' /proc/<pid>/sched have no schedstat fields"
	equals "no schedstats: the workload's own metrics are still there" "$(sql "SELECT count(*) > 0 FROM results WHERE metric = 'rps'")" 1
	# three runs with the same note: each keeps it, the progress says it once
	sed 's/"seed": 1,/"seed": 1, "repetitions": 3,/' "$TMP/plan.json" >"$TMP/plan3.json"
	expect_exit 0 "three runs without evidence" schedlab run "$TMP/plan3.json" --db "$DB" --tag pl3
	equals "... each run keeps the note" \
		"$(sql "SELECT count(*) FROM run JOIN session s ON s.id = run.session_id WHERE s.tag = 'pl3' AND run.status = 'ok' AND run.notes LIKE 'no wakeup-placement evidence%'")" 3
	equals "... the progress says it once" "$(grep -c '^  note: no wakeup-placement evidence: .* (said once; every such run keeps it in run.notes)$' "$TMP/err")" 1
else
	for m in task_files task_wakeups task_wakeups_local task_wakeups_remote task_wakeups_affine \
		 task_wakeups_affine_attempts task_wakeups_migrate task_migrations task_wait_sum_ms \
		 task_wait_count task_local_wakeup_pct task_remote_wakeup_pct; do
		[ -n "$(sql "SELECT value FROM results WHERE metric = '$m'")" ] && ok "$m stored" || not_ok "$m stored" "absent"
	done
	n=$(sql "SELECT value FROM results WHERE metric = 'task_files'")
	equals "wakeups = local + remote (+- 2 per task)" \
		"$(sql "SELECT abs(w.value - l.value - r.value) <= 2 * $n FROM results w, results l, results r WHERE w.metric='task_wakeups' AND l.metric='task_wakeups_local' AND r.metric='task_wakeups_remote'")" 1
	equals "affine <= attempts" \
		"$(sql "SELECT a.value <= t.value FROM results a, results t WHERE a.metric='task_wakeups_affine' AND t.metric='task_wakeups_affine_attempts'")" 1
	equals "percentages in [0, 100]" "$(sql "SELECT min(value >= 0 AND value <= 100) FROM results WHERE metric LIKE 'task_%_pct'")" 1
	equals "no note on a run with evidence" "$(sql "SELECT error IS NULL FROM run")" 1
	equals "$KNOB restored to its value before the run" "$(cat $KNOB)" "$before"
fi

# the agent's side, on a fake tree: the knob on during the run, then back
mkdir -p "$TMP/root/proc/sys/kernel"
echo 0 >"$TMP/root$KNOB"
req='{"id":1,"op":"exec","args":{"argv":["sh","-c","cat '"$TMP/root$KNOB"'; sl-pingpong -d 0.3 -w 0.1 --sched-out=task-sched.txt >/dev/null"],"files":["task-sched.txt"],"schedstat":true,"timeout_s":30}}'
# one request at a time: the agent stops a workload when its input ends
coproc AG { schedlab-agent --root "$TMP/root" 2>"$TMP/agent.err"; }
# bash unsets AG_PID (and AG) as soon as it reaps the coprocess, which may be
# before the wait below: keep copies
ag_pid=$AG_PID ag_in=${AG[1]} ag_out=${AG[0]}
CLEANUP_CMDS+=("kill $ag_pid")
{
	read -r -t 10 line <&"$ag_out" && echo "$line"
	echo "$req" >&"$ag_in"
	read -r -t 60 line <&"$ag_out" && echo "$line"
	echo '{"id":2,"op":"knob_get","args":{"path":"'$KNOB'"}}' >&"$ag_in"
	read -r -t 10 line <&"$ag_out" && echo "$line"
} >"$TMP/agent.out"
exec {ag_in}>&-
wait "$ag_pid"
contains "agent: the knob was 1 while the workload ran" "$TMP/agent.out" '"stdout":"1'
contains "agent: the dump came back with the run" "$TMP/agent.out" '"task-sched.txt":"schedlab-task-sched 1\n@@ start '
contains "agent: the knob is 0 again afterwards" "$TMP/agent.out" '{"id":2,"ok":true,"result":{"value":"0"}}'
equals "agent: the fake sysctl file holds 0 again" "$(cat "$TMP/root$KNOB")" 0
no_leftovers "no workload process left"
done_testing
