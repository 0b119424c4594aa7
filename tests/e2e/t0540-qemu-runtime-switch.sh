#!/usr/bin/env bash
# timeout: 900 (tests/run.sh ends it past this many seconds)
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
expect_exit 0 "switch=runtime: three preempt modes in one guest" schedlab run "$TMP/rt.json" --db "$DB" --tag rt
equals "three boot configurations, all ok" "$(bl "b.status" rt)" "ok,ok,ok"
equals "one VM boot, then two runtime switches" \
	"$(bl "method" rt "ORDER BY b.seq")" "boot,runtime,runtime"
equals "one guest kernel boot for all three (one boot_uuid)" "$(bq "count(DISTINCT boot_uuid)" rt)" 1
equals "the runtime switches printed nothing on the console (no kernel boot)" \
	"$(bq "count(*)" rt "AND b.method = 'runtime' AND b.console LIKE '%Linux version%'")" 0
equals "each boot's preempt is what the guest reported, as requested" \
	"$(bl "b.req_preempt || '=' || b.preempt || '=' || json_extract(b.sysinfo, '\$.preempt.value')" rt "ORDER BY b.seq")" \
	"none=none=none,full=full=full,voluntary=voluntary=voluntary"
equals "the results view groups the runs by the effective mode" \
	"$(sql "SELECT group_concat(preempt || ':' || method) FROM (SELECT DISTINCT r.preempt, b.method FROM results r JOIN boot b ON b.id = r.boot WHERE r.tag = 'rt' ORDER BY r.boot)")" \
	"none:boot,full:runtime,voluntary:runtime"
equals "the stored command line is the one the kernel booted with (preempt=none)" \
	"$(bq "count(*)" rt "AND b.cmdline LIKE '%preempt=none%'")" 3
equals "a switch time is stored for every boot" "$(bq "count(*)" rt "AND b.switch_s > 0")" 3
equals "a runtime switch is faster than the VM boot" \
	"$(sql "SELECT max(r.switch_s) < min(v.switch_s) FROM boot r, boot v WHERE r.method = 'runtime' AND v.method = 'boot' AND r.session_id = v.session_id AND r.session_id = (SELECT id FROM session WHERE tag = 'rt')")" 1
bq "b.seq, b.method, round(b.switch_s * 1000), b.preempt" rt "ORDER BY b.seq" | sed 's/^/# switch ms: /'

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
expect_exit 0 "auto: the killed session resumes" schedlab run --resume last --db "$DB" --quiet
equals "auto: every run stored once and ok" \
	"$(sql "SELECT count(*) || ':' || sum(r.status = 'ok') FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag = 'auto'")" "6:6"
equals "auto: every boot that ran is verified ok in the requested mode" \
	"$(bq "count(*)" auto "AND b.status != 'planned' AND (b.status != 'ok' OR b.preempt != b.req_preempt)")" 0
equals "auto: the resumed part boots a new VM, then switches at run time" \
	"$(bl "method" auto "AND b.status != 'planned' AND b.boot_uuid != '$first' ORDER BY b.booted_at")" "boot,runtime,runtime"
equals "auto: two guest kernel boots in all" "$(bq "count(DISTINCT boot_uuid)" auto)" 2
equals "auto: each run's effective mode is its boot's requested one" \
	"$(sql "SELECT count(*) FROM results r JOIN boot b ON b.id = r.boot WHERE r.tag = 'auto' AND r.preempt != b.req_preempt")" 0

# --- the command line changes too: auto boots a new VM, runtime is refused
plan cmd auto '["none"]' '["", "nosmt"]' sequential 1 >"$TMP/cmd.json"
expect_exit 0 "auto with another cmdline: runs" schedlab run "$TMP/cmd.json" --db "$DB" --tag cmd --quiet
equals "auto with another cmdline: a new VM for each" "$(bl "method || ':' || b.status" cmd "ORDER BY b.seq")" "boot:ok,boot:ok"
plan cmdrt runtime '["none", "full"]' '["", "nosmt"]' sequential 1 >"$TMP/cmdrt.json"
expect_exit 2 "runtime with another cmdline: refused at preflight" schedlab run "$TMP/cmdrt.json" --db "$TMP/refused.db"
contains "the refusal names the key and the difference" "$TMP/err" \
	'switch: "runtime" (target qemu) changes only the preempt mode between boot configurations, but boot configuration 2 has cmdline "nosmt"'
equals "nothing was booted for the refused plan" "$(sqlite3 "$TMP/refused.db" "SELECT count(*) FROM boot WHERE status != 'planned'" 2>/dev/null || echo 0)" 0

for i in $(seq 50); do pgrep -f "$TMP/schedlab-qemu" >/dev/null || break; sleep 0.1; done
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi
done_testing
