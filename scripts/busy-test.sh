#!/usr/bin/env bash
# The test suite as a busy machine runs it (issue 29): the README's test
# command, `make test`, in a fresh clone of this checkout's HEAD, while
#  - a CPU hog occupies every core (stress-ng --cpu $(nproc), in a process
#    group of its own), and
#  - another schedlab session runs workloads beside it, in a loop:
#    `schedlab run examples/quick.json` (the local target: cyclictest with a
#    load, hackbench, stress-ng) into a database of its own, 2 s apart. It
#    takes the machine's local target lock as any session does, so the
#    suite's local tests take turns with it (tests/e2e/lib.sh:
#    hold_local_target) while the qemu tests run beside it.
# Both are ended (their process groups) when the suite ends or this script
# is interrupted. Prints the wall time, how many sessions ran beside, and
# the suite's closing line; exits with the suite's status.
#
# Usage: scripts/busy-test.sh [TEST...]
#   no TEST: `make test` (the whole suite, with its package installs);
#   TEST...: `make all` (and `make unit` for a unit test's name), then
#   tests/run.sh TEST... (names as tests/run.sh takes them, e.g. t0100
#   t0120), to try the setting quickly.
# Environment: BUSY_DIR (default: a new /tmp/schedlab-busy.XXXXXX; the
# clone, the suite's log test.log, the beside sessions' beside.db and
# beside.log stay there), BUSY_HOGS (CPU hogs, default nproc),
# BUSY_PLAN (the beside plan, default examples/quick.json of the clone).
# docs/testing.md tells how it was run for the issue.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=${BUSY_DIR:-$(mktemp -d /tmp/schedlab-busy.XXXXXX)}
hogs=${BUSY_HOGS:-$(nproc)}
command -v stress-ng >/dev/null || { echo "busy-test: stress-ng is missing (apt-get install stress-ng)" >&2; exit 2; }
mkdir -p "$work" || exit 2
clone=$work/clone
if ! git clone -q "$here" "$clone"; then
	echo "busy-test: cannot clone $here into $clone" >&2
	exit 2
fi
cd "$clone" || exit 2
plan=${BUSY_PLAN:-$clone/examples/quick.json}
echo "busy-test: a fresh clone of $(git rev-parse --short HEAD) in $clone"
# what make test builds; for e2e scripts alone the programs suffice (the
# unit tests' ASan builds take minutes on a loaded machine)
targets=(all unit)
if [ $# -gt 0 ]; then
	targets=(all)
	for a in "$@"; do case "$a" in *test_*) targets=(all unit) ;; esac; done
fi
if ! make -s -j"$(nproc)" "${targets[@]}" >"$work/build.log" 2>&1; then
	echo "busy-test: the build failed: $work/build.log" >&2
	tail -n 20 "$work/build.log" >&2
	exit 2
fi

hog_pg="" beside_pg=""
stop_all() {
	# each in a group of its own (setsid): the whole group, nothing else
	[ -n "$hog_pg" ] && kill -TERM -- "-$hog_pg" 2>/dev/null
	[ -n "$beside_pg" ] && kill -TERM -- "-$beside_pg" 2>/dev/null
	[ -n "$hog_pg" ] && wait "$hog_pg" 2>/dev/null
	[ -n "$beside_pg" ] && wait "$beside_pg" 2>/dev/null
	hog_pg="" beside_pg=""
}
trap 'stop_all' EXIT
trap 'exit 130' INT TERM HUP

setsid stress-ng --cpu "$hogs" --quiet >"$work/hog.log" 2>&1 &
hog_pg=$!
setsid bash -c 'while :; do "$0" run "$1" --db "$2" --quiet --tag busy-beside >>"$3" 2>&1; sleep 2; done' \
	"$clone/bin/schedlab" "$plan" "$work/beside.db" "$work/beside.log" &
beside_pg=$!
echo "busy-test: beside it: stress-ng --cpu $hogs (process group $hog_pg) and a loop of" \
	"schedlab run ${plan#"$clone"/} (process group $beside_pg, $work/beside.log)"

t0=$(date +%s)
# the suite in a process group of its own, waited for in the background so
# that INT/TERM/HUP reach this script at once: they end the suite's group
# (tests/run.sh then ends its running tests), then the hog and the beside
# session (stop_all)
suite_pg=""
trap '[ -n "$suite_pg" ] && kill -TERM -- "-$suite_pg" 2>/dev/null; wait "$suite_pg" 2>/dev/null; exit 130' INT TERM HUP
if [ $# -eq 0 ]; then
	echo "busy-test: make test (log: $work/test.log)"
	setsid make test >"$work/test.log" 2>&1 &
else
	echo "busy-test: tests/run.sh $* (log: $work/test.log)"
	setsid tests/run.sh "$@" >"$work/test.log" 2>&1 &
fi
suite_pg=$!
wait "$suite_pg"
rc=$?
suite_pg=""
t=$(($(date +%s) - t0))
stop_all

sessions=$(sqlite3 -batch -noheader "$work/beside.db" "SELECT count(*) || ' sessions, ' ||
	(SELECT count(*) FROM run WHERE status = 'ok') || ' runs ok' FROM session" 2>/dev/null)
echo "busy-test: wall time $((t / 60)) min $((t % 60)) s ($t s)"
echo "busy-test: beside it: ${sessions:-no session} of ${plan##*/}"
grep -E '^# (failing|slowest):' -A 10 "$work/test.log" | grep -E '^#' | sed 's/^/busy-test: /'
echo "busy-test: closing line: $(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$work/test.log" | tail -n 1)"
exit "$rc"
