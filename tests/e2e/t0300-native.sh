#!/usr/bin/env bash
# End-to-end tests of the native workloads bin/sl-pingpong and bin/sl-jbb:
# argument errors exit 2 with a message naming the option, and short real
# runs (a second or three each, bounded by `timeout`) produce JSON whose
# counts are consistent (sent = completed + in flight), whose percentiles
# are ordered and whose critical-jOPS is at most max-jOPS. No speed is
# asserted. Prints TAP; JSON is checked with python3.
set -u
cd "$(dirname "$0")/../.."
PP=bin/sl-pingpong
JBB=bin/sl-jbb
n=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # name, then a command
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

for b in "$PP" "$JBB"; do
	if [ ! -x "$b" ]; then
		not_ok "$b built (run make first)"
		echo "1..$n"
		exit 1
	fi
done
if ! command -v python3 >/dev/null 2>&1; then
	if [ "${SCHEDLAB_ALLOW_SKIP:-0}" = 1 ]; then
		echo "1..0 # SKIP missing: python3 (apt-get install python3)"
		exit 0
	fi
	not_ok "prerequisites: missing: python3 (apt-get install python3; make test installs it)"
	echo "1..$n"
	exit 1
fi

# usage error: exit status 2 and stderr containing the expected words
usage_err() { # expected-text, then the command
	local want=$1
	shift
	timeout 10 "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" -ne 2 ]; then
		echo "#   '$*' exited $rc, expected 2"
		return 1
	fi
	if ! grep -q -- "$want" "$tmp/err"; then
		echo "#   stderr of '$*' lacks '$want':"
		sed 's/^/#   /' "$tmp/err"
		return 1
	fi
	[ ! -s "$tmp/out" ]
}

check "sl-pingpong --help" bash -c "timeout 5 $PP --help | grep -q -- --mechanism"
check "sl-pingpong --stages 0: exit 2, names the option and range" \
	usage_err "--stages: '0' is not an integer in \[1, 32\]" $PP --stages 0
check "sl-pingpong --mechanism smoke: lists the valid ones" \
	usage_err "futex, pipe, eventfd, unix" $PP --mechanism smoke
check "sl-pingpong unknown option" usage_err "unknown option '--bogus'" $PP --bogus
check "sl-pingpong missing value" usage_err "needs a value" $PP --rate
check "sl-pingpong --policy fifo without --priority" usage_err "--priority" $PP --policy fifo
check "sl-pingpong --rate -1" usage_err "--rate" $PP --rate -1
check "sl-jbb --help" bash -c "timeout 5 $JBB --help | grep -q -- --start-pct"
check "sl-jbb --mix not adding up to 100" usage_err "adding up to 100" $JBB --mix 50,50,10
check "sl-jbb --nice with the wrong count" usage_err "3 values given for 2 groups" \
	$JBB --groups 2 --nice 1,2,3
check "sl-jbb --rr-group outside the groups" usage_err "--rr-group" $JBB --groups 2 --rr-group 2
check "sl-jbb --duration 1" usage_err "--duration" $JBB --duration 1
check "sl-jbb stray argument" usage_err "unexpected argument" $JBB extra

# ---- short runs -----------------------------------------------------------

