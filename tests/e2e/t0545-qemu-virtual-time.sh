#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 2400 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# A virtual clock (docs/virtual-time.md): a qemu guest whose time counts the
# instructions it executes ("clock": "virtual", qemu -icount), sealed (no
# input from the host after its start: "Sealed runs"), so that what it
# measures does not depend on the host at all. On Debian's 6.1 kernel, 1
# vCPU, preempt=none against full (a sealed guest a mode, its 3 runs in
# it: "order": "sequential"), cyclictest under hackbench load:
# - every boot is recorded with its clock and shift and as sealed, the
#   results view and `schedlab plan` show them;
# - the known answer run by run: every run under full has a lower median
#   wakeup latency than every run under none (sealed, 2026-12-07: none
#   22/19/20 us, full 15/15/15), and `compare` never decides it the wrong
#   way (3 runs a side of one guest, not all equal: "inconclusive (~6
#   reps)" is its honest answer);
# - the same plan run again beside a CPU hog on every host CPU stores the
#   same value for every metric, bit for bit (live, the medians moved by up
#   to 6%: docs/virtual-time.md);
# - a compare across clocks says so.
# Each rep runs under a seed of its own (docs/virtual-time.md "Seeds").
# Cost: 4 boots of 6.1 (two sessions of 2 sealed guests, 6 runs); at host
# load 21-23 on 2 CPUs (a busy-test, a kernel build and 7 builds beside
# it) 1067 s and 896 s a session; at the usual load of CI a few minutes.
. "$(dirname "$0")/lib.sh"
DB=$TMP/v.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3 stress-ng:stress-ng
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi

plan() { # NAME REPETITIONS
	cat <<P
{ "name": "$1", "repetitions": $2, "seed": 3, "order": "sequential",
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "clock": "virtual",
             "memory_mb": 768, "sealed": true},
  "matrix": {"preempt": ["none", "full"]},
  "workloads": [ {"type": "cyclictest", "duration_s": 2,
                  "load": {"type": "hackbench", "groups": 1}} ] }
P
}
plan vt 3 >"$TMP/vt.json"
schedlab plan "$TMP/vt.json" >"$TMP/plan.out" 2>&1
contains "plan shows the virtual clock and its shift" "$TMP/plan.out" "clock: virtual (icount shift 2"

# sysinfo boots the guest as a plan would and says which clock it runs on
schedlab sysinfo --target '{"type": "qemu", "kernel": "kernels/out/debian", "clock": "virtual", "memory_mb": 768}' \
	>"$TMP/si.out" 2>&1
contains "sysinfo names the virtual clock and its shift" "$TMP/si.out" "clock: virtual (icount shift 2: every instruction 4 ns"
# 2 vCPUs need qemu >= 8.1 (t0546 runs them): an older one is refused
printf '#!/bin/sh\necho "QEMU emulator version 7.2.22 (fake)"\n' >"$TMP/qemu-old"
chmod +x "$TMP/qemu-old"
schedlab sysinfo --target "{\"type\": \"qemu\", \"clock\": \"virtual\", \"cpus\": 2, \"qemu\": \"$TMP/qemu-old\"}" \
	>"$TMP/si2.out" 2>&1
contains "sysinfo refuses 2 vCPUs on a virtual clock with qemu 7.2, naming why" "$TMP/si2.out" \
	"2 vCPUs on a virtual clock need qemu >= 8.1"

# --- a quiet session (as quiet as the host is: the values must not care)
t0=$(date +%s)
schedlab run "$TMP/vt.json" --db "$DB" --tag quiet --quiet >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && resume_if_lost "$DB" && rc=0
equals "the virtual-clock session ran (exit 0)" "$rc" 0
[ $rc = 0 ] || { echo "# $(tail -n 5 "$TMP/err")"; }
echo "# quiet session: $(($(date +%s) - t0)) s wall"
equals "every boot recorded clock virtual, shift 2" \
	"$(sql "SELECT group_concat(DISTINCT clock || ':' || clock_shift) FROM boot WHERE status = 'ok'")" "virtual:2"
equals "the results view shows the clock" \
	"$(sql "SELECT group_concat(DISTINCT clock || ':' || clock_shift) FROM results")" "virtual:2"
equals "each mode ran in a sealed guest of its own" \
	"$(sql "SELECT count(*) || ' ' || group_concat(DISTINCT method) FROM boot WHERE status = 'ok'")" "2 sealed"
# the known answer run by run: every run under full has a lower median
# wakeup latency than every run under none (the runs of one sealed guest
# are not identical to each other: the first after the boot differs, e.g.
# none 22/19/20 us, full 15/15/15, 2026-12-07; but the same in every
# session, below)
sep=$(sql "SELECT (SELECT max(value) FROM results WHERE tag = 'quiet' AND metric = 'lat_p50_us'
	AND preempt = 'full') < (SELECT min(value) FROM results WHERE tag = 'quiet'
	AND metric = 'lat_p50_us' AND preempt = 'none')")
