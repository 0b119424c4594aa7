#!/usr/bin/env bash
# End-to-end: the local target with the real rt-tests and stress-ng binaries.
# A small plan runs into a fresh database; the results view, raw output,
# histograms, exit codes, knob restore and the refusals are checked.
. "$(dirname "$0")/lib.sh"
hold_local_target   # no other session changes a knob between its reads (lib.sh)
DB=$TMP/t.db

check "schedlab --help" schedlab --help
for c in run plan sysinfo sessions query agent compare trend report export check bisect nightly alerts; do
	check "schedlab $c --help" schedlab $c --help
done
contains "bisect --help names the unit of a value" <(schedlab bisect --help) "--unit U"
expect_exit 2 "bisect --unit with a bad value" schedlab bisect --db "$DB" --unit boot
contains "... names the valid ones" "$TMP/err" "--unit boot: must be"
expect_exit 2 "bisect --session-runs with --unit run" schedlab bisect --db "$DB" --plan p.json \
	--good a --bad b --metric pingpong.rps --unit run --session-runs 2
contains "... says what it is for" "$TMP/err" "--session-runs is for --unit session"
expect_exit 2 "bisect --resume with a setting" schedlab bisect --db "$DB" --resume last --unit run
contains "... says a bisection continues as started" "$TMP/err" "--resume continues a bisection as it was started"
expect_exit 2 "unknown command exits 2" schedlab frobnicate
contains "unknown command is named" "$TMP/err" "'frobnicate' is not a command"

cat >"$TMP/plan.json" <<'P'
{ "name": "e2e-local", "seed": 3,
  "workloads": [
    {"type": "cyclictest", "duration_s": 1, "interval_us": 1000, "threads": 1,
     "histogram_us": 2000, "load": {"type": "hackbench", "groups": 1, "loops": 100}},
    {"type": "hackbench", "groups": 1, "loops": 50, "transport": "pipe", "mode": "thread"},
    {"type": "stress-ng", "stressor": "cpu", "threads": 1, "duration_s": 1}
  ] }
P
expect_exit 0 "run a plan on the local target" schedlab run "$TMP/plan.json" --db "$DB" --tag e2e
for w in cyclictest hackbench stress-ng; do
	n=$(sql "SELECT count(*) FROM results WHERE workload = '$w' AND tag = 'e2e'")
	[ "$n" -gt 0 ] && ok "results has $w rows ($n)" || not_ok "results has $w rows" "none"
done
equals "cyclictest metrics complete" \
	"$(sql "SELECT group_concat(metric) FROM (SELECT metric FROM results WHERE workload='cyclictest' ORDER BY metric)")" \
	"lat_avg_us,lat_max_us,lat_min_us,lat_p50_us,lat_p999_us,lat_p99_us,overflows,samples"
equals "percentiles ordered" \
	"$(sql "SELECT (SELECT value FROM results WHERE metric='lat_min_us') <= (SELECT value FROM results WHERE metric='lat_p50_us') AND (SELECT value FROM results WHERE metric='lat_p50_us') <= (SELECT value FROM results WHERE metric='lat_p99_us') AND (SELECT value FROM results WHERE metric='lat_p99_us') <= (SELECT value FROM results WHERE metric='lat_max_us')")" 1
equals "hackbench time_s is lower-better seconds" "$(sql "SELECT unit||','||better FROM results WHERE metric='time_s'")" "s,lower"
equals "raw cyclictest JSON kept with the run" "$(sql "SELECT json_extract(files, '\$.\"cyclictest.json\"') LIKE '%\"thread\"%' FROM run WHERE workload='cyclictest'")" 1
equals "merged histogram stored" "$(sql "SELECT json_extract(data, '\$.total') = (SELECT value FROM results WHERE metric='samples') FROM histogram")" 1
equals "load recorded with the run" "$(sql "SELECT json_extract(load, '\$.argv') LIKE '%hackbench%' FROM run WHERE workload='cyclictest'")" 1
equals "sysinfo stored with the boot" "$(sql "SELECT json_extract(sysinfo, '\$.kernel_release.source') FROM boot LIMIT 1")" uname
equals "results view has the DESIGN columns" \
	"$(sql "SELECT count(*) FROM pragma_table_info('results') WHERE name IN ('session','tag','run_id','started_at','target','machine','kernel_release','hz','sched_mc','preempt','cmdline','knobs','workload','params','rep','metric','value','unit','better')")" 19
no_leftovers "no tool or agent process left after the run"

expect_exit 0 "sessions lists the session" schedlab sessions --db "$DB"
contains "sessions shows the plan name" "$TMP/out" "e2e-local"
expect_exit 0 "query --format csv" schedlab query --db "$DB" --format csv "SELECT workload, count(*) AS n FROM results GROUP BY 1 ORDER BY 1"
contains "csv header" "$TMP/out" "workload,n"
expect_exit 2 "query is read-only" schedlab query --db "$DB" "DELETE FROM metric"
expect_exit 0 "query of a value with a terminal escape" schedlab query --db "$DB" "SELECT 'a' || char(27) || '[2J' AS t"
if grep -q $'\x1b' "$TMP/out"; then not_ok "... prints no raw control character" "$(od -c "$TMP/out" | head -3)"; else ok "... prints no raw control character"; fi
contains "... but \\xNN" "$TMP/out" 'a\x1b[2J'
# several statements of different widths: one block each (it crashed when
# the second was wider or narrower than the first)
expect_exit 0 "query with two statements of different widths" schedlab query --db "$DB" \
	"SELECT 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16; SELECT 'x' AS lone"
