#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 420
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# End-to-end: the pgbench workload in a qemu guest (Debian's 6.1 kernel,
# TCG). The initramfs of a plan that runs pgbench carries PostgreSQL 15
# (programs, libraries, share files, plpgsql and dict_snowball, a nobody
# user; harness/targets/pgfiles.c, shared with the lava target); sl-pgbench makes the server in the guest as nobody, and the run
# stores tps and latency percentiles with the histogram holding pgbench's
# transaction count. The guest runs initdb in about a minute under TCG
# (docs/metrics.md, pgbench): one short run, about 2 minutes in all. The
# guest has no time zone files: the programs run with TZ=UTC0 (pgfiles.h).
# A plan putting pgbench on the ssh target is accepted (its run from the
# workload bundle is tests/e2e/t0720-ssh-bundle.sh). No speed is asserted.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP   # the VM's folder, so that leftovers are ours to find
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox \
	postgresql-15:/usr/lib/postgresql/15/bin/postgres sqlite3:sqlite3
require_built bin/schedlab bin/schedlab-agent bin/sl-pgbench
LEFTOVER_NAMES+=(qemu-system-x86_64)
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi

cat >"$TMP/plan.json" <<'P'
{ "name": "qemu-pgbench", "seed": 4,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 1024},
  "matrix": {"preempt": ["full"]},
  "workloads": [
    {"type": "pgbench", "mode": "select-only", "clients": 2, "threads": 2, "duration_s": 4}
  ] }
P
expect_exit 0 "pgbench select-only in the guest" schedlab run "$TMP/plan.json" --db "$DB" --tag q
equals "the run is ok" "$(sql "SELECT status FROM run")" ok
equals "tps and the percentiles stored, positive and ordered" \
	"$(sql "SELECT count(*) FROM (SELECT
		max(CASE WHEN metric='tps' THEN value END) t,
		max(CASE WHEN metric='lat_p50_us' THEN value END) p50,
		max(CASE WHEN metric='lat_p90_us' THEN value END) p90,
		max(CASE WHEN metric='lat_p99_us' THEN value END) p99
		FROM results WHERE workload = 'pgbench') WHERE t > 0 AND 0 < p50 AND p50 <= p90 AND p90 <= p99")" 1
equals "the histogram holds every transaction pgbench counted" \
	"$(sql "SELECT count(*) FROM histogram h JOIN results m ON m.run_id = h.run_id AND m.metric = 'transactions'
		WHERE h.name = 'latency_us' AND json_extract(h.data, '\$.total') = CAST(m.value AS INTEGER) AND m.value > 0")" 1
equals "the results carry the guest's preempt mode" "$(sql "SELECT DISTINCT preempt FROM results WHERE metric = 'tps'")" full
equals "the server ran as nobody in the guest, from /bin" \
	"$(sql "SELECT json_extract(json_extract(files, '\$.\"sl-pgbench.json\"'), '\$.user') FROM run")" nobody
contains "... its log says it listened on the Unix socket only" \
	<(sql "SELECT json_extract(files, '\$.\"postgres.log\"') FROM run") 'listening on Unix socket "/tmp/schedlab-run-'
equals "... and on no TCP port" \
	"$(sql "SELECT json_extract(files, '\$.\"postgres.log\"') LIKE '%listening on IPv%' FROM run")" 0
no_leftovers "no qemu or agent left"

cat >"$TMP/ssh.json" <<'P'
{ "name": "ssh-pgbench", "target": {"type": "ssh", "host": "lab1"},
  "workloads": [ {"type": "pgbench"} ] }
P
expect_exit 0 "pgbench on the ssh target: accepted at plan time (the bundle carries PostgreSQL)" \
	schedlab plan "$TMP/ssh.json"
done_testing
