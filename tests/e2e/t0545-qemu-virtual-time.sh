#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 2400 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# A virtual clock (docs/virtual-time.md): a qemu guest whose time counts the
# instructions it executes ("clock": "virtual", qemu -icount), so that what
# it measures does not depend on the host. On Debian's 6.1 kernel, 1 vCPU,
# preempt=none against full switched at run time, cyclictest under hackbench
# load, 3 interleaved rounds:
# - every boot is recorded with its clock and shift, the results view and
#   `schedlab plan` show them;
# - the median wakeup latency repeats exactly (the tails come close), and
#   `compare` decides the known answer from 3 runs a side: full preempts
#   sooner than none, lat_p50_us better for full "(exact data)" (measured
#   2026-12-06 at shift 2: 20 us under none, 16 under full; each rep under
#   its own seed since, so decided for this metric alone: p_exact 0.035);
# - the same plan run again beside a CPU hog on every host CPU gives each
#   mode's medians within 10% (measured: 0.3% mostly, 6.3% at most,
#   docs/virtual-time.md);
# - a compare across clocks says so.
# Cost: 390 s measured with a CPU hog and other guests beside it (two
# sessions of 6 runs, the second beside stress-ng); about 3 min quiet;
# 1138 s with the seeds at host load 10-24 (quiet: lat_p50_us 20 20 20
# against 16 16 16 under three seeds, decided alone, p_exact 0.035).
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
{ "name": "$1", "repetitions": $2, "seed": 3, "switch": "runtime",
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "clock": "virtual",
             "memory_mb": 768},
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
equals "the boots were switched at run time in one guest" \
	"$(sql "SELECT count(*) FROM boot WHERE method = 'runtime' AND status = 'ok'")" 5
# the median wakeup latency repeats: all or all but one of a mode's runs
# the same (measured at shift 2: 20 us under none, 16 under full; now and
# then one run 1 us off, 21 or 15, in either mode or both, and compare
# still decides: near-exact data). CI once saw three values a mode (none
# 20/21/22, full 16/15/15): the check is that a mode's runs lie within 2 us
# (under the real clock they lie hundreds apart); the tails come close
# (p99 none 61-69, full 44-53), they are printed, not asserted
got=$(sql "SELECT group_concat(preempt || ':' || n || 'x' || d, ' ') FROM (SELECT preempt,
	count(*) AS n, count(DISTINCT value) AS d FROM results WHERE tag = 'quiet' AND metric = 'lat_p50_us'
	GROUP BY preempt ORDER BY preempt)")
spread=$(sql "SELECT group_concat(preempt || ':' || s, ' ') FROM (SELECT preempt, max(value) - min(value) AS s
	FROM results WHERE tag = 'quiet' AND metric = 'lat_p50_us' GROUP BY preempt ORDER BY preempt)")
exact=0
# identical a mode: decided (near-exact, one run off, has p_exact 0.086 of
# an unknown source since the seeds: better or inconclusive, as below)
case "$got" in "full:3x1 none:3x1") exact=1 ;; esac
case "$spread" in
"full:"[012]*" none:"[012]*) [ "${spread#full:}" != "$spread" ] &&
	awk -v s="$spread" 'BEGIN { n = split(s, a, /[ :]/); for (i = 2; i <= n; i += 2) if (a[i] + 0 > 2) exit 1 }' &&
	ok "lat_p50_us repeats: 3 runs a mode within 2 us ($got; spread $spread)" ||
	not_ok "lat_p50_us repeats: 3 runs a mode within 2 us" "got '$got', spread '$spread'" ;;
*) not_ok "lat_p50_us repeats: 3 runs a mode within 2 us" "got '$got', spread '$spread'" ;;
esac
echo "# values: $(sql "SELECT preempt || ' ' || metric || '=' || group_concat(value, '/') FROM results
	WHERE tag = 'quiet' AND metric IN ('lat_p50_us', 'lat_avg_us', 'lat_p99_us', 'lat_max_us')
	GROUP BY preempt, metric" | tr '\n' ';')"

# --- the known answer, decided from 3 runs a side: full preempts sooner
schedlab compare preempt=none,tag=quiet preempt=full,tag=quiet --db "$DB" >"$TMP/cmp.out" 2>&1
sed 's/^/# /' "$TMP/cmp.out" | head -n 24
contains "compare's header names the clock" "$TMP/cmp.out" "clock: virtual, shift 2 on both sides"
# each rep ran under a seed of its own (docs/virtual-time.md "Seeds"), so
# identical values are exact data of an unknown source, p_exact 0.035 at 3
# a side: decided for this one metric (Benjamini-Hochberg over the seven
# would ask for 5 a side), not across the table
schedlab compare preempt=none,tag=quiet preempt=full,tag=quiet --db "$DB" \
	--metric cyclictest.lat_p50_us >"$TMP/cmp1.out" 2>&1
row=$(grep -E "^ +lat_p50_us " "$TMP/cmp1.out")
# all or all but one the same a mode: exact data, decided from 3 a side;
# three values in a mode: not exact, so never decided on them, and never
# the wrong way
if [ "$exact" = 1 ]; then
	case "$row" in
	*"better (exact data)"*) ok "compare decides lat_p50_us better under full from 3 runs a side (exact data)" ;;
	*) not_ok "compare decides lat_p50_us better under full from 3 runs a side (exact data)" "$row" ;;
	esac
else
	case "$row" in
	*" worse"*) not_ok "runs not exact: compare does not decide lat_p50_us the wrong way" "$row" ;;
	*" better"* | *" inconclusive"*) ok "runs not exact: lat_p50_us better or inconclusive, never worse ($got)" ;;
	*) not_ok "runs not exact: compare does not decide lat_p50_us the wrong way" "$row" ;;
	esac
fi
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
# each mode's median of the central metrics within 10% of the quiet
# session's: measured within 0.3% in most sessions (lat_avg_us 22.13 vs
# 22.09 under none, 16.92 vs 16.89 under full; lat_p50_us equal), and
# 5-6% when a mode's runs fell into its other state (full has two: p99
# about 22 or about 45-50 us, p50 15 or 16, avg 15.9 or 16.8; which one a
# run gets is not the host's load alone, docs/virtual-time.md), where the
# real clock's medians move by a factor of 2 and more with the host's load
med() { # TAG PREEMPT METRIC: the median of the three runs
	sql "SELECT value FROM results WHERE tag = '$1' AND preempt = '$2' AND metric = '$3'
		ORDER BY value LIMIT 1 OFFSET 1"
}
for pm in none full; do
	for m in lat_p50_us lat_avg_us; do
		q=$(med quiet $pm $m) h=$(med hog $pm $m)
		if [ -n "$q" ] && [ -n "$h" ] && awk -v q="$q" -v h="$h" 'BEGIN { d = (h - q) / q; exit !(d < 0.10 && d > -0.10) }'; then
			ok "host load: $pm $m median $q quiet, $h beside the hog (within 10%)"
		else
			not_ok "host load: $pm $m median within 10%" "quiet '$q', beside the hog '$h'"
		fi
	done
done
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
