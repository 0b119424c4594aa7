#!/usr/bin/env bash
# timeout: 300 (tests/run.sh ends it past this many seconds)
# End-to-end: a nightly that crosses from Debian's 6.1 RT kernel (PREEMPT_RT
# without PREEMPT_DYNAMIC: full, stored rt) to its 6.12 RT kernel (lazy by
# default, stored rt-lazy) on a synthetic history, without qemu (as t0850):
# `schedlab trend` joins the nights into one trend with a break that names
# the model change and the kernel change (issue 39); a kernel change without
# a model change stays two series (refused as before).
#   nights 1-6   6.1.0-57-rt-amd64        rt       cyclictest lat_p99_us 30
#   nights 7-12  6.12.118+deb12-rt-amd64  rt-lazy  lat_p99_us 36
# and, in a second database, nights 1-6 on 6.1.0-56-rt-amd64 and 7-12 on
# 6.1.0-57-rt-amd64, both rt: two series.
. "$(dirname "$0")/lib.sh"
require sqlite3:sqlite3 python3:python3 jq:jq
SL=schedlab

gen() { # OUT SECOND_RELEASE SECOND_MODEL
PYTHONPATH="$(dirname "$0")" python3 - "$@" <<'EOF'
import sys
import fixture   # tests/e2e/fixture.py: the rows' one builder
out, rel2, model2 = sys.argv[1:4]
P = '{"duration_s":5,"interval_us":1000,"type":"cyclictest"}'
first = '6.1.0-57-rt-amd64' if model2 != 'rt' else '6.1.0-56-rt-amd64'
r = fixture.Rows()
r.add("machine", id=1, name="syn", fingerprint="fp-syn")
r.add("kernel", id=1, release=first, config_hash="cfg61", hz=250, sched_mc=1)
r.add("kernel", id=2, release=rel2, config_hash="cfg612", hz=250, sched_mc=1)
run = 0
for i in range(1, 13):
    kid, model, level = (1, 'rt', 30.0) if i <= 6 else (2, model2, 36.0)
    day = "2026-04-%02dT03:00:00.000Z" % i
    r.add("session", id=i, name="robot", plan_json='{"name": "robot"}', tag="nightly-%02d" % i,
          target="qemu", started_at=day)
    r.add("boot", id=i, session_id=i, machine_id=1, kernel_id=kid, preempt=model,
          cmdline="console=ttyS0")
    for rep in range(3):
        run += 1
        r.add("run", id=run, session_id=i, boot_id=i, seq=rep, workload="cyclictest", params=P,
              rep=rep, started_at="%s%d" % (day[:-1], rep))
        r.add("metric", run_id=run, workload="cyclictest", name="lat_p99_us",
              value="%.3f" % (level + 0.1 * (rep - 1)), unit="us", better="lower")
open(out, "w").write(r.text())
EOF
}
DB=$TMP/b.db
empty_db "$DB"
gen "$TMP/gen.sql" 6.12.118+deb12-rt-amd64 rt-lazy
check "synthetic history loaded" sqlite3 -batch "$DB" ".read $TMP/gen.sql"

expect_exit 0 "trend across 6.1-RT (rt) and 6.12-RT (rt-lazy): one trend" \
	$SL trend --db "$DB" --metric cyclictest.lat_p99_us --where plan=robot
contains "the series: both kernels and both models" "$TMP/out" \
	"kernel 6.1.0-57-rt-amd64 -> 6.12.118+deb12-rt-amd64, preempt rt -> rt-lazy"
contains "the point of the change is marked" "$TMP/out" "<- break: preempt rt -> rt-lazy"
contains "the break names the model change and the kernel's" "$TMP/out" \
	"break: effective preemption model changed: rt -> rt-lazy at session 7 (2026-04-07T03:00:00.0000), with the kernel: 6.1.0-57-rt-amd64 -> 6.12.118+deb12-rt-amd64"
equals "the 20% step at the break is no change point" \
	"$(awk '$1 == 7 && /<- [+-][0-9]/' "$TMP/out" | wc -l | tr -d ' ')" 0
expect_exit 0 "trend --format json" \
	$SL trend --db "$DB" --metric cyclictest.lat_p99_us --where plan=robot --format json
equals "json: one break, with its kernels" \
	"$(jq -c '[.breaks[] | [.session, .from, .to, .kernel_from, .kernel_to]]' "$TMP/out")" \
	'[[7,"rt","rt-lazy","6.1.0-57-rt-amd64","6.12.118+deb12-rt-amd64"]]'

DB=$TMP/c.db
empty_db "$DB"
gen "$TMP/gen2.sql" 6.1.0-57-rt-amd64 rt
check "a second history: two 6.1 RT kernels, one model" sqlite3 -batch "$DB" ".read $TMP/gen2.sql"
expect_exit 2 "a kernel change without a model change: two series, refused" \
	$SL trend --db "$DB" --metric cyclictest.lat_p99_us --where plan=robot
contains "named as two series" "$TMP/err" "the selection holds 2 series"
done_testing
