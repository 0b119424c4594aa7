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
#
# Tags: a script's opening comment may say `# tags: WORD...`: `qemu` (it
# boots a guest), `kbuild` (it builds a kernel), `slow` (past make test's
# budget, tests/slow/). SCHEDLAB_SKIP_TAGS="qemu kbuild" skips the scripts
# that carry any of those words; SCHEDLAB_SKIP_SLOW=1 (make test-quick)
# means SCHEDLAB_SKIP_TAGS="qemu kbuild slow". A script's name plays no part.
# Arguments, if given, are the tests to run (paths or substrings; a path to
# a script outside tests/e2e/ runs that script). An argument that selects
# no test fails the run before anything runs (a typo must not pass on
# nothing), and so does a run whose unit-test binaries are not built
# (`make unit`), or a selection of no test at all.
#
# Two lanes: a script whose opening comment says `# lane: guest` (the qemu
# guest, ssh and LAVA tests that boot Debian's imported kernel and build
# none) runs in a second lane beside the rest (the unit tests, the local
# tests, and the tests that build kernels, which share the variant cache and
# ccache). Tests of one lane run one at a time in name order; a test's report
# is printed whole when it ends. SCHEDLAB_TEST_JOBS=1 runs everything in one
# lane (the default on a one-CPU machine). Tests that touch one resource are
# kept in one lane: the LAVA instance, the ssh guests' ports, the kernel
# builds; the local target is shared through its lock (lib.sh:
# hold_local_target).
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
work=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-tests.XXXXXX") || exit 2
# a test runs under timeout(1), which puts it in a process group of its
# own, out of reach of a Ctrl-C or a kill of this script's group: on
# TERM, INT or HUP the running tests (both lanes) get SIGTERM through
# their group, so their cleanup runs (their qemu, their controllers) and
# nothing is left running (their pids in running.pids)
: >"$work/running.pids"
stop_tests() {
	local pid
	while read -r pid; do
		[ -n "$pid" ] && kill -TERM -- "-$pid" 2>/dev/null
	done <"$work/running.pids"
	[ -n "${guest_pid:-}" ] && kill -TERM "$guest_pid" 2>/dev/null
	wait
	echo "# tests/run.sh: stopped by a signal; the running tests were ended" >&2
	exit 143
}
trap stop_tests TERM INT HUP
trap 'rm -rf "$work"' EXIT
devsnap >"$work/devs"   # the nodes as the last test left them (both lanes)
: >"$work/results"      # "PASSED FAILED SKIPPED MILLISECONDS NAME" a test
# (SCHEDLAB_UNIT_DIR replaces the unit tests' folder in the runner's own test)
unit_dir=${SCHEDLAB_UNIT_DIR:-build/tests}
shopt -s nullglob
units=("$unit_dir"/test_*)
tests=("${units[@]}" tests/e2e/t*.sh)
shopt -u nullglob
# refuse: the run fails before any test runs, saying why
refuse() {
	echo "# tests/run.sh: $*" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}
