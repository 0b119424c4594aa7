#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 300 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# Debian's PREEMPT_RT kernel under qemu/TCG: `make -C kernels debian-rt`
# imports it (about 9 s the first time, 1 s after), and one short plan sweeps
# the modes over Debian's standard and RT kernels with "matrix":
# {"impossible": "drop"}: the RT kernel offers only full (6.1's RT has no
# PREEMPT_DYNAMIC), so its none is left out with a note that `schedlab run`
# prints before anything runs; the three boot configurations left run, and
# the RT boot is verified by its built model (no runtime mode to read).
# About 30 s with the kernels imported.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3
for k in debian debian-rt; do
	[ -f kernels/out/$k/kernel.json ] || make -s -C kernels $k >/dev/null 2>&1
	if [ ! -f kernels/out/$k/kernel.json ]; then
		not_ok "kernel imported (make -C kernels $k)"; done_testing; exit
	fi
done
rel=$(kernel_release kernels/out/debian) relrt=$(kernel_release kernels/out/debian-rt)
if [[ $rel == 6.1.*-amd64 && $rel != *-rt-* && $relrt == 6.1.*-rt-amd64 ]]; then
	ok "kernels imported: 6.1 $rel and its RT twin $relrt"
else
	not_ok "kernels imported: 6.1 and its RT twin" "releases '$rel' (kernels/out/debian), '$relrt' (kernels/out/debian-rt)"
fi
check "debian-rt again: cached, nothing downloaded" make -s -C kernels debian-rt
contains "the RT kernel's config is PREEMPT_RT without PREEMPT_DYNAMIC" \
	<(grep -E '^CONFIG_PREEMPT_(RT|DYNAMIC)=' kernels/out/debian-rt/config) "CONFIG_PREEMPT_RT=y"

cat >"$TMP/rt.json" <<P
{ "name": "rt-sweep", "switch": "reboot",
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 768},
  "matrix": {"kernel": ["kernels/out/debian", "kernels/out/debian-rt"],
             "preempt": ["none", "full"], "impossible": "drop"},
  "workloads": [ {"type": "hackbench", "groups": 1, "loops": 20} ] }
P
expect_exit 0 "a mode sweep over the standard and the RT kernel runs" \
	schedlab run "$TMP/rt.json" --db "$DB"
contains "run notes the pair left out, with the RT kernel's offer" "$TMP/err" \
	"note: left out (matrix.impossible \"drop\"): kernel kernels/out/debian-rt, preempt=none: it offers full (PREEMPT_RT, no PREEMPT_DYNAMIC"
equals "three boots planned and stored" "$(sql "SELECT count(*) FROM boot")" 3
equals "no boot of the RT kernel with none" \
	"$(sql "SELECT count(*) FROM boot WHERE req_kernel LIKE '%debian-rt' AND req_preempt = 'none'")" 0
equals "every run ok" "$(sql "SELECT count(*) FROM run WHERE status = 'ok'")" 3
equals "the RT boot ran the RT kernel" \
	"$(sql "SELECT json_extract(sysinfo, '\$.kernel_release.value') || ' ' || json_extract(sysinfo, '\$.preempt_build.value') FROM boot WHERE req_kernel LIKE '%debian-rt'")" \
	"$(jq -r .release kernels/out/debian-rt/kernel.json) rt"
equals "the effective models stored: the RT kernel's full as rt (compare preempt=rt preempt=full)" "$(sql "SELECT group_concat(preempt, ' ') FROM (SELECT DISTINCT preempt FROM results ORDER BY preempt)")" "full none rt"
LEFTOVER_NAMES+=(qemu-system-x86_64)
no_leftovers "no qemu or workload process of ours left"
done_testing
