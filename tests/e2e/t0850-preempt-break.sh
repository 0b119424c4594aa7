#!/usr/bin/env bash
# timeout: 300 (tests/run.sh ends it past this many seconds)
# End-to-end: a nightly whose kernel's effective preemption model changes
# from one night to the next (a new default mode, voluntary -> lazy, as
# 7.0 x86 kernels made it) on a synthetic history, without qemu (as t0820:
# the nights are SQL, `schedlab nightly --session N` judges each in turn).
# Plan "robot", machine "syn", a kernel from git (another commit each
# night, one kernel to the robot and the trend), hackbench time_s (lower is better) and a
# rate (higher is better), 3 repetitions a night, +-0.4% noise:
#   nights 1-8   voluntary  time 1.00 (rate 100 -> 80 on night 6: alert 1,
#                           open on the voluntary series)
#   night 9      lazy       time 1.15   the break: said with its cause, not a
#                                       regression of the voluntary series
#                                       (+15% would be one), a new baseline;
#                                       alert 1 "not measured tonight" with why
#   nights 10-13 lazy       time 1.15   judged against sessions 9.. only
#   night 14     lazy       time 1.40   a regression against the lazy
#                                       baseline (+22%, not +40%)
# and two sessions of a person's A/B (plan "manual", preempt none and full),
# which `schedlab trend` keeps apart. `schedlab trend` joins the nightly's
# voluntary and lazy nights into one trend with the break shown; change
# points are sought on each side of it, never across.
. "$(dirname "$0")/lib.sh"
require sqlite3:sqlite3 python3:python3
SL=schedlab
DB=$TMP/b.db

PYTHONPATH="$(dirname "$0")" python3 - "$TMP/gen.sql" <<'EOF'
import json, sys
import fixture   # tests/e2e/fixture.py: the rows' one builder
out = sys.argv[1]
time = {9: 1.15, 10: 1.15, 11: 1.15, 12: 1.15, 13: 1.15, 14: 1.40}
plan = json.dumps({"name": "robot"})
P = '{"groups":2,"loops":200,"type":"hackbench"}'
r = fixture.Rows()
r.add("machine", id=1, name="syn", fingerprint="fp-syn")
r.add("kernel", id=1, release="7.0.0-robot", config_hash="feedbeef", hz=250, sched_mc=1)
run = 0
def session(i, name, tag, day, preempt, level, rate=100, git=False):
    global run
    kid, commit = 1, None
    if git:   # a kernel from git, another commit (and release) each night
        kid, commit = 100 + i, "%040x" % (0xc0ffee00 + i)
        r.add("kernel", id=kid, release="7.0.0-sl-g%012x" % (0xc0ffee00 + i),
              config_hash="cfg%02d" % i, hz=250, sched_mc=1)
    r.add("session", id=i, name=name, plan_json=plan, tag=tag, started_at=day, nightly=1)
    r.add("boot", id=i, session_id=i, machine_id=1, kernel_id=kid, preempt=preempt,
          kernel_commit=commit)
    for rep in range(3):
        run += 1
        noise = 1 + 0.004 * (rep - 1) + 0.001 * ((i * 7) % 3 - 1)
        r.add("run", id=run, session_id=i, boot_id=i, seq=rep, workload="hackbench", params=P,
              rep=rep, started_at="%s%d" % (day[:-1], rep))
        r.add("metric", run_id=run, workload="hackbench", name="time_s",
              value="%.5f" % (level * noise), unit="s", better="lower")
        r.add("metric", run_id=run, workload="hackbench", name="rate_per_s",
              value="%.5f" % (rate * noise), unit="1/s", better="higher")
for i in range(1, 15):
    session(i, "robot", "nightly-%02d" % i, "2026-03-%02dT03:00:00.000Z" % i,
            "voluntary" if i <= 8 else "lazy", time.get(i, 1.0), 100 if i < 6 else 80, True)
session(20, "manual", "ab-none", "2026-03-20T12:00:00.000Z", "none", 1.0)
session(21, "manual", "ab-full", "2026-03-20T13:00:00.000Z", "full", 1.0)
open(out, "w").write(r.text())
EOF
empty_db "$DB"
check "synthetic history loaded" sqlite3 -batch "$DB" ".read $TMP/gen.sql"

night() { # N: judge night N; output in $TMP/nN.out, exit code in $TMP/nN.rc
	$SL nightly --db "$DB" --session "$1" --out-dir "$TMP/rep" --no-bisect \
		>"$TMP/n$1.out" 2>"$TMP/n$1.err"
	echo $? >"$TMP/n$1.rc"
}
alerts() { sql "SELECT count(*) FROM alert"; }

for n in 1 2 3 4 5 6 7 8; do night $n; done
equals "nights 1-8 (voluntary): exit 0 each but night 6's 1 (the rate's regression)" \
	"$(cat "$TMP"/n[1-8].rc | tr -d '\n')" "00000100"
