#!/usr/bin/env bash
# Runs the libFuzzer targets (build/fuzz/bin/fuzz_*, made by `make
# fuzz-build`) and replays the inputs that once crashed (fuzz/README.md).
#
#   scripts/fuzz.sh SECONDS [TARGET...]   default: every target but selftest
#
# Each target runs for SECONDS from a working corpus (build/fuzz/corpus/T,
# seeded from fuzz/corpus/T) and prints its executions, executions per
# second and coverage (cov: edges, ft: features); then every file under
# tests/data/fuzz/T/ is run through it once. A crash, leak or sanitizer
# report fails the script and names the target and the input; the input
# is kept in build/fuzz/crashes/. FUZZ_SEEDS and FUZZ_SAVED change the
# folders of seeds (fuzz/corpus) and saved inputs (tests/data/fuzz).
set -u
cd "$(dirname "$0")/.."
secs=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for b in build/fuzz/bin/fuzz_*; do
		t=${b##*/fuzz_}
		[ "$t" = selftest ] || targets+=("$t")
	done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no targets built (make fuzz-build)" >&2; exit 2; }
seedroot=${FUZZ_SEEDS:-fuzz/corpus}
savedroot=${FUZZ_SAVED:-tests/data/fuzz}
mkdir -p build/fuzz/crashes
failed=0
for t in "${targets[@]}"; do
	bin=build/fuzz/bin/fuzz_$t
	[ -x "$bin" ] || { echo "fuzz: $bin missing (make fuzz-build)" >&2; failed=1; continue; }
	work=build/fuzz/corpus/$t
	mkdir -p "$work"
	seeds=()
	[ -d "$seedroot/$t" ] && seeds+=("$seedroot/$t")
	log=build/fuzz/$t.log
	if [ "$secs" -gt 0 ]; then
		"$bin" -max_total_time="$secs" -print_final_stats=1 -max_len=65536 -timeout=10 \
			-rss_limit_mb=2048 -artifact_prefix="build/fuzz/crashes/$t-" \
			"$work" "${seeds[@]}" >"$log" 2>&1
		rc=$?
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
		cov=$(grep -a -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
		if [ $rc -ne 0 ]; then
			art=$(grep -a -o "build/fuzz/crashes/$t-[^ ]*" "$log" | tail -n 1)
			echo "fuzz $t: CRASH (input kept in ${art:-build/fuzz/crashes})"
			grep -a -m 3 -E 'ERROR: |runtime error|SUMMARY' "$log" | sed 's/^/    /'
			failed=1
			continue
		fi
		echo "fuzz $t: ${execs:-?} executions in ${secs} s (${rate:-?}/s), ${cov:-no coverage line}"
	fi
	if [ -d "$savedroot/$t" ]; then
		for f in "$savedroot/$t"/*; do
			[ -f "$f" ] || continue
			if ! "$bin" -rss_limit_mb=2048 -timeout=60 "$f" >"$log.replay" 2>&1; then
				echo "fuzz $t: CRASH replaying $f"
				grep -a -m 3 -E 'ERROR: |runtime error|SUMMARY' "$log.replay" | sed 's/^/    /'
				failed=1
			fi
		done
		echo "fuzz $t: replayed $(ls "$savedroot/$t" | wc -l) saved inputs"
	fi
done
exit $failed
