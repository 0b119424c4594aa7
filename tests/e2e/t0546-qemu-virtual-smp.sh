#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 1200 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# A virtual clock on 2 vCPUs (issue 49, docs/virtual-time.md "More than one
# vCPU"): `make -C kernels qemu` provides a qemu >= 8.1 (the system's, or
# Debian 13's behind a wrapper under the cache), and a plan with "clock":
# "virtual" and "cpus": 2 and no "qemu" key runs it:
# - a qemu older than 8.1 named by the plan is refused before anything
#   runs, with its version and `make -C kernels qemu`;
# - Debian's 6.1 comes up with 2 CPUs (qemu 7.2 hangs it in the CPU
#   bring-up under icount), runs a small hackbench at none and full
#   (switched at run time), and every boot stores the qemu's version, in
#   the boot row, the results view and the boot's sysinfo;
# - rows of two qemu versions are not pooled: compare says when the sides
#   ran on different ones and when a side mixes them (a version changed by
#   hand, as t0545 does for the clock).
# Cost: 21-41 s here (one VM, two short runs; host load 9-13 for the 41).
. "$(dirname "$0")/lib.sh"
DB=$TMP/smp.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi

# --- the provided qemu (make test's setup made it; a second call is a no-op)
vt=$(make -s --no-print-directory -C kernels qemu 2>"$TMP/vt.err")
rc=$?
equals "make -C kernels qemu provides a qemu (exit 0)" "$rc" 0
[ $rc = 0 ] || { echo "# $(tail -n 5 "$TMP/vt.err")"; done_testing; exit; }
ver=$("$vt" -version | sed -n '1s/^QEMU emulator version \([0-9][0-9.]*\).*/\1/p')
case "$ver" in
[89].[1-9]* | [89].[1-9][0-9]* | [1-9][0-9].*) ok "the provided qemu is >= 8.1 ($vt: $ver)" ;;
*) not_ok "the provided qemu is >= 8.1" "$vt answers '$ver'" ;;
esac

# --- an older qemu named by the plan is refused before anything runs
printf '#!/bin/sh\necho "QEMU emulator version 7.2.22 (fake)"\n' >"$TMP/qemu-old"
chmod +x "$TMP/qemu-old"
cat >"$TMP/old.json" <<P
{ "target": {"type": "qemu", "clock": "virtual", "cpus": 2, "qemu": "$TMP/qemu-old"},
  "workloads": [ {"type": "hackbench", "groups": 1, "loops": 50} ] }
P
schedlab plan "$TMP/old.json" >"$TMP/old.out" 2>&1
equals "a plan with 2 vCPUs on qemu 7.2 is refused (exit 2)" "$?" 2
contains "the refusal names the version and make -C kernels qemu" "$TMP/old.out" \
	"target.cpus: 2 vCPUs on a virtual clock need qemu >= 8.1"
contains "the refusal says how to get one" "$TMP/old.out" "qemu-old is 7.2.22: run \`make -C kernels qemu\`"

# --- 2 vCPUs on a virtual clock, through the provided qemu
cat >"$TMP/smp.json" <<P
{ "name": "smp", "repetitions": 1, "seed": 5, "switch": "runtime",
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "clock": "virtual",
             "cpus": 2, "memory_mb": 768},
  "matrix": {"preempt": ["none", "full"]},
  "workloads": [ {"type": "hackbench", "groups": 1, "loops": 50} ] }
P
t0=$(date +%s)
schedlab run "$TMP/smp.json" --db "$DB" --tag smp --quiet >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && resume_if_lost "$DB" && rc=0
equals "the 2-vCPU virtual-clock session ran (exit 0)" "$rc" 0
[ $rc = 0 ] || { echo "# $(tail -n 5 "$TMP/err")"; }
echo "# session: $(($(date +%s) - t0)) s wall"
equals "the guest saw 2 CPUs (sysinfo ncpus, cpus_online)" \
	"$(sql "SELECT group_concat(DISTINCT json_extract(sysinfo, '$.ncpus.value') || ' ' ||
		json_extract(sysinfo, '$.cpus_online.value')) FROM boot WHERE status = 'ok'")" "2 0-1"
equals "every boot stored the provided qemu's version" \
	"$(sql "SELECT group_concat(DISTINCT qemu_version) FROM boot WHERE status = 'ok'")" "$ver"
equals "and its clock" \
	"$(sql "SELECT group_concat(DISTINCT clock || ':' || clock_shift) FROM boot WHERE status = 'ok'")" "virtual:2"
equals "the results view shows the qemu version" \
	"$(sql "SELECT group_concat(DISTINCT qemu_version) FROM results")" "$ver"
equals "the boot's sysinfo names the qemu that ran, with no fallback note" \
	"$(sql "SELECT group_concat(DISTINCT json_extract(sysinfo, '$.qemu.binary') || '|' ||
		json_extract(sysinfo, '$.qemu.value') || '|' || ifnull(json_extract(sysinfo, '$.qemu.note'), ''))
		FROM boot WHERE status = 'ok'")" "$vt|$ver|"
equals "both modes measured" "$(sql "SELECT count(DISTINCT preempt) FROM results WHERE metric = 'time_s'")" 2

# --- rows of two qemu versions are two series (one boot's changed by hand)
sql "UPDATE boot SET qemu_version = '7.2.22' WHERE id = (SELECT min(boot) FROM results WHERE preempt = 'none')"
schedlab compare preempt=none preempt=full --db "$DB" --metric time_s >"$TMP/cmp.out" 2>&1
sed 's/^/# /' "$TMP/cmp.out" | head -n 12
contains "compare says the sides ran on different qemus" "$TMP/cmp.out" "qemu: A 7.2.22; B $ver (not one emulator)"
schedlab compare tag=smp preempt=full --db "$DB" --metric time_s >"$TMP/mix.out" 2>&1
contains "compare names a side that mixes qemu versions" "$TMP/mix.out" "side A mixes 2 qemu versions ("
no_leftovers "no guest or workload left"
if pgrep -f "qemu-system-x86_64.*$TMP" >/dev/null; then not_ok "no qemu left"; else ok "no qemu left"; fi
done_testing
