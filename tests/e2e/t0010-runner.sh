#!/usr/bin/env bash
# End-to-end test of the test runner itself (tests/run.sh), so that CI can
# trust its closing line: a script that hangs is ended at its time limit and
# reported by name as a failure; a script that skips itself whole is a
# failure in `make test` and a skip only with SCHEDLAB_ALLOW_SKIP=1; a
# missing prerequisite (lib.sh require) names its package; a script that
# exits non-zero without a `not ok` line still counts as a failure; a
# filter that selects nothing, or a run without the unit tests built, fails
# before anything runs; make test-quick skips by a script's `# tags:` line,
# never by its name, and every script that boots a guest or builds a kernel
# carries the tag; the unit tests run from any folder; lib.sh's contains
# fails on an empty text (it would match any file), and resume_if_lost
# resumes only what a lost guest left.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
# The nested runs below must see make test's rules, whatever this run was
# started with (make test-quick sets the opt-out).
unset SCHEDLAB_ALLOW_SKIP SCHEDLAB_SKIP_SLOW

cat >"$TMP/t-hang.sh" <<'S'
#!/usr/bin/env bash
# timeout: 2
. tests/e2e/lib.sh
CLEANUP_CMDS+=("touch $TMP/cleaned")
ok "started"
sleep 60
S
sed -i "s#\$TMP/cleaned#$TMP/cleaned#" "$TMP/t-hang.sh"
start=$(date +%s)
expect_exit 1 "a hanging script fails the run" tests/run.sh "$TMP/t-hang.sh"
took=$(( $(date +%s) - start ))
if [ "$took" -lt 30 ]; then ok "it was ended at its limit (${took} s)"; else not_ok "ended at its limit" "took $took s"; fi
contains "the failure names the script and the limit" "$TMP/out" "not ok - t-hang.sh timed out after 2 s"
contains "the closing line counts it" "$TMP/out" "1 passed, 1 failed, 0 skipped"
if [ -e "$TMP/cleaned" ]; then ok "the script's cleanup ran (SIGTERM, not SIGKILL)"; else not_ok "the script's cleanup ran"; fi

cat >"$TMP/t-skipall.sh" <<'S'
#!/usr/bin/env bash
echo "1..0 # SKIP nothing here"
S
expect_exit 1 "a script that skips itself whole fails make test" tests/run.sh "$TMP/t-skipall.sh"
contains "... and says why" "$TMP/out" "skipped itself whole"
SCHEDLAB_ALLOW_SKIP=1 expect_exit 0 "with SCHEDLAB_ALLOW_SKIP=1 it is a skip" tests/run.sh "$TMP/t-skipall.sh"
contains "... counted as one" "$TMP/out" "0 passed, 0 failed, 1 skipped"

cat >"$TMP/t-require.sh" <<'S'
#!/usr/bin/env bash
. tests/e2e/lib.sh
require no-such-package:no-such-command-schedlab sqlite3:/no/such/file
ok "never reached"
done_testing
S
expect_exit 1 "a missing prerequisite fails" tests/run.sh "$TMP/t-require.sh"
contains "... naming the packages" "$TMP/out" "apt-get install no-such-package sqlite3"
if grep -q "never reached" "$TMP/out"; then not_ok "the script stops there"; else ok "the script stops there"; fi
SCHEDLAB_ALLOW_SKIP=1 expect_exit 0 "with SCHEDLAB_ALLOW_SKIP=1 it is skipped" tests/run.sh "$TMP/t-require.sh"
contains "... with the reason" "$TMP/out" "# SKIP missing: no-such-command-schedlab /no/such/file"

cat >"$TMP/t-silent.sh" <<'S'
#!/usr/bin/env bash
echo "ok 1 - fine"
exit 3
S
expect_exit 1 "a non-zero exit without not ok is a failure" tests/run.sh "$TMP/t-silent.sh"
contains "... named" "$TMP/out" "t-silent.sh exited with status 3"

