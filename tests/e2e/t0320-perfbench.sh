#!/usr/bin/env bash
# timeout: 120
# End-to-end: perf bench sched messaging and pipe (Debian's linux-perf) as
# the perf-messaging and perf-pipe workloads on the local target with the
# real binary: every mode runs, the metrics are stored with their units and
# directions, perf's own numbers agree with each other (usecs/op x loops is
# the total time, ops/sec its inverse: relations, never speeds), the raw
# output, argv and the program run are kept; then a perf missing from PATH
# names the package, and a perf whose output is not perf's default format
# fails the run with the line the parser expected. No speed is asserted.
. "$(dirname "$0")/lib.sh"
hold_local_target   # its local sessions never wait inside the script (lib.sh)
require linux-perf:perf python3:python3 sqlite3:sqlite3
require_built bin/schedlab bin/schedlab-agent
LEFTOVER_NAMES+=(perf)
DB=$TMP/t.db

cat >"$TMP/plan.json" <<'P'
{ "name": "e2e-perfbench", "seed": 5, "target": "local",
  "workloads": [
    {"type": "perf-messaging", "groups": 1, "loops": 50},
    {"type": "perf-messaging", "groups": 1, "loops": 50, "mode": "thread", "transport": "pipe"},
    {"type": "perf-pipe", "loops": 20000},
    {"type": "perf-pipe", "loops": 20000, "mode": "thread"}
  ] }
P
expect_exit 0 "plan check accepts both workloads" schedlab plan "$TMP/plan.json"
expect_exit 0 "run perf-messaging and perf-pipe on the local target" \
	schedlab run "$TMP/plan.json" --db "$DB" --tag perf
equals "4 runs ok" "$(sql "SELECT count(*) FROM run WHERE status = 'ok'")" 4
equals "perf-messaging stores time_s (s, lower) per run" \
	"$(sql "SELECT group_concat(metric||':'||unit||':'||better, ' ') FROM (SELECT DISTINCT metric, unit, better FROM results WHERE workload = 'perf-messaging' ORDER BY metric)")" \
	"time_s:s:lower"
equals "perf-pipe stores ops_per_s, time_s, usecs_per_op" \
	"$(sql "SELECT group_concat(metric||':'||unit||':'||better, ' ') FROM (SELECT DISTINCT metric, unit, better FROM results WHERE workload = 'perf-pipe' ORDER BY metric)")" \
	"ops_per_s:ops/s:higher time_s:s:lower usecs_per_op:us:lower"
equals "one value of each metric per run" \
	"$(sql "SELECT count(*) FROM results WHERE tag = 'perf'")" 8
# perf prints time as %lu.%03lu of the same microseconds it divides by the
# loops for usecs/op, and ops/sec as the integer part of loops per second
equals "perf-pipe: usecs_per_op x loops is time_s, ops_per_s is its inverse" \
	"$(sql "SELECT count(*) FROM (SELECT r.id,
		max(CASE WHEN m.metric='time_s' THEN m.value END) AS t,
		max(CASE WHEN m.metric='usecs_per_op' THEN m.value END) AS u,
		max(CASE WHEN m.metric='ops_per_s' THEN m.value END) AS o
		FROM run r JOIN results m ON m.run_id = r.id WHERE r.workload = 'perf-pipe' GROUP BY r.id)
		WHERE abs(t - u * 20000 / 1e6) <= 0.0011 AND abs(o - 1e6 / u) <= 1 + 1e-6 * o")" 2
equals "argv as built, perf's options from the parameters" \
	"$(sql "SELECT group_concat(argv, ' ') FROM (SELECT argv FROM run ORDER BY argv)")" \
	'["perf","bench","sched","messaging","-g","1","-l","50","-t","-p"] ["perf","bench","sched","messaging","-g","1","-l","50"] ["perf","bench","sched","pipe","-l","20000","-T"] ["perf","bench","sched","pipe","-l","20000"]'
equals "raw output kept with each run" \
	"$(sql "SELECT count(*) FROM run WHERE stdout LIKE '# Running ''sched/%'' benchmark:%Total time: %[sec]%'")" 4
equals "... threads and processes as perf says" \
	"$(sql "SELECT count(*) FROM run WHERE (params LIKE '%\"thread\"%') = (stdout LIKE '%threads%')")" 4
equals "the program run is the real perf binary" \
	"$(sql "SELECT DISTINCT json_extract(json_extract(files, '\$.\"schedlab-tools.json\"'), '\$.workload.path') FROM run")" \
	"$(readlink -f "$(command -v perf)")"
# the qemu target copies a workload's tool with the libraries ldd lists: it
# must be the program itself, not linux-base's wrapper script
equals "... an ELF program, not a wrapper script (what an initramfs gets)" \
	"$(head -c 4 "$(command -v perf)" | od -An -c | tr -d ' ')" '177ELF'
no_leftovers "no perf or agent process left"

# a target without perf: the run fails naming the package
cat >"$TMP/one.json" <<'P'
{ "name": "e2e-perfbench-one", "target": "local",
  "workloads": [ {"type": "perf-pipe", "loops": 1000} ] }
P
DB2=$TMP/noperf.db
expect_exit 1 "a target without perf: the run fails" \
	env PATH="$PWD/bin" "$PWD/bin/schedlab" run "$TMP/one.json" --db "$DB2"
equals "... its error names the package" \
	"$(DB=$DB2 sql "SELECT error LIKE '%perf: command not found in PATH%install the Debian package linux-perf%' FROM run")" 1

# a perf whose output is not perf's default format (as `-f simple` prints)
mkdir -p "$TMP/fakeperf"
printf '#!/bin/sh\necho 0.123\n' >"$TMP/fakeperf/perf"
chmod +x "$TMP/fakeperf/perf"
DB3=$TMP/fake.db
PATH="$TMP/fakeperf:$PATH" expect_exit 1 "output not in perf's format: the run fails" \
	schedlab run "$TMP/one.json" --db "$DB3"
equals "... its error names the line expected" \
	"$(DB=$DB3 sql "SELECT error LIKE '%perf bench sched pipe: no \"# Running ''sched/pipe'' benchmark:\" line%' FROM run")" 1
equals "... and the raw output is kept" "$(DB=$DB3 sql "SELECT stdout FROM run")" "0.123"
done_testing
