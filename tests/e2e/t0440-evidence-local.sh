#!/usr/bin/env bash
# End-to-end evidence traces on the local target (needs root and tracefs):
# a plan whose hackbench carries "evidence" gets one extra traced run per
# configuration, stored and marked ("evidence" in its params, a note), with
# the raw trace and its summary in its files and trace_* metrics; the
# machine's tracing state is what it was before (no schedlab instance left,
# the global files unchanged), also after the agent is cut off (EOF) or
# killed with SIGKILL in the middle of a traced run; compare and the HTML
# report never pool the traced run with untraced ones and say so; plan
# errors name the key. The triggers ("when": "worst", "flagged"): a
# configuration whose runs failed gets its traced run (linked to the first
# failed run), one with nothing flagged gets none and the session says so,
# "worst" names the run with the worst time_s; after an interruption before
# the traced runs, --resume decides them from what is stored (a stored
# outlier is traced, a configuration without one is skipped with the
# rule), every run stored once. Run under the local lock.
# timeout: 240
. "$(dirname "$0")/lib.sh"
hold_local_target   # its local sessions never wait inside the script (lib.sh)
SL=bin/schedlab
DB=$TMP/ev.db
require_built "$SL" bin/schedlab-agent
require rt-tests:hackbench stress-ng:stress-ng sqlite3:sqlite3 jq:jq
if [ "$(id -u)" != 0 ]; then skip "evidence traces" "needs root (tracefs)"; done_testing; exit; fi
TFS=/sys/kernel/tracing
[ -d $TFS/instances ] || TFS=/sys/kernel/debug/tracing
if [ ! -d $TFS/instances ]; then skip "evidence traces" "no tracefs instances"; done_testing; exit; fi

# the machine's tracing state, to compare after each step
state() {
	{ ls $TFS/instances | grep '^schedlab-' ; cat $TFS/tracing_on $TFS/current_tracer $TFS/buffer_size_kb
	  for e in sched_switch sched_waking sched_wakeup sched_migrate_task; do cat $TFS/events/sched/$e/enable; done
	  ls /run/schedlab 2>/dev/null | grep '^knobs-'; } 2>&1
}
before=$(state)

# ---- plan errors name the key ----------------------------------------------
plan() { printf '{"name":"e","target":"local","repetitions":2,"workloads":[{"type":"hackbench","groups":1,"loops":50,"evidence":%s}]}' "$1" >"$TMP/bad.json"; }
plan '{"trace":5}'
expect_exit 2 "unknown evidence key refused" $SL plan "$TMP/bad.json"
contains "... named with the valid ones" "$TMP/err" "workloads[0].evidence.trace: unknown key (valid: trace_s"
plan '{"trace_s":0}'
expect_exit 2 "trace_s 0 refused" $SL plan "$TMP/bad.json"
contains "... named" "$TMP/err" "workloads[0].evidence.trace_s: must be a number of seconds"
plan '{"events":["sched_wakeup"]}'
expect_exit 2 "events without sched_switch refused" $SL plan "$TMP/bad.json"
contains "... named" "$TMP/err" "evidence.events: must include sched_switch"
plan '{"events":["irq_handler_entry","sched_switch"]}'
expect_exit 2 "an event outside the list refused" $SL plan "$TMP/bad.json"
contains "... named by index" "$TMP/err" "evidence.events[0]: unknown event"
plan '{"when":"best"}'
expect_exit 2 "a when other than always, worst, flagged refused" $SL plan "$TMP/bad.json"
contains "... naming the valid ones" "$TMP/err" 'workloads[0].evidence.when: must be "always"'
plan '{"when":"worst","outlier_k":2}'
expect_exit 2 "outlier_k without flagged refused" $SL plan "$TMP/bad.json"
contains "... named" "$TMP/err" 'evidence.outlier_k: only with "when": "flagged"' 
printf '{"name":"e","target":"local","repetitions":{"min":2,"max":4,"until":"decided"},"workloads":[{"type":"hackbench","groups":1,"loops":50,"evidence":{}}]}' >"$TMP/bad.json"
expect_exit 2 "evidence with sequential repetitions refused" $SL plan "$TMP/bad.json"
contains "... named" "$TMP/err" "workloads[0].evidence: not with sequential repetitions"

