#!/usr/bin/env bash
# timeout: 180
# End-to-end: the lock-holder-preemption workload (bin/sl-lockholder, the
# lockholder driver) on the local target. The program itself: bad options
# exit 2 naming the option and what is valid, --help lists the options, and
# short real runs in every mode (fault, syscall, none; tts-yield and spin;
# getrusage and rseq detection) print JSON whose counts keep their
# invariants: holds > 0, holder preemptions <= holds, every hold of the
# fault mode faulted its pages (faults per hold >= entries), no fault in
# the other modes, the histograms hold one sample per hold, p50 <= p99 <=
# max, spin and CPU time >= 0, backoffs only with tts-yield, and the rseq
# time-slice extension said to be unavailable (this host's kernel predates
# it: a kernel that has it is tested nowhere here). Then plan validation
# names the bad key, and a short plan through `schedlab run` stores the
# metrics with units and directions, the histograms and the note; a run
# whose holds outlast its window stops with the window. No speed is
# asserted.
. "$(dirname "$0")/lib.sh"
require python3:python3 sqlite3:sqlite3
require_built bin/schedlab bin/schedlab-agent bin/sl-lockholder
DB=$TMP/t.db
LH=bin/sl-lockholder

# usage errors: exit 2, the option and what is valid on stderr, no stdout
usage_err() { # NAME WANT ARGS...
	local name=$1 want=$2; shift 2
	timeout 20 "$LH" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc = 2 ] && grep -qF -- "$want" "$TMP/err" && [ ! -s "$TMP/out" ]; then ok "$name"
	else not_ok "$name" "exit $rc, stderr: $(head -c 300 "$TMP/err")"; fi
}
usage_err "--enter bogus: exit 2 with the valid modes" "--enter: 'bogus' is not one of: fault, syscall, none" --enter bogus
usage_err "--threads -1: exit 2 with the range" "--threads: '-1' is not an integer in [0, 4096]" --threads -1
usage_err "--lock spin --delay-us 5: exit 2" "--delay-us: only used with --lock tts-yield" --lock spin --delay-us 5
usage_err "--enter none --cs-us 0: exit 2" "an empty critical section" --enter none --cs-us 0
usage_err "an unexpected argument: exit 2" "unexpected argument 'x'" x
check "--help lists --enter and --detect" bash -c "timeout 5 $LH --help | grep -q -- '--detect HOW' && timeout 5 $LH --help | grep -q -- '--enter MODE'"

# real runs: invariants only
inv() { # NAME ENTER ARGS...
	local name=$1 enter=$2; shift 2
	if ! timeout 60 "$LH" --duration 0.4 --threads 4 --enter "$enter" "$@" >"$TMP/o.json" 2>"$TMP/e"; then
		not_ok "$name: the run" "$(tail -n 3 "$TMP/e")"; return
	fi
	if python3 - "$TMP/o.json" "$enter" "$*" >"$TMP/inv" 2>&1 <<'PY'
import json, sys
o = json.load(open(sys.argv[1])); enter = sys.argv[2]; args = sys.argv[3]
c = o["config"]
assert o["tool"] == "sl-lockholder" and o["format"] == 1, o.get("tool")
assert c["enter"] == enter and c["threads"] == 4, c
h = o["holds"]
assert h > 0, "no holds"
assert 0 <= o["holder_preemptions"] <= h, (o["holder_preemptions"], h)
assert abs(o["holder_preempt_pct"] - 100.0 * o["holder_preemptions"] / h) < 1e-6
assert o["acq_per_s"] > 0 and abs(o["acq_per_s"] * o["window_s"] - h) < 1e-6 * h + 1e-6
for k in ("hold", "wait"):
    hist = o["hist"][k + "_ns"]
    assert hist["total"] == h, (k, hist["total"], h)
    assert hist["overflow"] == 0, k
    assert o[k + "_p50_us"] <= o[k + "_p99_us"] <= o[k + "_max_us"] * 1.004, k
assert o["spin_s"] >= 0 and o["cpu_s"] >= 0 and o["ivcsw"] >= 0
assert abs(o["faults_per_hold"] - o["minflt_per_hold"] - o["majflt_per_hold"]) < 1e-6
if enter == "fault":
    assert o["faults_per_hold"] >= c["entries"], o["faults_per_hold"]
else:
    assert o["faults_per_hold"] < 1, o["faults_per_hold"]
if c["lock"] == "spin":
    assert o["backoffs"] == 0, o["backoffs"]
assert o["rseq_slice_ext"] == "unavailable", o["rseq_slice_ext"]
assert "PR_RSEQ_SLICE_EXTENSION" in o["rseq_slice_ext_detail"]
PY
	then ok "$name: invariants hold"; else not_ok "$name: invariants hold" "$(tail -n 3 "$TMP/inv")"; fi
}
inv "fault, tts-yield, getrusage" fault --entries 4
inv "fault, spin, rseq" fault --entries 2 --lock spin --detect rseq
inv "syscall, tts-yield with s_lock's sleep" syscall --delay-us 100
inv "none, rseq" none --cs-us 5 --detect rseq

