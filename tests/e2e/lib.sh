# Shared helpers for the end-to-end scripts (sourced). TAP output: each check
# prints `ok N - name` or `not ok N - name`; `done_testing` prints the plan.
# Scripts run from the repository root with bin/ on PATH (tests/run.sh).
set -u
T_N=0
T_FAILED=0
TMP=$(mktemp -d /tmp/schedlab-test.XXXXXX)
trap 'cleanup_all' EXIT
# tests/run.sh ends a script past its time limit with SIGTERM: clean up then too
trap 'exit 143' TERM INT HUP
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
	for n in cyclictest hackbench stress-ng rt-app schedlab-agent sl-pingpong sl-jbb; do
		pgrep -x "$n" >/dev/null && return 0
	done
	return 1
}
no_leftovers() {
	local left="" n
	for n in cyclictest hackbench stress-ng rt-app schedlab-agent sl-pingpong sl-jbb; do
		left="$left$(pgrep -x "$n" | tr '\n' ' ')"
	done
	if [ -z "$left" ]; then ok "$1"; else not_ok "$1" "processes left: $left" "$(ps -o pid,ppid,cmd -p ${left// /,} 2>/dev/null)"; fi
}
# require PACKAGE:WHAT ...  the script's prerequisites: each the Debian package
# that provides it and a command name, or a file path (containing a slash).
# Missing ones end the script: in `make test` with a failure that names the
# packages to install, with SCHEDLAB_ALLOW_SKIP=1 (make test-quick) skipped.
require() {
	local missing="" pkgs="" spec pkg what
	for spec in "$@"; do
		pkg=${spec%%:*} what=${spec#*:}
		case "$what" in
		*/*) [ -e "$what" ] && continue ;;
		*) command -v "$what" >/dev/null 2>&1 && continue ;;
		esac
		missing="$missing $what"
		case " $pkgs " in *" $pkg "*) ;; *) pkgs="$pkgs $pkg" ;; esac
	done
	[ -z "$missing" ] && return 0
	local why="missing:$missing (apt-get install$pkgs; make test installs them)"
	if [ "${SCHEDLAB_ALLOW_SKIP:-0}" = 1 ]; then
		skip "prerequisites" "$why"
	else
		not_ok "prerequisites" "$why"
	fi
	done_testing
	exit
}
# require_built FILE...: what `make` builds; missing is always a failure
require_built() {
	local f missing=""
	for f in "$@"; do [ -e "$f" ] || missing="$missing $f"; done
	[ -z "$missing" ] && return 0
	not_ok "built by make" "missing:$missing (run make first)"
	done_testing
	exit
}
done_testing() { echo "1..$T_N"; [ "$T_FAILED" -eq 0 ]; }
