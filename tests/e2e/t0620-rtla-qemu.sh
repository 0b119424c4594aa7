#!/usr/bin/env bash
# tags: qemu kbuild (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 2400 (tests/run.sh ends it past this many seconds; a cold variant build is most of it)
# End-to-end: the rtla workloads (timerlat, osnoise; Debian's rtla 6.1) in a
# qemu guest, side by side with cyclictest under the same hackbench load.
#
# One session, two kernels:
#  - Debian's 6.1 kernel has no osnoise/timerlat tracer: its timerlat and
#    osnoise runs are skipped with the reason and the fragment to use
#    (sysinfo "tracers" read in the guest), cyclictest still runs;
#  - the variant the tests share, minimal:hz1000+sched_mc_off+tracing
#    (t0600 builds it; found in the cache after it, built when run alone):
#    cyclictest, timerlat, timerlat in rtla's automatic mode (-a 1 us: it
#    always stops, keeping the trace and rtla's text) and osnoise on CPU 1
#    (100 ms period, 90 ms busy), each under the same hackbench load (one
#    group of 2+2 processes: rtla 6.1 reads events in user space, and under
#    TCG with hackbench's default 20 fds a 3 s run outlasted a 34 s limit),
#    two repetitions;
#    cyclictest and timerlat both at 10 ms.
# About 2.5 minutes with the kernel cached.
# Checks the metrics and their units, the per-CPU and merged histograms,
# the raw text kept with each run, the automatic mode's trace and text, and
# that the guest's tracefs is left with no tracer running.
. "$(dirname "$0")/lib.sh"
DB=$TMP/r.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	sqlite3:sqlite3 rtla:rtla rt-tests:cyclictest rt-tests:hackbench \
	flex:flex bison:bison bc:bc make:make gcc:gcc libelf-dev:/usr/include/libelf.h \
	libssl-dev:/usr/include/openssl/ssl.h ccache:ccache xz-utils:xz
require_built bin/schedlab
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi

expect_exit 0 "examples/rtla-qemu.json validates" schedlab plan examples/rtla-qemu.json
contains "example: cyclictest, timerlat and osnoise on the tracing variant" "$TMP/out" \
	"kernel=variant:minimal:hz1000+sched_mc_off+tracing"

LOAD='"load": {"type": "hackbench", "groups": 1, "fds": 2, "loops": 50}'
cat >"$TMP/plan.json" <<P
{ "name": "e2e-rtla", "order": "sequential", "seed": 3, "repetitions": 2,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 768},
  "matrix": {"kernel": ["kernels/out/debian", {"variant": ["hz1000", "sched_mc_off", "tracing"]}]},
  "workloads": [
    {"type": "cyclictest", "duration_s": 2, "interval_us": 10000, "histogram_us": 5000, $LOAD},
    {"type": "timerlat", "duration_s": 2, "period_us": 10000, "histogram_us": 5000, $LOAD},
    {"type": "timerlat", "duration_s": 8, "period_us": 10000, "histogram_us": 5000,
     "auto_analysis": true, "auto_threshold_us": 1, $LOAD},
    {"type": "osnoise", "duration_s": 2, "cpus": "1", "period_us": 100000, "runtime_us": 90000,
     $LOAD}
  ] }
P
t0=$(date +%s)
# (T0620_LOSE_GUEST=1 kills the guest under the tracing variant's first
# timerlat run, to exercise the recovery below by hand)
inj=""
if [ "${T0620_LOSE_GUEST:-0}" = 1 ]; then
	(
		for i in $(seq 6000); do
			[ "$(sqlite3 "$DB" "SELECT count(*) FROM run WHERE status = 'running' AND workload = 'timerlat'" 2>/dev/null)" = 1 ] && break
			sleep 0.2
		done
		sleep 1
		kill -9 $(pgrep -f "$TMP/schedlab-qemu")
	) &
	inj=$!
fi
schedlab run "$TMP/plan.json" --db "$DB" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ -n "$inj" ] && wait $inj
echo "# schedlab run (variant build or cache + 2 boots + 16 runs): $(($(date +%s) - t0)) s, exit $rc"
grep -E '^kernel [0-9]|kbuild: (built|cached)|\[[0-9]+/' "$TMP/err" | sed 's/^/#   /'
equals "run exits 1 (the Debian kernel's rtla runs are skipped)" "$rc" 1
# a TCG guest lost under a run (rare: seen once in a timerlat run, "agent
# exec: connection closed"): say so with the guest's last console lines, and
# resume, which must redo exactly the runs that were lost
lost=$(sql "SELECT count(*) FROM run WHERE status = 'interrupted'")
if [ "$lost" != 0 ]; then
	nruns=$(sql "SELECT count(*) FROM run")
	resume_if_lost "$DB"
	equals "after a lost guest: --resume redid the interrupted runs, none added" \
		"$(sql "SELECT count(*) || ' ' || sum(status = 'interrupted') FROM run")" "$nruns 0"
