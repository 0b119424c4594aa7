#!/usr/bin/env bash
# schedlab serve at lab scale (a benchmark, not a test; docs/serve.md): the
# wall time of each page, warm, on a store of MACHINES machines x NIGHTS
# nightly sessions each.
#
# The store is bench/analysis-scale.sh's with a machine dimension: the
# schema from a tiny real `schedlab run`, then python3's sqlite3 bulk-inserts
# per night and machine one session (plan "nightly", tag nightly-YYYY-MM)
# with 2 boots (preempt none, full) x 25 runs (5 workloads x 5 parameter
# variants) x 10 metrics = 500 metric rows; and one alert a machine a year
# (a group, an alert on w0.m0, preempt=full, the first variant, two events).
# The issue's lab, 50 machines x 3650 nights, is 91 million metric rows
# (4.7 GB; 25 minutes under nice beside other jobs on 2 cores:
# OUT=/path/lab.db GEN_ONLY=1 bench/serve-scale.sh 50 3650, then DB=); the
# default here is what a busy 2-core machine generates in minutes. Each
# page is fetched once to warm it, then ROUNDS times (default 5); the
# median wall time of curl (HTML, and JSON where it differs) is
# printed with the server's CPU time a fetch (its utime + stime: on a busy
# machine the wall time is mostly the wait for a CPU) and the page's size.
# Figures: docs/serve.md "Speed". Then /alerts while /report?since= of the
# whole store is built beside 80 idle connections (docs/serve.md "Limits";
# ONLY=concurrency measures only that).
#   bench/serve-scale.sh [MACHINES=5] [NIGHTS=3650] [ROUNDS=5]
# KEEP=1 keeps the database; DB=FILE times an existing one; OUT=FILE
# generates into FILE (kept), GEN_ONLY=1 only generates. The generator
# commits a year of nights at a time and stops after a commit once the file
# STOP (default in the temporary folder) exists: the store then holds the
# years done, whole.
set -euo pipefail
cd "$(dirname "$0")/.."
machines=${1:-5}
nights=${2:-3650}
rounds=${3:-5}
tmp=$(mktemp -d)
spid=
cleanup() {
	[ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] || rm -rf "$tmp"
}
trap cleanup EXIT
db=${DB:-${OUT:-$tmp/serve-scale.db}}
sl=bin/schedlab
[ -x "$sl" ] || make -s all
gen_s=0
if [ -z "${DB:-}" ]; then
cat >"$tmp/tiny.json" <<'EOF'
{"name": "tiny", "target": "local", "repetitions": 1, "seed": 1,
 "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}]}
EOF
"$sl" run "$tmp/tiny.json" --db "$db" --tag schema --quiet >/dev/null
start=$(date +%s.%N)
python3 - "$db" "$machines" "$nights" "${STOP:-$tmp/stop}" <<'PY'
import json, math, os, random, sqlite3, sys, time
from datetime import datetime, timedelta
db = sqlite3.connect(sys.argv[1], isolation_level=None)
nmach, nnights, stop = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = random.Random(1)
gauss, exp = rng.gauss, math.exp
WORKLOADS = ["w%d" % i for i in range(5)]
VARIANTS = [json.dumps({"groups": g, "loops": 100 * (g + 1), "type": "bench"},
                       sort_keys=True, separators=(",", ":")) for g in range(5)]
METRICS = [("m%d" % i, "us" if i < 5 else "ops/s", "lower" if i < 5 else "higher")
           for i in range(10)]
PREEMPT = ["none", "full"]
# a boot's 25 runs x 10 metrics, their base values (the same expression as
# before: the same values), and the runs' start times within the night
PLAN = [[(wl, params, [(name, unit, better,
                        10.0 * (1 + w + v + mi) * (1.1 if pre == "full" else 1.0))
                       for mi, (name, unit, better) in enumerate(METRICS)])
         for w, wl in enumerate(WORKLOADS) for v, params in enumerate(VARIANTS)]
        for pre in PREEMPT]
TOD = [(datetime(2016, 1, 1, 3, 0, 0) + timedelta(seconds=10 * seq)).strftime("%H:%M:%S.000Z")
       for seq in range(50)]
# bulk load: no rollback journal, no fsync, a large page cache; one
# transaction a year of nights (all machines), so that a stop (the file
# STOP, checked after each commit) leaves a whole, consistent store
db.execute("PRAGMA journal_mode = OFF")
db.execute("PRAGMA synchronous = OFF")
db.execute("PRAGMA cache_size = -262144")
db.execute("BEGIN")
for m in range(nmach):
    db.execute("INSERT INTO machine (id, name, cpu_model, ncpus, fingerprint) "
               "VALUES (?, ?, 'bench', 2, ?)", (100 + m, "lab%d" % m, "fp-lab%d" % m))
db.execute("INSERT INTO kernel (id, release, config_hash, hz, sched_mc, preempt_build) "
           "VALUES (100, '6.1.0-bench', 'c0ffee', 250, 1, 'full')")
day0 = datetime(2016, 1, 1, 3, 0, 0)
sid = bid = rid = 1000
gid = aid = 0
where = "preempt=full,hz=250,sched_mc=1,knobs={},run_workload=w0,params=" + VARIANTS[0]
t0 = time.time()
done = 0
for s in range(nnights):
    t = day0 + timedelta(days=s)
    day = t.strftime("%Y-%m-%dT")
    tag = "nightly-" + t.strftime("%Y-%m")
    runs, metrics, boots, sess = [], [], [], []
    for mach in range(nmach):
        sid += 1
        sess.append((sid, "nightly", "{}", tag, "local", "bench", "done", day + TOD[0]))
        seq = 0
        for bi, pre in enumerate(PREEMPT):
            bid += 1
            boots.append((bid, sid, bi, bi, "ok", 100 + mach, 100, pre,
                          "root=/dev/sda1 preempt=" + pre))
            for wl, params, mets in PLAN[bi]:
                rid += 1
                runs.append((rid, sid, bid, seq, 0, wl, params, "{}", 0, "ok", day + TOD[seq]))
                seq += 1
                for name, unit, better, base in mets:
                    metrics.append((rid, wl, name, base * exp(gauss(0, 0.03)), unit, better))
        if s % 365 == 200:   # one alert a machine a year
            gid += 1
            aid += 1
            db.execute("INSERT INTO alert_group (id, plan, machine_id, range_key, good_session,"
                       " bad_session, ncommits) VALUES (?, 'nightly', ?, ?, ?, ?, -1)",
                       (gid, 100 + mach, "s%d..s%d" % (sid - nmach, sid), sid - nmach, sid))
            db.execute("INSERT INTO alert (id, group_id, kind, status, series_key, series_label,"
                       " series_where, workload, metric, unit, detector, good_session,"
                       " bad_session, base_value, value, change_pct, ci_lo, ci_hi, p)"
                       " VALUES (?, ?, 'regression', ?, ?, 'preempt=full hz=250', ?, 'w0', 'm0',"
                       " 'us', 'check', ?, ?, 11.0, 12.5, 13.6, 9.0, 18.0, 0.001)",
                       (aid, gid, "new" if s > nnights - 400 else "acknowledged",
                        "{\"machine\":\"fp-lab%d\"}" % mach, where, sid - nmach, sid))
            db.execute("INSERT INTO alert_event (alert_id, from_status, to_status, actor, session)"
                       " VALUES (?, NULL, 'new', 'nightly', ?)", (aid, sid))
    db.executemany("INSERT INTO session (id, name, plan_json, tag, target, harness_version, "
                   "status, started_at) VALUES (?,?,?,?,?,?,?,?)", sess)
    db.executemany("INSERT INTO boot (id, session_id, seq, cfg, status, machine_id, kernel_id, "
                   "preempt, cmdline) VALUES (?,?,?,?,?,?,?,?,?)", boots)
    db.executemany("INSERT INTO run (id, session_id, boot_id, seq, round, workload, params, "
                   "knobs, rep, status, started_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)", runs)
    db.executemany("INSERT INTO metric (run_id, workload, name, value, unit, better) "
                   "VALUES (?,?,?,?,?,?)", metrics)
    done = s + 1
    if done % 365 == 0 or done == nnights:
        db.execute("COMMIT")
        print("generated %d of %d nights, %.0f s" % (done, nnights, time.time() - t0),
              file=sys.stderr, flush=True)
        if done < nnights and os.path.exists(stop):
            print("stopped at night %d (%s exists)" % (done, stop), file=sys.stderr)
            break
        if done < nnights:
            db.execute("BEGIN")
# the planner's statistics from a sample of each index (a full ANALYZE
# reads the whole store)
db.execute("PRAGMA analysis_limit = 1000")
db.execute("ANALYZE")
db.close()
PY
gen_s=$(echo "$(date +%s.%N) - $start" | bc)
fi
[ "${GEN_ONLY:-0}" = 1 ] && { echo "generated $db in $gen_s s"; exit 0; }

q() { sqlite3 -batch -noheader "$db" "$1"; }
printf 'store: %s machines, %s sessions, %s runs, %s metric rows, %s alerts, %.0f MB (generated in %.0f s)\n' \
	"$(q 'SELECT count(*) FROM machine')" "$(q 'SELECT count(*) FROM session')" \
	"$(q 'SELECT count(*) FROM run')" "$(q 'SELECT count(*) FROM metric')" \
	"$(q 'SELECT count(*) FROM alert')" "$(echo "$(stat -c %s "$db") / 1048576" | bc -l)" "$gen_s"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

start_serve() { # [serve options]
	"$sl" serve --db "$db" --listen 127.0.0.1:0 "$@" >"$tmp/serve.out" 2>&1 &
	spid=$!
	url=
	for _ in $(seq 1 600); do
		url=$(sed -n 's|.* on \(http://[^ ]*/\) .*|\1|p' "$tmp/serve.out")
		[ -n "$url" ] && break
		sleep 0.1
	done
	[ -n "$url" ] || { echo "serve did not start: $(cat "$tmp/serve.out")" >&2; exit 1; }
}
start_serve

# the server's CPU seconds so far (utime + stime): on a busy machine the wall
# time is mostly the wait for a CPU, so both are printed
hz=$(getconf CLK_TCK)
cpu_s() { awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%.3f", ($12 + $13) / hz }' "/proc/$spid/stat"; }
# median wall time of `rounds` fetches after one to warm, the server's mean
# CPU time a fetch, the page's size
page() { # LABEL PATH [curl options]
	local l=$1 p=$2 i t ts=() code
	shift 2
	code=$(curl -sS -o "$tmp/page" -w '%{http_code}' "$@" "${url%/}$p")
	[ "$code" = 200 ] || { printf '%-58s  HTTP %s: %s\n' "$l" "$code" "$(head -c 200 "$tmp/page")"; return 0; }
	local c0 c1
	c0=$(cpu_s)
	for i in $(seq 1 "$rounds"); do
		t=$(curl -sS -o "$tmp/page" -w '%{time_total}' "$@" "${url%/}$p")
		ts+=("$t")
	done
	c1=$(cpu_s)
	printf '%-58s %7s s %7s s %8s KB\n' "$l" \
		"$(printf '%s\n' "${ts[@]}" | sort -g | awk '{a[NR] = $1} END {printf "%.3f", a[int((NR + 1) / 2)]}')" \
		"$(echo "($c1 - $c0) / $rounds" | bc -l | awk '{printf "%.3f", $1}')" \
		"$(( $(stat -c %s "$tmp/page") / 1024 ))"
}
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
p1='{"groups":0,"loops":100,"type":"bench"}'
w=$(enc "machine=lab0,preempt=full,run_workload=w0,params=$p1")
first=$(q "SELECT min(id) FROM session WHERE tag LIKE 'nightly-%'")
last=$(q "SELECT max(id) FROM session")
m1=$(q "SELECT tag FROM session WHERE tag LIKE 'nightly-%' GROUP BY tag ORDER BY tag DESC LIMIT 1 OFFSET 2")
m2=$(q "SELECT tag FROM session WHERE tag LIKE 'nightly-%' GROUP BY tag ORDER BY tag DESC LIMIT 1 OFFSET 1")
alert=$(q "SELECT max(id) FROM alert")
if [ "${ONLY:-}" != concurrency ]; then
printf '%-58s %9s %9s %11s\n' "page (median of $rounds, warm)" "wall" "CPU" "size"
page "/ (plans x machines, open alerts)" /
page "/ as JSON" / -H 'Accept: application/json'
page "/alerts (open)" /alerts
page "/alerts?status=all" '/alerts?status=all'
page "/alert/$alert" "/alert/$alert"
page "/sessions (running, newest 100)" /sessions
page "/session/$last (50 runs, 500 metrics)" "/session/$last"
page "/trend w0.m0 of one series on lab0 ($nights points)" "/trend?metric=w0.m0&where=$w"
page "/trend ... as JSON" "/trend?metric=w0.m0&where=$w" -H 'Accept: application/json'
page "/compare session=$first session=$((first + machines))" \
	"/compare?a=$(enc "session=$first")&b=$(enc "session=$((first + machines))")"
page "/compare machine=lab0,tag=$m1 vs tag=$m2" \
	"/compare?a=$(enc "machine=lab0,tag=$m1")&b=$(enc "machine=lab0,tag=$m2")"
fi

# ---- no request waits for another's page (docs/serve.md "Limits") ------------------------
# /report?since=2000-01-01, the whole store: by default refused at once (422,
# over --page-max-mb); then built (the bound and the budget raised) while
# 80 idle connections are open and /alerts is fetched once a second: its
# wall times (median, largest) while the report is under way, and the
# report's own. The serve of the table above is stopped first.
kill -TERM "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true
spid=
start_serve
echo
printf '/report?since=2000-01-01 with the defaults: %s\n' \
	"$(curl -sS -o "$tmp/r.json" -w 'HTTP %{http_code} in %{time_total} s' -H 'Accept: application/json' \
		"${url%/}/report?since=2000-01-01"): $(jq -r .error "$tmp/r.json" 2>/dev/null | head -c 300)"
kill -TERM "$spid"; wait "$spid" 2>/dev/null || true
start_serve --page-max-mb 1024 --page-seconds 3600 --per-address 200 --header-seconds 3600
port=${url%/}; port=${port##*:}
python3 - "$port" 80 "$tmp" <<'PY' &
import os, socket, sys, time
port, n, tmp = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
open(os.path.join(tmp, "idle.ready"), "w").close()
while not os.path.exists(os.path.join(tmp, "idle.go")):
    time.sleep(0.1)
alive = 0
for s in socks:
    s.setblocking(False)
    try:
        alive += s.recv(1) != b""
    except BlockingIOError:
        alive += 1
    except OSError:
        pass
print("idle connections still open at the end: %d of %d" % (alive, n))
PY
ipid=$!
for _ in $(seq 1 300); do [ -e "$tmp/idle.ready" ] && break; sleep 0.1; done
curl -sS -o "$tmp/report.html" -w '%{http_code} %{time_total} %{size_download}\n' \
	"${url%/}/report?since=2000-01-01" >"$tmp/report.code" &
rpid=$!
sleep 1
: >"$tmp/alerts.times"
while kill -0 "$rpid" 2>/dev/null; do
	curl -sS -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 120 "${url%/}/alerts" >>"$tmp/alerts.times"
	sleep 1
done
wait "$rpid"
touch "$tmp/idle.go"
wait "$ipid"
read -r rcode rtime rsize <"$tmp/report.code"
printf '/report?since=2000-01-01 built (--page-max-mb 1024): HTTP %s in %s s, %s MB\n' \
	"$rcode" "$rtime" "$((rsize / 1048576))"
awk '{ n++; if ($1 != 200) bad++; t[n] = $2 }
     END { asort(t); printf "/alerts meanwhile, once a second beside 80 idle connections: %d fetches, " \
		"%d not 200, median %.3f s, largest %.3f s\n", n, bad, t[int((n + 1) / 2)], t[n] }' "$tmp/alerts.times"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