# plan validation: the key and what is valid
cat >"$TMP/bad.json" <<'P'
{ "name": "bad", "target": "local",
  "workloads": [ {"type": "lockholder", "lock": "spin", "delay_us": 10} ] }
P
expect_exit 2 "a plan with delay_us under lock spin is refused" schedlab plan "$TMP/bad.json"
contains "the error names the key and the lock it needs" "$TMP/err" \
	'workloads[0].delay_us: only used with lock "tts-yield"'
sed 's/"lock": "spin", "delay_us": 10/"enter": "pagefault"/' "$TMP/bad.json" >"$TMP/bad2.json"
expect_exit 2 "an unknown enter mode is refused" schedlab plan "$TMP/bad2.json"
contains "the error lists the valid modes" "$TMP/err" "fault"

# through the harness: stored metrics, units, directions, histograms, note
cat >"$TMP/plan.json" <<'P'
{ "name": "e2e-lockholder", "seed": 3, "target": "local",
  "workloads": [
    {"type": "lockholder", "duration_s": 0.5, "threads": 4, "enter": "fault", "entries": 4},
    {"type": "lockholder", "duration_s": 0.5, "threads": 4, "enter": "none", "cs_us": 5} ] }
P
expect_exit 0 "schedlab run of two lockholder workloads" schedlab run "$TMP/plan.json" --db "$DB"
equals "2 runs ok" "$(sql "SELECT count(*) FROM run WHERE status = 'ok'")" 2
equals "units and directions as docs/metrics.md says" \
	"$(sql "SELECT group_concat(metric || ':' || unit || ':' || better, ' ') FROM (SELECT DISTINCT metric, unit, better FROM results WHERE metric IN ('acq_per_s', 'holder_preemptions', 'spin_cpu_pct', 'hold_p99_us', 'holds') ORDER BY metric)")" \
	"acq_per_s:acq/s:higher hold_p99_us:us:lower holder_preemptions:count:lower holds:count:none spin_cpu_pct:%:lower"
equals "every run: holds > 0 and holder preemptions <= holds" \
	"$(sql "SELECT count(*) FROM (SELECT run_id, sum(CASE WHEN metric = 'holds' THEN value END) AS h, sum(CASE WHEN metric = 'holder_preemptions' THEN value END) AS p FROM results GROUP BY run_id) WHERE h > 0 AND p >= 0 AND p <= h")" 2
equals "the fault run faulted 4 pages a hold, the other none" \
	"$(sql "SELECT group_concat(json_extract(params, '\$.enter') || ':' || (value >= 4) || (value < 1), ' ') FROM results WHERE metric = 'faults_per_hold' ORDER BY run_id")" \
	"fault:10 none:01"
equals "both histograms stored per run" "$(sql "SELECT count(*) FROM histogram")" 4
equals "the run's note says the rseq time-slice extension is unavailable, with the kernel's answer" \
	"$(sql "SELECT count(*) FROM run WHERE status = 'ok' AND notes LIKE 'rseq time-slice extension: unavailable (prctl(PR_RSEQ_SLICE_EXTENSION, GET): %'")" 2
expect_exit 0 "examples/lockholder.json is a valid plan" schedlab plan examples/lockholder.json

# the window ends the run: 64 threads waiting for holds of 1 s of CPU
# stop with a window of 0.05 s (waiters give up, the hold under way is cut
# and not counted), not one hold after another until the agent's timeout
# (31 s: the run failed, issue 41); only the outcome is asserted, no speed
cat >"$TMP/cut.json" <<'P'
{ "name": "e2e-lockholder-cut", "target": "local",
  "workloads": [ {"type": "lockholder", "threads": 64, "cs_us": 1000000, "duration_s": 0.05} ] }
P
expect_exit 0 "64 threads with holds of 1 s in a window of 0.05 s" schedlab run "$TMP/cut.json" --db "$TMP/cut.db" --quiet
equals "... the run is ok, not killed by its timeout" "$(DB=$TMP/cut.db sql "SELECT status FROM run")" ok
equals "... a hold cut by the window's end is not counted (any hold counted took its 1 s)" \
	"$(DB=$TMP/cut.db sql "SELECT count(*) FROM results WHERE metric = 'hold_p50_us' AND value < 1e6")" 0
no_leftovers "no sl-lockholder left"
done_testing
