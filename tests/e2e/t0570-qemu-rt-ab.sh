#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 600 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# The known-answer A/B of issue 31: cyclictest under hackbench load and under
# stress-ng load in a qemu/TCG guest, Debian's PREEMPT_RT 6.1 kernel
# (`make -C kernels debian-rt`) against Debian's standard 6.1 kernel in
# preempt=full, interleaved, a short version of examples/rt-vs-full-qemu.json
# (2 rounds of 3 s runs instead of 5 of 10 s).
#
# What it asserts is what held under TCG with margin (docs/qemu.md, "RT
# latency under TCG"): the two boots are verified as the models asked for
# (the RT kernel by its built model rt, the standard one by its runtime mode
# full), every run is stored ok with its load, the RT guest keeps its agent
# port (the plan's `noirqdebug`: without it the forced-threaded 8250 IRQ of
# the agent's serial port is disabled by the spurious-IRQ detector, "irq 3:
# nobody cared", and the run is lost), and `schedlab compare
# preempt_build=rt preempt=full` stores and prints p99, p99.9 and max
# latency per load with n and a 95% CI. The direction of the tail latencies
# is NOT asserted: it was not stable. Measured with the example plan twice
# (seeds 1 and 2 at the same time, 5 rounds of 10 s, 2 vCPUs, the 2-core
# host shared with other helpers' builds and guests, load average 8-18);
# `compare preempt_build=rt preempt=full`, A = RT, B = full, µs, change =
# B/A - 1 [95% CI]:
#   hackbench p99   seed 1: n 5/4  27093 vs 40207  +48.4% [-82.9, +154.6]
#                   seed 2: n 5/1  24383 vs 22091   -9.4% (no CI: 4 timeouts)
#   hackbench max   seed 1: n 5/4 202494 vs 180500 -10.9% [-52.6, +172.2]
#                   seed 2: n 5/1 122848 vs 80990  -34.1% (no CI)
#   stress-ng p99   seed 1: n 5/5  39581 vs >=32666 (bound)
#                   seed 2: n 5/5  32766 vs >=27890 (bound)
#   stress-ng max   seed 1: n 5/5 175704 vs 219838 +25.1% [-72.0, +298.6]
#                   seed 2: n 5/5 184137 vs 201492  +9.4% [-79.0, +451.1]
#   p99.9: beyond the 50 ms histogram (>= 50000) on both kernels, both
#   loads, in nearly every run.
# The max latency changed direction under hackbench between the sessions
# and every CI spans zero: TCG's latency is the emulator's and the host's
# (docs/qemu.md, "RT latency under TCG").
# About 140-150 s with the kernels imported, on the 2-core host shared with
# other helpers' work (139 s with another guest of ours beside it, 149 s
# without).
. "$(dirname "$0")/lib.sh"
DB=$TMP/ab.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3 jq:jq rt-tests:cyclictest rt-tests:hackbench \
	stress-ng:stress-ng
for k in debian debian-rt; do
	[ -f kernels/out/$k/kernel.json ] || make -s -C kernels $k >/dev/null 2>&1
	if [ ! -f kernels/out/$k/kernel.json ]; then
		not_ok "kernel imported (make -C kernels $k)"; done_testing; exit
	fi
done

# the example plan, shortened: the same target, matrix and workloads
jq '.name = "rt-ab-short" | .repetitions = 2
    | .workloads |= map(.duration_s = 3 | .histogram_us = 20000)' \
	examples/rt-vs-full-qemu.json >"$TMP/ab.json"
check "the example plan validates" schedlab plan examples/rt-vs-full-qemu.json
t0=$(date +%s)
schedlab run "$TMP/ab.json" --db "$DB" --quiet >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 1 ] && resume_if_lost "$DB" && rc=0
equals "the short A/B runs (exit 0)" "$rc" 0
echo "# session: $(($(date +%s) - t0)) s"
equals "4 boots, all verified ok" \
	"$(sql "SELECT count(*) || ' ' || sum(status = 'ok') FROM boot")" "4 4"
equals "the RT boots ran the RT kernel, its built model rt" \
	"$(sql "SELECT DISTINCT json_extract(sysinfo, '\$.kernel_release.value') || ' '
		|| json_extract(sysinfo, '\$.preempt_build.value')
		FROM boot WHERE req_kernel LIKE '%debian-rt'")" \
	"$(jq -r .release kernels/out/debian-rt/kernel.json) rt"
equals "the standard boots ran the standard kernel in full" \
	"$(sql "SELECT DISTINCT json_extract(sysinfo, '\$.kernel_release.value') || ' '
		|| json_extract(sysinfo, '\$.preempt_build.value') || ' ' || preempt
		FROM boot WHERE req_kernel NOT LIKE '%debian-rt'")" \
	"$(jq -r .release kernels/out/debian/kernel.json) voluntary full"
equals "8 runs ok, each with its background load" \
	"$(sql "SELECT count(*) || ' ' || sum(status = 'ok') || ' ' || count(load) FROM run")" "8 8 8"
equals "every boot had noirqdebug; no RT guest disabled its agent's IRQ" \
	"$(sql "SELECT sum(cmdline LIKE '%noirqdebug%') || ' ' || sum(console LIKE '%nobody cared%') FROM boot")" "4 0"

# the known answer as compare gives it: A = the RT kernel, B = full
expect_exit 0 "compare preempt_build=rt preempt=full" \
	schedlab compare preempt_build=rt preempt=full --db "$DB"
cp "$TMP/out" "$TMP/cmp.txt"
contains "compare names what differs" "$TMP/cmp.txt" "compared: kernel, preempt"
for m in lat_p99_us lat_p999_us lat_max_us; do
	equals "$m: a row per load, n 2/2 each" \
		"$(grep -cE "^  $m +2/2 " "$TMP/cmp.txt")" 2
done
schedlab compare preempt_build=rt preempt=full --db "$DB" --format json >"$TMP/cmp.json"
equals "lat_max_us per load: n 2/2, a 95% CI, both centres positive" \
	"$(jq -r '[.rows[] | select(.metric == "lat_max_us")
		| select(.n_a == 2 and .n_b == 2 and .ci_lo_pct != null and .ci_hi_pct != null
			and .ci_level == 0.95 and .a > 0 and .b > 0)] | length' "$TMP/cmp.json")" 2
equals "merged histograms per load at p99 and p99.9: 2 runs a side" \
	"$(jq -r '[.rows[] | select(.kind == "histogram" and (.percentile == 99 or .percentile == 99.9))
		| select(.runs_a == 2 and .runs_b == 2 and .samples_a > 0 and .samples_b > 0)] | length' \
		"$TMP/cmp.json")" 4
sed 's/^/# /' "$TMP/cmp.txt" | grep -E 'cyclictest:|lat_p99_us|lat_p999_us|lat_max_us|latency_us p99'
LEFTOVER_NAMES+=(qemu-system-x86_64)
no_leftovers "no qemu or workload process of ours left"
done_testing
