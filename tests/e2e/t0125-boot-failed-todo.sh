#!/usr/bin/env bash
# timeout: 120 (tests/run.sh ends it past this many seconds)
# End-to-end: a run skipped because its boot failed is still to do, and
# every reader says so alike (issue 52; db/runstate.c decides it once).
# An ssh target on a port where nothing listens (127.0.0.1:1) fails every
# boot at once (connection refused) without touching this machine: its runs
# are stored skipped with the skip reason boot-failed (not read from the
# error's words). Then `run --resume` redoes them ("2 runs to do", a new boot
# row each, no run added), and `schedlab sessions` and serve's JSON (the
# session's page and the list of sessions) count the same two as "todo",
# none as skipped. Before, sessions counted them skipped and serve not at
# all. docs/reliability.md: --resume redoes the runs whose boot failed.
. "$(dirname "$0")/lib.sh"
require_built bin/schedlab bin/schedlab-agent
require openssh-client:ssh curl:curl jq:jq sqlite3:sqlite3
. "$(dirname "$0")/serve-lib.sh"
SL=schedlab
DB=$TMP/b.db
cat >"$TMP/plan.json" <<'P'
{ "name": "bootfail", "target": "ssh://nobody@127.0.0.1:1", "seed": 1, "repetitions": 2,
  "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}] }
P
expect_exit 1 "a session whose boots fail: exit 1" schedlab run "$TMP/plan.json" --db "$DB"
contains "... the boot failed: connection refused" "$TMP/err" "boot failed: ssh 127.0.0.1: connection failed"
contains "... its runs left resumable" "$TMP/err" "leaving resumable 1 runs"
equals "both boots failed" "$(sql "SELECT group_concat(status) FROM boot")" "failed,failed"
equals "both runs skipped, the reason in its column" \
	"$(sql "SELECT group_concat(status || ':' || skip_reason, ' ') FROM run")" \
	"skipped:boot-failed skipped:boot-failed"
equals "the session is interrupted (resumable)" "$(sql "SELECT status FROM session")" interrupted

# schedlab sessions: to do, not skipped
expect_exit 0 "schedlab sessions --format json" schedlab sessions --db "$DB" --format json
equals "sessions: 2 to do, 0 skipped" \
	"$(jq -r '.columns as $c | .rows[0] | [range(0; $c | length) as $i | {($c[$i]): .[$i]}] | add | "\(.todo) \(.skipped) \(.ok) \(.failed)"' "$TMP/out")" \
	"2 0 0 0"

# serve: the session's page and the list of sessions
check "serve starts" start_serve "$DB"
equals "serve /session/1: 2 to do of 2" \
	"$(jget /session/1 s1.json '"\(.session.todo) \(.session.runs) \(.session.ok) \(.session.failed)"')" "2 2 0 0"
equals "serve /sessions: 2 to do" "$(jget /sessions ss.json '.recent[0].todo')" 2
equals "serve /session/1: each run's skip reason" \
	"$(jq -r '[.runs[].skip_reason] | join(" ")' "$TMP/s1.json")" "boot-failed boot-failed"
equals "serve /run/1 answers 200" "$(get /run/1 r1.html)" 200
contains "... and shows the skip reason" "$TMP/r1.html" "boot-failed"
stop_serve

# --resume redoes exactly those (the target still refuses: skipped again)
expect_exit 1 "run --resume 1" schedlab run --resume 1 --db "$DB"
contains "... finds the 2 runs to do" "$TMP/err" "session 1: 2 runs to do"
equals "... each on a new boot row, no run added" \
	"$(sql "SELECT (SELECT count(*) FROM boot) || ' ' || (SELECT count(*) FROM run)")" "4 2"
equals "... still to do for all three" \
	"$(schedlab sessions --db "$DB" --format json | jq -r '.rows[0][-1]')" 2
done_testing
