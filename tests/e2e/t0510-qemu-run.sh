#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 900 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# End-to-end through the CLI: `schedlab run` on the qemu target with Debian's
# kernel under TCG. Two preempt modes, once per switch method (a new VM per
# boot, and kexec inside the running VM); cyclictest (under hackbench load)
# and hackbench run in the guest; the results view must carry the preempt mode
# the guest itself reported. Then a boot that panics (rdinit=/nonexistent):
# stored as failed with its console tail, its runs skipped, and the next
# configuration still runs. About 2 minutes under TCG.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	kexec-tools:/sbin/kexec gzip:gzip sqlite3:sqlite3
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi

plan() { # NAME SWITCH PREEMPTS CMDLINES
	cat <<P
{ "name": "$1", "switch": "$2", "order": "sequential", "seed": 2,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 768},
  "matrix": {"preempt": $3, "cmdline": $4},
  "workloads": [
    {"type": "cyclictest", "duration_s": 1, "threads": 1, "histogram_us": 20000,
     "load": {"type": "hackbench", "groups": 1, "loops": 50}},
    {"type": "hackbench", "groups": 1, "loops": 20}
  ] }
P
}
for sw in reboot kexec; do
	plan "qemu-$sw" "$sw" '["full", "none"]' '[""]' >"$TMP/$sw.json"
	expect_exit 0 "switch=$sw: run two preempt modes in the guest" schedlab run "$TMP/$sw.json" --db "$DB" --tag "$sw"
	equals "switch=$sw: 4 runs ok" "$(sql "SELECT count(*) FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag = '$sw' AND r.status = 'ok'")" 4
	# issue 51: a boot lost its initramfs to another session's build
	equals "switch=$sw: every boot found its initramfs (none pruned while in use)" \
		"$(sql "SELECT count(*) FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = '$sw' AND b.error LIKE '%error reading initrd%'")" 0
	equals "switch=$sw: results preempt = what the guest reported" \
		"$(sql "SELECT group_concat(DISTINCT r.preempt || '=' || json_extract(b.sysinfo, '\$.preempt.value')) FROM results r JOIN boot b ON b.id = r.boot WHERE r.tag = '$sw' ORDER BY r.preempt")" \
		"full=full,none=none"
	equals "switch=$sw: both workloads have rows in each mode" \
		"$(sql "SELECT count(DISTINCT preempt || workload) FROM results WHERE tag = '$sw' AND workload IN ('cyclictest','hackbench')")" 4
	equals "switch=$sw: preempt= was on the guest's command line" \
		"$(sql "SELECT count(*) FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = '$sw' AND b.cmdline LIKE '%preempt=' || b.req_preempt || '%'")" 2
	# a starved host must not panic the real-clock guest in its IO-APIC
	# timer check (busy-test, host load 20: "IO-APIC + timer doesn't work!")
	equals "$sw: the real-clock guest booted with no_timer_check" \
		"$(sql "SELECT count(*) FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = '$sw' AND b.cmdline LIKE '% no_timer_check%'")" 2
	equals "switch=$sw: the guest kernel's HZ recorded" "$(sql "SELECT DISTINCT hz FROM results WHERE tag = '$sw'")" 250
	contains "switch=$sw: console log stored with the boot" <(sql "SELECT console FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = '$sw' LIMIT 1") "Linux version"
	contains "switch=$sw: acceleration recorded" <(sql "SELECT group_concat(accel) FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = '$sw'") "tcg"
done
equals "reboot: every boot is a new VM" "$(sql "SELECT group_concat(method) FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = 'reboot' ORDER BY b.seq")" "boot,boot"
equals "kexec: the second boot is a kexec" "$(sql "SELECT group_concat(method) FROM (SELECT method FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = 'kexec' ORDER BY b.seq)")" "boot,kexec"
equals "kexec: a new boot_id after the kexec" "$(sql "SELECT count(DISTINCT boot_uuid) FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = 'kexec'")" 2

# a mode this kernel does not offer (6.1 has no lazy): refused before anything runs
plan "qemu-lazy" reboot '["lazy", "full"]' '[""]' >"$TMP/lazy.json"
expect_exit 2 "preempt=lazy on a 6.1 kernel: refused at plan time" schedlab run "$TMP/lazy.json" --db "$TMP/lazy.db"
contains "the refusal says what the kernel offers" "$TMP/err" "preempt=lazy: it offers none, voluntary, full"

