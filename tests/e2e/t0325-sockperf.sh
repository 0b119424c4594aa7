#!/usr/bin/env bash
# timeout: 180
# End-to-end: sockperf (Debian's sockperf) as the sockperf workload on the
# local target, server and client started together by bin/sl-netpair:
# ping-pong over UDP and TCP (one with the full log and its histogram) and
# under-load run, every metric stored with its unit and direction, the
# percentiles in order and the histogram holding every observation
# (relations, never speeds), raw output and the server's log kept, nothing
# left running or listening afterwards, also after SIGKILL of the
# controller mid-run; a target without sockperf names the package, a
# server that dies or never gets ready is named with its last line.
. "$(dirname "$0")/lib.sh"
require sockperf:sockperf python3:python3 sqlite3:sqlite3
require_built bin/schedlab bin/schedlab-agent bin/sl-netpair
LEFTOVER_NAMES+=(sockperf sl-netpair)
DB=$TMP/t.db

# the ports of this script's sockperf servers still listening (TCP) or
# bound (UDP) on 127.0.0.1, from the kernel's tables, for the ports named
ports_open() {
	local p hex
	for p in "$@"; do
		hex=$(printf '%04X' "$p")
		if grep -qE "^ *[0-9]+: 0100007F:$hex 00000000:0000 (0A|07) " /proc/net/tcp /proc/net/udp 2>/dev/null; then
			echo "$p"
		fi
	done
}

cat >"$TMP/plan.json" <<'P'
{ "name": "e2e-sockperf", "seed": 3, "target": "local",
  "workloads": [
    {"type": "sockperf", "duration_s": 2},
    {"type": "sockperf", "duration_s": 2, "protocol": "tcp", "msg_size": 256, "full_log": true},
    {"type": "sockperf", "duration_s": 2, "mode": "under-load", "mps": 2000, "reply_every": 10}
  ] }
P
expect_exit 0 "plan check accepts the three sockperf workloads" schedlab plan "$TMP/plan.json"
expect_exit 0 "schedlab help workloads lists sockperf, run through sl-netpair" schedlab help workloads
contains "... with its tools" "$TMP/out" "tool: sl-netpair, running sockperf (Debian package sockperf)"
expect_exit 0 "run ping-pong (UDP, TCP) and under-load on the local target" \
	schedlab run "$TMP/plan.json" --db "$DB" --tag sp
equals "3 runs ok" "$(sql "SELECT count(*) FROM run WHERE status = 'ok'")" 3
equals "metrics with units and directions" \
	"$(sql "SELECT group_concat(metric||':'||unit||':'||better, ' ') FROM (SELECT DISTINCT metric, unit, better FROM results WHERE workload = 'sockperf' ORDER BY metric)")" \
	"dropped:count:lower msgs_per_s:msgs/s:higher observations:count:none rtt_avg_us:us:lower rtt_max_us:us:lower rtt_min_us:us:lower rtt_p50_us:us:lower rtt_p90_us:us:lower rtt_p9999_us:us:lower rtt_p999_us:us:lower rtt_p99_us:us:lower rtt_stddev_us:us:lower"
pct_sql="SELECT count(*) FROM (SELECT run_id,
	max(CASE WHEN metric='rtt_min_us' THEN value END) AS mn,
	max(CASE WHEN metric='rtt_p50_us' THEN value END) AS p50,
	max(CASE WHEN metric='rtt_p90_us' THEN value END) AS p90,
	max(CASE WHEN metric='rtt_p99_us' THEN value END) AS p99,
	max(CASE WHEN metric='rtt_p999_us' THEN value END) AS p999,
	max(CASE WHEN metric='rtt_p9999_us' THEN value END) AS p9999,
	max(CASE WHEN metric='rtt_max_us' THEN value END) AS mx,
	max(CASE WHEN metric='observations' THEN value END) AS n
	FROM results GROUP BY run_id)
	WHERE mn > 0 AND mn <= p50 AND p50 <= p90 AND p90 <= p99 AND p99 <= p999
	AND p999 <= p9999 AND p9999 <= mx AND n >= 1"
equals "every run: min <= p50 <= p90 <= p99 <= p99.9 <= p99.99 <= max, observations > 0" \
	"$(sql "$pct_sql")" 3
equals "under-load sends no faster than the mps asked (2000)" \
	"$(sql "SELECT count(*) FROM results WHERE metric = 'msgs_per_s' AND json_extract(params, '\$.mode') = 'under-load' AND value <= 2000 * 1.02")" 1
equals "the full log's histogram rtt_ns holds every observation" \
	"$(sql "SELECT json_extract(h.data, '\$.total') = m.value FROM histogram h JOIN results m ON m.run_id = h.run_id AND m.metric = 'observations' WHERE h.name = 'rtt_ns'")" 1
equals "... only the run that asked for the log has one" "$(sql "SELECT count(*) FROM histogram")" 1
equals "argv as built: full round trips, the port filled in by sl-netpair" \
	"$(sql "SELECT argv FROM run WHERE json_extract(params, '\$.protocol') = 'tcp'")" \
	'["sl-netpair","--proto","tcp","--ready","PORT =","--log","sockperf-server.log","--","sockperf","server","-i","127.0.0.1","-p","{port}","--tcp","--","sockperf","ping-pong","-i","127.0.0.1","-p","{port}","--tcp","-t","2","-m","256","--full-rtt","--full-log","sockperf-full.csv"]'
