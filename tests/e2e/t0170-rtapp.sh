#!/usr/bin/env bash
# timeout: 240
# End-to-end: the rtapp workload with Debian's real rt-app 1.0 on the local
# target. Plan errors name the key and what is valid; a 2-task set (FIFO +
# OTHER) at low utilisation for 2 seconds with rt-app's own calibration, a
# short FIFO utilisation sweep and an admitted SCHED_DEADLINE task store
# their metrics (checked through the results view: units, directions,
# per-task rows, the sweep's onset); a SCHED_DEADLINE set beyond the
# machine's bandwidth is refused by admission control and stored as a failed
# run whose error says so. The task description rt-app read is kept with
# the run, and the agent's exec writes such inputs (and refuses a path as
# a name). Real-time policies need root: without it the runs are skipped.
. "$(dirname "$0")/lib.sh"
hold_local_target   # its local sessions never wait inside the script (lib.sh)
require rt-app:rt-app sqlite3:sqlite3
require_built bin/schedlab
DB=$TMP/t.db

# ---- plan errors (exit 2, nothing stored) ----
cat >"$TMP/bad1.json" <<'P'
{ "workloads": [{"type": "rtapp", "duration_s": 1}] }
P
expect_exit 2 "a plan without tasks or sweep is refused" schedlab plan "$TMP/bad1.json"
contains "... naming both keys" "$TMP/err" 'workloads[0]: needs exactly one of "tasks" (a task set) and "sweep"'
cat >"$TMP/bad2.json" <<'P'
{ "workloads": [{"type": "rtapp", "tasks": [
   {"name": "a", "policy": "fifo", "run_us": 20000, "period_us": 10000}]}] }
P
expect_exit 2 "run_us beyond the period is refused" schedlab plan "$TMP/bad2.json"
contains "... naming the key and the range" "$TMP/err" "workloads[0].tasks[0].run_us: must be an integer in [1, 10000]"
cat >"$TMP/bad3.json" <<'P'
{ "workloads": [{"type": "rtapp", "tasks": [
   {"name": "a", "policy": "sporadic", "run_us": 100, "period_us": 10000}]}] }
P
expect_exit 2 "an unknown policy is refused" schedlab plan "$TMP/bad3.json"
contains "... listing the valid ones" "$TMP/err" 'workloads[0].tasks[0].policy: must be one of "other", "fifo", "rr", "deadline"'
check "schedlab help workloads lists rtapp" sh -c 'schedlab help workloads | grep -q "rtapp"'

# ---- the agent writes a driver's inputs into the run directory ----
(printf '%s\n' '{"id":1,"op":"exec","args":{"argv":["cat","taskset.json"],"inputs":{"taskset.json":"{\"tasks\": 1}"},"timeout_s":10}}'
 sleep 1; printf '%s\n' '{"id":2,"op":"exec","args":{"argv":["true"],"inputs":{"../x":"no"},"timeout_s":10}}' '{"id":3,"op":"shutdown"}') |
	schedlab agent >"$TMP/agent.out" 2>"$TMP/agent.err"
contains "agent exec: the tool reads the input the agent wrote" "$TMP/agent.out" '"stdout":"{\"tasks\": 1}"'
contains "agent exec: an input name with a slash is refused" "$TMP/agent.out" 'exec: input \"../x\" must be a plain file name'

if [ "$(id -u)" != 0 ]; then
	skip "real-time task sets" "needs root (SCHED_FIFO, SCHED_DEADLINE)"
	done_testing
	exit
fi

# ---- a small task set, a sweep and an admitted deadline task ----
cat >"$TMP/plan.json" <<'P'
{ "name": "e2e-rtapp", "seed": 1, "order": "sequential",
  "workloads": [
    {"type": "rtapp", "duration_s": 2, "tasks": [
       {"name": "ctl", "policy": "fifo", "priority": 20, "run_us": 500, "period_us": 10000},
       {"name": "bg", "policy": "other", "run_us": 1000, "period_us": 20000}]},
    {"type": "rtapp", "duration_s": 1, "calibration_ns": 20,
     "sweep": {"tasks": 2, "from_pct": 10, "to_pct": 30, "step_pct": 10, "period_us": 10000}},
    {"type": "rtapp", "duration_s": 1, "calibration_ns": 20, "tasks": [
       {"name": "dl", "policy": "deadline", "run_us": 500, "runtime_us": 2000, "period_us": 10000}]}
  ] }
