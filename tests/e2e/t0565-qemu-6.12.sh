#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 600 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# Debian's Linux 6.12 LTS and 6.12 PREEMPT_RT (bookworm-security) under
# qemu/TCG (issue 39): `make -C kernels debian debian-rt SERIES=6.12`
# imports both beside 6.1 (about 12 s each the first time, shared with every
# later test; kernels/out/debian is not touched). One boot of each kernel
# ("switch": "auto": run time between the modes of one kernel) visits every
# mode it offers, asked with all five
# and "impossible": "drop": 6.12 none, voluntary, full; 6.12-RT full, lazy,
# laziest, each verified at run time and stored as its model (rt, rt-lazy,
# rt-laziest). A plan without preempt= on 6.12-RT runs its built default,
# lazy (rt-lazy), with 6.12's EEVDF knobs: the per-CPU
# fair_server/cpu0/runtime and base_slice_ns written, read back and restored
# before the next run (each run finds the default), and NO_DELAY_DEQUEUE.
# Three boots, ten short hackbench runs: about 1-2 min under TCG.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3 jq:jq
before=$(readlink kernels/out/debian 2>/dev/null)
for k in debian debian-rt; do
	[ -f kernels/out/${k/debian/debian-6.12}/kernel.json ] ||
		make -s -C kernels $k SERIES=6.12 >/dev/null 2>"$TMP/import.err"
	if [ ! -f kernels/out/${k/debian/debian-6.12}/kernel.json ]; then
		not_ok "Debian 6.12 imported (make -C kernels $k SERIES=6.12)" "$(tail -n 3 "$TMP/import.err")"
		done_testing; exit
	fi
done
rel=$(kernel_release kernels/out/debian-6.12) relrt=$(kernel_release kernels/out/debian-6.12-rt)
if [[ $rel == 6.12.*-amd64 && $rel != *-rt-* && $relrt == 6.12.*-rt-amd64 ]]; then
	ok "6.12 imported: $rel and its RT twin $relrt"
else
	not_ok "6.12 imported with its RT twin" "releases '$rel' (kernels/out/debian-6.12), '$relrt' (kernels/out/debian-6.12-rt)"
fi
equals "kernels/out/debian not moved by the 6.12 imports" "$(readlink kernels/out/debian 2>/dev/null)" "$before"

cat >"$TMP/modes.json" <<P
{ "name": "modes-6.12", "switch": "auto", "order": "sequential",
  "target": {"type": "qemu", "kernel": "kernels/out/debian-6.12", "memory_mb": 768,
             "append": "noirqdebug"},
  "matrix": {"kernel": ["kernels/out/debian-6.12", "kernels/out/debian-6.12-rt"],
             "preempt": ["none", "voluntary", "full", "lazy", "laziest"], "impossible": "drop"},
  "workloads": [ {"type": "hackbench", "groups": 1, "loops": 10} ] }
P
expect_exit 0 "every mode each 6.12 kernel offers runs" schedlab run "$TMP/modes.json" --db "$DB"
contains "6.12 without lazy: left out at plan time" "$TMP/err" \
	"kernel kernels/out/debian-6.12, preempt=lazy: it offers none, voluntary, full (PREEMPT_DYNAMIC, built voluntary; Linux 6.12)"
contains "6.12-RT's voluntary: left out, its offer named" "$TMP/err" \
	"kernel kernels/out/debian-6.12-rt, preempt=voluntary: it offers full, lazy, laziest (PREEMPT_RT, PREEMPT_DYNAMIC, built lazy; Linux 6.12)"
equals "six boot configurations, all ok" "$(sql "SELECT count(*) || ' ' || sum(status = 'ok') FROM boot")" "6 6"
equals "two guests: the other modes switched at run time" \
	"$(sql "SELECT group_concat(method, ' ') FROM (SELECT method FROM boot ORDER BY seq)")" \
	"boot runtime runtime boot runtime runtime"
equals "the modes as asked and as verified (stored models)" \
	"$(sql "SELECT group_concat(x, ' ') FROM (SELECT substr(req_kernel, 20) || ':' || req_preempt || '=' || preempt AS x FROM boot ORDER BY seq)")" \
	"6.12:none=none 6.12:voluntary=voluntary 6.12:full=full 6.12-rt:full=rt 6.12-rt:lazy=rt-lazy 6.12-rt:laziest=rt-laziest"
equals "the RT guest lists full, lazy and laziest" \
	"$(sql "SELECT json_extract(sysinfo, '\$.preempt_modes.value') FROM boot WHERE req_preempt = 'laziest'")" \
	'["full","lazy","laziest"]'
equals "every run ok" "$(sql "SELECT count(*) || ' ' || sum(status = 'ok') FROM run")" "6 6"

# no preempt=: the built default (lazy), and the EEVDF knobs of 6.12
cat >"$TMP/knobs.json" <<P
{ "name": "knobs-6.12", "switch": "runtime", "order": "sequential",
  "target": {"type": "qemu", "kernel": "kernels/out/debian-6.12-rt", "memory_mb": 768,
             "append": "noirqdebug"},
  "matrix": {"knobs": [{"tunables": {"fair_server/cpu0/runtime": 40000000}},
                       {"tunables": {"fair_server/cpu0/runtime": 30000000, "base_slice_ns": 2000000}},
                       {"sched_features": ["NO_DELAY_DEQUEUE"]}]},
  "workloads": [ {"type": "hackbench", "groups": 1, "loops": 10} ] }
P
DB=$TMP/k.db
expect_exit 0 "6.12-RT without preempt=, with per-CPU and EEVDF knobs" schedlab run "$TMP/knobs.json" --db "$DB"
equals "a boot without preempt= runs 6.12-RT's default: lazy, stored rt-lazy" \
	"$(sql "SELECT ifnull(req_preempt, '-') || ' ' || preempt || ' ' || json_extract(sysinfo, '\$.preempt.value') FROM boot")" \
	"- rt-lazy lazy"
equals "three runs ok" "$(sql "SELECT count(*) || ' ' || sum(status = 'ok') FROM run")" "3 3"
fs() { sql "SELECT group_concat(x, ' ') FROM (SELECT json_extract(j.value, '\$.old') || '->' || json_extract(j.value, '\$.new') || '=' || json_extract(j.value, '\$.readback') AS x FROM run r, json_each(r.knobs_applied) j WHERE json_extract(j.value, '\$.path') = '/sys/kernel/debug/sched/$1' ORDER BY r.seq)"; }
equals "fair_server/cpu0/runtime written and read back, from the default each time (restored between runs)" \
	"$(fs fair_server/cpu0/runtime)" "50000000->40000000=40000000 50000000->30000000=30000000"
bs=$(fs base_slice_ns)
case "$bs" in
[1-9]*[0-9]'->2000000=2000000') ok "base_slice_ns written and read back ($bs)" ;;
*) not_ok "base_slice_ns written and read back" "got '$bs', want OLD->2000000=2000000" ;;
esac
equals "NO_DELAY_DEQUEUE applied" \
	"$(sql "SELECT json_extract(j.value, '\$.old') || '->' || json_extract(j.value, '\$.new') FROM run r, json_each(r.knobs_applied) j WHERE json_extract(j.value, '\$.path') = '/sys/kernel/debug/sched/features'")" \
	"DELAY_DEQUEUE->NO_DELAY_DEQUEUE"
LEFTOVER_NAMES+=(qemu-system-x86_64)
no_leftovers "no qemu or workload process of ours left"
done_testing