# ---- a traced plan and an untraced one -------------------------------------
cat >"$TMP/ev.json" <<'P'
{"name": "ev", "target": "local", "repetitions": 2, "seed": 5,
 "workloads": [{"type": "hackbench", "groups": 1, "loops": 200,
                "evidence": {"trace_s": 5, "max_kb": 4096}}]}
P
jq 'del(.workloads[0].evidence)' "$TMP/ev.json" >"$TMP/plain.json"
expect_exit 0 "plan shows the extra run" $SL plan "$TMP/ev.json"
expect_exit 0 "run the traced plan" timeout 120 $SL run "$TMP/ev.json" --db "$DB" --tag traced
contains "the traced run is named in the progress" "$TMP/err" "traced run (evidence)"
expect_exit 0 "run the untraced plan" timeout 120 $SL run "$TMP/plain.json" --db "$DB" --tag plain
equals "tracing state as before the runs" "$(state)" "$before"
equals "3 runs in the traced session, all ok" \
	"$(sql "SELECT count(*) || ':' || sum(status = 'ok') FROM run WHERE session_id = 1")" "3:3"
equals "one run carries evidence, after the repetitions" \
	"$(sql "SELECT group_concat(rep) FROM run WHERE session_id = 1 AND params LIKE '%\"evidence\":%'")" 2
RID=$(sql "SELECT id FROM run WHERE session_id = 1 AND params LIKE '%\"evidence\":%'")
equals "the untraced runs carry none" \
	"$(sql "SELECT count(*) FROM run WHERE params LIKE '%evidence%' AND id != $RID")" 0
contains_sql() { sql "$2" >"$TMP/sql.out"; contains "$1" "$TMP/sql.out" "$3"; }
contains_sql "the traced run says so" "SELECT notes FROM run WHERE id = $RID" "traced run (evidence, 5 s window)"
sql "SELECT json_extract(files, '\$.\"schedlab-trace.txt\"') FROM run WHERE id = $RID" >"$TMP/trace.txt"
contains "the raw trace is kept: sched_switch" "$TMP/trace.txt" ": sched_switch: prev_comm="
contains "... sched_waking" "$TMP/trace.txt" ": sched_waking: comm="
contains "... hackbench in it" "$TMP/trace.txt" "hackbench"
# only the run's tasks are traced (the agent and what it forks, and
# whatever switches with them): a busy host's other tasks once filled the
# kept tail after hackbench had ended (make test beside a busy-test); the
# agent's own are hackbench, the agent and the guardian of the workload's
# group (schedlab-guard, proc.h), which CI once saw switch out to a task of
# another's
ours='^(hackbench|schedlab-agent|schedlab-guard)$'
others=$(grep ': sched_switch: ' "$TMP/trace.txt" |
	sed -E 's/.*prev_comm=(.*) prev_pid=.*next_comm=(.*) next_pid=.*/\1|\2/' |
	awk -F'|' -v ours="$ours" '$1 !~ ours && $2 !~ ours' | sort | uniq -c | head -n 5)
equals "... and only the run's tasks: every switch has hackbench or the agent on one side" "$others" ""
sql "SELECT json_extract(files, '\$.\"schedlab-trace.json\"') FROM run WHERE id = $RID" >"$TMP/trace.json"
if jq -e '.switches > 0 and .wakeups > 0 and (.tasks | length) > 0 and (.tasks | map(.comm) | index("hackbench"))' "$TMP/trace.json" >/dev/null; then
	ok "the summary has switches, wakeups and the busiest tasks (hackbench among them)"
else not_ok "the summary has switches, wakeups and tasks" "$(head -c 400 "$TMP/trace.json")"; fi
equals "trace_* metrics of the traced run" \
	"$(sql "SELECT group_concat(metric) FROM (SELECT metric FROM results WHERE run_id = $RID AND metric LIKE 'trace_%' ORDER BY metric)")" \
	"trace_migrations,trace_preemptions,trace_span_s,trace_switches,trace_wakeup_lat_max_us,trace_wakeup_lat_p50_us,trace_wakeup_lat_p99_us,trace_wakeups"
equals "trace_switches is the kept trace's sched_switch lines (grep)" \
	"$(sql "SELECT CAST(value AS INTEGER) FROM results WHERE run_id = $RID AND metric = 'trace_switches'")" \
	"$(grep -c ': sched_switch: ' "$TMP/trace.txt")"
