#!/usr/bin/env bash
# tags: qemu kbuild (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 2400 (tests/run.sh ends it past this many seconds)
# End-to-end: kernel variants and knobs on a qemu guest (issue 6).
#
# 1. Plan time: an unknown fragment and two conflicting fragments exit 2 with
#    the fragment named; examples/hz-mc-qemu.json validates.
# 2. `schedlab run` with matrix.kernel = {"variant": ["hz1000", "sched_mc_off",
#    "tracing"]} (the one variant the tests share: t0620 runs rtla on it)
#    builds the minimal variant (cold: about 5 min on 2 idle cores; a cache hit
#    otherwise), boots it under qemu and runs pingpong with knob sets:
#    NO_TTWU_QUEUE (applied, stored, restored: the second repetition's stored
#    "old" value is TTWU_QUEUE again), SIS_CACHE (absent from a stock kernel:
#    runs skipped, "unsupported by this kernel"), a real tunable
#    (migration_cost_ns: applied, read back, restored) and an absent one
#    (skipped). Checks that results rows carry hz=1000 and sched_mc=0 as read
#    from the booted kernel, and that the stored plan and boot rows name the
#    built folder and the release names the variant.
# 3. The cache: the same variant again is a hit in well under 10 s.
# 4. The recipe refuses a fragment whose option does not survive
#    olddefconfig, naming the option and the fragment (exit 3).
. "$(dirname "$0")/lib.sh"
export TMPDIR=$TMP   # the VMs' folders, so that leftovers are ours to find

need() { command -v "$1" >/dev/null; }
require qemu-system-x86:qemu-system-x86_64 flex:flex bison:bison bc:bc make:make gcc:gcc \
	libelf-dev:/usr/include/libelf.h libssl-dev:/usr/include/openssl/ssl.h ccache:ccache \
	xz-utils:xz
if ! ls kernels/cache/linux-source-6.1_*_all.deb >/dev/null 2>&1 && ! need apt-get; then
	not_ok "linux-source-6.1 available" "no kernels/cache/linux-source-6.1_*_all.deb and no apt-get to download it"
	done_testing; exit
fi

# --- 1. plan time ----------------------------------------------------------------
plan() { # plan NAME KERNELS KNOBS REPS
	cat >"$TMP/$1.json" <<EOF
{"name": "$1", "target": {"type": "qemu", "kernel": "kernels/out/debian", "memory_mb": 768},
 "order": "sequential", "repetitions": $4,
 "matrix": {"kernel": $2, "knobs": $3},
 "workloads": [{"type": "pingpong", "duration_s": 1, "warmup_s": 0}]}
EOF
}
# the plan's target default kernel is checked at plan time: give it one
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1 || true

plan bad1 '[{"variant": ["hz1000", "sched_mc_of"]}]' '[{}]' 1
expect_exit 2 "plan: unknown fragment exits 2" schedlab plan "$TMP/bad1.json"
contains "plan: unknown fragment named, known ones listed" "$TMP/err" \
	'matrix.kernel[0].variant[1]: unknown fragment "sched_mc_of" (known: hz100'
plan bad2 '[{"variant": ["hz250", "hz1000"]}]' '[{}]' 1
expect_exit 2 "plan: conflicting fragments exit 2" schedlab plan "$TMP/bad2.json"
contains "plan: the conflict is named" "$TMP/err" "fragments hz250 and hz1000 conflict on CONFIG_HZ"
expect_exit 0 "examples/hz-mc-qemu.json validates" schedlab plan examples/hz-mc-qemu.json
contains "example: a variant per kernel of the matrix" "$TMP/out" "variant:minimal:hz1000+sched_mc_off"

# --- 2. build, boot, knobs ------------------------------------------------------------
plan v '[{"variant": ["hz1000", "sched_mc_off", "tracing"]}]' \
	'[{"sched_features": ["NO_TTWU_QUEUE"]}, {"sched_features": ["SIS_CACHE"]},
	  {"tunables": {"migration_cost_ns": 1000000}}, {"tunables": {"no_such_tunable_ns": 1}}]' 2
DB=$TMP/v.db
t0=$(date +%s)
schedlab run "$TMP/v.json" --db "$DB" --tag variants >"$TMP/out" 2>"$TMP/err"
rc=$?
t1=$(date +%s)
echo "# schedlab run (build or cache + boot + 8 runs): $((t1 - t0)) s, exit $rc"
grep -E '^kernel [0-9]|kbuild: (built|cached|config ok)' "$TMP/err" | sed 's/^/#   /'
equals "run exits 1 (some runs skipped)" "$rc" 1
# a TCG guest lost by itself (rare): its console, and one resume, as a user would
resume_if_lost "$DB" || true
contains "progress: the variant is built or found" "$TMP/err" "kernel 1/1: variant:minimal:hz1000+sched_mc_off+tracing"

