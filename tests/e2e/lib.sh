# Shared helpers for the end-to-end scripts (sourced). TAP output: each check
# prints `ok N - name` or `not ok N - name`; `done_testing` prints the plan.
# Scripts run from the repository root with bin/ on PATH (tests/run.sh).
set -u
T_N=0
T_FAILED=0
TMP=$(mktemp -d /tmp/schedlab-test.XXXXXX)
trap 'cleanup_all' EXIT
CLEANUP_CMDS=()
cleanup_all() {
	for c in "${CLEANUP_CMDS[@]}"; do eval "$c" >/dev/null 2>&1 || true; done
	rm -rf "$TMP"
}
ok() { T_N=$((T_N + 1)); echo "ok $T_N - $1"; }
not_ok() { T_N=$((T_N + 1)); T_FAILED=$((T_FAILED + 1)); echo "not ok $T_N - $1"; shift; for l in "$@"; do echo "#   $l"; done; }
skip() { T_N=$((T_N + 1)); echo "ok $T_N - $1 # SKIP $2"; }
# check NAME COMMAND... : passes when the command succeeds
check() { local name=$1; shift; if "$@" >"$TMP/check.out" 2>&1; then ok "$name"; else not_ok "$name" "command: $*" "$(tail -n 5 "$TMP/check.out")"; fi; }
# expect_exit CODE NAME COMMAND... : runs the command, output in $TMP/out, $TMP/err
expect_exit() {
	local want=$1 name=$2; shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$name"; else not_ok "$name" "exit $rc, expected $want: $*" "stderr: $(tail -n 3 "$TMP/err")"; fi
}
# contains NAME FILE TEXT
contains() { if grep -qF -- "$3" "$2"; then ok "$1"; else not_ok "$1" "$2 lacks: $3" "$(head -c 600 "$2")"; fi; }
# equals NAME GOT WANT
equals() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi; }
sql() { sqlite3 -batch -noheader "$DB" "$1"; }
# no process of ours left: none of the named tools is a child of init started after $1
any_left() {
	local n
	for n in cyclictest hackbench stress-ng schedlab-agent sl-pingpong sl-jbb; do
		pgrep -x "$n" >/dev/null && return 0
	done
	return 1
}
no_leftovers() {
	local left="" n
	for n in cyclictest hackbench stress-ng schedlab-agent sl-pingpong sl-jbb; do
		left="$left$(pgrep -x "$n" | tr '\n' ' ')"
	done
	if [ -z "$left" ]; then ok "$1"; else not_ok "$1" "processes left: $left" "$(ps -o pid,ppid,cmd -p ${left// /,} 2>/dev/null)"; fi
}
done_testing() { echo "1..$T_N"; [ "$T_FAILED" -eq 0 ]; }
