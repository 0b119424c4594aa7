#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 1800 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# Known answers on SMP guests in virtual time (issue 49, step 5;
# docs/virtual-time.md, "Known answers on SMP"), each sealed, three seeds a
# side, asserting what the kernel's own code decides:
# A. A placement sched feature. With NO_WA_IDLE and NO_WA_WEIGHT,
#    wake_affine() (kernel/sched/fair.c, 6.1) has no way left to pick the
#    waker's CPU: it still counts an attempt (nr_wakeups_affine_attempts)
#    and never an affine wakeup (nr_wakeups_affine). jbb (8 s) on 2 vCPUs,
#    Debian's 6.1: task_affine_wakeup_pct is 0 in every seed with the
#    features off and above 0 in every seed with the kernel's defaults
#    (measured with agent 243abd324dd8: 9.77, 15.58, 14.67 % against 0, 0,
#    0; attempts 348, 77, 484 against 245, 71, 260). The runs alternate in one boot a seed, a
#    features-off run before a default one: a default run's affine
#    wakeups also prove the features were restored after the run before.
#    The sealed runs' schedstats (kernel.sched_schedstats set for the run
#    and restored, as in live runs) are what make task_* exist at all.
# B. SCHED_MC over two LLCs. The minimal hz1000+tracing variant against
#    the same with sched_mc_off (the variant the tests share, t0600), on
#    `"topology": {"sockets": 2, "cores": 2}` (4 vCPUs, two LLCs under
#    TCG's qemu64: docs/virtual-time.md "Topology"), pingpong 2 s, three
#    seeds a side. With SCHED_MC the guest builds MC{0-1}* MC{2-3}* under
#    DIE{0-3}; without it DIE{0-3} alone, no LLC domain. Measured: the
#    kernel without SCHED_MC placed every wakeup on the wakee's previous
#    CPU (task_migrate_wakeup_pct 0, 0, 0; migrations 8, 4, 15), with it
#    1.79, 2.00, 0.44 % (migrations 664, 732, 162); rps 5010, 4829, 4807
#    against 4587, 4590, 4600 (not asserted). With an earlier agent one
#    seed moved 0.008 %, hence the assertion over the three. jbb 8 s
#    showed the same: 0, 0, 0 against 4.15, 4.49, 3.69 %.
# C. The lock holder with threads > CPUs, none against full: lockholder
#    (6 threads on 2 vCPUs, 8 page faults in each hold, rseq detection),
#    Debian's 6.1, three seeds a side. Measured: acq_per_s 2610, 2303,
#    2547 under none against 3621, 3639, 3627 under full (about -32%),
#    every seed's none below its full; holder_preempt_pct 2.58, 2.62,
#    2.53 against 1.68, 1.67, 1.58 (the holder was switched out more
#    often under none, not less as the pgbench regression's story would
#    have it); spin_cpu_pct 48-52 against 36. (An earlier agent: 2467,
#    2687, 2430 against 3993, 3638, 3959.) compare calls it "inconclusive
#    (~6 reps)" at 3 seeds a side (the sign test needs 6 pairs): the test
#    asserts the direction per seed and that compare does not decide on
#    three.
# Cost: A, 3 sealed 2-vCPU boots of two 8 s jbb runs: 78 s at load 3; B,
# the hz1000+tracing variant (cold: one more minimal build, about 5 min on
# 2 idle cores, ccache) and 6 sealed 4-vCPU boots of a 2 s pingpong:
# 187 s at load 8 with the variants cached; C, 6 sealed 2-vCPU boots of
# a 3 s lockholder: 236 s at load 8 (niced). The values of C were the same
# bit for bit from two checkouts in different folders (-ffile-prefix-map).
. "$(dirname "$0")/lib.sh"
export TMPDIR=$TMP
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3
require_built bin/schedlab bin/sl-jbb
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi
provided_qemu

# session PART PLAN: runs the plan into $DB, says its wall time, checks exit 0
session() {
	local t0 rc
	t0=$(date +%s)
	schedlab run "$2" --db "$DB" --quiet >"$TMP/out" 2>"$TMP/err"
	rc=$?
	echo "# $1: $(($(date +%s) - t0)) s wall; $(host_load)"
	equals "$1: the sealed session ran (exit 0)" "$rc" 0
	[ "$rc" = 0 ] || tail -n 5 "$TMP/err" | sed 's/^/#   /'
}

# --- A: wake_affine without its two ways to choose the waker's CPU
DB=$TMP/wa.db
cat >"$TMP/wa.json" <<'P'
{ "name": "ka-wake-affine", "repetitions": 3, "seed": 7,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "clock": "virtual",
             "sealed": true, "cpus": 2, "memory_mb": 512},
  "switch": "runtime",
  "matrix": {"preempt": ["full"],
             "knobs": [{}, {"sched_features": ["NO_WA_IDLE", "NO_WA_WEIGHT"]}]},
  "workloads": [ {"type": "jbb", "duration_s": 8} ] }
P
session A "$TMP/wa.json"
equals "A: three sealed boots, six runs ok" \
	"$(sql "SELECT (SELECT count(*) FROM boot WHERE method = 'sealed' AND status = 'ok') || ' ' ||
		(SELECT count(*) FROM run WHERE status = 'ok')")" "3 6"
