#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 1200 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# A qemu target's "topology" (issue 49 step 3, docs/qemu.md and
# docs/virtual-time.md "Topology"): the guest's CPUs laid out as qemu's
# -smp sockets/dies/cores/threads, and the sched domains the guest built
# stored with the boot's sysinfo (field sched_domains):
# - what qemu (or the guest under TCG) cannot do is refused by `schedlab
#   plan` before anything runs, naming the plan file and the key: a product
#   that is not cpus, more than 8 vCPUs on a virtual clock, threads under
#   TCG, a key qemu does not have;
# - a sealed 4-vCPU guest on the virtual clock with {"sockets": 2, "cores":
#   2} (Debian's 6.1, the qemu `make -C kernels qemu` provides, one boot,
#   a 1 s pingpong) stores sched_domains with two MC groups of 2 CPUs,
#   each the CPUs' LLC: two last-level caches, one a socket;
# - `schedlab sysinfo` shows the field (here on the host: its value or why
#   it is unknown).
# Cost: one 4-vCPU sealed boot: 88 s for the whole script at host load 24
# on 2 CPUs (the boot alone 66-90 s at load 3-25).
. "$(dirname "$0")/lib.sh"
DB=$TMP/topo.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi
provided_qemu

plan() { # plan FILE TARGET-EXTRA: a sealed virtual-clock plan, one 1 s run
	cat >"$1" <<P
{ "name": "topology", "repetitions": 1, "seed": 3,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "clock": "virtual",
             "sealed": true, "memory_mb": 512, $2},
  "workloads": [ {"type": "pingpong", "stages": 2, "duration_s": 1} ] }
P
}
plan "$TMP/bad1.json" '"cpus": 6, "topology": {"sockets": 2, "cores": 2}'
expect_exit 2 "a topology whose product is not cpus is refused" schedlab plan "$TMP/bad1.json"
contains "... naming the file, the key and the rule" "$TMP/err" \
	"$TMP/bad1.json: target.topology: sockets x dies x cores x threads = 2x1x2x1 = 4, but cpus is 6"
plan "$TMP/bad2.json" '"topology": {"sockets": 2, "cores": 8}'
expect_exit 2 "16 vCPUs on a virtual clock are refused" schedlab plan "$TMP/bad2.json"
contains "... saying what a virtual clock runs" "$TMP/err" \
	"target.topology: 2x1x8x1 = 16 vCPUs; a virtual clock runs 1 to 8"
plan "$TMP/bad3.json" '"topology": {"cores": 2, "threads": 2}'
expect_exit 2 "threads under TCG are refused (the guest would see no SMT)" \
	schedlab plan "$TMP/bad3.json"
contains "... saying why" "$TMP/err" "target.topology.threads: 2 threads a core under TCG"
plan "$TMP/bad4.json" '"topology": {"sockets": 2, "clusters": 2}'
expect_exit 2 "a level qemu's x86 -smp is not given here is refused" schedlab plan "$TMP/bad4.json"
contains "... listing the valid ones" "$TMP/err" \
	"target.topology.clusters: unknown key (valid: sockets, dies, cores, threads)"

plan "$TMP/p.json" '"topology": {"sockets": 2, "cores": 2}'
expect_exit 0 "plan accepts {\"sockets\": 2, \"cores\": 2} (cpus follows: 4)" schedlab plan "$TMP/p.json"
t0=$(date +%s)
schedlab run "$TMP/p.json" --db "$DB" --quiet >"$TMP/out" 2>"$TMP/err"
equals "the sealed 4-vCPU session ran (exit 0)" "$?" 0
echo "# one sealed 4-vCPU boot: $(($(date +%s) - t0)) s wall; $(host_load)"
equals "the boot sealed, its run ok" \
	"$(sql "SELECT b.method || ' ' || b.status || ' ' || r.status FROM boot b JOIN run r ON r.boot_id = b.id")" \
	"sealed ok ok"
equals "the guest had 4 CPUs" "$(sql "SELECT json_extract(sysinfo, '$.ncpus.value') FROM boot")" 4
sd=$(sql "SELECT json_extract(sysinfo, '$.sched_domains.value') FROM boot")
echo "# sched_domains = \"$sd\""
equals "sched_domains: two MC groups of 2 CPUs" \
	"$(printf '%s\n' "$sd" | grep -o 'MC{[0-9,-]*}' | sort -u | tr '\n' ' ')" "MC{0-1} MC{2-3} "
equals "... each the LLC of its CPUs, under one top level of all 4" "$sd" \
	"cpu0-1: MC{0-1}* DIE{0-3}; cpu2-3: MC{2-3}* DIE{0-3}"
equals "... read from debugfs" \
	"$(sql "SELECT json_extract(sysinfo, '$.sched_domains.source') FROM boot")" \
	"/sys/kernel/debug/sched/domains"
equals "the LLC groups from sysfs agree" \
	"$(sql "SELECT json_extract(sysinfo, '$.llc_groups.value') FROM boot")" '["0-1","2-3"]'
# the field in `schedlab sysinfo`'s table (the host's: a value or why not)
expect_exit 0 "schedlab sysinfo runs on the host" schedlab sysinfo
contains "... and shows sched_domains" "$TMP/out" "sched_domains"
equals "no guest of ours left" "$(ours qemu-system)" ""
done_testing