contains "... prints the first" "$TMP/out" "16"
contains "... and the second" "$TMP/out" "lone"
expect_exit 0 "... also as csv" schedlab query --db "$DB" --format csv "SELECT 'x' AS lone; SELECT 1 AS a, 2 AS b"
contains "... each block with its header" "$TMP/out" "a,b"
expect_exit 2 "... but json takes one statement" schedlab query --db "$DB" --format json "SELECT 1; SELECT 2"
contains "... and says so" "$TMP/err" "--format json takes one"
expect_exit 2 "query with a misspelt column" schedlab query --db "$DB" "SELECT workload, valeu FROM results"
contains "... names it and where it is in the statement" "$TMP/err" \
	'no such column: valeu (at character 18 of the statement: "valeu FROM results")'
expect_exit 2 "query whose second statement fails" schedlab query --db "$DB" "SELECT 'first' AS a; SELECT x FROM nosuch"
contains "... prints what the first returned" "$TMP/out" "first"
contains "... and why the second failed" "$TMP/err" "no such table: nosuch"
equals "metrics still there after the refused DELETE" "$(sql "SELECT count(*) > 0 FROM metric")" 1

# a knob (a sysctl) applied for the run and restored after it
before=$(cat /proc/sys/kernel/sched_rr_timeslice_ms)
new=$((before == 50 ? 60 : 50))
cat >"$TMP/knob.json" <<P
{ "name": "knob", "matrix": {"knobs": [{"sysctl": {"sched_rr_timeslice_ms": $new}}]},
  "workloads": [{"type": "hackbench", "groups": 1, "loops": 20}] }
P
expect_exit 0 "run with a sysctl knob" schedlab run "$TMP/knob.json" --db "$DB" --quiet
equals "knob restored after the run" "$(cat /proc/sys/kernel/sched_rr_timeslice_ms)" "$before"
equals "knob value in force was stored" "$(sql "SELECT json_extract(knobs_applied, '\$[0].readback') FROM run WHERE knobs LIKE '%sched_rr%'")" "$new"
equals "knob old value stored" "$(sql "SELECT json_extract(knobs_applied, '\$[0].old') FROM run WHERE knobs LIKE '%sched_rr%'")" "$before"

# a sched feature the kernel lacks (or no debugfs): skipped with the reason
cat >"$TMP/feat.json" <<'P'
{ "name": "feat", "matrix": {"knobs": [{"sched_features": ["NO_SIS_CURRENT_XYZ"]}]},
  "workloads": [{"type": "hackbench", "groups": 1, "loops": 20}] }
P
if [ -r /sys/kernel/debug/sched/features ] && cat /sys/kernel/debug/sched/features >/dev/null 2>&1; then
	expect_exit 1 "unsupported sched feature: exit 1" schedlab run "$TMP/feat.json" --db "$DB" --quiet
	equals "unsupported sched feature: run skipped" "$(sql "SELECT status FROM run WHERE knobs LIKE '%SIS_CURRENT%'")" skipped
	contains "unsupported sched feature: reason stored" <(sql "SELECT error FROM run WHERE knobs LIKE '%SIS_CURRENT%'") "unsupported by this kernel"
else
	# debugfs is absent or locked down: refused before anything runs
	expect_exit 2 "sched feature knob refused when debugfs is not usable" schedlab run "$TMP/feat.json" --db "$DB" --quiet
	contains "refusal names the knob and the reason" "$TMP/err" "cannot apply matrix.knobs[0]: /sys/kernel/debug/sched/features"
	equals "nothing stored for the refused plan" "$(sql "SELECT count(*) FROM run WHERE knobs LIKE '%SIS_CURRENT%'")" 0
fi

# a missing tool: failed with the Debian package named; the session goes on
mkdir -p "$TMP/path"
ln -s "$(command -v stress-ng)" "$TMP/path/stress-ng"
cat >"$TMP/missing.json" <<'P'
{ "name": "missing", "workloads": [
  {"type": "hackbench", "groups": 1, "loops": 10},
  {"type": "stress-ng", "threads": 1, "duration_s": 1}] }
P
PATH="$TMP/path" SCHEDLAB_AGENT="$PWD/bin/schedlab-agent" expect_exit 1 "missing tool: exit 1" "$PWD/bin/schedlab" run "$TMP/missing.json" --db "$DB" --quiet
contains "missing tool: the package is named" <(sql "SELECT error FROM run WHERE session_id = (SELECT max(id) FROM session) AND workload='hackbench'") "rt-tests"
equals "missing tool: the other workload still ran" "$(sql "SELECT status FROM run WHERE session_id = (SELECT max(id) FROM session) AND workload='stress-ng'")" ok

# refusal at plan time: a preempt mode the local kernel cannot switch to
cat >"$TMP/preempt.json" <<'P'
{ "name": "preempt", "matrix": {"preempt": ["full"]},
  "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}] }
P
if schedlab sysinfo --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["sysinfo"]["preempt"]["value"] is None else 1)'; then
	sessions_before=$(sql "SELECT count(*) FROM session")
	expect_exit 2 "preempt=full refused on a kernel that cannot switch" schedlab run "$TMP/preempt.json" --db "$DB"
	contains "refusal says why" "$TMP/err" "cannot be switched at run time"
	equals "nothing stored for a refused plan" "$(sql "SELECT count(*) FROM session")" "$sessions_before"
else
	skip "preempt refusal" "this kernel can switch preempt modes at run time"
fi
cat >"$TMP/cmdline.json" <<'P'
{ "name": "c", "matrix": {"cmdline": ["nohz_full=1"]}, "workloads": [{"type": "hackbench"}] }
P
expect_exit 2 "local target refuses kernel command-line changes" schedlab plan --check "$TMP/cmdline.json"
contains "cmdline refusal names the alternative" "$TMP/err" "use a qemu or ssh target"
done_testing
