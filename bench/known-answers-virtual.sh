#!/usr/bin/env bash
# Known answers in virtual time (not a test; docs/virtual-time.md, "Known
# answers"): each question as a plan on a qemu guest whose clock counts
# instructions ("clock": "virtual", 1 vCPU, the default shift), 3
# interleaved runs a side, and what `schedlab compare` says of it:
#   preempt   none vs full: cyclictest under hackbench (wakeup latency)
#   lockholder none vs full: holder preemptions with page faults in the
#             critical section, and without a kernel entry
#   rt        Debian's PREEMPT_RT 6.1 vs its 6.1 in preempt=full: cyclictest
#             under hackbench and under stress-ng
#   hz        HZ=250 vs HZ=1000 (the minimal variants hz250/hz1000 +
#             sched_mc_off + tracing, built when missing: minutes):
#             cyclictest as SCHED_OTHER beside a CPU hog with wakeup
#             preemption off (NO_WAKEUP_PREEMPTION), so that a woken task
#             waits for the next tick: its latency is timer-bound
#   dd612     Debian's 6.12 (make -C kernels debian SERIES=6.12): the
#             6.12 feature DELAY_DEQUEUE on vs off, on perf bench sched
#             pipe and hackbench (examples/delay-dequeue-virtual-6.12.json)
#   rt612     Debian's 6.12 PREEMPT_RT: full vs lazy (its default) vs
#             laziest, cyclictest SCHED_FIFO under hackbench and stress-ng,
#             and SCHED_OTHER beside a CPU hog (lazy defers fair-on-fair
#             preemption to the tick; examples/rt-full-vs-lazy-virtual-6.12
#             .json and rt-lazy-fair-virtual-6.12.json)
#   v612      Debian's 6.1 vs its 6.12, voluntary: perf-pipe and hackbench
#             (examples/6.1-vs-6.12-virtual.json)
#   (docs/kernels.md "Known answers on 6.12" has their tables)
#   bench/known-answers-virtual.sh [QUESTION...]   (default: the first four;
#   env DB=file to keep the sessions, SHIFT=N for another icount shift)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DB=${DB:-$tmp/ka.db}
SHIFT=${SHIFT:-2}
questions=${*:-preempt lockholder rt hz}
example() { # NAME EXAMPLE: the example plan with this script's shift
	sed "s/\"clock\": \"virtual\",/\"clock\": \"virtual\", \"icount_shift\": $SHIFT,/" \
		"examples/$2" >"$tmp/$1.json"
	run "$1" "$tmp/$1.json"
}
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian
target() { # KERNEL [APPEND]
	printf '{"type": "qemu", "kernel": "%s", "clock": "virtual", "icount_shift": %s, "memory_mb": 768, "append": "%s"}' \
		"$1" "$SHIFT" "${2:-}"
}
run() { # NAME PLANFILE: run it, print its wall time and exit status
	local t0 rc
	t0=$(date +%s)
	set +e
	bin/schedlab run "$2" --db "$DB" --tag "$1" --quiet >"$tmp/$1.out" 2>"$tmp/$1.err"
	rc=$?
	set -e
	echo "## $1: $(($(date +%s) - t0)) s wall, exit $rc"
	[ $rc = 0 ] || tail -n 5 "$tmp/$1.err"
}
values() { # TAG METRIC...: the values of each configuration, in run order
	local m in=""
	for m in "$@"; do in="$in${in:+,}'$m'"; done
	bin/schedlab query --db "$DB" "SELECT coalesce(kernel_release, '') || ' ' || preempt || ' ' ||
		coalesce(hz, '') || ' ' || coalesce(json_extract(params, '\$.enter'), '') AS config, metric,
		group_concat(value, ' ') AS runs FROM (SELECT * FROM results WHERE tag = '$1' AND metric IN ($in)
		ORDER BY run_id) GROUP BY config, metric"
}

for q in $questions; do
	case $q in
	preempt)
		cat >"$tmp/p.json" <<P
{"name": "ka-preempt", "switch": "runtime", "repetitions": 3, "seed": 1,
 "target": $(target kernels/out/debian), "matrix": {"preempt": ["none", "full"]},
 "workloads": [{"type": "cyclictest", "duration_s": 2, "load": {"type": "hackbench", "groups": 1}}]}
