#!/usr/bin/env bash
# End-to-end: a lab (a plan with "targets") of two local targets. They are
# independent agents on the same machine, which is enough for the parallel
# mechanics: one session per target in one database with the same tag and
# lab marker, runs of the two sessions overlapping in time, progress lines
# prefixed per target, preflight of every member before anything is stored
# (one refusing member refuses the lab), exit codes combined (a member with
# failed runs makes the lab exit 1 while the other completes), SIGINT to the
# controller interrupts both members (exit 130, both sessions interrupted,
# nothing left running) and both resume (one as a plain session, the other
# with --resume lab:last), and SIGKILL of the controller stops the members.
# Prints TAP.
. "$(dirname "$0")/lib.sh"
hold_local_target   # its local sessions never wait inside the script (lib.sh)
SL=schedlab
require sqlite3:sqlite3 stress-ng:stress-ng rt-tests:hackbench
AGENT=$(command -v schedlab-agent)
# processes of this test only: the workloads and agents keep our session id
# (they get process groups of their own, not sessions), so other tests
# running on the machine at the same time do not count
SID=$(ps -o sid= -p $$ | tr -d ' ')
ours_left() {
	ps -eo pid=,sid=,comm= | awk -v sid="$SID" '$2 == sid && $3 ~ /^(cyclictest|hackbench|stress-ng|schedlab-agent|sl-pingpong|sl-jbb)$/ { printf "%s(%s) ", $3, $1 }'
}
no_leftovers_here() {
	local left=""
	for i in $(seq 50); do
		left=$(ours_left)
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -z "$left" ]; then ok "$1"; else not_ok "$1" "processes left: $left"; fi
}

# ---- a lab of two local targets ----------------------------------------------
DB=$TMP/lab.db
cat >"$TMP/lab.json" <<'EOF'
{"name": "lab2", "targets": [{"type": "local"}, "local"], "repetitions": 2, "seed": 3,
 "workloads": [{"type": "stress-ng", "stressor": "cpu", "threads": 1, "duration_s": 1},
               {"type": "hackbench", "groups": 1, "loops": 20}]}
EOF
expect_exit 0 "a lab of two local targets runs" $SL run "$TMP/lab.json" --db "$DB" --tag lab-1
cp "$TMP/err" "$TMP/lab.err"
equals "two sessions stored" "$(sql "SELECT count(*) FROM session")" 2
equals "both done, with the same tag" "$(sql "SELECT group_concat(status || '/' || tag) FROM session")" "done/lab-1,done/lab-1"
equals "every run of both ok" "$(sql "SELECT session_id || ':' || count(*) FROM run WHERE status = 'ok' GROUP BY session_id")" "1:4
2:4"
equals "one lab id, members 0 and 1" \
	"$(sql "SELECT count(DISTINCT json_extract(plan_json, '\$.lab.id')) || ' ' || group_concat(json_extract(plan_json, '\$.lab.target')) FROM session")" "1 0,1"
equals "each stored plan names one target, no list" \
	"$(sql "SELECT count(*) FROM session WHERE json_extract(plan_json, '\$.target.type') = 'local' AND json_extract(plan_json, '\$.targets') IS NULL")" 2