equals "raw output kept: sockperf's summary with each run" \
	"$(sql "SELECT count(*) FROM run WHERE stdout LIKE '%Summary: Round trip is % usec%'")" 3
equals "... and the server's log" \
	"$(sql "SELECT count(*) FROM run WHERE json_extract(files, '\$.\"sockperf-server.log\"') LIKE '%[SERVER] listen on:%'")" 3
ports=$(sql "SELECT stderr FROM run" | sed -n 's/.*ready on 127.0.0.1 port \([0-9]*\).*/\1/p' | tr '\n' ' ')
equals "sl-netpair said each server's port" "$(echo $ports | wc -w)" 3
equals "no port of ours left open" "$(ports_open $ports)" ""
no_leftovers "no sockperf, sl-netpair or agent left after the runs"

# sl-netpair alone: a server that never prints its ready text is stopped
# after the wait and named; bad usage exits 2
expect_exit 1 "sl-netpair: a server that is never ready fails" \
	sl-netpair --ready NEVER -t 0.5 --log "$TMP/srv.log" -- sleep 60 -- true
contains "... named with the text waited for" "$TMP/err" "the server (sleep) did not print \"NEVER\" within 0.5 s"
equals "... and the server is gone" "$(ours_named sleep)" ""
expect_exit 2 "sl-netpair: no client argv is bad usage" sl-netpair --ready x -- sleep 1 --
expect_exit 2 "sl-netpair: no --ready is bad usage" sl-netpair -- sleep 1 -- true

# through a workload bundle (the ssh target's, harness/targets/bundle.h:
# made here by hand with ldd) sl-netpair runs sockperf as the agent runs
# its tools, on a PATH without it: the bundled loader and libraries
B=$TMP/bundle
mkdir -p "$B/bin" "$B/lib" "$TMP/nosp"
cp "$(command -v sockperf)" "$B/bin/sockperf"
ldd "$(command -v sockperf)" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' |
	while read -r f; do cp "$f" "$B/lib/"; done
ld=$(cd "$B/lib" && ls ld-linux* | head -n 1)
printf '{"version": 1, "loader": "lib/%s", "argv0": true, "tools": {"sockperf": "dynamic"}}\n' "$ld" >"$B/bundle.json"
expect_exit 0 "sl-netpair runs a bundled sockperf through the bundle's loader" \
	env SCHEDLAB_BUNDLE="$B" PATH="$TMP/nosp" "$PWD/bin/sl-netpair" --proto udp --ready "PORT =" --log "$TMP/bsrv.log" -- \
	sockperf server -i 127.0.0.1 -p "{port}" -- sockperf ping-pong -i 127.0.0.1 -p "{port}" -t 1 --full-rtt
contains "... the client ran" "$TMP/out" "Summary: Round trip is"
contains "... and the server" "$TMP/bsrv.log" "[SERVER] listen on:"

# a target without sockperf: the run fails naming the package
cat >"$TMP/one.json" <<'P'
{ "name": "e2e-sockperf-one", "target": "local",
  "workloads": [ {"type": "sockperf", "duration_s": 20} ] }
P
DB2=$TMP/nosp.db
mkdir -p "$TMP/onlybin"
ln -s "$PWD/bin/sl-netpair" "$PWD/bin/schedlab-agent" "$TMP/onlybin/"
expect_exit 1 "a target without sockperf: the run fails" \
	env PATH="$TMP/onlybin" "$PWD/bin/schedlab" run "$TMP/one.json" --db "$DB2"
equals "... its error names the package" \
	"$(DB=$DB2 sql "SELECT error LIKE '%cannot run sockperf%the Debian package sockperf%' OR error LIKE '%the Debian package sockperf%' FROM run")" 1

# a server that dies at once: the run fails with its last line
mkdir -p "$TMP/fake"
cat >"$TMP/fake/sockperf" <<'S'
#!/bin/sh
if [ "$1" = server ]; then echo "sockperf: ERROR: the fake server gives up"; exit 3; fi
exit 0
S
chmod +x "$TMP/fake/sockperf"
DB3=$TMP/fake.db
PATH="$TMP/fake:$PATH" expect_exit 1 "a server that dies before it is ready: the run fails" \
	schedlab run "$TMP/one.json" --db "$DB3"
equals "... naming its exit status and last line" \
	"$(DB=$DB3 sql "SELECT error LIKE '%the server (sockperf) exited with status 3 before it was ready; its last line: sockperf: ERROR: the fake server gives up%' FROM run")" 1

# SIGKILL of the controller mid-run: the agent stops sl-netpair's group,
# server and client included, and the port is let go
DB4=$TMP/kill.db
schedlab run "$TMP/one.json" --db "$DB4" --quiet >"$TMP/kill.out" 2>&1 &
pid=$!
CLEANUP_CMDS+=("kill -9 $pid")
for i in $(seq 300); do
	[ -n "$(ours_named sockperf)" ] && [ "$(ours_named sockperf | wc -l)" -ge 2 ] && break
	sleep 0.1
done
check "server and client under way" test "$(ours_named sockperf | wc -l)" -ge 2
kport=$(for p in $(ours_named sockperf); do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done |
	sed -n 's/.*sockperf server .*-p \([0-9]*\).*/\1/p' | head -n 1)
kill -9 $pid
wait $pid 2>/dev/null
for i in $(seq 100); do
	any_left || break
	sleep 0.1
done
no_leftovers "SIGKILL of the controller leaves no sockperf, sl-netpair or agent"
equals "... and its port ($kport) is not open" "$(ports_open $kport)" ""
done_testing
