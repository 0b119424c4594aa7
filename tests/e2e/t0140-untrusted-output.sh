#!/usr/bin/env bash
# timeout: 300
# A tool's output is untrusted bytes (docs/reliability.md): a hackbench
# that prints 6 MB of multi-byte characters, invalid UTF-8 and then its
# Time: line still gives a parsed run with its raw output kept (the agent
# dropped the whole stdout when it was not valid UTF-8, and its tail cut
# could split a character). A tool that leaves a setsid daemon holding its
# stdout does not hold the agent. A stand-in hackbench on PATH plays the tool.
. "$(dirname "$0")/lib.sh"
hold_local_target   # its local sessions never wait inside the script (lib.sh)
require sqlite3:sqlite3 coreutils:head
require_built bin/schedlab bin/schedlab-agent
DB=$TMP/u.db
mkdir -p "$TMP/path"
for t in sh bash head yes printf cat tr; do ln -sf "$(command -v $t)" "$TMP/path/$t"; done
cat >"$TMP/path/hackbench" <<'H'
#!/bin/bash
# one byte so that the 4 MiB tail cut lands inside a 2-byte character
printf 'x'
yes 'é' | head -c 6000000
printf 'bad bytes: \xff\xfe \xc3 \xe2\x82 end\n'
printf 'Running in process mode with 1 groups using 40 file descriptors each (== 40 tasks)\n'
printf 'Each sender will pass 10 messages of 100 bytes\n'
printf 'Time: 1.000\n'
H
chmod +x "$TMP/path/hackbench"
cat >"$TMP/plan.json" <<'P'
{ "name": "bytes", "target": "local", "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}] }
P
PATH="$TMP/path" SCHEDLAB_AGENT="$PWD/bin/schedlab-agent" expect_exit 0 \
	"a tool printing invalid UTF-8 after 6 MB of multi-byte text: the run is ok" \
	"$PWD/bin/schedlab" run "$TMP/plan.json" --db "$DB" --quiet
equals "its Time: line was parsed" "$(sql "SELECT value FROM results WHERE metric = 'time_s'")" 1.0
equals "the raw output is kept (its tail, about 4 MiB)" \
	"$(sql "SELECT length(CAST(stdout AS BLOB)) BETWEEN 4000000 AND 4194304 + 64 FROM run")" 1
equals "... ending with what the tool printed last" \
	"$(sql "SELECT stdout LIKE '%Time: 1.000%' FROM run")" 1
equals "... with each invalid sequence shown as U+FFFD" \
	"$(sql "SELECT instr(stdout, 'bad bytes: ' || char(65533) || char(65533) || ' ' || char(65533) || ' ' || char(65533) || ' end') > 0 FROM run")" 1
equals "... and no character split at the cut (valid UTF-8 throughout)" \
	"$(sql "SELECT substr(stdout, 1, 1) IN ('é', char(10)) FROM run")" 1

# progress lines print numbers as the tables do (12346, not 1.235e+04)
cat >"$TMP/path/hackbench" <<'H'
#!/bin/bash
printf 'Time: 12345.678\n'
H
PATH="$TMP/path" SCHEDLAB_AGENT="$PWD/bin/schedlab-agent" expect_exit 0 \
	"a run whose value is above 1e4" "$PWD/bin/schedlab" run "$TMP/plan.json" --db "$TMP/n.db"
contains "... its progress line prints it as a table would" "$TMP/err" "time_s=12346"

# a tool that leaves a daemon holding its stdout (setsid: out of the process
# group): the agent stopped reading only when the daemon exited (8 s, past
# the run's timeout); now it stops within about a second, kills it and says so
cat >"$TMP/path/hackbench" <<'H'
#!/bin/bash
setsid sleep 30.4141 &   # a duration no other process has
sleep 0.5   # until the daemon has left the process group (else it dies with it)
printf 'Time: 2.000\n'
H
for t in setsid sleep; do ln -sf "$(command -v $t)" "$TMP/path/$t"; done
start=$SECONDS
PATH="$TMP/path" SCHEDLAB_AGENT="$PWD/bin/schedlab-agent" expect_exit 0 \
	"a tool that leaves a setsid daemon on its stdout: the run is ok" \
	"$PWD/bin/schedlab" run "$TMP/plan.json" --db "$DB" --quiet
took=$((SECONDS - start))
[ $took -lt 10 ] && ok "... and the agent did not wait for the daemon ($took s)" ||
	not_ok "the agent did not wait for the daemon" "took $took s"
equals "... the daemon was killed" "$(ours '^sleep 30.4141$' | wc -l)" 0
equals "... and the run says so" \
	"$(sql "SELECT notes LIKE 'the tool left processes running%sleep%' AND error IS NULL FROM run WHERE session_id = (SELECT max(id) FROM session)")" 1
done_testing