# a script that changes a shared device node fails, named once (a stand-in
# file takes /dev/null's place in the list here)
: >"$TMP/devnode"
chmod 666 "$TMP/devnode"
printf '#!/usr/bin/env bash\necho "ok 1 - fine"\nchmod 600 "%s"\n' "$TMP/devnode" >"$TMP/t-chmod.sh"
printf '#!/usr/bin/env bash\necho "ok 1 - fine too"\n' >"$TMP/t-after.sh"
SCHEDLAB_DEVNODES="$TMP/devnode" expect_exit 1 "a script that changes a device node of the machine fails" \
	tests/run.sh "$TMP/t-chmod.sh" "$TMP/t-after.sh"
contains "... named, with the change" "$TMP/out" "not ok - t-chmod.sh changed a device node of the machine"
contains "... the mode it left" "$TMP/out" "600 "
equals "... once: the next script is not blamed" "$(tail -n 1 "$TMP/out")" "2 passed, 1 failed, 0 skipped"

# a filter that selects nothing fails, naming it, and runs nothing (a typo
# must not pass on nothing); so does an empty one
expect_exit 1 "a filter that selects nothing fails" tests/run.sh t0100-typo-schedlab
contains "... naming the filter" "$TMP/err" "'t0100-typo-schedlab' selects no test"
equals "... and nothing ran" "$(tail -n 1 "$TMP/out")" "0 passed, 1 failed, 0 skipped"
expect_exit 1 "one bad filter among good ones fails too" tests/run.sh "$TMP/t-silent.sh" no-such-test-schedlab
contains "... named" "$TMP/err" "'no-such-test-schedlab' selects no test"
if grep -q "t-silent.sh" "$TMP/out"; then not_ok "... before any test ran"; else ok "... before any test ran"; fi
expect_exit 1 "an empty filter fails" tests/run.sh ""
# unit tests not built (an empty folder stands in for build/tests)
mkdir -p "$TMP/no-units"
SCHEDLAB_UNIT_DIR=$TMP/no-units expect_exit 1 "a unit test asked for before make unit fails" tests/run.sh test_db
contains "... saying the unit tests are not built" "$TMP/err" "the unit tests are not built: make unit"
SCHEDLAB_UNIT_DIR=$TMP/no-units expect_exit 1 "the whole suite without the unit tests built fails" tests/run.sh
contains "... saying so" "$TMP/err" "no unit test in $TMP/no-units/: build them first"

# the unit tests read tests/data from any folder (the Makefile compiles its
# absolute path in; SCHEDLAB_TESTDATA overrides it)
root=$PWD
for u in test_plan test_preempt_offer test_parsers; do
	if [ -x "build/tests/$u" ]; then
		(cd "$TMP" && env -u SCHEDLAB_TESTDATA "$root/build/tests/$u") >"$TMP/unit.out" 2>&1
		equals "$u passes run from another folder" "$?:$(grep -m1 '^not ok' "$TMP/unit.out")" "0:"
	else
		not_ok "$u passes run from another folder" "build/tests/$u is not built (make unit)"
	fi
done

# make test-quick (SCHEDLAB_SKIP_SLOW=1) skips by the `# tags:` line, not
# by name; SCHEDLAB_SKIP_TAGS picks the tags
mkdir -p "$TMP/tags"
printf '#!/usr/bin/env bash\n# tags: qemu (boots)\necho "ok 1 - booted"\n' >"$TMP/tags/t-boot.sh"
printf '#!/usr/bin/env bash\n# tags: slow kbuild\necho "ok 1 - built"\n' >"$TMP/tags/t-build.sh"
printf '#!/usr/bin/env bash\necho "ok 1 - local"\n' >"$TMP/tags/t-named-qemu-slow.sh"
SCHEDLAB_SKIP_SLOW=1 expect_exit 0 "SCHEDLAB_SKIP_SLOW=1 skips tagged scripts" \
	tests/run.sh "$TMP/tags/t-boot.sh" "$TMP/tags/t-build.sh" "$TMP/tags/t-named-qemu-slow.sh"
