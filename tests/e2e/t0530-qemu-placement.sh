#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 600 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# End-to-end: wakeup-placement evidence (issue 14, item 4) in a qemu guest
# with Debian's 6.1 kernel (CONFIG_SCHEDSTATS=y, kernel.sched_schedstats=0 at
# boot) under TCG. sl-pingpong (threads, and processes) and sl-jbb run with
# the plan's "schedstat" on: the agent turns schedstats on for each run and
# restores them, the programs dump every task's /proc/<pid>/sched at the
# window's start and end, and the results view must carry the task_* sums
# with sane relations; the raw dump is kept with the run. A plan with
# "schedstat": false stores no task_* metric and says why. One VM boot per
# session, about a minute.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio sqlite3:sqlite3
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi

plan() { # NAME SCHEDSTAT
	cat <<P
{ "name": "$1", "order": "sequential", "seed": 1, "schedstat": $2,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 768},
  "workloads": [
    {"type": "pingpong", "duration_s": 2, "warmup_s": 0.5, "stages": 2, "work_us": 50},
    {"type": "pingpong", "duration_s": 2, "warmup_s": 0.5, "tasks": "procs", "work_us": 50},
    {"type": "jbb", "duration_s": 8, "groups": 1, "workers": 2, "data_mb": 8}
  ] }
P
}
plan placement true >"$TMP/on.json"
schedlab run "$TMP/on.json" --db "$DB" --tag on >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && resume_if_lost "$DB" && rc=0
equals "run pingpong and jbb in the guest with schedstat on (or resumed after a lost guest)" "$rc" 0
[ $rc = 0 ] || tail -n 3 "$TMP/err" | sed 's/^/#   /'
[ "$(sql "SELECT count(*) FROM boot WHERE status = 'ok'")" = 1 ] ||
	sql "SELECT 'boot: ' || status || ': ' || coalesce(error, '') FROM boot" | sed 's/^/# /'