side() { # KNOBS METRIC: the seeds' values, in seed order
	sql "SELECT group_concat(v, ' ') FROM (SELECT printf('%g', value) v FROM results
		WHERE metric = '$2' AND knobs = '$1' ORDER BY seed)"
}
off='{"sched_features":["NO_WA_IDLE","NO_WA_WEIGHT"]}'
sql "SELECT knobs || ' ' || metric || ': ' || group_concat(printf('%g', value), ' ') FROM results
	WHERE metric IN ('task_affine_wakeup_pct', 'task_wakeups_affine_attempts')
	GROUP BY knobs, metric ORDER BY knobs, metric" | sed 's/^/# /'
equals "A: features off: no affine wakeup in any seed" "$(side "$off" task_affine_wakeup_pct)" "0 0 0"
n=$(sql "SELECT count(*) FROM results WHERE metric = 'task_wakeups_affine_attempts' AND value > 0")
equals "A: ... though wake_affine was tried in every run" "$n" 6
n=$(sql "SELECT count(*) FROM results WHERE metric = 'task_affine_wakeup_pct' AND knobs = '{}' AND value > 0")
equals "A: the kernel's defaults: affine wakeups in every seed (the features restored)" "$n" 3
equals "A: the guest read both features back off in each features-off run" \
	"$(sql "SELECT count(*) FROM run WHERE knobs = '$off' AND knobs_applied LIKE '%NO_WA_IDLE NO_WA_WEIGHT%'")" 3

# --- B: SCHED_MC off against on, two LLCs
DB=$TMP/mc.db
cat >"$TMP/mc.json" <<'P'
{ "name": "ka-sched-mc", "repetitions": 3, "seed": 7,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "clock": "virtual",
             "sealed": true, "topology": {"sockets": 2, "cores": 2}, "memory_mb": 512},
  "matrix": {"preempt": ["full"],
             "kernel": [{"variant": ["hz1000", "tracing"]},
                        {"variant": ["hz1000", "sched_mc_off", "tracing"]}]},
  "workloads": [ {"type": "pingpong", "stages": 2, "concurrency": 2, "duration_s": 2} ] }
P
session B "$TMP/mc.json"
equals "B: six sealed 4-vCPU boots, six runs ok" \
	"$(sql "SELECT (SELECT count(*) FROM boot WHERE method = 'sealed' AND status = 'ok'
		AND json_extract(sysinfo, '\$.ncpus.value') = 4) || ' ' ||
		(SELECT count(*) FROM run WHERE status = 'ok')")" "6 6"
equals "B: the domains each kernel built (sysinfo)" \
	"$(sql "SELECT group_concat(d, ' | ') FROM (SELECT DISTINCT r.sched_mc || ': ' ||
		json_extract(b.sysinfo, '\$.sched_domains.value') d FROM results r JOIN boot b ON b.id = r.boot
		ORDER BY 1)")" \
	"0: cpu0-3: DIE{0-3} | 1: cpu0-1: MC{0-1}* DIE{0-3}; cpu2-3: MC{2-3}* DIE{0-3}"
sql "SELECT 'sched_mc=' || sched_mc || ' ' || metric || ': ' || group_concat(printf('%g', value), ' ')
	FROM (SELECT * FROM results ORDER BY seed) WHERE metric IN ('task_migrate_wakeup_pct',
	'task_migrations', 'rps') GROUP BY sched_mc, metric ORDER BY metric, sched_mc" | sed 's/^/# /'
mig() { sql "SELECT count(*) FROM results WHERE metric = 'task_migrate_wakeup_pct' AND sched_mc = $1 AND value $2"; }
equals "B: without SCHED_MC no wakeup moved its wakee, in any seed" "$(mig 0 '= 0')" 3
# with it the share is small and moves with the seed (0.008 % in one):
# asserted over the three together
n=$(mig 1 '> 0')
[ "$n" -ge 1 ] && ok "B: with SCHED_MC wakeups moved wakees ($n of 3 seeds)" ||
	not_ok "B: with SCHED_MC wakeups moved wakees" "in no seed"

# --- C: the lock holder with threads > CPUs, none against full
DB=$TMP/lh.db
cat >"$TMP/lh.json" <<'P'
{ "name": "ka-lockholder-smp", "repetitions": 3, "seed": 7,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "clock": "virtual",
             "sealed": true, "cpus": 2, "memory_mb": 512},
  "matrix": {"preempt": ["none", "full"]},
  "workloads": [ {"type": "lockholder", "duration_s": 3, "threads": 6, "entries": 8, "detect": "rseq"} ] }
P
session C "$TMP/lh.json"
sql "SELECT preempt || ' ' || metric || ': ' || group_concat(printf('%g', value), ' ')
	FROM (SELECT * FROM results ORDER BY seed) WHERE metric IN ('acq_per_s', 'holder_preempt_pct',
	'spin_cpu_pct') GROUP BY preempt, metric ORDER BY metric, preempt" | sed 's/^/# /'
equals "C: six runs ok, paired by seed" \
	"$(sql "SELECT count(*) || ' ' || count(DISTINCT seed) FROM run WHERE status = 'ok'")" "6 3"
equals "C: every seed: fewer acquisitions a second under none than under full" \
	"$(sql "SELECT count(*) FROM results n JOIN results f ON f.seed = n.seed AND f.metric = n.metric
		AND f.preempt = 'full' WHERE n.preempt = 'none' AND n.metric = 'acq_per_s' AND n.value < f.value")" 3
schedlab compare --db "$DB" preempt=full preempt=none >"$TMP/cmp" 2>&1
contains "C: compare does not decide acq_per_s on three seeds a side" \
	<(grep -E '^ *acq_per_s' "$TMP/cmp") "inconclusive (~6 reps)"
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi
done_testing