equals "... both tagged ones, and runs the one whose name says qemu" "$(tail -n 1 "$TMP/out")" "1 passed, 0 failed, 2 skipped"
contains "... saying which tag" "$TMP/out" "# skip t-boot.sh (tagged qemu"
SCHEDLAB_SKIP_TAGS=kbuild expect_exit 0 "SCHEDLAB_SKIP_TAGS=kbuild skips only that tag" \
	tests/run.sh "$TMP/tags/t-boot.sh" "$TMP/tags/t-build.sh"
equals "... one run, one skipped" "$(tail -n 1 "$TMP/out")" "1 passed, 0 failed, 1 skipped"
# every suite script that boots a guest (its name or its lane says so) is
# tagged qemu, and every one that builds a kernel (kernel_history, a
# variant) is tagged kbuild: test-quick leaves them out by their tags
untagged=""
for f in tests/e2e/t*.sh tests/slow/t*.sh; do
	[ "$f" = tests/e2e/t0010-runner.sh ] && continue
	tags=" $(awk '!/^#/ { exit } /^# tags:/ { sub(/^# tags: */, ""); sub(/ *\(.*/, ""); print; exit }' "$f") "
	head=$(awk '!/^#/ { exit } { print }' "$f")
	if { [[ "$f" == *-qemu* ]] || grep -q '^# lane: *guest' <<<"$head"; } && [[ "$tags" != *" qemu "* ]]; then
		untagged+=" $f(qemu)"
	fi
	if grep -qE '^[^#]*(kernel_history|build-variant\.sh)' "$f" && [[ "$tags" != *" kbuild "* ]]; then
		untagged+=" $f(kbuild)"
	fi
done
equals "every script that boots a guest or builds a kernel carries its tag" "$untagged" ""

# the slowest tests, listed before the closing line (which stays last)
for n in 1 2 3 4 5 6 7 8 9 10 11; do
	printf '#!/usr/bin/env bash\necho "ok 1 - t%s"\n' "$n" >"$TMP/t-fast$n.sh"
done
printf '#!/usr/bin/env bash\nsleep 3\necho "ok 1 - slow"\n' >"$TMP/t-slow.sh"
args=("$TMP"/t-fast*.sh "$TMP/t-slow.sh")
expect_exit 0 "twelve scripts pass" tests/run.sh "${args[@]}"
contains "the slowest tests are listed" "$TMP/out" "# slowest:"
equals "... the slowest first" "$(grep -A1 '^# slowest:' "$TMP/out" | tail -n 1 | awk '{ print $4 }')" t-slow.sh
equals "... ten of them" "$(sed -n '/^# slowest:/,$p' "$TMP/out" | grep -c '^#   ')" 10
equals "the closing line stays last" "$(tail -n 1 "$TMP/out")" "12 passed, 0 failed, 0 skipped"

# two lanes: a `# lane: guest` script runs beside the others. The main-lane
# script waits (WAIT_TENTHS, default 60 s) for a file the guest-lane script
# makes, which it sees in time only when the two run at the same time; each
# report is printed whole; the counts of both lanes add up; a failure in the
# guest lane fails the run and is named
export LANE_FLAG=$TMP/guest-ran
cat >"$TMP/t-lane-main.sh" <<'EOF'
#!/usr/bin/env bash
for i in $(seq "${WAIT_TENTHS:-600}"); do [ -e "$LANE_FLAG" ] && break; sleep 0.1; done
if [ -e "$LANE_FLAG" ]; then echo "ok 1 - saw the guest lane"; else echo "not ok 1 - saw the guest lane"; fi
echo "ok 2 - main"
EOF
cat >"$TMP/t-lane-guest.sh" <<'EOF'
#!/usr/bin/env bash
# lane: guest (a test of the runner)
touch "$LANE_FLAG"
echo "ok 1 - guest"
sleep 1
echo "ok 2 - guest again"
EOF
printf '#!/usr/bin/env bash\n# lane: guest\necho "not ok 1 - a guest failure"\n' >"$TMP/t-lane-bad.sh"
SCHEDLAB_TEST_JOBS=2 expect_exit 0 "two lanes: the guest-lane script runs beside the main one" \
	tests/run.sh "$TMP/t-lane-main.sh" "$TMP/t-lane-guest.sh"
