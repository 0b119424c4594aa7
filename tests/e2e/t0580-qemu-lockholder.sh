#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 420 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# The lock-holder-preemption known answer in a qemu/TCG guest of Debian's
# 6.1 kernel (PREEMPT_DYNAMIC): 8 threads on 2 vCPUs take one userspace
# spinlock (tts-yield, s_lock's spin-then-block with sched_yield), with 8
# page faults on fresh memory inside the critical section or no kernel
# entry (20 us of work instead), under preempt=none and preempt=full in one
# guest ("switch": "runtime", interleaved, 5 rounds), holder switch-outs
# seen through the rseq area (no system call in the hold).
#
# What the issue expected: more holder preemptions and more spin time under
# full with the faults, no difference without a kernel entry. What was
# measured here (2026-12-06, by hand, sessions like this plan's, host
# shared with other tests), median holder_preempt_pct none -> full:
#   faults, 2 vCPUs, 8 threads, rseq:        3.02 -> 2.02 (-33%, CI -40..+14)
#   no entry, 2 vCPUs, 8 threads, rseq:      0.80 -> 0.69 (-14%, CI -32..+5)
#   faults (4 pages), getrusage, 3 rounds:   2.43 -> 2.91;  no entry 0.63 -> 0.78
#   faults, 1 vCPU, 4 threads, 1 ms sleeps:  3.13 -> 2.79;  no entry 0.24 -> 0.20
#   spin_cpu_pct with faults: 14.7 -> 20.1 (+36%, CI -30..+125), inconclusive
#   this test's first run: faults 2.87 -> 3.21 (+12%, CI -28..+82), no entry
#   0.88 -> 0.84 (-4%, CI -42..+29); faults/no entry 3.3x (none), 3.8x (full)
#   its second run: faults 3.68 -> 3.23 (-12%, CI -49..+54), no entry
#   0.68 -> 0.83 (+21%, CI -0.2..+137); faults/no entry 5.4x, 3.9x
#   third: faults 3.21 -> 4.80 (+50%, CI -25..+104), no entry 0.99 -> 0.98
#   fourth: faults 2.65 -> 2.47 (-7%), no entry 0.99 -> 0.85 (-14%)
#   fifth: faults 3.84 -> 6.57 (+71%, CI +8..+136), no entry 1.29 -> 0.89
#   sixth: faults 3.02 -> 3.80 (+26%, CI -25..+48), no entry 1.07 -> 1.04
#   seventh: faults 3.62 -> 2.95 (-19%, CI -42..+21), no entry 0.83 -> 0.80
#   (eight sessions, median change: faults +2.5%, no entry -4%)
# So the direction the issue expected does not show reliably on 6.1: with
# preempt=none the holder is still switched out at the return to user
# that ends its page fault, and that return is inside the critical
# section; full only moves the switch-out into the fault (our reading of
# 6.1's exit-to-user path; the fifth session says a smaller effect may
# hide below TCG's noise). What holds with
# margin, and is asserted: (1) in both modes a kernel entry inside the
# critical section makes holder preemptions per hold several times more
# frequent (measured 2.9x-13x; asserted >= 1.5x on the medians), and (2)
# `schedlab compare` none vs full (threshold 100%: a factor 2) finds, with
# no kernel entry, the medians of holder_preempt_pct within a factor 2 of
# each other and no confirmed change beyond it ("no change" or
# "inconclusive"; measured ratios 0.69-1.21; a strict "no change" is not
# asserted: with 5 rounds the CI reached +137% once), and with the faults
# that full does not halve it (ratios 0.67-1.71 in eight sessions, once with
# a CI of +8..+136%: whether full raises it is not settled at this noise,
# and not asserted). About 90-120 s on a shared host.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3 python3:python3
require_built bin/schedlab bin/schedlab-agent bin/sl-lockholder
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi

cat >"$TMP/lh.json" <<P
{ "name": "lockholder-ab", "switch": "runtime", "order": "interleaved", "repetitions": 5,
  "seed": 1,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 768},
  "matrix": {"preempt": ["none", "full"]},
  "workloads": [
    {"type": "lockholder", "duration_s": 2, "threads": 8, "enter": "fault", "entries": 8,
     "cs_us": 2, "detect": "rseq"},
    {"type": "lockholder", "duration_s": 2, "threads": 8, "enter": "none", "cs_us": 20,
     "detect": "rseq"} ] }
P
schedlab run "$TMP/lh.json" --db "$DB" --tag lh >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 0 ] || resume_if_lost "$DB"
equals "none and full, faults and no kernel entry, 5 rounds: every run ok" \
	"$(sql "SELECT count(*) || ':' || sum(status = 'ok') FROM run")" "20:20"
equals "the guest ran both modes (the mode it reported)" \
	"$(sql "SELECT group_concat(p) FROM (SELECT DISTINCT preempt AS p FROM results ORDER BY p)")" "full,none"