equals "night 6: alert 1, the rate of the voluntary series" \
	"$(sql "SELECT id || ' ' || kind || ' ' || metric || ' ' || status FROM alert")" "1 regression rate_per_s new"

# ---- the night of the change ---------------------------------------------------------
night 9
equals "night 9: exit 0 (a change of the default is no regression)" "$(cat "$TMP/n9.rc")" 0
equals "night 9: no new alert (+15% against the voluntary nights is not judged)" "$(alerts)" 1
contains "night 9: the break and its cause" "$TMP/n9.out" \
	"effective preemption model changed: voluntary -> lazy at session 9 (preempt=lazy hz=250 on syn)"
contains "night 9: a new baseline starts, nothing judged against the old one" "$TMP/n9.out" \
	"a new baseline starts here; nothing is judged against the voluntary baseline tonight"
contains "night 9: the metrics left unjudged are counted" "$TMP/n9.out" \
	"0 worse, 0 better, 0 no change, 0 inconclusive, 0 followed by open alerts; 2 not judged: a new baseline after a change of the preemption model"
equals "night 9: not listed as undecided either" "$(grep -c "^undecided:" "$TMP/n9.out")" 0
contains "night 9: the open alert of the voluntary series says why it is not measured" "$TMP/n9.out" \
	"known: alert 1 (new): hackbench.rate_per_s preempt=voluntary hz=250 on syn: not measured tonight (its series' effective preemption model changed: voluntary -> lazy; the series goes on with a new baseline)"

# ---- the new baseline -----------------------------------------------------------------
night 10
equals "night 10: exit 0" "$(cat "$TMP/n10.rc")" 0
contains "night 10: the rolling baseline holds the voluntary nights" "$TMP/n10.out" "baseline: sessions 9 8 7 6 5 4 3"
contains "night 10: ... but the series is judged from the change on only" "$TMP/n10.out" \
	"effective preemption model changed: voluntary -> lazy at session 9 (preempt=lazy hz=250 on syn): judged against the sessions from 9 on only"
contains "night 10: judged: no change against night 9" "$TMP/n10.out" "2 metrics, 0 worse, 0 better, 2 no change"
for n in 11 12 13; do night $n; done
equals "nights 11-13: exit 0 each, no new alert" "$(cat "$TMP"/n1[1-3].rc | tr -d '\n') $(alerts)" "000 1"

# ---- a regression of the lazy series ---------------------------------------------------
night 14
equals "night 14: exit 1 (a regression)" "$(cat "$TMP/n14.rc")" 1
equals "night 14: against the lazy baseline: +22%, not +40% against voluntary" \
	"$(sql "SELECT kind || ' ' || metric || ' ' || round(change_pct) || ' ' || good_session || '..' || bad_session FROM alert WHERE id = 2")" \
	"regression time_s 22.0 13..14"
equals "night 14: the alert's series is the lazy one" \
	"$(sql "SELECT series_where FROM alert WHERE id = 2" | cut -d, -f1)" "preempt=lazy"

# ---- trend --------------------------------------------------------------------------------
expect_exit 0 "trend of the nightly across the change" \
	$SL trend --db "$DB" --metric hackbench.time_s --where plan=robot
contains "trend: one series, its model changed" "$TMP/out" "preempt voluntary -> lazy"
contains "trend: ... on a kernel from git, one kernel whatever its commit (as the robot)" "$TMP/out" \
	"kernel from git (14 commits)"
contains "trend: the point of the change is marked" "$TMP/out" "<- break: preempt voluntary -> lazy"
contains "trend: the break with its cause" "$TMP/out" \
	"break: effective preemption model changed: voluntary -> lazy at session 9"
equals "trend: the 15% step at the break is no change point (without the break it is one)" \
	"$(awk '$1 == 9 && /<- [+-][0-9]/' "$TMP/out" | wc -l | tr -d ' ')" 0
expect_exit 0 "trend --format json" \
	$SL trend --db "$DB" --metric hackbench.time_s --where plan=robot --format json
python3 - "$TMP/out" >"$TMP/py.out" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["points"]) == 14, d["points"]
b = d["breaks"]
assert [(x["session"], x["from"], x["to"]) for x in b] == [(9, "voluntary", "lazy")], b
assert all(c["session"] != 9 for c in d["change_points"]), d["change_points"]
assert d["series"]["preempt"] == "voluntary -> lazy", d["series"]
EOF
if [ $? -eq 0 ]; then ok "trend json: fourteen points, one break at session 9, no change point there"; else not_ok "trend json: nine points, one break at session 9" "$(tail -n 3 "$TMP/py.out")"; fi
expect_exit 2 "trend still refuses a person's sessions of two modes" \
	$SL trend --db "$DB" --metric hackbench.time_s --where plan=manual
contains "... listing them" "$TMP/err" "holds 2 series"
expect_exit 2 "trend over everything: the nightly and the person's sessions are not one series" \
	$SL trend --db "$DB" --metric hackbench.time_s
contains "... listing them" "$TMP/err" "holds 16 series"
done_testing