P
expect_exit 0 "plan validates" schedlab plan "$TMP/plan.json"
expect_exit 0 "run the task sets on the local target" schedlab run "$TMP/plan.json" --db "$DB" --tag rt
equals "three ok runs" "$(sql "SELECT count(*) FROM run WHERE workload = 'rtapp' AND status = 'ok'")" 3
R1="run_id = (SELECT min(id) FROM run)"
equals "task set: overall and per-task metrics" \
	"$(sql "SELECT group_concat(metric) FROM (SELECT metric FROM results WHERE $R1 AND metric IN ('periods','misses','miss_pct','response_p99_us','slack_p1_us','wu_lat_p99_us','ctl_response_p99_us','bg_response_p99_us','ctl_misses','bg_misses') ORDER BY metric)")" \
	"bg_misses,bg_response_p99_us,ctl_misses,ctl_response_p99_us,miss_pct,misses,periods,response_p99_us,slack_p1_us,wu_lat_p99_us"
# 2 s of a 10 ms and a 20 ms period: about 200 + 100 rows (no speed is asserted)
equals "task set: periods counted from both logs" "$(sql "SELECT value > 100 AND value <= 320 FROM results WHERE $R1 AND metric = 'periods'")" 1
equals "misses are lower-better counts" "$(sql "SELECT unit||','||better FROM results WHERE $R1 AND metric = 'misses'")" "count,lower"
equals "slack is higher-better us" "$(sql "SELECT unit||','||better FROM results WHERE $R1 AND metric = 'slack_p1_us'")" "us,higher"
equals "response percentiles ordered" \
	"$(sql "SELECT (SELECT value FROM results WHERE $R1 AND metric='response_p50_us') <= (SELECT value FROM results WHERE $R1 AND metric='response_p99_us') AND (SELECT value FROM results WHERE $R1 AND metric='response_p99_us') <= (SELECT value FROM results WHERE $R1 AND metric='response_max_us')")" 1
equals "response histogram stored" "$(sql "SELECT json_extract(data, '\$.total') = (SELECT value FROM results WHERE $R1 AND metric = 'periods') FROM histogram WHERE run_id = (SELECT min(id) FROM run) AND name = 'response_us'")" 1
equals "the task description rt-app read is kept with the run" \
	"$(sql "SELECT json_extract(json_extract(files, '\$.\"taskset.json\"'), '\$.tasks.ctl.policy') FROM run WHERE id = (SELECT min(id) FROM run)")" SCHED_FIFO
equals "the per-thread logs are kept with the run" \
	"$(sql "SELECT json_extract(files, '\$.\"rt-app-ctl-0.log\"') LIKE '# Policy : SCHED_FIFO%' FROM run WHERE id = (SELECT min(id) FROM run)")" 1
R2="run_id = (SELECT min(id) + 1 FROM run)"
equals "sweep: misses per step" \
	"$(sql "SELECT group_concat(metric) FROM (SELECT metric FROM results WHERE $R2 AND metric LIKE 'u0%misses' ORDER BY metric)")" \
	"u010_misses,u020_misses,u030_misses"
equals "sweep: the onset is stored (a value, or a lower bound at 30%)" \
	"$(sql "SELECT (censored = 0 AND value IN (10, 20, 30)) OR (censored = 1 AND value = 30) FROM metric WHERE run_id = (SELECT min(id) + 1 FROM run) AND name = 'miss_onset_pct'")" 1
R3="run_id = (SELECT min(id) + 2 FROM run)"
equals "deadline task ran and was measured" "$(sql "SELECT value > 0 FROM results WHERE $R3 AND metric = 'periods'")" 1
equals "deadline task: per-task response stored" "$(sql "SELECT count(*) FROM results WHERE $R3 AND metric = 'dl_response_p99_us'")" 1
no_leftovers "no rt-app or agent left after the runs"

# ---- a deadline set admission control must refuse: more bandwidth than CPUs ----
n=$(( $(nproc) + 1 )); [ "$n" -gt 64 ] && n=64
cat >"$TMP/refused.json" <<P
{ "name": "e2e-rtapp-refused", "workloads": [
    {"type": "rtapp", "duration_s": 1, "calibration_ns": 20, "tasks": [
       {"name": "hog", "policy": "deadline", "run_us": 1000, "runtime_us": 10000,
        "period_us": 10000, "instances": $n}]}] }
P
expect_exit 1 "a refused deadline set is a failed run (exit 1), not a crash" schedlab run "$TMP/refused.json" --db "$DB" --tag refused
contains "... the progress line names admission control" "$TMP/err" "SCHED_DEADLINE admission control refused the task set"
equals "... stored as failed with the reason" \
	"$(sql "SELECT status, error LIKE '%admission control refused%EBUSY%$n.00 CPUs%' FROM run WHERE id = (SELECT max(id) FROM run)" | tr '|' ,)" "failed,1"
equals "... and no metrics" "$(sql "SELECT count(*) FROM metric WHERE run_id = (SELECT max(id) FROM run)")" 0
no_leftovers "no rt-app left after the refusal"
done_testing