contains "... announced" "$TMP/out" "# two lanes: 1 tests, and 1 guest tests beside them"
equals "... both lanes counted" "$(tail -n 1 "$TMP/out")" "4 passed, 0 failed, 0 skipped"
equals "... each report whole (its lines together)" \
	"$(awk '/^# --- /{ cur = $3 } /^ok /{ print cur }' "$TMP/out" | uniq | sort | tr '\n' ' ')" "t-lane-guest.sh t-lane-main.sh "
rm -f "$TMP/guest-ran"
# (the guest-lane script runs after it in one lane, so 2 s show it)
WAIT_TENTHS=20 SCHEDLAB_TEST_JOBS=1 expect_exit 1 "one lane (SCHEDLAB_TEST_JOBS=1): the main script waits in vain" \
	tests/run.sh "$TMP/t-lane-main.sh" "$TMP/t-lane-guest.sh"
rm -f "$TMP/guest-ran"
SCHEDLAB_TEST_JOBS=2 expect_exit 1 "a failure in the guest lane fails the run" \
	tests/run.sh "$TMP/t-lane-main.sh" "$TMP/t-lane-guest.sh" "$TMP/t-lane-bad.sh"
contains "... named" "$TMP/out" "# failing: t-lane-bad.sh"

# a runner stopped by a signal ends the test it runs (timeout(1) puts the
# test in a process group of its own, out of reach of the runner's): the
# test's cleanup runs and nothing of it is left
cat >"$TMP/t-long.sh" <<'EOF'
#!/usr/bin/env bash
trap 'echo cleaned >"$LANE_FLAG.cleaned"; exit 143' TERM
echo started >"$LANE_FLAG.started"
sleep 300 &
wait
EOF
rm -f "$LANE_FLAG".*
tests/run.sh "$TMP/t-long.sh" >"$TMP/long.out" 2>&1 &
runner=$!
for i in $(seq 300); do [ -e "$LANE_FLAG.started" ] && break; sleep 0.1; done
kill -TERM "$runner"
wait "$runner"
equals "a runner stopped by SIGTERM exits 143" "$?" 143
for i in $(seq 300); do [ -e "$LANE_FLAG.cleaned" ] && break; sleep 0.1; done
check "... the running test got SIGTERM and cleaned up" test -e "$LANE_FLAG.cleaned"
contains "... and says so" "$TMP/long.out" "stopped by a signal"

# lib.sh's own checks (issue 52): contains with an empty text fails (it
# would match any file, as when the variable that makes it is empty)
echo data >"$TMP/any"
(T_N=0 T_FAILED=0; contains "empty" "$TMP/any" "") >"$TMP/lib.out" 2>&1
contains "lib.sh: contains fails on an empty text" "$TMP/lib.out" "not ok 1 - empty"
# ... and resume_if_lost resumes only for runs a lost guest left, not a run
# interrupted for another reason (a traced run left waiting: t0550's exit 1
# became a pass)
sqlite3 "$TMP/lost.db" "CREATE TABLE boot (id INTEGER PRIMARY KEY, error TEXT);
	CREATE TABLE run (id INTEGER PRIMARY KEY, status TEXT, error TEXT, skip_reason TEXT);
	INSERT INTO run (status, error) VALUES ('ok', NULL),
	('interrupted', 'not run: evidence: waits for its configuration''s runs');"
(schedlab() { echo resumed >"$TMP/resumed"; }; resume_if_lost "$TMP/lost.db") >/dev/null 2>&1
equals "lib.sh: resume_if_lost leaves a run interrupted for another reason (exit 1, no resume)" \
	"$?/$([ -e "$TMP/resumed" ] && echo resumed)" "1/"
sqlite3 "$TMP/lost.db" "INSERT INTO run (status, error) VALUES
	('interrupted', 'failed: target lost: connection lost; console: ...')"
(schedlab() { echo resumed >"$TMP/resumed"; }; resume_if_lost "$TMP/lost.db") >/dev/null 2>&1
equals "... and resumes once a guest was lost" "$?/$([ -e "$TMP/resumed" ] && echo resumed)" "0/resumed"
done_testing
