#!/usr/bin/env bash
# Benchmark (not a test): the cost of one round trip in bin/sl-pingpong with
# one stage over pipes between two threads (--work-us 0 --wss-kb 0), against
# `perf bench sched pipe -T` (two threads, two pipes, one int each way), the
# reference for this pattern. Both do two wakeups per round trip.
#
# The two run interleaved in one invocation, ABBA order per round so that
# drift (thermal, other tenants, idle-state changes) hits both alike; each
# placement is measured separately:
#   pinned  both threads on CPU 0 (taskset -c 0): no idle-exit cost, the
#           purest comparison of the code paths;
#   free    no affinity: the scheduler's placement, idle exits and
#           migrations included (much noisier on a VM).
# Reported per placement: every raw figure (usec per round trip), the
# medians, and ratio = median(ours) / median(perf). The target is
# ratio <= 1.03 (TARGET): sl-pingpong's bookkeeping at most 3% over the bare
# loop. What is left of it on the hot path (docs/workloads-native.md, "Cost
# of the instrumentation"): one vDSO clock read and one rseq CPU-id load per
# side of a hop, reused for the next wake call when nothing but bookkeeping
# lies between, so one clock read per hop in this configuration; a load of
# the channel's message count (did the message come before the wait?); and
# integer histogram counts. The target is for the pinned placement; the free
# one is printed for information and judged against the same figure.
#
# usage: bench/pingpong-vs-perf.sh [ROUNDS]   (env: SECONDS_EACH=2, PLACEMENTS="pinned free",
#        PP_BASE=another sl-pingpong build measured in the same rounds: before/after,
#        TARGET=1.03)
set -u
cd "$(dirname "$0")/.."
ROUNDS=${1:-8}
SECS=${SECONDS_EACH:-2}
PLACEMENTS=${PLACEMENTS:-pinned free}
PP=bin/sl-pingpong
TARGET=${TARGET:-1.03}

if [ ! -x "$PP" ]; then
	echo "bench: $PP is not built (make $PP)" >&2
	exit 2
fi
BARE=build/bench/pingpong-bare
if ! make -s "$BARE" >/dev/null; then
	echo "bench: cannot build $BARE (make bench-pingpong)" >&2
	exit 2
fi
if ! command -v perf >/dev/null || ! perf bench sched pipe -l 10 -T >/dev/null 2>&1; then
	echo "bench: 'perf bench sched pipe -T' does not run here (apt-get install linux-perf)" >&2
	exit 2
fi
if ! command -v python3 >/dev/null; then
	echo "bench: python3 is needed to read sl-pingpong's JSON" >&2
	exit 2
fi

ours() { # placement [binary] -> usec per round trip
	local pin=()
	[ "$1" = pinned ] && pin=(taskset -c 0)
	"${pin[@]}" "${2:-$PP}" --stages 1 --mechanism pipe --work-us 0 --wss-kb 0 \
		--duration "$SECS" --warmup 0.2 |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.4f" % (1e6 / d["rps"]))'
}

theirs() { # placement loops -> usec per round trip
	local pin=()
	[ "$1" = pinned ] && pin=(taskset -c 0)
	"${pin[@]}" perf bench sched pipe -T -l "$2" 2>/dev/null |
		awk '/usecs\/op/ { printf "%.4f\n", $1 }'
}

bare() { # placement loops -> usec per round trip
	local pin=()
	[ "$1" = pinned ] && pin=(taskset -c 0)
	"${pin[@]}" "$BARE" "$2"
}

echo "# sl-pingpong (1 stage, pipe, threads) vs perf bench sched pipe -T, and the bare loop (bench/pingpong-bare.c)"
echo "# $(uname -r), $(nproc) CPUs, idle driver $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none), clock $("$PP" --stages 1 --work-us 0 --wss-kb 0 --duration 0.05 --warmup 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["config"]["clock"])'), $ROUNDS rounds x ${SECS} s each"
status=0
for place in $PLACEMENTS; do
	# size perf's loop count to take about as long as our window
	probe=$(theirs "$place" 20000)
	loops=$(python3 -c "print(max(10000, int($SECS * 1e6 / max($probe, 0.5))))")
	a=() b=() c=() d=()
	for r in $(seq 1 "$ROUNDS"); do
		z=
		# odd rounds in one order, even rounds in the reverse one (ABBA)
		if [ $((r % 2)) -eq 1 ]; then
			x=$(ours "$place"); y=$(theirs "$place" "$loops"); w=$(bare "$place" "$loops")
			[ -n "${PP_BASE:-}" ] && z=$(ours "$place" "$PP_BASE")
		else
			[ -n "${PP_BASE:-}" ] && z=$(ours "$place" "$PP_BASE")
			w=$(bare "$place" "$loops"); y=$(theirs "$place" "$loops"); x=$(ours "$place")
		fi
		if [ -z "$x" ] || [ -z "$y" ] || [ -z "$w" ] || { [ -n "${PP_BASE:-}" ] && [ -z "$z" ]; }; then
			echo "bench: round $r ($place) produced no figure" >&2
			exit 1
		fi
		a+=("$x") b+=("$y") c+=("$z") d+=("$w")
		printf '%-7s round %2d  ours %9s us/rt   perf %9s us/rt   bare %9s us/rt%s\n' "$place" "$r" \
			"$x" "$y" "$w" "${z:+   base $z us/rt}"
	done
	if [ -n "${PP_BASE:-}" ]; then
		echo "$place  raw base:  ${c[*]}"
		python3 - "$place" "${c[*]}" "${b[*]}" "${d[*]}" <<'PY'
import statistics, sys
base, perf, bare = ([float(v) for v in sys.argv[i].split()] for i in (2, 3, 4))
mb = statistics.median(base)
print("%s  median base (PP_BASE) %.3f us/rt; ratio base/perf %.3f, base/bare %.3f" % (
    sys.argv[1], mb, mb / statistics.median(perf), mb / statistics.median(bare)))
PY
	fi
	python3 - "$place" "${a[*]}" "${b[*]}" "${d[*]}" "$TARGET" <<'PY' || status=1
import statistics, sys
place = sys.argv[1]
a, b, d = ([float(x) for x in sys.argv[i].split()] for i in (2, 3, 4))
target = float(sys.argv[5])
ma, mb, md = statistics.median(a), statistics.median(b), statistics.median(d)
ratio = ma / mb
print("%-7s raw ours:  %s" % (place, " ".join("%.3f" % x for x in a)))
print("%-7s raw perf:  %s" % (place, " ".join("%.3f" % x for x in b)))
print("%-7s raw bare:  %s" % (place, " ".join("%.3f" % x for x in d)))
print("%-7s median bare %.3f us/rt: ours/bare %.3f (the measurement's own cost), perf/bare %.3f (glibc's read/write wrappers)"
      % (place, md, ma / md, mb / md))
print("%-7s median ours %.3f us/rt (min %.3f), perf %.3f us/rt (min %.3f); ratio %.3f (target <= %.2f): %s"
      % (place, ma, min(a), mb, min(b), ratio, target, "ok" if ratio <= target else "OVER"))
sys.exit(0 if ratio <= target else 1)
PY
done
exit $status