equals "trace_migrations likewise" \
	"$(sql "SELECT CAST(value AS INTEGER) FROM results WHERE run_id = $RID AND metric = 'trace_migrations'")" \
	"$(grep -c ': sched_migrate_task: ' "$TMP/trace.txt")"
equals "no trace metrics on untraced runs" "$(sql "SELECT count(*) FROM results WHERE metric LIKE 'trace_%' AND run_id != $RID")" 0

# ---- compare and report ----------------------------------------------------
expect_exit 0 "compare tag=traced tag=plain" $SL compare tag=traced tag=plain --db "$DB" --format json
jq -r '.warnings[]' "$TMP/out" >"$TMP/warn.txt"
contains "a note with the trace summary" "$TMP/warn.txt" "traced run (evidence) in A, not compared: hackbench: wakeup_lat_p50_us="
contains "... naming the run" "$TMP/warn.txt" "(run $RID;"
equals "the comparison has 2 runs a side (the traced one left out)" \
	"$(jq -r '[.rows[] | select(.metric == "time_s") | "\(.n_a)/\(.n_b)"] | unique | join(",")' "$TMP/out")" "2/2"
equals "no trace metric compared" "$(jq -r '[.rows[] | select((.metric // "") | startswith("trace_"))] | length' "$TMP/out")" 0
# a selection of the traced run alone against untraced runs: not paired, warned
expect_exit 2 "traced run alone vs untraced: nothing compared" $SL compare "run_id=$RID" tag=plain --db "$DB" --format json
if grep -q "traced run" "$TMP/err" "$TMP/out"; then ok "... and says why"; else not_ok "... and says why" "$(cat "$TMP/err" "$TMP/out" | head -c 500)"; fi
expect_exit 0 "HTML report of the two" $SL report --compare tag=traced tag=plain --db "$DB" --out "$TMP/r.html"
contains "the report shows the trace note" "$TMP/r.html" "traced run (evidence) in A"
contains "... and the traced run's summary under the comparison" "$TMP/r.html" ": A: hackbench, run $RID</b>: window 5 s"
contains "... with its busiest tasks" "$TMP/r.html" "<td>hackbench</td>"

# ---- evidence triggers: worst and flagged ----------------------------------
cat >"$TMP/trig.json" <<'P'
{"name": "trig", "target": "local", "repetitions": 2, "seed": 3, "order": "sequential",
 "workloads": [
  {"type": "hackbench", "groups": 1, "loops": 50,
   "evidence": {"trace_s": 2, "max_kb": 512, "when": "flagged"}},
  {"type": "stress-ng", "stressor": "nop", "threads": 1, "duration_s": 1,
   "evidence": {"trace_s": 1, "max_kb": 256, "when": "flagged"}},
  {"type": "hackbench", "groups": 1, "loops": 60,
   "evidence": {"trace_s": 2, "max_kb": 512, "when": "worst"}}]}
P
expect_exit 0 "plan shows the traced runs with their trigger" $SL plan "$TMP/trig.json"
contains "... flagged" "$TMP/out" "W2 stress-ng  K1 traced (evidence, when flagged)"
contains "... worst" "$TMP/out" "W3 hackbench  K1 traced (evidence, when worst)"
# a stand-in stress-ng that fails (a plan's stressor must be a real one)
mkdir -p "$TMP/failing"
printf '#!/bin/sh\necho "stress-ng: failing on purpose" >&2\nexit 1\n' >"$TMP/failing/stress-ng"
chmod +x "$TMP/failing/stress-ng"
PATH="$TMP/failing:$PATH" expect_exit 1 "run the triggers' plan (its stress-ng fails: exit 1)" timeout 120 \
	$SL run "$TMP/trig.json" --db "$DB" --tag trig
cp "$TMP/err" "$TMP/trig.err"
S=$(sql "SELECT max(id) FROM session")
equals "every traced run was planned up front: 9 runs" "$(sql "SELECT count(*) FROM run WHERE session_id = $S")" 9
trun() { sql "SELECT $1 FROM run WHERE session_id = $S AND params LIKE '%\"evidence\":%' AND params LIKE '%$2%'"; }
equals "flagged, nothing flagged: the traced run is skipped" "$(trun status '"loops":50')" skipped
contains_sql "... with the reason (the outlier rule needs 3 runs)" \
	"SELECT error FROM run WHERE session_id = $S AND params LIKE '%\"evidence\":%' AND params LIKE '%\"loops\":50%'" \
	"evidence not needed: flagged: nothing flagged among its configuration's 2 untraced runs (none failed or timed out; the outlier rule needs 3 ok runs with time_s, there were 2)"