equals "every run: holds > 0, holder preemptions <= holds" \
	"$(sql "SELECT count(*) FROM (SELECT run_id, sum(CASE WHEN metric = 'holds' THEN value END) AS h, sum(CASE WHEN metric = 'holder_preemptions' THEN value END) AS p FROM results GROUP BY run_id) WHERE h > 0 AND p >= 0 AND p <= h")" 20
# faults: minor + major (the kernel counts a fault it retried as major)
fl=$(sql "SELECT group_concat(e || ':' || n, ' ') FROM (SELECT json_extract(params, '\$.enter') AS e, sum(CASE WHEN json_extract(params, '\$.enter') = 'fault' THEN value >= 8 ELSE value < 1 END) AS n FROM results WHERE metric = 'faults_per_hold' GROUP BY e ORDER BY e)")
equals "the fault runs faulted every page in every hold, the others never" "$fl" "fault:10 none:10"
[ "$fl" = "fault:10 none:10" ] || sql "SELECT run_id, preempt, json_extract(params, '\$.enter'), metric, value FROM results WHERE metric LIKE '%_per_hold' OR metric = 'holds' ORDER BY run_id, metric" | sed 's/^/#   /'
equals "6.1 has no rseq time-slice extension: every run says so" \
	"$(sql "SELECT count(*) FROM run WHERE notes LIKE 'rseq time-slice extension: unavailable (%'")" 20

# (1) per mode: the faults make preempted holds more frequent
sqlite3 -batch -noheader "$DB" "SELECT preempt, json_extract(params, '\$.enter'), value FROM results WHERE metric = 'holder_preempt_pct'" >"$TMP/pct"
python3 - "$TMP/pct" >"$TMP/ratio" <<'PY'
import statistics, sys
v = {}
for line in open(sys.argv[1]):
    p, e, x = line.strip().split("|")
    v.setdefault((p, e), []).append(float(x))
for p in ("none", "full"):
    f, n = statistics.median(v[(p, "fault")]), statistics.median(v[(p, "none")])
    print(f"{p} {f:.3f} {n:.3f} {f / n if n else float('inf'):.2f}")
PY
echo "# holder_preempt_pct medians (mode, faults, no entry, ratio):"; sed 's/^/#   /' "$TMP/ratio"
equals "both modes: faults in the critical section make holder preemptions >= 1.5x as frequent" \
	"$(awk '$4 >= 1.5 { n++ } END { print n + 0 }' "$TMP/ratio")" 2

# (2) none vs full: no change beyond a factor 2, with or without the faults
expect_exit 0 "compare preempt=none with preempt=full" \
	schedlab compare preempt=none preempt=full --db "$DB" --metric holder_preempt_pct \
	--threshold 100 --format json
sed 's/^/#   /' <(python3 -c 'import json,sys; [print(r["series"], r["a"], r["b"], "%+.1f%%" % r["change_pct"], "[%+.1f, %+.1f]" % (r["ci_lo_pct"], r["ci_hi_pct"]), r["verdict"]) for r in json.load(open(sys.argv[1]))["rows"]]' "$TMP/out")
# per series: "VERDICT RATIO" (B/A of the medians) from compare's JSON
row() { python3 -c 'import json,sys; print(" ".join("%s %.3f" % (r["verdict"].replace(" ", "_"), 1 + r["change_pct"] / 100) for r in json.load(open(sys.argv[1]))["rows"] if ("enter=" + sys.argv[2]) in r["series"]))' "$TMP/out" "$1"; }
within2() { # NAME ENTER: the medians within a factor 2, and no confirmed change beyond it
	local r; r=$(row "$2")
	if [ -n "$r" ] && awk -v v="${r% *}" -v x="${r#* }" 'BEGIN { exit !((v == "no_change" || v == "inconclusive") && x > 0.5 && x < 2) }'; then
		ok "$1 ($r)"
	else
		not_ok "$1" "compare: ${r:-no row}"
	fi
}
within2 "no kernel entry: the share of preempted holds does not change by a factor 2 between none and full" none
# with the faults: the issue's direction is not asserted (measured ratios
# 0.67-1.71, one CI of +8..+136%); only that full never halves the share
r=$(row fault)
if [ -n "$r" ] && awk -v v="${r% *}" -v x="${r#* }" 'BEGIN { exit !(v != "better" && x > 0.5) }'; then
	ok "page faults: full does not halve the share of preempted holds ($r)"
else
	not_ok "page faults: full does not halve the share of preempted holds" "compare: ${r:-no row}"
fi
# the spin time, for the record (the issue expected more under full): not asserted
schedlab compare preempt=none preempt=full --db "$DB" --metric spin_cpu_pct --threshold 100 \
	--format json >"$TMP/spin" 2>/dev/null &&
	sed 's/^/#   spin_cpu_pct /' <(python3 -c 'import json,sys; [print(r["series"], r["a"], r["b"], "%+.1f%%" % r["change_pct"], r["verdict"]) for r in json.load(open(sys.argv[1]))["rows"]]' "$TMP/spin")
LEFTOVER_NAMES+=(qemu-system-x86_64)
no_leftovers "no qemu or workload process of ours left"
done_testing
