#!/usr/bin/env bash
# Runs every test: the unit-test binaries in build/tests/ (built by `make unit`
# with ASan/UBSan) and the end-to-end scripts tests/e2e/t*.sh in name order.
# Each prints TAP; this script adds the lines up and ends with the closing
# line `N passed, N failed, N skipped`. A test binary that crashes or exits
# non-zero without reporting a failure counts as one failure.
#
# SCHEDLAB_SKIP_SLOW=1 skips scripts whose name contains "-qemu" or "-slow".
# Arguments, if given, are the tests to run (paths or substrings).
set -u
cd "$(dirname "$0")/.."
export SCHEDLAB_TESTDATA="$PWD/tests/data"
export PATH="$PWD/bin:$PATH"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

pass=0 fail=0 skip=0
failed_names=()
tests=(build/tests/test_* tests/e2e/t*.sh)
if [ $# -gt 0 ]; then
	sel=()
	for t in "${tests[@]}"; do
		for a in "$@"; do
			case "$t" in *"$a"*) sel+=("$t") ;; esac
		done
	done
	tests=("${sel[@]}")
fi

for t in "${tests[@]}"; do
	[ -e "$t" ] || continue
	name=${t##*/}
	if [ "${SCHEDLAB_SKIP_SLOW:-0}" = 1 ] && [[ "$name" == *-qemu* || "$name" == *-slow* ]]; then
		echo "# skip $name (SCHEDLAB_SKIP_SLOW=1)"
		skip=$((skip + 1))
		continue
	fi
	echo "# --- $name"
	out=$(mktemp)
	start=$(date +%s)
	if [[ "$t" == *.sh ]]; then
		bash "$t" >"$out" 2>&1
	else
		"$t" >"$out" 2>&1
	fi
	rc=$?
	cat "$out"
	p=$(grep -cE '^ok ' "$out" | tr -d ' ')
	s=$(grep -cE '^ok .*# [Ss][Kk][Ii][Pp]' "$out" | tr -d ' ')
	f=$(grep -cE '^not ok ' "$out" | tr -d ' ')
	p=$((p - s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc without reporting a failure"
		f=1
	fi
	if [ "$f" -gt 0 ]; then
		failed_names+=("$name")
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	echo "# $name: $p passed, $f failed, $s skipped ($(( $(date +%s) - start )) s)"
	rm -f "$out"
done
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "# failing: ${failed_names[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