P
		run preempt "$tmp/p.json"
		values preempt lat_max_us lat_p99_us lat_avg_us
		bin/schedlab compare preempt=none,tag=preempt preempt=full,tag=preempt --db "$DB" \
			| grep -E "workload|lat_max|lat_p99|lat_avg|holder_preempt_pct|spin_cpu|req_p50|rps|mixes" || true
		;;
	lockholder)
		cat >"$tmp/l.json" <<P
{"name": "ka-lockholder", "switch": "runtime", "repetitions": 3, "seed": 1,
 "target": $(target kernels/out/debian), "matrix": {"preempt": ["none", "full"]},
 "workloads": [
   {"type": "lockholder", "duration_s": 2, "threads": 4, "enter": "fault", "entries": 8, "cs_us": 2, "detect": "rseq"},
   {"type": "lockholder", "duration_s": 2, "threads": 4, "enter": "none", "cs_us": 20, "detect": "rseq"}]}
P
		run lockholder "$tmp/l.json"
		values lockholder holder_preempt_pct spin_cpu_pct
		bin/schedlab compare preempt=none,tag=lockholder preempt=full,tag=lockholder --db "$DB" \
			| grep -E "workload|lat_max|lat_p99|lat_avg|holder_preempt_pct|spin_cpu|req_p50|rps|mixes" || true
		;;
	rt)
		[ -f kernels/out/debian-rt/kernel.json ] || make -s -C kernels debian-rt
		cat >"$tmp/r.json" <<P
{"name": "ka-rt", "switch": "reboot", "repetitions": 3, "seed": 1,
 "target": $(target kernels/out/debian noirqdebug),
 "matrix": {"kernel": ["kernels/out/debian", "kernels/out/debian-rt"], "preempt": ["full"]},
 "workloads": [
   {"type": "cyclictest", "duration_s": 2, "histogram_us": 50000, "load": {"type": "hackbench", "groups": 1}},
   {"type": "cyclictest", "duration_s": 2, "histogram_us": 50000, "load": {"type": "stress-ng", "stressor": "cpu"}}]}
P
		run rt "$tmp/r.json"
		values rt lat_max_us lat_p99_us
		bin/schedlab compare preempt=full,tag=rt preempt=rt,tag=rt --db "$DB" \
			| grep -E "workload|lat_max|lat_p99|lat_avg|holder_preempt_pct|spin_cpu|req_p50|rps|mixes" || true
		;;
	hz)
		k250=$(kernels/build-variant.sh hz250 sched_mc_off tracing | tail -n 1)
		k1000=$(kernels/build-variant.sh hz1000 sched_mc_off tracing | tail -n 1)
		cat >"$tmp/h.json" <<P
{"name": "ka-hz", "switch": "reboot", "repetitions": 3, "seed": 1,
 "target": $(target "$k1000"),
 "matrix": {"kernel": ["$k250", "$k1000"], "preempt": ["none"],
            "knobs": [{"sched_features": ["NO_WAKEUP_PREEMPTION"]}]},
 "workloads": [{"type": "cyclictest", "duration_s": 2, "policy": "other", "priority": 0,
                "load": {"type": "stress-ng", "stressor": "cpu"}}]}
P
		run hz "$tmp/h.json"
		values hz lat_p50_us lat_p99_us lat_max_us
		bin/schedlab compare hz=250,tag=hz hz=1000,tag=hz --db "$DB" | grep -E "workload|lat_p50|lat_p99|lat_max|mixes" || true
		;;
	dd612)
		[ -f kernels/out/debian-6.12/kernel.json ] || make -s -C kernels debian SERIES=6.12
		example dd612 delay-dequeue-virtual-6.12.json
		bin/schedlab query --db "$DB" "SELECT knobs, workload, metric, group_concat(value, ' ') AS runs
			FROM (SELECT * FROM results WHERE tag = 'dd612' AND metric IN ('usecs_per_op', 'time_s')
			ORDER BY run_id) GROUP BY knobs, workload, metric"
		;;
	rt612)
		[ -f kernels/out/debian-6.12-rt/kernel.json ] || make -s -C kernels debian-rt SERIES=6.12
		example rt612 rt-full-vs-lazy-virtual-6.12.json
		values rt612 lat_p50_us lat_p99_us lat_max_us
		bin/schedlab compare preempt=rt,tag=rt612 preempt=rt-lazy,tag=rt612 --db "$DB" \
			| grep -E "workload|lat_max|lat_p99|mixes" || true
		example rt612fair rt-lazy-fair-virtual-6.12.json
		values rt612fair lat_p50_us lat_p99_us lat_max_us
		;;
	v612)
		[ -f kernels/out/debian-6.12/kernel.json ] || make -s -C kernels debian SERIES=6.12
		example v612 6.1-vs-6.12-virtual.json
		values v612 usecs_per_op time_s
		;;
	*) echo "known-answers: unknown question '$q' (preempt lockholder rt hz dd612 rt612 v612)" >&2; exit 2 ;;
	esac
done
