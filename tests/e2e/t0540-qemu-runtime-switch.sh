#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 900 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# Runtime switching on the qemu target with Debian's kernel (PREEMPT_DYNAMIC)
# under TCG: "switch": "runtime" takes none -> full -> voluntary inside ONE
# guest boot (the agent writes /sys/kernel/debug/sched/preempt), each boot
# configuration verified by the mode the guest reports, stored with method
# "runtime", its switch time and the command line the kernel really booted
# with; the results view groups by the effective mode. "auto" picks runtime
# when only the preempt mode changes (interleaved, two rounds), and a
# session killed in the middle resumes in a new VM and still verifies every
# boot configuration before its runs. When the command line changes too,
# "auto" boots a new VM and an explicit "runtime" is refused at preflight.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi

plan() { # NAME SWITCH PREEMPTS CMDLINES ORDER REPETITIONS
	cat <<P
{ "name": "$1", "switch": "$2", "order": "$5", "repetitions": $6, "seed": 7,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 768},
  "matrix": {"preempt": $3, "cmdline": $4},
  "workloads": [ {"type": "hackbench", "groups": 1, "loops": 20} ] }
P
}
bq() { sql "SELECT $1 FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = '$2' ${3:-}"; }
# the boots' EXPR joined by commas in the order of the ORDER BY clause given
bl() { sql "SELECT group_concat(x) FROM (SELECT $1 AS x FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = '$2' ${3:-})"; }

# --- explicit runtime: none -> full -> voluntary in one guest boot
plan rt runtime '["none", "full", "voluntary"]' '[""]' sequential 1 >"$TMP/rt.json"
# (T0540_LOSE_GUEST=1 kills the guest under session 1's run after the switch
# to full, =2 under the auto session's resume, to exercise the recoveries
# below by hand; a longer hackbench gives the killer time to see the run)
lose_guest() { # SQL_CONDITION_ON_RUNNING_RUN
	(
		for i in $(seq 3000); do
			[ "$(sql "SELECT count(*) FROM run r JOIN boot b ON b.id = r.boot_id WHERE r.status = 'running' AND $1" 2>/dev/null)" = 1 ] && break
			sleep 0.05
		done
		echo "# T0540_LOSE_GUEST: killing qemu $(pgrep -f "$TMP/schedlab-qemu" | tr '\n' ' ')"
		kill -9 $(pgrep -f "$TMP/schedlab-qemu")
	) &
	inj=$!
}
inj="" rtplan=$TMP/rt.json
if [ "${T0540_LOSE_GUEST:-0}" = 1 ]; then
	sed 's/"loops": 20/"loops": 2000/' "$TMP/rt.json" >"$TMP/rt-lose.json"
	rtplan=$TMP/rt-lose.json
	lose_guest "b.seq = 1"
fi
schedlab run "$rtplan" --db "$DB" --tag rt >"$TMP/out" 2>"$TMP/err"
rc=$?
[ -n "$inj" ] && wait $inj
rt=rt
if [ $rc = 1 ] && [ -n "$(lost_runs "$DB")" ]; then
	# A TCG guest lost by itself (rare; seen in CI under the run after the
	# switch to full): the session must have kept what it lost for --resume,
	# but a resume boots a second VM, so the one-guest checks below take a
	# second session of the same plan, run once
	echo "# the guest was lost under session 1; its runs' errors:"
	lost_runs "$DB"
	contains "a lost guest: the session's closing line names the runs left and why" "$TMP/err" \
		"because the target was lost or did not boot (the first: "
	expect_exit 0 "a lost guest: --resume 1 redoes its runs in a new VM" \
		schedlab run --resume 1 --db "$DB" --quiet
	equals "a lost guest: every run of session 1 stored once and ok" \
		"$(sql "SELECT count(*) || ':' || sum(status = 'ok') FROM run WHERE session_id = 1")" "3:3"
	schedlab run "$TMP/rt.json" --db "$DB" --tag rt2 >"$TMP/out" 2>"$TMP/err"
	rc=$? rt=rt2
fi
equals "switch=runtime: three preempt modes in one guest (once more after a lost guest)" "$rc" 0
[ $rc = 0 ] || tail -n 3 "$TMP/err" | sed 's/^/#   /'
equals "three boot configurations, all ok" "$(bl "b.status" "$rt")" "ok,ok,ok"
equals "one VM boot, then two runtime switches" \
	"$(bl "method" "$rt" "ORDER BY b.seq")" "boot,runtime,runtime"
equals "one guest kernel boot for all three (one boot_uuid)" "$(bq "count(DISTINCT boot_uuid)" "$rt")" 1
equals "the runtime switches printed nothing on the console (no kernel boot)" \
	"$(bq "count(*)" "$rt" "AND b.method = 'runtime' AND b.console LIKE '%Linux version%'")" 0
equals "each boot's preempt is what the guest reported, as requested" \
	"$(bl "b.req_preempt || '=' || b.preempt || '=' || json_extract(b.sysinfo, '\$.preempt.value')" "$rt" "ORDER BY b.seq")" \
	"none=none=none,full=full=full,voluntary=voluntary=voluntary"
equals "the results view groups the runs by the effective mode" \
	"$(sql "SELECT group_concat(preempt || ':' || method) FROM (SELECT DISTINCT r.preempt, b.method FROM results r JOIN boot b ON b.id = r.boot WHERE r.tag = '$rt' ORDER BY r.boot)")" \
	"none:boot,full:runtime,voluntary:runtime"
equals "the stored command line is the one the kernel booted with (preempt=none)" \
	"$(bq "count(*)" "$rt" "AND b.cmdline LIKE '%preempt=none%'")" 3