got=$(sql "SELECT group_concat(preempt || ':' || v, ' ') FROM (SELECT preempt, group_concat(value, '/') AS v
	FROM results WHERE tag = 'quiet' AND metric = 'lat_p50_us' GROUP BY preempt ORDER BY preempt)")
equals "lat_p50_us: every run under full below every run under none ($got)" "$sep" 1
echo "# values: $(sql "SELECT preempt || ' ' || metric || '=' || group_concat(value, '/') FROM results
	WHERE tag = 'quiet' AND metric IN ('lat_p50_us', 'lat_avg_us', 'lat_p99_us', 'lat_max_us')
	GROUP BY preempt, metric" | tr '\n' ';')"

# --- the known answer from 3 runs a side: full preempts sooner
schedlab compare preempt=none,tag=quiet preempt=full,tag=quiet --db "$DB" >"$TMP/cmp.out" 2>&1
sed 's/^/# /' "$TMP/cmp.out" | head -n 24
contains "compare's header names the clock" "$TMP/cmp.out" "clock: virtual, shift 2 on both sides"
# each rep ran under a seed of its own (docs/virtual-time.md "Seeds"):
# lat_p50_us asked alone (Benjamini-Hochberg over the table's seven
# metrics would ask for more a side)
schedlab compare preempt=none,tag=quiet preempt=full,tag=quiet --db "$DB" \
	--metric cyclictest.lat_p50_us >"$TMP/cmp1.out" 2>&1
row=$(grep -E "^ +lat_p50_us " "$TMP/cmp1.out")
# 3 runs a side that are not all the same: never decided on too few, and
# never the wrong way (3 a side that do not overlap give p = 0.1: the
# verdict is "inconclusive (~N reps)", N the repetitions it needs)
case "$row" in
*" worse"*) not_ok "compare does not decide lat_p50_us the wrong way" "$row" ;;
*" better"* | *" inconclusive"*) ok "lat_p50_us better or inconclusive, never worse ($got)" ;;
*) not_ok "compare does not decide lat_p50_us the wrong way" "$row" ;;
esac
row=$(grep -E "^ +lat_avg_us " "$TMP/cmp.out")
case "$row" in
*" -"[0-9]*) ok "lat_avg_us lower under full" ;;
*) not_ok "lat_avg_us lower under full" "$row" ;;
esac

# --- the same plan beside a CPU hog on every host CPU
setsid stress-ng --cpu "$(nproc)" --timeout 1800 >/dev/null 2>&1 &
hog=$!
CLEANUP_CMDS+=("kill -TERM -- -$hog")
sleep 1
t0=$(date +%s)
schedlab run "$TMP/vt.json" --db "$DB" --tag hog --quiet >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && resume_if_lost "$DB" && rc=0
kill -TERM -- -"$hog" 2>/dev/null
wait "$hog" 2>/dev/null
equals "the session beside the hog ran (exit 0)" "$rc" 0
echo "# session beside stress-ng --cpu $(nproc): $(($(date +%s) - t0)) s wall"
# every value the same as the quiet session's, bit for bit: a sealed guest
# takes no input from the host, so the host's load changes its wall time
# only (live, the medians moved by up to 6% and the tails more)
vals() { sql "SELECT preempt || ' rep ' || rep || ' ' || metric || '=' || printf('%.17g', value)
	FROM results WHERE tag = '$1' ORDER BY 1"; }
vals quiet >"$TMP/quiet.vals"
vals hog >"$TMP/hog.vals"
n=$(wc -l <"$TMP/quiet.vals")
[ "$n" -ge 30 ] && ok "the quiet session stored $n metric values" || not_ok "metric values stored" "$n"
if cmp -s "$TMP/quiet.vals" "$TMP/hog.vals"; then
	ok "host load: every metric value beside the hog equals the quiet one's, bit for bit ($n values)"
else
	not_ok "host load: every metric value beside the hog equals the quiet one's" \
		"$(diff "$TMP/quiet.vals" "$TMP/hog.vals" | head -n 8)"
fi
echo "# beside the hog: $(sql "SELECT preempt || ' ' || metric || '=' || group_concat(value, '/') FROM results
	WHERE tag = 'hog' AND metric IN ('lat_p50_us', 'lat_avg_us', 'lat_p99_us', 'lat_max_us')
	GROUP BY preempt, metric" | tr '\n' ';')"

# --- rows of a real clock are never pooled with these: a side that mixes
# clocks is named (a real-clock row made from a virtual one by hand)
sql "UPDATE boot SET clock = 'real', clock_shift = NULL WHERE id = (SELECT min(boot) FROM results
	WHERE tag = 'hog' AND preempt = 'none')"
schedlab compare preempt=none preempt=full --db "$DB" --metric lat_max_us >"$TMP/mix.out" 2>&1
contains "compare names a side that mixes clocks" "$TMP/mix.out" "side A mixes 2 clocks ("
no_leftovers "no guest or workload left"
done_testing