overlap=$(sql "SELECT count(*) FROM run a JOIN run b ON a.session_id = 1 AND b.session_id = 2
               WHERE a.started_at < b.finished_at AND b.started_at < a.finished_at")
if [ "${overlap:-0}" -ge 1 ]; then ok "runs of the two sessions overlap in time ($overlap pairs)"; else
	not_ok "runs of the two sessions overlap in time" "$(sql "SELECT session_id, started_at, finished_at FROM run ORDER BY started_at")"; fi
equals "the results view has rows of both sessions" "$(sql "SELECT count(DISTINCT session) FROM results")" 2
contains "progress: member 1 prefixed" "$TMP/lab.err" "[local#1] boot 1: running kernel"
contains "progress: member 2 prefixed" "$TMP/lab.err" "[local#2]   [1/4] "
contains "the lab is announced with its sessions" "$TMP/lab.err" "2 targets in parallel (local#1: session 1, local#2: session 2)"
unprefixed=$(grep -E '\[[0-9]+/[0-9]+\]|boot [0-9]+:|runs to do' "$TMP/lab.err" | grep -vcE '^\[local#[12]\] ')
equals "no progress line without its target prefix" "$unprefixed" 0
expect_exit 0 "sessions lists both" $SL sessions --db "$DB"
expect_exit 0 "compare works across the two members" $SL compare --db "$DB" session=1 session=2

# ---- refusals before anything is stored --------------------------------------
DB=$TMP/bad.db
cat >"$TMP/bad.json" <<EOF
{"name": "bad", "targets": ["local", {"type": "local", "agent": "$TMP/no-such-agent"}],
 "workloads": [{"type": "hackbench", "groups": 1, "loops": 20}]}
EOF
expect_exit 2 "preflight: one member cannot start its agent: the lab is refused" $SL run "$TMP/bad.json" --db "$DB"
contains "the refusal names the member" "$TMP/err" "targets[1]: agent $TMP/no-such-agent"
# nothing stored: not even a database file (it is made after the preflight)
stored() { if [ -e "$DB" ]; then sql "SELECT count(*) FROM session"; else echo "no file"; fi; }
equals "nothing stored" "$(stored)" "no file"
cat >"$TMP/both.json" <<'EOF'
{"target": "local", "targets": ["local"], "workloads": [{"type": "hackbench"}]}
EOF
expect_exit 2 "target and targets together are refused" $SL run "$TMP/both.json" --db "$DB"
contains "naming both" "$TMP/err" "target, targets: a plan names either one"
expect_exit 2 "--target cannot replace a lab's targets" $SL run "$TMP/lab.json" --db "$DB" --target local
contains "and says so" "$TMP/err" "cannot replace the 2 targets of a lab plan"
equals "still nothing stored" "$(stored)" "no file"

# ---- exit codes: a member with failed runs, the other completes ----------------
DB=$TMP/fail.db
cat >"$TMP/noagent-path.sh" <<EOF
#!/bin/sh
# the agent of a target where hackbench is not installed
PATH=/nonexistent exec "$AGENT" "\$@"
EOF
chmod +x "$TMP/noagent-path.sh"
cat >"$TMP/fail.json" <<EOF
{"name": "fail", "targets": ["local", {"type": "local", "agent": "$TMP/noagent-path.sh"}],
 "repetitions": 2, "workloads": [{"type": "hackbench", "groups": 1, "loops": 20}]}
EOF
expect_exit 1 "a member with failed runs: the lab exits 1" $SL run "$TMP/fail.json" --db "$DB"
equals "the good member's runs ok, the other's failed" \
	"$(sql "SELECT session_id || ':' || status || ':' || count(*) FROM run GROUP BY session_id, status ORDER BY session_id")" "1:ok:2
2:failed:2"
contains "the failure names the member and the cause" "$TMP/err" "[local#2]   [1/2] hackbench rep 1 knobs={}: FAILED"
contains "the lab line gives each member's exit code" "$TMP/err" "local#1: session 1 exit 0; local#2: session 2 exit 1"

# ---- SIGINT interrupts both members; each resumes ------------------------------
DB=$TMP/int.db
cat >"$TMP/long.json" <<'EOF'
{"name": "long", "targets": ["local", "local"], "repetitions": 3,
 "workloads": [{"type": "stress-ng", "stressor": "cpu", "threads": 1, "duration_s": 2},
               {"type": "hackbench", "groups": 1, "loops": 20}]}
EOF
$SL run "$TMP/long.json" --db "$DB" >"$TMP/int.out" 2>&1 &
pid=$!
CLEANUP_CMDS+=("kill -9 $pid")
both_running() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		[ "$(sql "SELECT count(DISTINCT session_id) FROM run WHERE status = 'running' AND workload = 'stress-ng'" 2>/dev/null || echo 0)" = 2 ] && return 0
		sleep 0.05
	done
	return 1
}
if both_running 30; then ok "both members are running a workload"; else not_ok "both members are running a workload" "$(cat "$TMP/int.out")"; fi
kill -INT $pid
wait $pid
equals "SIGINT: the lab exits 130" "$?" 130
equals "SIGINT: both sessions interrupted" "$(sql "SELECT group_concat(status) FROM session")" "interrupted,interrupted"
equals "SIGINT: one interrupted run in each" "$(sql "SELECT group_concat(n) FROM (SELECT count(*) n FROM run WHERE status = 'interrupted' GROUP BY session_id)")" "1,1"
contains "SIGINT: says how to resume the lab" "$TMP/int.out" "schedlab run --resume lab:"
no_leftovers_here "SIGINT: no workload or agent left"
if pgrep -f "schedlab run $TMP/long.json" >/dev/null; then not_ok "SIGINT: no member process left" "$(pgrep -af "schedlab run $TMP/long.json")"; else ok "SIGINT: no member process left"; fi
expect_exit 0 "resume member 1 as a plain session" $SL run --resume 1 --db "$DB" --quiet
equals "member 1 done, member 2 still interrupted" "$(sql "SELECT group_concat(status) FROM session")" "done,interrupted"
expect_exit 0 "run --resume lab:last finishes the rest of the lab" $SL run --resume lab:last --db "$DB"
contains "resume of the lab: the finished member is left alone" "$TMP/err" "[local#1] session 1 has nothing left to run"
contains "resume of the lab: the other runs, prefixed" "$TMP/err" "[local#2] resuming session 2"
equals "both sessions done" "$(sql "SELECT group_concat(status) FROM session")" "done,done"
equals "every planned run ok exactly once" "$(sql "SELECT group_concat(n) FROM (SELECT count(*) n FROM run WHERE status = 'ok' GROUP BY session_id)")" "6,6"
expect_exit 2 "--resume lab: of a session that is not in a lab" $SL run --resume lab:99 --db "$DB"

# ---- SIGKILL of the controller stops the members ------------------------------
DB=$TMP/kill.db
$SL run "$TMP/long.json" --db "$DB" >"$TMP/kill.out" 2>&1 &
pid=$!
CLEANUP_CMDS+=("kill -9 $pid")
both_running 30
kill -9 $pid
wait $pid 2>/dev/null
for i in $(seq 100); do
	pgrep -f "schedlab run $TMP/long.json" >/dev/null || [ -n "$(ours_left)" ] || break
	sleep 0.1
done
if pgrep -f "schedlab run $TMP/long.json" >/dev/null; then not_ok "SIGKILL: the members stop" "$(pgrep -af "schedlab run $TMP/long.json")"; else ok "SIGKILL: the members stop"; fi
no_leftovers_here "SIGKILL: no workload or agent left"
equals "SIGKILL: both sessions interrupted, resumable" "$(sql "SELECT group_concat(status) FROM session")" "interrupted,interrupted"
expect_exit 0 "SIGKILL: run --resume lab:1 finishes both" $SL run --resume lab:1 --db "$DB" --quiet
equals "SIGKILL: both done after resume" "$(sql "SELECT group_concat(status) FROM session")" "done,done"
done_testing