contains "... and the session says so" "$TMP/trig.err" "evidence for hackbench knobs={}: no traced run: flagged: nothing flagged"
contains "... in its summary too" "$TMP/trig.err" "evidence triggers: 2 traced runs made, 1 configuration with nothing flagged got none"
FAILED1=$(sql "SELECT min(id) FROM run WHERE session_id = $S AND workload = 'stress-ng' AND status = 'failed' AND params NOT LIKE '%evidence%'")
equals "flagged by failed runs: the traced run was made (and failed like them)" "$(trun status '"nop"')" failed
equals "... linked to the first failed run" "$(trun evidence_of '"nop"')" "$FAILED1"
equals "... the decision stored with it" "$(trun evidence_why '"nop"')" \
	"flagged: runs $FAILED1, $((FAILED1 + 3)) failed"
TRF=$(trun id '"nop"')
sql "SELECT json_extract(files, '\$.\"schedlab-trace.json\"') FROM run WHERE id = $TRF" >"$TMP/ftrace.json"
if jq -e '.switches > 0 and .trigger.when == "flagged" and .trigger.of_run == '"$FAILED1" "$TMP/ftrace.json" >/dev/null; then
	ok "... its trace is summarised although it failed, with the trigger"
else not_ok "... its trace is summarised although it failed" "$(head -c 400 "$TMP/ftrace.json")"; fi
contains_sql "... its note says why" "SELECT notes FROM run WHERE id = $TRF" "traced for evidence, flagged: runs $FAILED1,"
WORST=$(sql "SELECT r.id FROM run r JOIN metric m ON m.run_id = r.id AND m.name = 'time_s' WHERE r.session_id = $S AND r.params LIKE '%\"loops\":60%' AND r.params NOT LIKE '%evidence%' ORDER BY m.value DESC, r.id LIMIT 1")
WVAL=$(sql "SELECT value FROM metric WHERE run_id = $WORST AND name = 'time_s'")
equals "worst: the traced run is made" "$(trun status '"loops":60')" ok
equals "... linked to the run with the largest time_s" "$(trun evidence_of '"loops":60')" "$WORST"
contains_sql "... its note names the metric and the run" \
	"SELECT notes FROM run WHERE session_id = $S AND params LIKE '%\"evidence\":%' AND params LIKE '%\"loops\":60%'" \
	"traced for evidence, worst: run $WORST has the worst time_s of its configuration's 2 untraced runs with it: "
printf '%s\n' "$WVAL" | grep -qE '^[0-9.]+$' && ok "... whose time_s is stored ($WVAL s)" || not_ok "... time_s of the worst run" "$WVAL"
TRW=$(trun id '"loops":60')
expect_exit 0 "HTML report with the worst run's trace" $SL report --compare "session=$S,workload=hackbench" tag=plain --db "$DB" --out "$TMP/rt.html"
contains "... says why it was traced" "$TMP/rt.html" "traced because worst: run $WORST has the worst time_s"
contains "... beside the summary of run $TRW" "$TMP/rt.html" "hackbench, run $TRW</b>"

# ---- triggers after --resume: an outlier is traced, the rest skipped -------
cat >"$TMP/res.json" <<'P'
{"name": "res", "target": "local", "repetitions": 3, "seed": 4, "order": "sequential",
 "workloads": [
  {"type": "hackbench", "groups": 1, "loops": 50,
   "evidence": {"trace_s": 2, "max_kb": 512, "when": "flagged"}},
  {"type": "hackbench", "groups": 1, "loops": 51,
   "evidence": {"trace_s": 2, "max_kb": 512, "when": "flagged", "outlier_k": 3}},
  {"type": "stress-ng", "stressor": "cpu", "threads": 1, "duration_s": 3}]}
P
RDB=$TMP/res.db
$SL run "$TMP/res.json" --db "$RDB" >"$TMP/res.out" 2>"$TMP/res.err" &
rpid=$!
for _ in $(seq 300); do grep -q "stress-ng rep 3" "$TMP/res.err" && break; sleep 0.1; done
sleep 0.5
kill -INT $rpid
wait $rpid; rc=$?
equals "Ctrl-C in the last untraced run: exit 130" "$rc" 130
rsql() { sqlite3 -batch -noheader "$RDB" "$1"; }
equals "... both traced runs still planned (decided at their turn, not yet)" \
	"$(rsql "SELECT group_concat(status) FROM run WHERE params LIKE '%\"evidence\":%'")" "planned,planned"