equals "3 runs ok" "$(sql "SELECT count(*) FROM run WHERE status = 'ok'")" 3
v() { # RUN_PARAMS_LIKE METRIC
	sql "SELECT value FROM results WHERE tag = 'on' AND workload = '$1' AND metric = '$2' AND params $3"
}
for w in "pingpong|LIKE '%threads%'" "pingpong|LIKE '%procs%'" "jbb|NOT NULL"; do
	wl=${w%%|*} sel=${w#*|}
	for m in task_files task_wakeups task_wakeups_local task_wakeups_remote task_wakeups_sync \
		 task_wakeups_migrate task_wakeups_affine task_wakeups_affine_attempts \
		 task_migrations task_wait_sum_ms task_wait_count task_iowait_count \
		 task_local_wakeup_pct task_remote_wakeup_pct; do
		[ -n "$(v "$wl" $m "$sel")" ] && ok "$wl ($sel): $m stored" || not_ok "$wl ($sel): $m stored" "absent"
	done
	# a wakeup lands locally or remotely, exactly one of them (ttwu_stat);
	# reads of the file are not atomic: one per task and snapshot of slack
	n=$(v "$wl" task_files "$sel")
	equals "$wl ($sel): wakeups = local + remote (+- 2 per task)" \
		"$(sql "SELECT abs(w.value - l.value - r.value) <= 2 * $n FROM results w, results l, results r WHERE w.tag='on' AND w.workload='$wl' AND w.params $sel AND w.metric='task_wakeups' AND l.run_id=w.run_id AND l.metric='task_wakeups_local' AND r.run_id=w.run_id AND r.metric='task_wakeups_remote'")" 1
	equals "$wl ($sel): affine <= attempts, migrate and sync <= wakeups (+ slack)" \
		"$(sql "SELECT (SELECT value FROM results WHERE run_id=w.run_id AND metric='task_wakeups_affine') <= (SELECT value FROM results WHERE run_id=w.run_id AND metric='task_wakeups_affine_attempts') AND (SELECT value FROM results WHERE run_id=w.run_id AND metric='task_wakeups_migrate') <= w.value + 2 * $n AND (SELECT value FROM results WHERE run_id=w.run_id AND metric='task_wakeups_sync') <= w.value + 2 * $n FROM results w WHERE w.tag='on' AND w.workload='$wl' AND w.params $sel AND w.metric='task_wakeups'")" 1
	equals "$wl ($sel): percentages in [0, 100], local + remote = 100" \
		"$(sql "SELECT min(value >= 0 AND value <= 100) || ',' || (abs(sum(CASE WHEN metric IN ('task_local_wakeup_pct','task_remote_wakeup_pct') THEN value END) - 100) < 1e-6) FROM results WHERE tag='on' AND workload='$wl' AND params $sel AND metric LIKE 'task_%_pct'")" "1,1"
	equals "$wl ($sel): the tasks were woken (task_wakeups > 0)" "$(sql "SELECT value > 0 FROM results WHERE tag='on' AND workload='$wl' AND params $sel AND metric='task_wakeups'")" 1
	equals "$wl ($sel): wait_mean_us = wait_sum / wait_count" \
		"$(sql "SELECT abs(m.value - s.value * 1000 / c.value) < 1e-6 * m.value + 1e-9 FROM results m, results s, results c WHERE m.tag='on' AND m.workload='$wl' AND m.params $sel AND m.metric='task_wait_mean_us' AND s.run_id=m.run_id AND s.metric='task_wait_sum_ms' AND c.run_id=m.run_id AND c.metric='task_wait_count'")" 1
done
equals "pingpong threads: 2 stages + client summed" "$(sql "SELECT CAST(value AS INTEGER) FROM results WHERE tag = 'on' AND workload = 'pingpong' AND params LIKE '%threads%' AND metric = 'task_files'")" 3
equals "the raw dump is kept with each run" \
	"$(sql "SELECT count(*) FROM run WHERE json_extract(files, '\$.\"task-sched.txt\"') LIKE 'schedlab-task-sched 1%@@ end %nr_wakeups_affine%'")" 3
equals "no note on runs with evidence" "$(sql "SELECT count(*) FROM run WHERE error IS NOT NULL")" 0
# the schedstats knob went back: the runs' /proc/schedstat snapshots were
# taken with it on, and the session's knob log is empty at the end
equals "schedstat snapshots stored (the knob was on during the runs)" \
	"$(sql "SELECT count(*) FROM metric m JOIN run r ON r.id = m.run_id WHERE m.workload = 'schedstat' AND m.name = 'ttwu_count'" 2>/dev/null || sql "SELECT count(*) FROM results WHERE workload = 'schedstat' AND metric = 'ttwu_count'")" 3

# schedstat off: kernel.sched_schedstats stays 0 in the guest, no task_* row
plan noplacement false >"$TMP/off.json"
sed -i 's/"duration_s": 8/"duration_s": 5/' "$TMP/off.json"
schedlab run "$TMP/off.json" --db "$DB" --tag off >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && resume_if_lost "$DB" && rc=0
equals "run with schedstat off (or resumed after a lost guest)" "$rc" 0
[ "$(sql "SELECT count(*) FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = 'off' AND b.status = 'ok'")" = 1 ] ||
	sql "SELECT 'boot: ' || b.status || ': ' || coalesce(b.error, '') FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = 'off'" | sed 's/^/# /'
equals "schedstat off: runs ok" "$(sql "SELECT count(*) FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag = 'off' AND r.status = 'ok'")" 3
equals "schedstat off: no task_* metric at all (never zeros)" "$(sql "SELECT count(*) FROM results WHERE tag = 'off' AND metric LIKE 'task_%'")" 0
equals "schedstat off: each run says why in a note" \
	"$(sql "SELECT count(*) FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag = 'off' AND r.notes LIKE 'no wakeup-placement evidence: %schedstat%'")" 3
equals "schedstat off: the raw dump is still kept" \
	"$(sql "SELECT count(*) FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag = 'off' AND json_extract(r.files, '\$.\"task-sched.txt\"') LIKE 'schedlab-task-sched 1%'")" 3
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi
done_testing