fi

deb="kernel_release NOT LIKE '%-sl-%'"
var="kernel_release = '6.1.192-sl-minimal-hz1000-sched_mc_off-tracing'"
runs() { # WHERE -> "workload status" lines of the runs on that kernel
	sql "SELECT r.workload || ' ' || r.status FROM run r JOIN boot b ON b.id = r.boot_id
	     JOIN kernel k ON k.id = b.kernel_id WHERE k.release $1 ORDER BY r.seq"
}
# --- the kernel without the tracers ------------------------------------------------
equals "Debian 6.1: cyclictest ok, timerlat and osnoise skipped" \
	"$(runs "NOT LIKE '%-sl-%'" | sort | uniq -c | tr -s ' ' | tr '\n' ';')" \
	" 2 cyclictest ok; 2 osnoise skipped; 4 timerlat skipped;"
equals "Debian 6.1: timerlat skipped with the reason and the fragment" \
	"$(sql "SELECT DISTINCT error FROM run WHERE workload = 'timerlat' AND status = 'skipped'")" \
	'unsupported by this kernel: no timerlat tracer in available_tracers (CONFIG_TIMERLAT_TRACER: build a variant with the "tracing" fragment, kernels/fragments/tracing.config)'
contains "Debian 6.1: osnoise skipped, the tracer named" <(sql "SELECT DISTINCT error FROM run WHERE workload = 'osnoise' AND status = 'skipped'") \
	"no osnoise tracer in available_tracers (CONFIG_OSNOISE_TRACER"
equals "Debian 6.1: the guest's tracers were read (sysinfo)" \
	"$(sql "SELECT json_extract(b.sysinfo, '\$.tracers.value') LIKE '%nop%' AND
	        json_extract(b.sysinfo, '\$.tracers.value') NOT LIKE '%timerlat%'
	        FROM boot b JOIN kernel k ON k.id = b.kernel_id WHERE k.release NOT LIKE '%-sl-%'")" 1

# --- the tracing variant -------------------------------------------------------------
equals "tracing variant: every run ok" \
	"$(runs "LIKE '%-sl-%tracing'" | sort | uniq -c | tr -s ' ' | tr '\n' ';')" \
	" 2 cyclictest ok; 2 osnoise ok; 4 timerlat ok;"
sql "SELECT status || ': ' || error FROM run WHERE status != 'ok' AND status != 'skipped'" | sed 's/^/#   /'
check "tracing variant: the guest offers timerlat and osnoise" sh -c "sqlite3 '$DB' \"SELECT json_extract(b.sysinfo, '\\\$.tracers.value') FROM boot b JOIN kernel k ON k.id = b.kernel_id WHERE k.release LIKE '%tracing'\" | grep timerlat | grep -q osnoise"

m() { # WORKLOAD METRIC [AUTO] -> "n min max unit better" over the variant's runs
	local auto=${3:-0}
	sql "SELECT count(*) || ' ' || min(value) || ' ' || max(value) || ' ' || unit || ' ' || better
	     FROM results WHERE $var AND workload = '$1' AND metric = '$2' AND
	     (workload != 'timerlat' OR json_extract(params, '\$.auto_analysis') = $auto)"
}
read -r n lo hi unit better <<<"$(m timerlat thread_lat_p99_us)"
if [ "$n" = 2 ] && [ "$unit $better" = "us lower" ] && awk "BEGIN{exit !($lo > 0)}"; then
	ok "timerlat: thread_lat_p99_us in both repetitions ($lo..$hi us)"
else not_ok "timerlat: thread_lat_p99_us in both repetitions" "got: $n $lo $hi $unit $better"; fi
for metric in irq_lat_p99_us irq_lat_max_us thread_lat_max_us thread_lat_p50_us \
	thread_lat_max_cpu0_us thread_lat_max_cpu1_us irq_lat_p99_cpu1_us; do
	read -r n _ _ unit _ <<<"$(m timerlat $metric)"
	equals "timerlat: $metric stored (us)" "$n $unit" "2 us"
done
# 2 s at a 10 ms period on 2 CPUs: up to 400 activations per context (TCG
# under load loses many: 365 of 600 seen in a 3 s run); far fewer means the
# parser missed columns
read -r n lo _ <<<"$(m timerlat thread_samples)"
if [ "$n" = 2 ] && [ "${lo%.*}" -ge 100 ]; then ok "timerlat: thread samples of both CPUs ($lo)"
else not_ok "timerlat: thread samples of both CPUs" "n=$n min=$lo"; fi
read -r irqn _ <<<"$(m timerlat irq_samples)"
equals "timerlat: irq samples stored" "$irqn" 2
equals "timerlat: per-CPU and merged histograms of both contexts, per run" \
	"$(sql "SELECT group_concat(name, ' ') FROM (SELECT DISTINCT h.name FROM histogram h JOIN run r ON r.id = h.run_id
	        WHERE r.workload = 'timerlat' ORDER BY h.name)")" \
	"irq_cpu0_us irq_cpu1_us irq_us thread_cpu0_us thread_cpu1_us thread_us"
