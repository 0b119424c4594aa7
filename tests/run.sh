#!/usr/bin/env bash
# Runs every test: the unit-test binaries in build/tests/ (built by `make unit`
# with ASan/UBSan) and the end-to-end scripts tests/e2e/t*.sh in name order.
# Each prints TAP; this script adds the lines up and ends with the closing
# line `N passed, N failed, N skipped`; before it, the ten slowest tests
# (seconds, name), so a test nearing its limit shows. A test that crashes,
# exits non-zero without reporting a failure, or runs past its time limit
# counts as one failure named after it.
#
# Time limits: a script may say `# timeout: SECONDS` in its opening comment;
# otherwise 600 s for a script and 300 s for a unit-test binary. A test past
# its limit gets SIGTERM (its cleanup runs), then SIGKILL 30 s later.
#
# Prerequisites: a script whose prerequisite is missing reports a failure
# naming the package (tests/e2e/lib.sh: require). SCHEDLAB_ALLOW_SKIP=1
# (make test-quick; CI never sets it) turns that into a skip; without it a
# script that skips itself whole (`1..0 # SKIP`) is a failure too.
# SCHEDLAB_SKIP_SLOW=1 skips scripts whose name contains "-qemu" or "-slow".
# Arguments, if given, are the tests to run (paths or substrings; a path to
# a script outside tests/e2e/ runs that script).
set -u
cd "$(dirname "$0")/.."
export SCHEDLAB_TESTDATA="$PWD/tests/data"
export PATH="$PWD/bin:$PATH"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# the machine's shared device nodes, as a test must leave them: a test (or
# a fuzz harness) that changes one breaks everything after it, other
# users' programs and the next CI run on the machine included (a chmod
# through a symlink once left /dev/null 0600, and apt and PostgreSQL failed)
# (SCHEDLAB_DEVNODES replaces the list in the runner's own test)
read -r -a devnodes <<<"${SCHEDLAB_DEVNODES:-/dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty}"
devsnap() { stat -c '%n %F %a %u:%g %t:%T' "${devnodes[@]}" 2>&1; }
devs_before=$(devsnap)

pass=0 fail=0 skip=0
failed_names=()
durations=()   # "MILLISECONDS NAME" of every test that ran
tests=(build/tests/test_* tests/e2e/t*.sh)
if [ $# -gt 0 ]; then
	sel=()
	for a in "$@"; do
		# a script path outside the suite (the runner's own test uses this)
		if [ -f "$a" ] && [[ "$a" == *.sh ]] && [[ "$a" != tests/e2e/* ]]; then sel+=("$a"); fi
	done
	for t in "${tests[@]}"; do
		for a in "$@"; do
			case "$t" in *"$a"*) sel+=("$t") ;; esac
		done
	done
	tests=("${sel[@]}")
fi

# the time limit of a test in seconds
limit_of() {
	local t=$1 n
	if [[ "$t" == *.sh ]]; then
		n=$(awk '!/^#/ { exit } /^# timeout: *[0-9]+/ { sub(/^# timeout: */, ""); print $1 + 0; exit }' "$t")
		echo "${n:-600}"
	else
		echo 300
	fi
}

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
	start_ms=$(($(date +%s%N) / 1000000))
	limit=$(limit_of "$t")
	if [[ "$t" == *.sh ]]; then
		timeout --kill-after=30 "$limit" bash "$t" >"$out" 2>&1
	else
		timeout --kill-after=30 "$limit" "$t" >"$out" 2>&1
	fi
	rc=$?
	cat "$out"
	p=$(grep -cE '^ok ' "$out" | tr -d ' ')
	s=$(grep -cE '^ok .*# [Ss][Kk][Ii][Pp]' "$out" | tr -d ' ')
	f=$(grep -cE '^not ok ' "$out" | tr -d ' ')
	p=$((p - s))
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok - $name timed out after $limit s (limit: '# timeout: N' in its header)"
		f=$((f + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc without reporting a failure"
		f=1
	fi
	devs_now=$(devsnap)
	if [ "$devs_now" != "$devs_before" ]; then
		echo "not ok - $name changed a device node of the machine:"
		diff <(echo "$devs_before") <(echo "$devs_now") | sed 's/^/#   /'
		f=$((f + 1))
		devs_before=$devs_now   # named once, by the test that did it
	fi
	if grep -qE '^1\.\.0 # [Ss][Kk][Ii][Pp]' "$out"; then
		if [ "${SCHEDLAB_ALLOW_SKIP:-0}" = 1 ]; then
			s=$((s + 1))
		else
			echo "not ok - $name skipped itself whole; in make test that is a failure (SCHEDLAB_ALLOW_SKIP=1 allows it)"
			f=$((f + 1))
		fi
	fi
	if [ "$f" -gt 0 ]; then
		failed_names+=("$name")
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	took=$(($(date +%s%N) / 1000000 - start_ms))
	durations+=("$took $name")
	echo "# $name: $p passed, $f failed, $s skipped ($((took / 1000)) s)"
	rm -f "$out"
done
if [ ${#durations[@]} -gt 0 ]; then
	echo "# slowest:"
	printf '%s\n' "${durations[@]}" | sort -k1,1nr -k2 | head -n 10 |
		while read -r ms name; do printf '#   %4d.%d s  %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$name"; done
fi
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "# failing: ${failed_names[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
