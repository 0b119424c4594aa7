#!/usr/bin/env bash
# timeout: 300
# End-to-end: the pgbench workload on the local target with Debian's
# PostgreSQL 15: sl-pgbench makes a throw-away server in the run directory
# (as nobody: the agent is root here), runs pgbench select-only and a custom
# script, and the runs store tps, transactions, failed transactions and the
# latency average and percentiles from the transaction log's histogram
# (with units and directions; the histogram's count is pgbench's own
# transaction count: every transaction was logged); pgbench's report is
# kept as the raw output, the server's log as a file. A server that does
# not start (shared_buffers below PostgreSQL's minimum) is a failed run
# whose error is PostgreSQL's own FATAL line. Then the controller is killed
# with SIGKILL while pgbench runs: nothing of ours is left (no postgres,
# pgbench or sl-pgbench process, the server's directory and its socket are
# gone, its System V segment too), and `run --resume last` redoes the run.
# No speed is asserted.
. "$(dirname "$0")/lib.sh"
require postgresql-15:/usr/lib/postgresql/15/bin/postgres \
	postgresql-15:/usr/lib/postgresql/15/bin/pgbench sqlite3:sqlite3
require_built bin/schedlab bin/schedlab-agent bin/sl-pgbench
LEFTOVER_NAMES+=(postgres pgbench sl-pgbench initdb)
DB=$TMP/t.db
# in_dir DIR: the processes working in DIR or below (a backend renames
# itself over its environment, so SCHEDLAB_TEST_MARK no longer finds it;
# its working directory is the server's data directory)
in_dir() {
	local p c
	for p in /proc/[0-9]*; do
		c=$(readlink "$p/cwd" 2>/dev/null) || continue
		case "$c" in "$1"|"$1"/*) echo "${p#/proc/} $c" ;; esac
	done
}
# the server directories of the runs in DB, from their postgres.log
pg_dirs() {
	sql "SELECT json_extract(files, '\$.\"postgres.log\"') FROM run" |
		sed -n 's|.*listening on Unix socket "\(/tmp/schedlab-run-[^"]*\)/.s.PGSQL.5432".*|\1|p'
}

cat >"$TMP/plan.json" <<'P'
{ "name": "e2e-pgbench", "seed": 3, "target": "local",
  "workloads": [
    {"type": "pgbench", "mode": "select-only", "clients": 2, "threads": 2, "duration_s": 3},
    {"type": "pgbench", "mode": "script", "clients": 2, "duration_s": 2,
     "script": ["\\set aid random(1, 100000 * :scale)",
                "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"]}
  ] }
P
expect_exit 0 "schedlab help workloads" schedlab help workloads
contains "... lists pgbench, its package and its targets" "$TMP/out" "pgbench: PostgreSQL's pgbench against a throw-away server"
contains "... (every target)" "$TMP/out" "on every target: qemu and lava guests and the ssh bundle carry PostgreSQL"
if sed -n '/^pgbench:/,/^$/p' "$TMP/out" | grep -q "^  targets: "; then
	not_ok "... pgbench not limited to some targets any more"
else
	ok "... pgbench not limited to some targets any more"
fi
contains "... and its parameters" "$TMP/out" "shared_buffers string"
expect_exit 0 "the example plan is valid" schedlab plan examples/pgbench.json
expect_exit 0 "plan check accepts the pgbench workloads" schedlab plan "$TMP/plan.json"
expect_exit 0 "run pgbench select-only and a custom script on the local target" \
	schedlab run "$TMP/plan.json" --db "$DB" --tag pg
equals "2 runs ok" "$(sql "SELECT count(*) FROM run WHERE status = 'ok'")" 2
equals "metrics with their units and directions" \
	"$(sql "SELECT group_concat(metric||':'||unit||':'||better, ' ') FROM (SELECT DISTINCT metric, unit, better FROM results WHERE workload = 'pgbench' ORDER BY metric)")" \
	"failed_transactions:count:lower init_s:s:none lat_avg_us:us:lower lat_max_us:us:lower lat_p50_us:us:lower lat_p90_us:us:lower lat_p999_us:us:lower lat_p99_us:us:lower tps:tps:higher transactions:count:higher"
equals "tps and percentiles stored for both runs, positive and ordered" \
	"$(sql "SELECT count(*) FROM (SELECT run_id,
		max(CASE WHEN metric='tps' THEN value END) t,
		max(CASE WHEN metric='lat_p50_us' THEN value END) p50,
		max(CASE WHEN metric='lat_p99_us' THEN value END) p99,
		max(CASE WHEN metric='lat_max_us' THEN value END) mx
		FROM results WHERE workload = 'pgbench' GROUP BY run_id)
		WHERE t > 0 AND p50 > 0 AND p50 <= p99 AND p99 <= mx")" 2
equals "no failed transactions" \
	"$(sql "SELECT sum(value) FROM results WHERE metric = 'failed_transactions'")" 0.0
equals "the latency histogram holds every transaction pgbench counted" \
	"$(sql "SELECT count(*) FROM histogram h JOIN results m ON m.run_id = h.run_id AND m.metric = 'transactions'
		WHERE h.name = 'latency_us' AND json_extract(h.data, '\$.total') = CAST(m.value AS INTEGER)")" 2
equals "pgbench's report is the raw output" \
	"$(sql "SELECT count(*) FROM run WHERE stdout LIKE '%transaction type: %tps = %(without initial connection time)%'")" 2
equals "... select-only and the custom script, as pgbench says" \
	"$(sql "SELECT group_concat(t, ' ') FROM (SELECT CASE WHEN stdout LIKE '%<builtin: select only>%' THEN 'S' WHEN stdout LIKE '%transaction type: /tmp/schedlab-run-%/pg/script.sql%' THEN 'f' END t FROM run ORDER BY seq)")" "S f"
equals "the server's log is kept, with its Unix socket only" \
	"$(sql "SELECT count(*) FROM run WHERE json_extract(files, '\$.\"postgres.log\"') LIKE '%listening on Unix socket \"/tmp/schedlab-run-%/pg/.s.PGSQL.5432\"%'
		AND json_extract(files, '\$.\"postgres.log\"') NOT LIKE '%listening on IPv%'")" 2
equals "the server ran as nobody" \
	"$(sql "SELECT count(*) FROM run WHERE json_extract(json_extract(files, '\$.\"sl-pgbench.json\"'), '\$.user') = 'nobody'")" 2
no_leftovers "no postgres, pgbench or agent process left"
dirs=$(pg_dirs)
equals "... the two servers' directories found in their logs" "$(wc -w <<<"$dirs")" 2
equals "... no process works in them (backends included), and they are gone" \
	"$(for d in $dirs; do in_dir "$d"; [ -e "$d" ] && echo "$d exists"; done)" ""

# a server that does not start: PostgreSQL's own message is the run's error
cat >"$TMP/bad.json" <<'P'
{ "name": "e2e-pgbench-bad", "target": "local",
  "workloads": [ {"type": "pgbench", "duration_s": 2, "shared_buffers": "64kB"} ] }
P
DB2=$TMP/bad.db
expect_exit 1 "shared_buffers below PostgreSQL's minimum: the run fails" \
	schedlab run "$TMP/bad.json" --db "$DB2"
equals "... its error is the server's FATAL line" \
	"$(DB=$DB2 sql "SELECT error LIKE '%the PostgreSQL server did not start: FATAL:  % is outside the valid range for parameter \"shared_buffers\"%' FROM run WHERE status = 'failed'")" 1
no_leftovers "... and leaves no process"

# SIGKILL of the controller while pgbench runs, then --resume
cat >"$TMP/kill.json" <<'P'
{ "name": "e2e-pgbench-kill", "target": "local",
  "workloads": [ {"type": "pgbench", "mode": "select-only", "duration_s": 8} ] }
P
DB3=$TMP/kill.db
schedlab run "$TMP/kill.json" --db "$DB3" --quiet >"$TMP/kill.out" 2>&1 &
pid=$!
CLEANUP_CMDS+=("kill -9 $pid")
bench="" end=$((SECONDS + 120))
while [ $SECONDS -lt $end ] && [ -z "$bench" ]; do
	bench=$(ours ' -T 8 ' | grep -m1 '/pgbench ' || true)
	sleep 0.2
done
pm=$(ours '/postgres -D ' | head -1)
datadir=$(sed -n 's/.* -D \([^ ]*\) .*/\1/p' <<<"$pm")
pgdir=${datadir%/data}
shmid=$(sed -n 7p "$datadir/postmaster.pid" 2>/dev/null | awk '{print $2}')
if [ -n "$bench" ] && [ -d "$datadir" ] && [ -S "$pgdir/.s.PGSQL.5432" ]; then
	ok "pgbench under way against the server in $pgdir"
else
	not_ok "pgbench under way" "bench='$bench' pm='$pm'" "$(cat "$TMP/kill.out")"
fi
sleep 1
kill -9 $pid
wait $pid 2>/dev/null
for i in $(seq 100); do
	any_left || break
	sleep 0.1
done
no_leftovers "SIGKILL of the controller leaves no postgres, pgbench, sl-pgbench or agent"
equals "... no process (backends included) works in the server's directory" "$(in_dir "$pgdir")" ""
check "... the server's directory is gone" test -n "$pgdir" -a ! -e "$pgdir"
check "... nothing listens on its socket" bash -c "! grep -qF -- '$pgdir/.s.PGSQL' /proc/net/unix"
check "... and its System V segment is gone" \
	bash -c "test -n '$shmid' && ! ipcs -m | awk '{print \$2}' | grep -qx -- '$shmid'"
equals "the killed run is left running" "$(DB=$DB3 sql "SELECT status FROM run")" running
expect_exit 0 "run --resume last redoes the run" schedlab run --resume last --db "$DB3" --quiet
equals "... which is ok now, with tps and p99" \
	"$(DB=$DB3 sql "SELECT r.status || ':' || count(m.metric) FROM run r JOIN results m ON m.run_id = r.id
		WHERE m.metric IN ('tps', 'lat_p99_us') AND m.value > 0")" "ok:2"
no_leftovers "... and leaves nothing running"
done_testing