# what the configurations hold when --resume decides: loops 50 gets an
# outlier (its first run 100 s against about 0.05 s), loops 51 none
OUT=$(rsql "SELECT min(id) FROM run WHERE params LIKE '%\"loops\":50%' AND params NOT LIKE '%evidence%'")
rsql "UPDATE metric SET value = 100 WHERE run_id = $OUT AND name = 'time_s';
      UPDATE metric SET value = 0.05 WHERE name = 'time_s' AND run_id IN
        (SELECT id FROM run WHERE params LIKE '%\"loops\":51%' AND params NOT LIKE '%evidence%')"
expect_exit 0 "--resume finishes the session" timeout 120 $SL run --resume last --db "$RDB"
equals "... every run stored once: 11 runs, none left" \
	"$(rsql "SELECT count(*) || ':' || sum(status IN ('planned','running','interrupted')) FROM run")" "11:0"
equals "... the interrupted stress-ng redone first" \
	"$(rsql "SELECT status FROM run WHERE workload = 'stress-ng' ORDER BY seq DESC LIMIT 1")" ok
rtr() { rsql "SELECT $1 FROM run WHERE params LIKE '%\"evidence\":%' AND params LIKE '%$2%'"; }
equals "the configuration with an outlier: traced" "$(rtr status '"loops":50')" ok
equals "... linked to the outlier" "$(rtr evidence_of '"loops":50')" "$OUT"
contains_sql_r() { rsql "$2" >"$TMP/sql.out"; contains "$1" "$TMP/sql.out" "$3"; }
contains_sql_r "... the rule and its limit in the decision" \
	"SELECT evidence_why FROM run WHERE params LIKE '%\"evidence\":%' AND params LIKE '%\"loops\":50%'" \
	"flagged: run $OUT (100 s) is an outlier by time_s (higher than median "
contains "... said in the session output" "$TMP/err" "evidence for hackbench knobs={}: traced run follows: flagged: run $OUT (100 s)"
equals "the configuration without one: skipped" "$(rtr status '"loops":51')" skipped
contains_sql_r "... with the rule it was not flagged by" \
	"SELECT error FROM run WHERE params LIKE '%\"evidence\":%' AND params LIKE '%\"loops\":51%'" \
	"evidence not needed: flagged: nothing flagged among its configuration's 3 untraced runs (none failed or timed out; no time_s beyond median 0.05 s + max(3 x 1.4826 x MAD 0 s, 1% of the median) = 0.0505 s)"

# ---- a traced run waits for its configuration's lost run -------------------
# the agent killed while the first stress-ng runs: that run is left for
# --resume (target lost), the session goes on, and at its end the traced
# stress-ng cannot be decided ("worst" of runs not all done): it waits,
# stored interrupted with the reason, and --resume does it after the lost run
cat >"$TMP/wait.json" <<'P'
{"name": "wait", "target": "local", "repetitions": 2, "seed": 4,
 "workloads": [
  {"type": "hackbench", "groups": 1, "loops": 50},
  {"type": "stress-ng", "stressor": "cpu", "threads": 1, "duration_s": 2,
   "evidence": {"trace_s": 1, "max_kb": 256, "when": "worst"}}]}
P
WDB=$TMP/wait.db
wsql() { sqlite3 -batch -noheader "$WDB" "$1" 2>/dev/null; }
$SL run "$TMP/wait.json" --db "$WDB" >"$TMP/wait.out" 2>"$TMP/wait.err" &
rpid=$!
for _ in $(seq 300); do
	[ "$(wsql "SELECT count(*) FROM run WHERE status = 'running' AND workload = 'stress-ng'")" = 1 ] && break
	sleep 0.05
done
sleep 0.3
apid=$(pgrep -P $rpid -x schedlab-agent)
[ -n "$apid" ] && kill -9 $apid
wait $rpid; rc=$?
equals "agent killed in the first stress-ng: the session ends with exit 1" "$rc" 1
LOST=$(wsql "SELECT id FROM run WHERE error LIKE 'failed: target lost%'")
equals "... that run left for --resume" "$(wsql "SELECT workload || ':' || status FROM run WHERE id = ${LOST:-0}")" "stress-ng:interrupted"
equals "... the traced run waits for it" \
	"$(wsql "SELECT status FROM run WHERE params LIKE '%\"evidence\":%'")" interrupted
