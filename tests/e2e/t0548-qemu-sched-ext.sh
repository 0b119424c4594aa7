#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 1800 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# sched_ext schedulers as a plan axis (issue 50, docs/sched_ext.md) on
# Debian 13 backports' Linux 7.3 (make -C kernels scx: the kernel and its
# example schedulers, which make test's setup provides), in one sealed
# 2-vCPU guest on the virtual clock (docs/virtual-time.md "Sealed runs"):
# - plan time: an unknown scheduler is refused (exit 2) naming the ones the
#   kernel's build has; a mode the kernel does not offer (none) is refused;
# - "scheduler": ["eevdf", "scx_simple"] on perf-pipe (20000 round trips)
#   and pingpong: every run ok in one boot, the scheduler stored per run
#   (results.scheduler), each scx_simple run noted as verified by the
#   agent (state enabled, root/ops "simple", disabled after);
# - compare scheduler=eevdf scheduler=scx_simple decides perf-pipe, and
#   scx_simple's round trips are the faster, as in the issue's figures by
#   hand (4.97 s vs 1.41 s of guest time for a 20000-round ping-pong).
#   Measured here (qemu 10.0.13, shift 2, preempt=full, 7.3.4+deb13, this
#   plan and seed): perf-pipe time_s 1.493 s (eevdf) vs 1.426 s
#   (scx_simple), -4.5%; pingpong rps 4277 vs 4861, +13.7%; a boot of
#   perf-pipe alone gave 1.502 s vs 1.302 s (-13.3%). The direction holds,
#   the size is not the issue's (4.97 s vs 1.41 s by hand, another program)
#   and moves with what ran before in the boot.
# Cost: one 2-vCPU boot, 107 s for the whole test at host load 21 (a CI
# run beside it).
. "$(dirname "$0")/lib.sh"
DB=$TMP/s.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require busybox-static:/bin/busybox cpio:cpio gzip:gzip sqlite3:sqlite3 linux-perf:perf
K=kernels/out/debian-7.3
[ -f "$K/scx/schedulers" ] || make -s -C kernels scx >/dev/null 2>&1
if [ ! -f "$K/scx/schedulers" ]; then
	not_ok "Linux 7.3 imported with its schedulers (make -C kernels scx)"; done_testing; exit
fi
provided_qemu
plan() { # SCHEDULERS [PREEMPT]
	cat <<P
{ "name": "scx", "repetitions": 1, "seed": 3,
  "target": {"type": "qemu", "kernel": "$K", "clock": "virtual",
             "sealed": true, "cpus": 2, "memory_mb": 512},
  "matrix": {"preempt": ["${2:-full}"], "scheduler": $1},
  "workloads": [ {"type": "perf-pipe", "loops": 20000},
                 {"type": "pingpong", "stages": 2, "duration_s": 2} ] }
P
}
plan '["eevdf", "scx_nope"]' >"$TMP/bad.json"
expect_exit 2 "an unknown scheduler is refused at plan time" schedlab plan "$TMP/bad.json"
contains "... naming the ones the kernel's build has" "$TMP/err" "build has no scx_nope; it has scx_"
contains "... scx_simple among them" "$TMP/err" "scx_simple"
plan '["scx_simple"]' none >"$TMP/none.json"
expect_exit 2 "a mode the kernel does not offer (none on 7.3) is refused" schedlab plan "$TMP/none.json"
contains "... naming what it offers" "$TMP/err" "preempt=none: it offers"

plan '["eevdf", "scx_simple"]' >"$TMP/p.json"
t0=$(date +%s)
schedlab run "$TMP/p.json" --db "$DB" --quiet >"$TMP/out" 2>"$TMP/err"
equals "eevdf and scx_simple in one sealed 2-vCPU boot (exit 0)" "$?" 0
echo "# session: $(($(date +%s) - t0)) s wall; $(host_load)"
equals "one boot, sealed, virtual clock" \
	"$(sql "SELECT count(*) || ' ' || group_concat(DISTINCT method || ':' || status || ':' || clock) FROM boot")" \
	"1 sealed:ok:virtual"
equals "every run ok, the scheduler stored per run" \
	"$(sql "SELECT group_concat(w || ':' || s || ':' || n, ' ') FROM (SELECT DISTINCT run_workload AS w,
		scheduler AS s, count(DISTINCT run_id) AS n FROM results GROUP BY 1, 2 ORDER BY 1, 2)")" \
	"perf-pipe:eevdf:1 perf-pipe:scx_simple:1 pingpong:eevdf:1 pingpong:scx_simple:1"
equals "no run failed" "$(sql "SELECT count(*) FROM run WHERE status <> 'ok'")" 0
equals "each scx_simple run verified by the agent (enabled, its ops, disabled after)" \
	"$(sql "SELECT count(*) FROM run WHERE json_extract(knobs, '$.scheduler') = 'scx_simple'
		AND notes LIKE '%sched_ext: scx_simple enabled for the run (root/ops simple), the kernel back on its own class after (state disabled)%'")" 2
equals "no eevdf run claims a BPF scheduler" \
	"$(sql "SELECT count(*) FROM run WHERE json_extract(knobs, '$.scheduler') = 'eevdf' AND notes LIKE '%sched_ext%'")" 0
schedlab compare --db "$DB" scheduler=eevdf,run_workload=perf-pipe \
	scheduler=scx_simple,run_workload=perf-pipe --format json >"$TMP/cmp.json" 2>"$TMP/cmp.err"
equals "compare scheduler=eevdf scheduler=scx_simple ran (exit 0)" "$?" 0
echo "# $(sql "SELECT group_concat(run_workload || ' ' || metric || ' ' || scheduler || '=' || value, '; ')
	FROM results WHERE metric IN ('time_s', 'rps') ORDER BY run_workload, scheduler")"
a=$(sql "SELECT value FROM results WHERE run_workload = 'perf-pipe' AND metric = 'time_s' AND scheduler = 'eevdf'")
b=$(sql "SELECT value FROM results WHERE run_workload = 'perf-pipe' AND metric = 'time_s' AND scheduler = 'scx_simple'")
if awk -v a="$a" -v b="$b" 'BEGIN { exit !(b < a) }'; then
	ok "perf-pipe: scx_simple's 20000 round trips the faster ($b s vs $a s of guest time)"
else
	not_ok "perf-pipe: scx_simple's round trips the faster" "eevdf $a s, scx_simple $b s"
fi
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["compared"], [r["verdict_text"] for r in d["rows"] if r["metric"] == "time_s"])' \
	"$TMP/cmp.json" >"$TMP/verdict" 2>&1
contains "... and compare decides it on the scheduler alone (better, exact data)" \
	"$TMP/verdict" "['scheduler'] ['better (exact data)']"
equals "no guest of ours left" "$(ours qemu-system)" ""
done_testing
