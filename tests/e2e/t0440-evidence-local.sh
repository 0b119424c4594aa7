#!/usr/bin/env bash
# End-to-end evidence traces on the local target (needs root and tracefs):
# a plan whose hackbench carries "evidence" gets one extra traced run per
# configuration, stored and marked ("evidence" in its params, a note), with
# the raw trace and its summary in its files and trace_* metrics; the
# machine's tracing state is what it was before (no schedlab instance left,
# the global files unchanged), also after the agent is cut off (EOF) or
# killed with SIGKILL in the middle of a traced run; compare and the HTML
# report never pool the traced run with untraced ones and say so; plan
# errors name the key. Run under the local lock.
# timeout: 180
. "$(dirname "$0")/lib.sh"
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
plan '{"when":"worst"}'
expect_exit 2 "when other than extra_run refused" $SL plan "$TMP/bad.json"
contains "... with the reason" "$TMP/err" "cannot be taken in hindsight"
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
contains_sql "the traced run says so" "SELECT error FROM run WHERE id = $RID" "note: traced run (evidence, 5 s window)"
sql "SELECT json_extract(files, '\$.\"schedlab-trace.txt\"') FROM run WHERE id = $RID" >"$TMP/trace.txt"
contains "the raw trace is kept: sched_switch" "$TMP/trace.txt" ": sched_switch: prev_comm="
contains "... sched_waking" "$TMP/trace.txt" ": sched_waking: comm="
contains "... hackbench in it" "$TMP/trace.txt" "hackbench"
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
