#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# End-to-end evidence trace in a qemu guest (Debian's 6.1 kernel): a
# hackbench with "evidence" and a small max_kb gets its traced run after
# its repetition; the trace comes from the guest's tracefs (through
# debugfs or tracefs, whichever the guest has), over the serial line, cut
# to its end with a note saying so; the trace_* metrics are stored and
# agree with the kept text. About a minute under TCG.
# timeout: 400
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	sqlite3:sqlite3 jq:jq
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi
cat >"$TMP/q.json" <<'P'
{ "name": "qev", "switch": "reboot", "seed": 2, "repetitions": 1,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 768},
  "workloads": [ {"type": "hackbench", "groups": 1, "loops": 50,
                  "evidence": {"trace_s": 5, "max_kb": 256, "buffer_kb": 2048}} ] }
P
schedlab run "$TMP/q.json" --db "$DB" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && resume_if_lost "$DB" && rc=0   # a TCG guest lost by itself (rare)
equals "run a traced plan in the guest" "$rc" 0
[ $rc = 0 ] || tail -n 3 "$TMP/err" | sed 's/^/#   /'
equals "2 runs ok, the second traced" \
	"$(sql "SELECT group_concat(status || ':' || (params LIKE '%\"evidence\":%'), ' ') FROM (SELECT * FROM run ORDER BY seq)")" \
	"ok:0 ok:1"
RID=$(sql "SELECT id FROM run WHERE params LIKE '%\"evidence\":%'")
sql "SELECT notes FROM run WHERE id = $RID" >"$TMP/note"
contains "marked as traced" "$TMP/note" "traced run (evidence, 5 s window)"
contains "the cut is said" "$TMP/note" "evidence.max_kb"
sql "SELECT json_extract(files, '\$.\"schedlab-trace.txt\"') FROM run WHERE id = $RID" >"$TMP/trace.txt"
sz=$(wc -c <"$TMP/trace.txt")
[ "$sz" -le $((256 * 1024 + 1)) ] && [ "$sz" -gt 100000 ] && ok "the kept trace is at most max_kb ($sz bytes)" \
	|| not_ok "the kept trace is at most max_kb" "$sz bytes"
contains "the guest's trace: the agent in it" "$TMP/trace.txt" "comm=schedlab-agent"
contains "... hackbench" "$TMP/trace.txt" "hackbench-"
equals "trace_switches agrees with the kept text" \
	"$(sql "SELECT CAST(value AS INTEGER) FROM results WHERE run_id = $RID AND metric = 'trace_switches'")" \
	"$(grep -c ': sched_switch: ' "$TMP/trace.txt")"
sql "SELECT json_extract(files, '\$.\"schedlab-trace.json\"') FROM run WHERE id = $RID" >"$TMP/trace.json"
equals "the summary says truncated" "$(jq -r .truncated "$TMP/trace.json")" true
done_testing