equals "a switch time is stored for every boot" "$(bq "count(*)" "$rt" "AND b.switch_s > 0")" 3
equals "a runtime switch is faster than the VM boot" \
	"$(sql "SELECT max(r.switch_s) < min(v.switch_s) FROM boot r, boot v WHERE r.method = 'runtime' AND v.method = 'boot' AND r.session_id = v.session_id AND r.session_id = (SELECT id FROM session WHERE tag = '$rt')")" 1
bq "b.seq, b.method, round(b.switch_s * 1000), b.preempt" "$rt" "ORDER BY b.seq" | sed 's/^/# switch ms: /'

# --- auto, interleaved over two rounds, killed in the middle and resumed
plan auto auto '["none", "full", "voluntary"]' '[""]' interleaved 2 |
	sed 's/"loops": 20/"loops": 400/' >"$TMP/auto.json"
schedlab run "$TMP/auto.json" --db "$DB" --tag auto --quiet >"$TMP/auto.out" 2>&1 &
pid=$!
CLEANUP_CMDS+=("kill -9 $pid")
# SIGKILL while the fourth boot configuration (second round) measures
for i in $(seq 1800); do
	[ "$(sql "SELECT count(*) FROM run r JOIN boot b ON b.id = r.boot_id JOIN session s ON s.id = r.session_id WHERE s.tag = 'auto' AND r.status = 'running' AND b.seq = 3")" = 1 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
equals "auto: only-preempt changes were switched at run time" \
	"$(bl "method" auto "AND b.status != 'planned' ORDER BY b.seq")" "boot,runtime,runtime,runtime"
first=$(bq "boot_uuid" auto "AND b.seq = 0")
inj=""
[ "${T0540_LOSE_GUEST:-0}" = 2 ] && lose_guest "b.boot_uuid != '$first'"
schedlab run --resume last --db "$DB" --quiet >"$TMP/out" 2>"$TMP/err"
rc=$? relost=0
[ -n "$inj" ] && wait $inj
[ $rc = 1 ] && resume_if_lost "$DB" && rc=0 relost=1   # a TCG guest lost by itself (rare)
equals "auto: the killed session resumes" "$rc" 0
[ $rc = 0 ] || tail -n 3 "$TMP/err" | sed 's/^/#   /'
# issue 51: the resume's new VM lost its initramfs to another process's
# build (the cache is the user's, shared by every session of the machine)
equals "auto: every boot found its initramfs (none pruned while in use)" \
	"$(bq "count(*)" auto "AND b.error LIKE '%error reading initrd%'")" 0
equals "auto: every run stored once and ok" \
	"$(sql "SELECT count(*) || ':' || sum(r.status = 'ok') FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag = 'auto'")" "6:6"
equals "auto: every boot that ran is verified ok in the requested mode" \
	"$(bq "count(*)" auto "AND b.status != 'planned' AND (b.status != 'ok' OR b.preempt != b.req_preempt)")" 0
if [ $relost = 0 ]; then
	equals "auto: the resumed part boots a new VM, then switches at run time" \
		"$(bl "method" auto "AND b.status != 'planned' AND b.boot_uuid != '$first' ORDER BY b.booted_at")" "boot,runtime,runtime"
fi
equals "auto: each VM's first boot configuration boots it, the others switch at run time" \
	"$(bq "count(*)" auto "AND b.status != 'planned' AND (b.method = 'boot') != (b.booted_at = (SELECT min(o.booted_at) FROM boot o WHERE o.boot_uuid = b.boot_uuid))")" 0
if [ $relost = 0 ]; then
	equals "auto: two guest kernel boots in all" "$(bq "count(DISTINCT boot_uuid)" auto)" 2
else # a new VM for what the lost one left, and for the rest of that session
	equals "auto: more than two guest kernel boots after a lost guest" "$(bq "count(DISTINCT boot_uuid) > 2" auto)" 1
fi
equals "auto: each run's effective mode is its boot's requested one" \
	"$(sql "SELECT count(*) FROM results r JOIN boot b ON b.id = r.boot WHERE r.tag = 'auto' AND r.preempt != b.req_preempt")" 0

# --- the command line changes too: auto boots a new VM, runtime is refused
plan cmd auto '["none"]' '["", "nosmt"]' sequential 1 >"$TMP/cmd.json"
schedlab run "$TMP/cmd.json" --db "$DB" --tag cmd --quiet >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && resume_if_lost "$DB" && rc=0   # a TCG guest lost by itself (rare)
equals "auto with another cmdline: runs" "$rc" 0
equals "auto with another cmdline: a new VM for each" "$(bl "method || ':' || b.status" cmd "ORDER BY b.seq")" "boot:ok,boot:ok"
plan cmdrt runtime '["none", "full"]' '["", "nosmt"]' sequential 1 >"$TMP/cmdrt.json"
expect_exit 2 "runtime with another cmdline: refused at preflight" schedlab run "$TMP/cmdrt.json" --db "$TMP/refused.db"
contains "the refusal names the key and the difference" "$TMP/err" \
	'switch: "runtime" (target qemu) changes only the preempt mode between boot configurations, but boot configuration 2 has cmdline "nosmt"'
equals "nothing was booted for the refused plan" "$(sqlite3 "$TMP/refused.db" "SELECT count(*) FROM boot WHERE status != 'planned'" 2>/dev/null || echo 0)" 0

for i in $(seq 50); do pgrep -f "$TMP/schedlab-qemu" >/dev/null || break; sleep 0.1; done
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi
done_testing