unit_hint=""
[ ${#units[@]} -eq 0 ] && unit_hint=" (the unit tests are not built: make unit)"
if [ $# -gt 0 ]; then
	sel=()
	for a in "$@"; do
		# a script path outside the suite (the runner's own test uses this)
		if [ -f "$a" ] && [[ "$a" == *.sh ]] && [[ "$a" != tests/e2e/* ]]; then
			sel+=("$a")
			continue
		fi
		found=0
		if [ -n "$a" ]; then
			for t in "${tests[@]}"; do
				case "$t" in *"$a"*) found=1; break ;; esac
			done
		fi
		[ "$found" = 1 ] ||
			refuse "'$a' selects no test$unit_hint; name a test by a substring of its file's name (tests/e2e/tNNNN-*.sh, $unit_dir/test_*) or by a script's path"
	done
	# the suite's tests in name order, each once
	for t in "${tests[@]}"; do
		for a in "$@"; do
			[ -n "$a" ] || continue
			case "$t" in *"$a"*) sel+=("$t"); break ;; esac
		done
	done
	tests=("${sel[@]}")
elif [ ${#units[@]} -eq 0 ]; then
	refuse "no unit test in $unit_dir/: build them first (make unit; make test does)"
fi
[ ${#tests[@]} -gt 0 ] || refuse "no test selected"

# the words of a script's `# tags:` line (its opening comment)
tags_of() {
	awk '!/^#/ { exit } /^# tags:/ { sub(/^# tags: */, ""); sub(/ *\(.*/, ""); print; exit }' "$1"
}
skip_tags=${SCHEDLAB_SKIP_TAGS:-}
[ "${SCHEDLAB_SKIP_SLOW:-0}" = 1 ] && skip_tags="$skip_tags qemu kbuild slow"

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

# run_test TEST: runs one test, prints its report whole (under the print
# lock, so the lanes' reports do not mix) and adds its line to results
run_test() {
	local t=$1 name out start_ms limit rc p s f took devs_now
	name=${t##*/}
	if [ -n "$skip_tags" ] && [[ "$t" == *.sh ]]; then
		local tag w
		for tag in $(tags_of "$t"); do
			for w in $skip_tags; do
				[ "$tag" = "$w" ] || continue
				flock "$work/print" echo "# skip $name (tagged $tag; SCHEDLAB_SKIP_TAGS/SCHEDLAB_SKIP_SLOW)"
				flock "$work/results" sh -c 'echo "0 0 1 0 $1" >>"$2"' sh "$name" "$work/results"
				return
			done
		done
	fi
	out=$(mktemp "$work/out.XXXXXX")
	echo "# --- $name" >"$out"
	start_ms=$(($(date +%s%N) / 1000000))
	limit=$(limit_of "$t")
	if [[ "$t" == *.sh ]]; then
		timeout --kill-after=30 "$limit" bash "$t" >>"$out" 2>&1 &
	else
		timeout --kill-after=30 "$limit" "$t" >>"$out" 2>&1 &
	fi
	local tpid=$!
	flock "$work/running.pids" sh -c 'echo "$1" >>"$2"' sh "$tpid" "$work/running.pids"
	wait "$tpid"
	rc=$?
	p=$(grep -cE '^ok ' "$out" | tr -d ' ')
	s=$(grep -cE '^ok .*# [Ss][Kk][Ii][Pp]' "$out" | tr -d ' ')
	f=$(grep -cE '^not ok ' "$out" | tr -d ' ')
	p=$((p - s))
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok - $name timed out after $limit s (limit: '# timeout: N' in its header)" >>"$out"
		f=$((f + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc without reporting a failure" >>"$out"
		f=1
	fi
	# named once, by the test after which it was seen (in either lane)
	exec 9>"$work/devs.lock"
	flock 9
	devs_now=$(devsnap)
	if [ "$devs_now" != "$(cat "$work/devs")" ]; then
		{ echo "not ok - $name changed a device node of the machine (or a test beside it did):"
		  diff "$work/devs" <(echo "$devs_now") | sed 's/^/#   /'; } >>"$out"
		f=$((f + 1))
		echo "$devs_now" >"$work/devs"
	fi
	exec 9>&-
	if grep -qE '^1\.\.0 # [Ss][Kk][Ii][Pp]' "$out"; then
		if [ "${SCHEDLAB_ALLOW_SKIP:-0}" = 1 ]; then
			s=$((s + 1))
		else
			echo "not ok - $name skipped itself whole; in make test that is a failure (SCHEDLAB_ALLOW_SKIP=1 allows it)" >>"$out"
			f=$((f + 1))
		fi
	fi
	took=$(($(date +%s%N) / 1000000 - start_ms))
	echo "# $name: $p passed, $f failed, $s skipped ($((took / 1000)) s)" >>"$out"
	flock "$work/print" cat "$out"
	flock "$work/results" sh -c 'echo "$1" >>"$2"' sh "$p $f $s $took $name" "$work/results"
	rm -f "$out"
}

# run_lane TEST...: one after the other
run_lane() {
	local t
	for t in "$@"; do
		[ -e "$t" ] || continue
		run_test "$t"
	done
}

jobs=${SCHEDLAB_TEST_JOBS:-$( [ "$(nproc)" -ge 2 ] && echo 2 || echo 1)}
main_lane=() guest_lane=()
for t in "${tests[@]}"; do
	if [ "$jobs" -ge 2 ] && [[ "$t" == *.sh ]] &&
		awk '!/^#/ { exit 1 } /^# lane: *guest([ (]|$)/ { found = 1; exit } END { exit !found }' "$t" 2>/dev/null; then
		guest_lane+=("$t")
	else
		main_lane+=("$t")
	fi
done
if [ ${#guest_lane[@]} -gt 0 ] && [ ${#main_lane[@]} -gt 0 ]; then
	echo "# two lanes: ${#main_lane[@]} tests, and ${#guest_lane[@]} guest tests beside them (SCHEDLAB_TEST_JOBS=1: one)"
	# Debian's kernel, which most guest tests boot, imported once before
	# the lanes start (each test imports it when missing; two at once
	# would race); a failure here is the tests' to report
	if [ ! -f kernels/out/debian/kernel.json ]; then
		make -s -C kernels debian >"$work/kernel-import.log" 2>&1 || true
	fi
	run_lane "${guest_lane[@]}" &
	guest_pid=$!
	run_lane "${main_lane[@]}"
	wait "$guest_pid"
else
	run_lane "${main_lane[@]}" "${guest_lane[@]}"
fi

pass=0 fail=0 skip=0
failed_names=()
durations=()   # "MILLISECONDS NAME" of every test that ran
while read -r p f s ms name; do
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	[ "$f" -gt 0 ] && failed_names+=("$name")
	[ "$ms" -gt 0 ] && durations+=("$ms $name")
done <"$work/results"
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
