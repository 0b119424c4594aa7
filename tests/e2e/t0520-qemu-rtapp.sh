#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 600
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# End-to-end: the rtapp workload inside a qemu guest (Debian's 6.1 kernel
# under TCG), from the example plan examples/deadline-qemu.json with one
# repetition and shorter windows: Debian's rt-app and its libraries are
# packed into the initramfs (including libgcc_s.so.1, which glibc loads at
# run time for pthread_exit and ldd does not list: without it rt-app aborts
# in the guest), the task set's FIFO, SCHED_DEADLINE and SCHED_OTHER tasks
# and a utilisation sweep run under hackbench load in two preempt modes, and
# the results view carries their metrics with the mode the guest reported.
# The task sets' guests run sealed on a virtual clock (docs/virtual-time.md,
# "Sealed runs"; 2 vCPUs through the qemu `make -C kernels qemu` provides):
# on the real clock, and live on the virtual one, the SCHED_DEADLINE set's
# run came back now and then with "rt-app wrote logs without a complete
# period row" under host load (both final CI runs of 2026-12-07, once
# beside stress-ng; alone it passed). A sealed guest's values do not
# depend on the host (t0547): 119 s alone. The admission check below
# keeps the example's live real-clock guest.
# The task set runs 5 s (the example's window), not 2: under preempt=none
# with hackbench beside it, rt-app's start-up (page locking, thread
# creation by its SCHED_OTHER main thread) took 0.3 to over 2 s of guest
# time depending on the guest's exact instruction stream, and with a 2 s
# window it failed "without a complete period row" in CI and in the
# busy-test whenever the agent's bytes (then HEAD's name in it) put it
# past the window. Measured with 5 s, three seeds: 639, 644 and 994
# periods of 1250 (start-up about 2.5, 2.5 and 1 s).
# A SCHED_DEADLINE set beyond the guest's bandwidth is refused by the
# guest's admission control and stored as a failed run saying so.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	kexec-tools:/sbin/kexec rt-app:rt-app jq:jq sqlite3:sqlite3
require_built bin/schedlab
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi

jq '.repetitions = 1 | .workloads[0].duration_s = 5 | .workloads[1].duration_s = 2 | .target.clock = "virtual" | .target.sealed = true' \
	examples/deadline-qemu.json >"$TMP/p.json"
expect_exit 0 "the example plan is valid" schedlab plan examples/deadline-qemu.json
schedlab run "$TMP/p.json" --db "$DB" --tag rt >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && resume_if_lost "$DB" && rc=0   # a TCG guest lost by itself (rare)
equals "rtapp in the guest: two preempt modes" "$rc" 0
[ $rc = 0 ] || tail -n 3 "$TMP/err" | sed 's/^/#   /'
[ $rc = 0 ] && [ "$(sql "SELECT count(*) FROM run WHERE status <> 'ok'")" = 0 ] ||
	sql "SELECT id, status, error FROM run WHERE status <> 'ok'" | sed 's/^/#   run /'
equals "4 runs ok" "$(sql "SELECT count(*) FROM run WHERE status = 'ok'")" 4
equals "results preempt = what the guest reported" \
	"$(sql "SELECT group_concat(DISTINCT r.preempt || '=' || json_extract(b.sysinfo, '\$.preempt.value')) FROM results r JOIN boot b ON b.id = r.boot ORDER BY r.preempt")" \
	"none=none,full=full"
equals "periods counted for every task set run" \
	"$(sql "SELECT count(*) FROM results WHERE workload = 'rtapp' AND metric = 'periods' AND value > 0")" 4
equals "the SCHED_DEADLINE task has response times in both modes" \
	"$(sql "SELECT count(DISTINCT preempt) FROM results WHERE metric = 'dl_response_p99_us' AND value > 0")" 2
equals "the sweep's onset is stored in both modes" \
	"$(sql "SELECT count(*) FROM results WHERE metric = 'miss_onset_pct'")" 2
equals "the task description is kept with each run" \
	"$(sql "SELECT count(*) FROM run WHERE json_extract(json_extract(files, '\$.\"taskset.json\"'), '\$.tasks.dl.policy') = 'SCHED_DEADLINE'")" 2

# admission control in the guest: 3 x 60% of 2 CPUs of SCHED_DEADLINE bandwidth
# is beyond the default 95% per CPU
jq '.repetitions = 1 | .matrix.preempt = ["full"] | .workloads = [{"type": "rtapp", "duration_s": 1,
    "calibration_ns": 100, "tasks": [{"name": "d", "policy": "deadline", "run_us": 6000,
    "runtime_us": 6000, "period_us": 10000, "instances": 4}]}]' \
	examples/deadline-qemu.json >"$TMP/adm.json"
expect_exit 1 "a deadline set beyond the bandwidth: a failed run, exit 1" \
	schedlab run "$TMP/adm.json" --db "$DB" --tag adm
contains "its error names admission control" \
	<(sql "SELECT r.error FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag = 'adm'") "SCHED_DEADLINE admission control refused the task set"
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi
done_testing