equals "timerlat: six histograms per run (2 CPUs x 2 contexts + 2 merges)" \
	"$(sql "SELECT count(*) FROM histogram h JOIN run r ON r.id = h.run_id WHERE r.workload = 'timerlat'
	        AND json_extract(r.params, '\$.auto_analysis') = 0")" 12
# automatic mode stops early: only the CPUs and contexts with samples by
# then (seen once: an automatic-mode run stored without irq_us), or none
# when it stopped before the histogram held a sample (seen at host load 15:
# the run is ok, without latency metrics)
equals "timerlat auto: the histograms of what it measured" \
	"$(sql "SELECT count(*) FROM run r WHERE r.workload = 'timerlat' AND r.status = 'ok'
	        AND json_extract(r.params, '\$.auto_analysis') = 1
	        AND (EXISTS (SELECT 1 FROM histogram h WHERE h.run_id = r.id AND h.name IN ('irq_us', 'thread_us'))
	             OR NOT EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.id AND x.metric LIKE '%_samples'))")" 2
contains "timerlat: rtla's raw text kept with the run" \
	<(sql "SELECT stdout FROM run WHERE workload = 'timerlat' AND status = 'ok' LIMIT 1") \
	"# RTLA timerlat histogram"
# automatic mode: a 1 us threshold always stops the trace. rtla notices
# once a second and says so only when its duration has not run out first
# (stop_hist, Debian's rtla 6.1.192): with a 2 s duration a loaded host
# lost that race in both runs (issue 29), so these runs get 8 s, which
# they do not use (they stop after about a second)
read -r n lo hi _ <<<"$(m timerlat auto_stopped 1)"
equals "timerlat auto: both runs stopped at the threshold" "$n $lo $hi" "2 1.0 1.0"
sql "SELECT files FROM run WHERE workload = 'timerlat' AND status = 'ok' AND json_extract(params, '\$.auto_analysis') = 1 LIMIT 1" >"$TMP/auto"
contains "timerlat auto: the trace file is kept with the run" "$TMP/auto" '"timerlat_trace.txt":"'
contains "timerlat auto: the trace holds timerlat events" "$TMP/auto" "timerlat"
contains "timerlat auto: rtla's text kept (schedlab-extra.json)" "$TMP/auto" "hit stop tracing"
read -r n _ <<<"$(m timerlat measured_s 1)"
equals "timerlat auto: the time measured is stored" "$n" 2

# osnoise on CPU 1 only
read -r n lo hi unit better <<<"$(m osnoise noise_max_single_us)"
equals "osnoise: noise_max_single_us stored (us, lower)" "$n $unit $better" "2 us lower"
read -r n lo hi unit better <<<"$(m osnoise cpu_avail_pct)"
if [ "$n $unit $better" = "2 % higher" ] && awk "BEGIN{exit !($lo > 0 && $hi <= 100)}"; then
	ok "osnoise: cpu_avail_pct in (0, 100] ($lo..$hi)"
else not_ok "osnoise: cpu_avail_pct in (0, 100]" "got: $n $lo $hi $unit $better"; fi
for metric in irq_count softirq_count thread_count nmi_count hw_count irq_count_cpu1 \
	noise_max_single_cpu1_us cpu_avail_cpu1_pct; do
	read -r n _ <<<"$(m osnoise $metric)"
	equals "osnoise: $metric stored" "$n" 2
done
equals "osnoise: only the named CPU measured" \
	"$(sql "SELECT count(*) FROM results WHERE workload = 'osnoise' AND metric LIKE '%cpu0%'")|$(m osnoise cpus | cut -d' ' -f2)" "0|1.0"
# under hackbench on a 2-CPU guest, CPU 1 sees IRQs (timer) at least
read -r _ lo _ <<<"$(m osnoise irq_count)"
if awk "BEGIN{exit !($lo > 0)}"; then ok "osnoise: interference counted ($lo IRQs)"; else not_ok "osnoise: interference counted" "irq_count min $lo"; fi

# side by side: cyclictest and timerlat under the same load on the same kernel
equals "cyclictest and timerlat ran under the same hackbench load" \
	"$(sql "SELECT count(DISTINCT r.workload) FROM run r WHERE r.status = 'ok' AND r.workload IN ('cyclictest','timerlat')
	        AND json_extract(r.params, '\$.load.type') = 'hackbench' AND json_extract(r.params, '\$.load.loops') = 50")" 2
read -r n _ <<<"$(sql "SELECT count(*) FROM results WHERE $var AND workload = 'cyclictest' AND metric = 'lat_p99_us'")"
equals "cyclictest's lat_p99_us beside timerlat's on the variant" "$n" 2

if pgrep -f "qemu-system-x86_64.*$TMP" >/dev/null; then not_ok "no qemu left"; else ok "no qemu left"; fi
done_testing