folder=$(sql "SELECT req_kernel FROM boot LIMIT 1")
case "$folder" in
"${XDG_CACHE_HOME:-$HOME/.cache}"/schedlab/kernels/*) ok "boot row names the built folder" ;;
*) not_ok "boot row names the built folder" "req_kernel: $folder" "$(tail -n 5 "$TMP/err")" ;;
esac
check "the folder has vmlinuz, vmlinux, config, kernel.json" \
	test -s "$folder/vmlinuz" -a -s "$folder/vmlinux" -a -s "$folder/config" -a -s "$folder/kernel.json"
contains "kernel.json names the variant" "$folder/kernel.json" '"variant": ["hz1000", "sched_mc_off", "tracing"]'
stored=$(sql "SELECT plan_json FROM session LIMIT 1")
case "$stored" in
*'"image":"'"$folder"'"'*) ok "the stored plan names the image" ;;
*) not_ok "the stored plan names the image" "$stored" ;;
esac
equals "results: hz and sched_mc from the booted kernel" \
	"$(sql "SELECT DISTINCT hz || ' ' || sched_mc FROM results")" "1000 0"
equals "results: the release names the variant" \
	"$(sql "SELECT DISTINCT kernel_release FROM results")" "6.1.192-sl-minimal-hz1000-sched_mc_off-tracing"

# NO_TTWU_QUEUE: both repetitions ok; each found TTWU_QUEUE in force (the
# first run's change was restored before the second), wrote and read back
ttwu=$(sql "SELECT status || ' ' || json_extract(knobs_applied, '\$[0].old') || ' ' ||
	json_extract(knobs_applied, '\$[0].new') FROM run WHERE knobs LIKE '%NO_TTWU_QUEUE%'
	ORDER BY rep")
equals "sched feature applied, stored, restored (read back by the next run)" \
	"$(echo $ttwu)" "ok TTWU_QUEUE NO_TTWU_QUEUE ok TTWU_QUEUE NO_TTWU_QUEUE"
rb=$(sql "SELECT json_extract(knobs_applied, '\$[0].readback') FROM run
	WHERE knobs LIKE '%NO_TTWU_QUEUE%' LIMIT 1")
case " $rb " in *" NO_TTWU_QUEUE "*) ok "read back: NO_TTWU_QUEUE in force during the run" ;;
*) not_ok "read back: NO_TTWU_QUEUE in force during the run" "readback: $rb" ;; esac
equals "missing sched feature: runs skipped with the reason" \
	"$(sql "SELECT DISTINCT status || ': ' || error FROM run WHERE knobs LIKE '%SIS_CACHE%'")" \
	"skipped: sched feature SIS_CACHE: unsupported by this kernel"
mc=$(sql "SELECT status || ' ' || json_extract(knobs_applied, '\$[0].old') || ' ' ||
	json_extract(knobs_applied, '\$[0].readback') FROM run WHERE knobs LIKE '%migration_cost%'
	ORDER BY rep")
read -r s1 o1 r1 s2 o2 r2 _ <<<"$(echo $mc) - - - - - -"
if [ "$s1 $s2" = "ok ok" ] && [ "$r1 $r2" = "1000000 1000000" ] && [ "$o1" = "$o2" ] && [ "$o1" != 1000000 ]; then
	ok "tunable migration_cost_ns applied, read back, restored ($o1 before each run)"
else
	not_ok "tunable migration_cost_ns applied, read back, restored" "rows: $mc"
fi
sql "SELECT status || ': ' || error FROM run WHERE knobs LIKE '%no_such_tunable%'" >"$TMP/absent"
contains "absent tunable: skipped, unsupported by this kernel" "$TMP/absent" \
	"skipped: unsupported by this kernel: /sys/kernel/debug/sched/no_such_tunable_ns"
equals "pingpong metrics stored for the ok runs" \
	"$(sql "SELECT count(DISTINCT run_id) FROM results WHERE workload = 'pingpong'")" 4

# --- 3. the cache ---------------------------------------------------------------
t0=$(date +%s%N)
out=$(kernels/build-variant.sh hz1000 sched_mc_off tracing 2>"$TMP/err")
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
echo "# cached lookup: $ms ms"
equals "a second build is a cache hit: the same folder" "$out" "$folder"
contains "the hit says so" "$TMP/err" "kbuild: cached: minimal-hz1000-sched_mc_off-tracing"
if [ "$ms" -lt 10000 ]; then ok "cache hit in $ms ms"; else not_ok "cache hit in $ms ms (> 10 s)"; fi

# --- 4. an option that does not survive olddefconfig ----------------------------
printf '# SCHED_MC without SMP\n# CONFIG_SMP is not set\nCONFIG_SCHED_MC=y\n' >"$TMP/nosmp.config"
expect_exit 3 "a dropped option fails the build (exit 3)" kernels/build-variant.sh "$TMP/nosmp.config"
contains "the dropped option and its fragment are named" "$TMP/err" \
	"CONFIG_SCHED_MC=y (from $TMP/nosmp.config) did not survive olddefconfig"

# the workloads ran inside the guest: what could be left on the host is the
# VM or the build (a global process check would see other jobs' workloads)
if pgrep -f "build-variant.sh.*$TMP" >/dev/null; then not_ok "no build left"; else ok "no build left"; fi
if pgrep -f "qemu-system-x86_64.*$TMP" >/dev/null; then not_ok "no qemu left"; else ok "no qemu left"; fi
done_testing
