#!/usr/bin/env bash
# Benchmark (not a test; issue 49 step 6, docs/virtual-time.md "Cost"): what
# a virtual-time guest costs in host time, sealed against live, on 1 and 2
# vCPUs, on the host as it is and beside a CPU hog on every host CPU.
#
# Each case is one session of Debian's 6.1 (kernels/out/debian) at
# preempt=full, "clock": "virtual" (shift 2), 2 repetitions of
#   cyclictest 5 s under hackbench (a busy guest) and
#   pingpong 2 stages 5 s (a mostly waiting one),
# with "sealed" true or false. Reported per case:
#   wall      the session's wall time (boots, settles and all);
#   guest     the guest seconds its runs measured (the sum of run.wall_s,
#             the agent's own clock: in virtual time, the guest's);
#   per_s     wall / guest: host seconds a measured guest second costs;
#   pipe      `perf bench sched pipe -l 20000` on the host just before the
#             case (usecs/op): the host's speed at that moment, so that
#             cases run at different loads can be read side by side.
# The issue's goal: sealed at most 3 host s per guest s on an idle 2-core
# host, at most twice that beside `stress-ng --cpu $(nproc)`.
#
# Then the A/B of the issue: 2 vCPUs, none vs full, cyclictest and
# pingpong, REPS repetitions a side (default 3), sealed, beside the hog:
# its wall time and what `compare` says (goal: under 10 minutes).
#
# usage: bench/sealed-cost.sh [CASE...]
#   CASE: MODE-CPUS-LOAD, MODE sealed|live, CPUS 1|2, LOAD idle|hog, or
#   "ab"; default: every case, then ab. Env: DB (keep the sessions),
#   REPS (the A/B's repetitions).
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
hog=""
cleanup() {
	[ -n "$hog" ] && kill -TERM -- "-$hog" 2>/dev/null && wait "$hog" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
DB=${DB:-$tmp/cost.db}
REPS=${REPS:-3}
cases=${*:-sealed-1-idle live-1-idle sealed-2-idle live-2-idle sealed-1-hog live-1-hog sealed-2-hog live-2-hog ab}
for t in bin/schedlab stress-ng perf sqlite3; do
	if ! command -v "$t" >/dev/null && [ ! -x "$t" ]; then
		echo "sealed-cost: $t is missing (make; apt-get install stress-ng linux-perf sqlite3)" >&2
		exit 2
	fi
done
if [ ! -f kernels/out/debian/kernel.json ]; then
	echo "sealed-cost: no Debian kernel: make -C kernels debian" >&2
	exit 2
fi
make -s --no-print-directory -C kernels qemu >/dev/null || {
	echo "sealed-cost: make -C kernels qemu failed (2 vCPUs need qemu >= 8.1)" >&2
	exit 2
}
export TMPDIR=$tmp

hog_on() {
	setsid stress-ng --cpu "$(nproc)" --timeout 3600 >/dev/null 2>&1 &
	hog=$!
	sleep 1
}
hog_off() {
	[ -n "$hog" ] || return 0
	kill -TERM -- "-$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	hog=""
}
pipe_us() { # the host's usecs per op of perf bench sched pipe, now
	perf bench sched pipe -l 20000 2>/dev/null | sed -n 's/^ *\([0-9.]*\) usecs\/op.*/\1/p'
}
plan() { # SEALED CPUS REPS MATRIX
	cat <<P
{ "name": "sealed-cost", "repetitions": $3, "seed": 7,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "clock": "virtual",
             "cpus": $2, "memory_mb": 768, "sealed": $1},
  "matrix": {"preempt": $4},
  "workloads": [
    {"type": "cyclictest", "duration_s": 5, "load": {"type": "hackbench", "groups": 1}},
    {"type": "pingpong", "stages": 2, "duration_s": 5} ] }
P
}
session() { # TAG PLANFILE: run it; its wall seconds in $wall, exit in $rc
	local t0
	t0=$(date +%s.%N)
	bin/schedlab run "$2" --db "$DB" --tag "$1" --quiet >"$tmp/$1.out" 2>"$tmp/$1.err"
	rc=$?
	wall=$(echo "$(date +%s.%N) - $t0" | bc)
	[ $rc = 0 ] || { echo "# $1: exit $rc"; tail -n 5 "$tmp/$1.err" | sed 's/^/#   /'; }
}
q() { sqlite3 "$DB" "$@"; }

printf '%-16s %8s %8s %7s %10s %6s\n' case wall_s guest_s per_s pipe_us load1
for c in $cases; do
	[ "$c" = ab ] && continue
	IFS=- read -r mode cpus load <<<"$c"
	case "$mode-$cpus-$load" in
	sealed-[12]-idle | sealed-[12]-hog | live-[12]-idle | live-[12]-hog) ;;
	*) echo "sealed-cost: unknown case '$c' (MODE-CPUS-LOAD: sealed|live, 1|2, idle|hog; or ab)" >&2; exit 2 ;;
	esac
	sealed=false
	[ "$mode" = sealed ] && sealed=true
	plan "$sealed" "$cpus" 2 '["full"]' >"$tmp/$c.json"
	[ "$load" = hog ] && hog_on
	p=$(pipe_us)
	l=$(cut -d' ' -f1 /proc/loadavg)
	session "$c" "$tmp/$c.json"
	hog_off
	g=$(q "SELECT printf('%.1f', sum(r.wall_s)) FROM run r JOIN session s ON s.id = r.session_id
		WHERE s.tag = '$c' AND r.status = 'ok'")
	per=$(awk -v w="$wall" -v g="${g:-0}" 'BEGIN { if (g > 0) printf "%.2f", w / g; else print "-" }')
	printf '%-16s %8.0f %8s %7s %10s %6s\n' "$c" "$wall" "${g:--}" "$per" "${p:--}" "$l"
done

case " $cases " in
*" ab "*)
	plan true 2 "$REPS" '["none", "full"]' >"$tmp/ab.json"
	hog_on
	session ab "$tmp/ab.json"
	hog_off
	echo "# A/B, 2 vCPUs, none vs full, $REPS repetitions a side, sealed, beside stress-ng --cpu $(nproc):" \
		"$(printf '%.0f' "$wall") s wall, exit $rc"
	bin/schedlab compare preempt=none,tag=ab preempt=full,tag=ab --db "$DB" 2>&1 | sed 's/^/#   /'
	;;
esac