# a kernel that panics at boot, then a good configuration
plan "qemu-panic" reboot '["full"]' '["rdinit=/nonexistent", ""]' >"$TMP/panic.json"
expect_exit 1 "a panicking boot: exit 1, the session goes on" schedlab run "$TMP/panic.json" --db "$DB" --tag panic
equals "panicking boot stored as failed" "$(sql "SELECT b.status FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = 'panic' AND b.req_cmdline LIKE 'rdinit%'")" failed
contains "its console tail is stored" <(sql "SELECT console FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = 'panic' AND b.req_cmdline LIKE 'rdinit%'") "Kernel panic"
equals "its runs are skipped with the reason" "$(sql "SELECT count(*) FROM run r JOIN boot b ON b.id = r.boot_id JOIN session s ON s.id = r.session_id WHERE s.tag = 'panic' AND b.req_cmdline LIKE 'rdinit%' AND r.status = 'skipped' AND r.skip_reason = 'boot-failed' AND r.error LIKE 'boot failed%'")" 2
equals "the next configuration still ran" "$(sql "SELECT count(*) FROM run r JOIN boot b ON b.id = r.boot_id JOIN session s ON s.id = r.session_id WHERE s.tag = 'panic' AND b.req_cmdline = '' AND r.status = 'ok'")" 2
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi

# Ctrl-C and SIGKILL while the guest measures: no qemu process is left behind
plan "qemu-int" reboot '["full"]' '[""]' | sed 's/"duration_s": 1/"duration_s": 30/' >"$TMP/int.json"
for sig in INT KILL; do
	schedlab run "$TMP/int.json" --db "$TMP/int-$sig.db" --quiet >"$TMP/int.out" 2>&1 &
	pid=$!
	CLEANUP_CMDS+=("kill -9 $pid")
	for i in $(seq 600); do
		[ "$(sqlite3 "$TMP/int-$sig.db" "SELECT count(*) FROM run WHERE status = 'running'" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	sleep 1
	kill -$sig $pid
	wait $pid
	rc=$?
	[ $sig = INT ] && equals "SIGINT during a guest run: exit 130" "$rc" 130
	for i in $(seq 50); do pgrep -f "$TMP/schedlab-qemu" >/dev/null || break; sleep 0.1; done
	if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "SIG$sig: no qemu process left"; else ok "SIG$sig: no qemu process left"; fi
done
equals "SIGINT: the session is resumable" "$(sqlite3 "$TMP/int-INT.db" "SELECT status FROM session")" interrupted

# the guest dies under a run (qemu killed: as a panic with -no-reboot ends
# it): the run is interrupted, resumable, and its error keeps the guest's
# last console lines
schedlab run "$TMP/int.json" --db "$TMP/dead.db" --quiet >"$TMP/dead.out" 2>&1 &
pid=$!
CLEANUP_CMDS+=("kill -9 $pid")
for i in $(seq 600); do
	[ "$(sqlite3 "$TMP/dead.db" "SELECT count(*) FROM run WHERE status = 'running'" 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
sleep 2
qp=$(pgrep -f "$TMP/schedlab-qemu" | tr '\n' ' ')
[ -n "$qp" ] && kill -9 $qp
wait $pid
equals "the guest killed under a run: exit 1" "$?" 1
equals "... the run is interrupted (resumable)" \
	"$(sqlite3 "$TMP/dead.db" "SELECT status FROM run ORDER BY seq LIMIT 1")" interrupted
contains "... its error says the target was lost" <(sqlite3 "$TMP/dead.db" "SELECT error FROM run ORDER BY seq LIMIT 1") \
	"failed: target lost:"
contains "... and carries the guest's last console lines" <(sqlite3 "$TMP/dead.db" "SELECT error FROM run ORDER BY seq LIMIT 1") \
	"--- console ($TMP/schedlab-qemu-"
contains "... the closing line says why, even with --quiet (the first reason, one line)" "$TMP/dead.out" \
	"did not boot (the first: failed: target lost: "
if grep -q -- "--- console" "$TMP/dead.out"; then
	not_ok "... and not the console with it" "$(cat "$TMP/dead.out")"
else
	ok "... and not the console with it"
fi
nruns=$(sqlite3 "$TMP/dead.db" "SELECT count(*) FROM run")
expect_exit 0 "... --resume redoes it in a new guest" schedlab run --resume last --db "$TMP/dead.db" --quiet
equals "... no run added, none left interrupted, all ok" \
	"$(sqlite3 "$TMP/dead.db" "SELECT count(*) || ' ' || sum(status = 'ok') FROM run")" "$nruns $nruns"
done_testing
