#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 240
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# sockperf in a qemu guest (Debian's 6.1 kernel, one boot): the initramfs
# carries sl-netpair and sockperf with its libraries (the workload's
# also_tools), /init brings the loopback interface up (without it UDP
# fails with "Network is unreachable" and a TCP server is never reachable),
# and ping-pong over UDP and TCP (with the full log) store their round-trip
# percentiles and histogram. About 30 s with the kernel imported.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	sockperf:sockperf sqlite3:sqlite3
require_built bin/schedlab bin/schedlab-agent bin/sl-netpair
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "kernel imported (make -C kernels debian)"; done_testing; exit
fi
cat >"$TMP/plan.json" <<'P'
{ "name": "qemu-sockperf",
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 768},
  "workloads": [
    {"type": "sockperf", "duration_s": 2},
    {"type": "sockperf", "duration_s": 2, "protocol": "tcp", "full_log": true}
  ] }
P
expect_exit 0 "sockperf ping-pong over UDP and TCP in a guest" schedlab run "$TMP/plan.json" --db "$DB"
equals "both runs ok" "$(sql "SELECT count(*) FROM run WHERE status = 'ok'")" 2
equals "the round-trip percentiles stored for each, in order" \
	"$(sql "SELECT count(*) FROM (SELECT run_id,
		max(CASE WHEN metric='rtt_p50_us' THEN value END) AS p50,
		max(CASE WHEN metric='rtt_p99_us' THEN value END) AS p99,
		max(CASE WHEN metric='rtt_max_us' THEN value END) AS mx
		FROM results GROUP BY run_id) WHERE 0 < p50 AND p50 <= p99 AND p99 <= mx")" 2
equals "the TCP run's histogram holds every observation" \
	"$(sql "SELECT json_extract(h.data, '\$.total') = m.value FROM histogram h JOIN results m ON m.run_id = h.run_id AND m.metric = 'observations' WHERE h.name = 'rtt_ns'")" 1
equals "the programs that ran came with the guest's archive" \
	"$(sql "SELECT DISTINCT json_extract(json_extract(files, '\$.\"schedlab-tools.json\"'), '\$.workload.argv0') FROM run")" \
	"sl-netpair"
equals "the server ran in the guest (its log kept)" \
	"$(sql "SELECT count(*) FROM run WHERE json_extract(files, '\$.\"sockperf-server.log\"') LIKE '%[SERVER] listen on:%'")" 2
done_testing