contains_w() { wsql "$2" >"$TMP/sql.out"; contains "$1" "$TMP/sql.out" "$3"; }
contains_w "... with the reason" "SELECT error FROM run WHERE params LIKE '%\"evidence\":%'" \
	"not run: evidence: worst: waiting for 1 untraced run of its configuration still to do (run $LOST)"
contains "... said in the session output" "$TMP/wait.err" "evidence for stress-ng knobs={}: traced run waits: worst: waiting for 1 untraced run"
expect_exit 0 "--resume redoes the lost run, then the traced one" timeout 120 $SL run --resume last --db "$WDB"
equals "... every run stored once, all ok" "$(wsql "SELECT count(*) || ':' || sum(status = 'ok') FROM run")" "5:5"
equals "... the lost run before the traced one" \
	"$(wsql "SELECT group_concat(params LIKE '%evidence%') FROM (SELECT params FROM run WHERE workload = 'stress-ng' ORDER BY finished_at, id)")" "0,0,1"
WW=$(wsql "SELECT r.id FROM run r JOIN metric m ON m.run_id = r.id AND m.name = 'bogo_ops_per_s' WHERE r.workload = 'stress-ng' AND r.params NOT LIKE '%evidence%' ORDER BY m.value, r.id LIMIT 1")
equals "... decided then: linked to the stress-ng run with fewer bogo ops/s" \
	"$(wsql "SELECT evidence_of FROM run WHERE params LIKE '%\"evidence\":%'")" "$WW"
no_leftovers "no process left after the agent was killed"
equals "tracing state as before the trigger runs" "$(state)" "$before"

# ---- Ctrl-C during the traced run -------------------------------------------
cat >"$TMP/int.json" <<'P'
{"name": "int", "target": "local", "repetitions": 1, "seed": 5,
 "workloads": [{"type": "stress-ng", "stressor": "cpu", "threads": 1, "duration_s": 4,
                "evidence": {"trace_s": 2}}]}
P
$SL run "$TMP/int.json" --db "$TMP/int.db" >"$TMP/int.out" 2>"$TMP/int.err" &
rpid=$!
for _ in $(seq 200); do grep -q "traced run" "$TMP/int.err" && break; sleep 0.1; done
sleep 1
kill -INT $rpid
wait $rpid; rc=$?
equals "Ctrl-C in the traced run: exit 130" "$rc" 130
equals "... the traced run stored as interrupted" \
	"$(sqlite3 -batch -noheader "$TMP/int.db" "SELECT status FROM run WHERE params LIKE '%\"evidence\":%'")" interrupted
equals "... tracing state as before" "$(state)" "$before"

# ---- restore when the controller goes away ----------------------------------
req='{"id":1,"op":"exec","args":{"argv":["sleep","30"],"timeout_s":60,"trace":{"events":["sched_switch"]}}}'
( echo "$req"; sleep 1.5 ) | timeout 20 bin/schedlab-agent >"$TMP/agent.out" 2>&1
equals "agent cut off (EOF) in a traced run: tracing state restored" "$(state)" "$before"
mkfifo "$TMP/fifo"
bin/schedlab-agent <"$TMP/fifo" >"$TMP/agent2.out" 2>&1 &
apid=$!
exec 7>"$TMP/fifo"
echo "$req" >&7
for _ in $(seq 50); do ls $TFS/instances | grep -q "^schedlab-$apid$" && break; sleep 0.1; done
if ls $TFS/instances | grep -q "^schedlab-$apid$"; then ok "the agent's instance exists while it traces"; else not_ok "the agent's instance exists while it traces" "$(ls $TFS/instances)"; fi
child=$(pgrep -P $apid)
kill -9 $apid; wait $apid 2>/dev/null
exec 7>&-
[ -n "$child" ] && kill $child 2>/dev/null   # the workload it left (sleep 30)
echo '{"id":1,"op":"hello","args":{}}' | timeout 20 bin/schedlab-agent >"$TMP/agent3.out" 2>&1
equals "after SIGKILL the next agent removes the instance" "$(state)" "$before"
done_testing