pp_check() { # json file; extra python assertions may follow as $2
	python3 - "$1" "${2:-}" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
errs = []
def want(c, msg):
    if not c: errs.append(msg)
want(d["tool"] == "sl-pingpong", "tool")
want(d["requests_sent"] == d["requests_completed"] + d["requests_in_flight"],
     "sent %d != completed %d + in flight %d" % (d["requests_sent"], d["requests_completed"], d["requests_in_flight"]))
want(d["requests_completed"] > 0, "no request completed")
want(d["rps"] > 0, "rps")
want(d["req_p50_us"] <= d["req_p99_us"] <= d["req_p999_us"] <= d["req_max_us"] * 1.01,
     "request percentiles out of order: %s %s %s %s" % (d["req_p50_us"], d["req_p99_us"], d["req_p999_us"], d["req_max_us"]))
if d["wakeups"]:
    want(d["wakeup_p50_us"] <= d["wakeup_p99_us"], "wakeup percentiles out of order")
    want(0 <= d["same_cpu_wakeup_pct"] <= 100, "same_cpu_wakeup_pct")
    want(0 <= d["cross_llc_wakeup_pct"] <= 100, "cross_llc_wakeup_pct")
want(d["hist"]["request_ns"]["total"] == d["requests_completed"], "histogram total != completed")
want(d["migrations_per_kreq"] is None or d["migrations_per_kreq"] >= 0, "migrations")
want(d["config"]["clock"] in ("tsc", "monotonic"), "config.clock %r" % d["config"]["clock"])
want((d["config"]["tsc_khz"] is None) == (d["config"]["clock"] == "monotonic"), "tsc_khz with clock")
want(d["clock_valid"] is True, "clock_valid %r" % d.get("clock_valid"))
want(abs(d["clock_drift_us"]) < 1000, "stamps' clock drifted %s us from CLOCK_MONOTONIC" % d["clock_drift_us"])
if d["config"]["loop"] == "open":
    want(d["requests_scheduled"] == d["requests_sent"] + d["requests_backlog"],
         "scheduled != sent + backlog")
if sys.argv[2]:
    exec(sys.argv[2])
for e in errs: print("#   " + e)
sys.exit(1 if errs else 0)
EOF
}

timeout 20 $PP --duration 1 --warmup 0.2 >"$tmp/pp1.json" 2>"$tmp/err"
check "sl-pingpong closed loop, pipe, threads: exit 0" test $? -eq 0
check "sl-pingpong closed loop: counts consistent, percentiles ordered" pp_check "$tmp/pp1.json"

# the stamps' clock: the TSC exactly where the kernel's clocksource is tsc
want_clock=monotonic
if [ "$(uname -m)" = x86_64 ] &&
	[ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)" = tsc ]; then
	want_clock=tsc
fi
check "sl-pingpong default clock is $want_clock (kernel clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null))" \
	pp_check "$tmp/pp1.json" "want(d['config']['clock'] == '$want_clock', 'clock %s' % d['config']['clock'])"
timeout 20 $PP --duration 0.5 --warmup 0.1 --clock monotonic >"$tmp/pp-mono.json" 2>"$tmp/err"
check "sl-pingpong --clock monotonic: exit 0, clock_gettime used, counts consistent" pp_check "$tmp/pp-mono.json" \
	"want(d['config']['clock'] == 'monotonic' and d['clock_drift_us'] == 0, 'clock %s' % d['config']['clock'])"
check "sl-pingpong --clock tsc: lists the valid ones" usage_err "not one of: auto, monotonic" $PP --clock tsc

timeout 20 $PP --duration 1 --warmup 0.2 --procs --mechanism futex --stages 2 --fanout 2 \
	--concurrency 2 --work-us 5 --wss-kb 16 >"$tmp/pp2.json" 2>"$tmp/err"
check "sl-pingpong --procs futex, 2 stages, fanout 2, 2 lanes: exit 0" test $? -eq 0
check "sl-pingpong --procs: counts consistent, percentiles ordered" pp_check "$tmp/pp2.json" \
	'want(d["wakeups"] > 0, "no wakeups recorded")'

for m in eventfd unix; do
	timeout 20 $PP --duration 0.5 --warmup 0.1 --mechanism $m --stages 3 >"$tmp/pp-$m.json" 2>"$tmp/err"
	check "sl-pingpong --mechanism $m: exit 0, counts consistent" pp_check "$tmp/pp-$m.json"
done

timeout 20 $PP --duration 1 --warmup 0.2 --rate 300 --seed 7 >"$tmp/pp3.json" 2>"$tmp/err"
check "sl-pingpong open loop: exit 0, counts consistent" pp_check "$tmp/pp3.json"
timeout 20 $PP --duration 1 --warmup 0.2 --rate 300 --seed 7 >"$tmp/pp4.json" 2>"$tmp/err"
check "sl-pingpong open loop --seed: same arrival schedule twice" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
sys.exit(0 if a["requests_scheduled"] == b["requests_scheduled"] > 0 else 1)' "$tmp/pp3.json" "$tmp/pp4.json"

timeout 30 $JBB --duration 3 --start-pct 70 --hbir-ms 300 --data-mb 8 >"$tmp/jbb.json" 2>"$tmp/err"
check "sl-jbb short run: exit 0" test $? -eq 0
check "sl-jbb: counts consistent, critical <= max, SLA values ordered, step percentiles ordered" \
	python3 - "$tmp/jbb.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
errs = []
def want(c, msg):
    if not c: errs.append(msg)
want(d["tool"] == "sl-jbb", "tool")
want(d["requests_injected"] == d["requests_completed"] + d["requests_in_flight"],
     "injected %d != completed %d + in flight %d" % (d["requests_injected"], d["requests_completed"], d["requests_in_flight"]))
want(d["hbir_jops"] > 0, "hbir")
want(0 <= d["critical_jops"] <= d["max_jops"], "critical %s > max %s" % (d["critical_jops"], d["max_jops"]))
sla = [d["sla_%dms_jops" % s] for s in (10, 25, 50, 75, 100)]
want(all(a <= b for a, b in zip(sla, sla[1:])) and sla[-1] <= d["max_jops"], "SLA values not ordered: %s" % sla)
steps = [s for s in d["steps"] if s["phase"] == "rt-curve"]
want(len(steps) >= 1, "no RT-curve step")
# the curve's passing steps and the SLA probes that passed (they join the
# curve in front: sl-jbb's sla_probes, which runs only when an SLA was not
# met, as on a loaded machine)
probes = [s for s in d["steps"] if s["phase"] == "sla-probe"]
want(d["steps_passed"] == sum(1 for s in steps + probes if s["ok"]),
     "steps_passed %s, passing steps %s" % (d["steps_passed"], [(s["phase"], s["ok"]) for s in d["steps"]]))
for s in d["steps"]:
    if s["p50_ms"] is not None:
        want(s["p50_ms"] <= s["p90_ms"] <= s["p99_ms"] <= s["max_ms"] * 1.01, "step %s percentiles" % s["pct"])
if d["steps_passed"]:
    last_ok = [s for s in steps if s["ok"]][-1]
    want(abs(last_ok["ir_jops"] - d["max_jops"]) < 1e-6 * d["max_jops"], "max_jops is not the last passing step")
want(not d["ramp_complete"] or not steps[-1]["ok"], "ramp_complete but the last step passed")
want(d["run_s"] <= 3.5, "run took %s s for --duration 3" % d["run_s"])
for e in errs: print("#   " + e)
sys.exit(1 if errs else 0)
EOF

# --sched-out: every task's /proc/<tid>/sched at the window's start and end
dump_ok() { # FILE TASKS
	local f=$1 want=$2
	[ "$(head -n 1 "$f")" = "schedlab-task-sched 1" ] || { echo "#   $f: no header"; return 1; }
	local s e
	s=$(grep -c '^@@ start [0-9]*$' "$f") e=$(grep -c '^@@ end [0-9]*$' "$f")
	[ "$s" = "$want" ] && [ "$e" = "$want" ] || { echo "#   $f: $s start and $e end snapshots, want $want"; return 1; }
	grep -q 'se.nr_migrations' "$f" || { echo "#   $f: no sched file content"; return 1; }
}
check "sl-pingpong --sched-out: 2 stages + client, start and end" bash -c \
	"cd $tmp && timeout 20 $PWD/$PP -s 2 -d 0.3 -w 0.1 --sched-out=pp-sched.txt >/dev/null && $(declare -f dump_ok); dump_ok pp-sched.txt 3"
check "sl-pingpong --procs --sched-out: the stage processes too" bash -c \
	"cd $tmp && timeout 20 $PWD/$PP -P -s 3 -d 0.3 -w 0.1 --sched-out=pp-procs.txt >/dev/null && $(declare -f dump_ok); dump_ok pp-procs.txt 4"
check "sl-jbb --sched-out: every thread (2 workers, 1 injector, main)" bash -c \
	"cd $tmp && timeout 30 $PWD/$JBB --duration=5 --groups=1 --workers=2 --data-mb=8 --sched-out=jbb-sched.txt >/dev/null && $(declare -f dump_ok); dump_ok jbb-sched.txt 4"
check "sl-pingpong --sched-out into a folder that does not exist: the run still ends 0 and says why" bash -c \
	"timeout 20 $PP -d 0.2 -w 0.1 --sched-out=$tmp/none/x.txt >/dev/null 2>$tmp/err && grep -q 'none/x.txt: No such file' $tmp/err"

echo "1..$n"
[ "$failed" -eq 0 ]
