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
# contains NAME FILE TEXT (an empty TEXT fails: it would match any file, as
# when the variable that makes it is empty)
contains() {
	if [ -z "$3" ]; then not_ok "$1" "nothing to look for in $2 (an empty text matches any file)"
	elif grep -qF -- "$3" "$2"; then ok "$1"
	else not_ok "$1" "$2 lacks: $3" "$(head -c 600 "$2")"; fi
}
# equals NAME GOT WANT
equals() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi; }
sql() { sqlite3 -batch -noheader "$DB" "$1"; }
# This script's own processes: every process it starts (and theirs, and
# what a tool leaves behind after setsid) inherits SCHEDLAB_TEST_MARK, so a
# scan of /proc/*/environ for it finds ours and never another test's or
# another user's cyclictest. Never look for processes by name across the
# machine (pgrep -x, pidof, killall): scripts/check-test-procs.sh refuses it.
SCHEDLAB_TEST_MARK="$$-$RANDOM$RANDOM-$(date +%s%N)"
export SCHEDLAB_TEST_MARK
# The target locks (harness/orchestrate/tlock.h) are the machine's own, as
# for any session: the local target's sysctls are machine-wide, so a test's
# local sessions take turns with those of a concurrent `make test` (another
# developer's, a helper's) and with a person's session (t0840 tests the
# lock itself in a folder of its own). A script that runs sessions on the
# local target holds that target for its whole run (hold_local_target).
# local_target_lock: the lock file of the local target, as tlock_path()
# names it: sha256 of "local@HOST", its first 16 hex digits, in
# SCHEDLAB_TARGET_LOCK_DIR, else /run/schedlab/targets (root), else
# $XDG_RUNTIME_DIR/schedlab-targets or /tmp/schedlab-targets-UID
# (t0840 checks that a session locks this very file)
local_target_lock() {
	local dir=${SCHEDLAB_TARGET_LOCK_DIR:-}
	if [ -z "$dir" ]; then
		if [ "$(id -u)" = 0 ]; then dir=/run/schedlab/targets
		elif [ -n "${XDG_RUNTIME_DIR:-}" ]; then dir=$XDG_RUNTIME_DIR/schedlab-targets
		else dir=/tmp/schedlab-targets-$(id -u); fi
	fi
	echo "$dir/$(printf '%s' "local@$(uname -n)" | sha256sum | cut -c1-16).lock"
}
# load_scaled SECONDS: a guest's wait (a boot, a kexec) scaled by what the
# host is doing: SECONDS times the 1-minute load average per CPU, rounded
# up, at least 1 and at most SCHEDLAB_TEST_LOAD_MAX (default 3): on a quiet
# host the wait is as written; at load 10 on 2 CPUs three times that. A
# TCG guest's boot slows with the host's load, and a wait past the factor
# is a failure that says the load it saw (host_load).
load_scaled() {
	awk -v base="$1" -v cpus="$(nproc)" -v max="${SCHEDLAB_TEST_LOAD_MAX:-3}" '
		{ f = $1 / cpus; f = (f == int(f)) ? f : int(f) + 1
		  if (f < 1) f = 1; if (f > max) f = max; print base * f; exit }' /proc/loadavg
}
# host_load: the host's load as a failure message says it
host_load() { echo "host load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"; }

# hold_local_target: this script holds the local target for the rest of its
# run, as `schedlab nightly` does for a night: its sessions take the lock
# handed down (SCHEDLAB_TARGET_LOCK_FD) and never wait inside the script,
# and what it reads outside a session (a knob before a run and "restored
# afterwards") no other session can change meanwhile. Taken at once, or
# after waiting for the holder (said in the output, naming it) at most
# SCHEDLAB_TEST_LOCK_WAIT seconds (default 300); past that the script ends
# with a failure naming the holder, never blocked for good by a long session
# of somebody else. The kernel drops the lock when the script ends.
hold_local_target() {
	local path wait=${SCHEDLAB_TEST_LOCK_WAIT:-300} t0=$SECONDS
	path=$(local_target_lock)
	mkdir -p "${path%/*}" && chmod 0700 "${path%/*}" 2>/dev/null
	if ! exec {LOCAL_TARGET_FD}<>"$path"; then
		not_ok "the local target's lock $path"; done_testing; exit
	fi
	if ! flock -n "$LOCAL_TARGET_FD"; then
		echo "# the local target is in use by $(head -n 1 "$path" 2>/dev/null || echo "another process"); waiting at most $wait s ($path)"
		if ! flock -w "$wait" "$LOCAL_TARGET_FD"; then
			not_ok "the local target free within $wait s (SCHEDLAB_TEST_LOCK_WAIT)" \
				"held by $(head -n 1 "$path" 2>/dev/null) ($path)"
			done_testing; exit
		fi
		echo "# the local target is free after $((SECONDS - t0)) s: going on"
	fi
	printf 'pid %d: the test %s\n' $$ "${0##*/}" >"$path"
	export SCHEDLAB_TARGET_LOCK_FD=$LOCAL_TARGET_FD
}
# ours [ERE]: "PID COMMAND LINE" of each live process of this script (this
# shell aside) whose command line matches ERE (default: any)
ours() {
	local f pid cmd a
	for f in $(grep -lszxF "SCHEDLAB_TEST_MARK=$SCHEDLAB_TEST_MARK" /proc/[0-9]*/environ); do
		pid=${f#/proc/} pid=${pid%/environ}
		[ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
		mapfile -d "" -t a 2>/dev/null <"/proc/$pid/cmdline" || continue
		cmd="${a[*]}"
		[ -n "$cmd" ] || continue # a zombie: gone but for its parent's wait
		[[ "$cmd" =~ ${1:-.} ]] && echo "$pid $cmd"
	done
	return 0
}
# ours_named NAME...: the PIDs of this script's processes with one of these
# names (the kernel's comm, or argv[0]'s last part), one a line
ours_named() {
	local pid cmd comm n argv0
	while read -r pid cmd; do
		comm=$(cat "/proc/$pid/comm" 2>/dev/null) argv0=${cmd%% *} argv0=${argv0##*/}
		for n in "$@"; do
			if [ "$comm" = "$n" ] || [ "$argv0" = "$n" ]; then echo "$pid"; break; fi
		done
	done < <(ours)
}
LEFTOVER_NAMES=(cyclictest hackbench stress-ng rt-app schedlab-agent sl-pingpong sl-jbb sl-lockholder)
# any_left: some workload, load or agent of this script still runs
any_left() { [ -n "$(ours_named "${LEFTOVER_NAMES[@]}")" ]; }
no_leftovers() {
	local left="" i
	# a killed process group's members are reaped a moment later: give
	# them 5 s to go
	for i in $(seq 50); do
		left=$(ours_named "${LEFTOVER_NAMES[@]}" | tr '\n' ' ')
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -z "$left" ]; then ok "$1"; else not_ok "$1" "processes left: $left" "$(left=${left% }; ps -o pid,ppid,cmd -p "${left// /,}" 2>/dev/null)"; fi
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
done_testing() {
	echo "1..$T_N"
	[ "$T_FAILED" -eq 0 ] && return 0
	[ -n "${DB:-}" ] && [ -f "$DB" ] && lost_runs "$DB"
	return 1
}
# kernel_release DIR: the release an imported kernel's kernel.json names
# (kernels/import-debian.sh), empty when there is none
kernel_release() { sed -n 's/.*"release": "\([^"]*\)".*/\1/p' "$1/kernel.json" 2>/dev/null; }
# LOST_RUNS: the runs a lost target left, as session.c stores them:
# interrupted with "failed: target lost: ..." (the run it was in) or "not
# run: target lost earlier in this boot", or skipped because a boot failed.
# Not a run interrupted for another reason (a traced run left waiting, a
# stop), which a resume would only paper over.
LOST_RUNS="(status = 'interrupted' AND (error LIKE 'failed: target lost:%'
	OR error LIKE 'not run: target lost%')) OR (status = 'skipped' AND skip_reason = 'boot-failed')"
# lost_runs DB: the errors of the runs a lost target left, whole: a run lost
# under qemu carries the guest's last console lines, the evidence of why
# (printed when a test fails)
lost_runs() {
	sqlite3 -batch -noheader "$1" "SELECT 'run ' || id || ' (' || status || '): ' || error
		FROM run WHERE $LOST_RUNS ORDER BY id LIMIT 2" 2>/dev/null | sed 's/^/# lost: /'
}

# resume_if_lost DB: after a qemu session that exited 1, when its guest went
# away by itself (rare under TCG: LOST_RUNS above), print the first such
# run's error, which carries the guest's last console lines, and `run
# --resume` once, as a user would; the resume's exit code (1 when nothing
# was lost: the session's own result stands, so that a run left interrupted
# for another reason, as a traced run that waits, still fails the test).
# A boot whose qemu could not read its initramfs is no guest lost by itself
# but the cache pruned under it (issue 51, docs/qemu.md "An archive in use
# is never pruned"): said, and not resumed (1), so that the test fails.
resume_if_lost() {
	local n
	n=$(sqlite3 -batch -noheader "$1" "SELECT count(*) FROM boot WHERE error LIKE '%error reading initrd%'")
	if [ "${n:-0}" -gt 0 ]; then
		echo "# $n boots lost their initramfs (removed from the cache under them), not the guest:"
		lost_runs "$1"
		return 1
	fi
	n=$(sqlite3 -batch -noheader "$1" "SELECT count(*) FROM run WHERE $LOST_RUNS")
	[ "${n:-0}" -gt 0 ] || return 1
	echo "# $n runs left by a lost guest; the first ones' errors:"
	lost_runs "$1"
	schedlab run --resume last --db "$1" --quiet >>"$TMP/out" 2>>"$TMP/err"
}

# The single-host LAVA of the lava tests (tests/lava/setup.sh installs and
# starts it as root; without root it must be there already, else the test
# fails naming the packages). Then LAVA_URL, LAVA_USER, LAVA_TOKEN_FILE
# (from the setup's env file), TOKEN, and api PATH (a GET of its REST API).
lava_up() {
	if [ "$(id -u)" -ne 0 ] && ! command -v lava-server >/dev/null 2>&1; then
		not_ok "prerequisites" "missing: lava-server lava-dispatcher lavacli postgresql (run tests/lava/setup.sh as root: it installs and starts them)"
		done_testing
		exit
	fi
	if [ "$(id -u)" -eq 0 ]; then
		local t0
		t0=$(date +%s)
		if tests/lava/setup.sh >"$TMP/setup.out" 2>"$TMP/setup.err"; then
			ok "tests/lava/setup.sh: LAVA up in $(($(date +%s) - t0)) s"
		else
			not_ok "tests/lava/setup.sh" "$(tail -n 8 "$TMP/setup.err")"
			done_testing
			exit
		fi
	fi
	# shellcheck disable=SC1091
	. "${LAVA_STATE:-/var/lib/schedlab-lava}/env"
	TOKEN=$(cat "$LAVA_TOKEN_FILE")
}
api() { curl -fsS -H "Authorization: Token $TOKEN" "$LAVA_URL/api/v0.2/$1"; }

# Throwaway ssh keys for a test guest running dropbear: the client key
# $TMP/id(.pub), the guest's host key $TMP/hostkey, a free local PORT for
# the guest's forwarded sshd, and $TMP/known_hosts that trusts exactly that
# host key on that port.
ssh_test_keys() {
	ssh-keygen -q -t ed25519 -N '' -C schedlab-test -f "$TMP/id"
	dropbearkey -t ed25519 -f "$TMP/hostkey" >/dev/null 2>&1
	PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	echo "[127.0.0.1]:$PORT $(dropbearkey -y -f "$TMP/hostkey" | grep '^ssh-ed25519' | cut -d' ' -f1,2)" >"$TMP/known_hosts"
}

# fx KIND COL=VALUE...: one row of a synthetic history as a line for
# fixture_sql (KIND and its columns: tests/e2e/fixture.py, the one place
# that spells the INSERTs, so a migration changes that file only)
fx() { local IFS=$'\t'; printf '%s\n' "$*"; }
# fixture_sql: the SQL of the fx lines on stdin, in one transaction
fixture_sql() { python3 "$(dirname "${BASH_SOURCE[0]}")/fixture.py"; }

# empty_db PATH: an empty database with the current schema at PATH (for the
# scripts that load a synthetic history with sqlite3): `run --resume` on a
# new path makes no file, so the schema of one a tiny local run made
# provided_qemu: the qemu >= 8.1 for virtual time that `make -C kernels
# qemu` provides (make test's setup made it; a second call is a no-op):
# its path in VT, its version in VT_VER, both checked; the script ends
# when there is none (t0546, t0547)
provided_qemu() {
	VT=$(make -s --no-print-directory -C kernels qemu 2>"$TMP/vt.err")
	local rc=$?
	equals "make -C kernels qemu provides a qemu (exit 0)" "$rc" 0
	[ $rc = 0 ] || { echo "# $(tail -n 5 "$TMP/vt.err")"; done_testing; exit; }
	VT_VER=$("$VT" -version | sed -n '1s/^QEMU emulator version \([0-9][0-9.]*\).*/\1/p')
	case "$VT_VER" in
	[89].[1-9]* | [89].[1-9][0-9]* | [1-9][0-9].*) ok "the provided qemu is >= 8.1 ($VT: $VT_VER)" ;;
	*) not_ok "the provided qemu is >= 8.1" "$VT answers '$VT_VER'" ;;
	esac
}
empty_db() {
	cat >"$TMP/tiny.json" <<'EOF_TINY'
{"name": "tiny", "target": "local", "repetitions": 1,
 "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}]}
EOF_TINY
	rm -f "$TMP/made.db"
	timeout 120 schedlab run "$TMP/tiny.json" --db "$TMP/made.db" --quiet >"$TMP/made.out" 2>&1
	{ sqlite3 -batch "$TMP/made.db" ".schema --nosys"
	  echo "PRAGMA user_version = $(sqlite3 -batch "$TMP/made.db" "PRAGMA user_version");"; } >"$TMP/schema.sql"
	check "an empty database with the schema" sqlite3 -batch "$1" ".read $TMP/schema.sql"
}

# kernel_history: for the scripts that build kernels from a git history
# (t0640, t0830): their prerequisites, Debian's kernel imported, the
# linux-source-<series> tree (kernel_history [SERIES], default 6.1; 6.12
# works the same) the shared variant is built from (SRC), ccache the
# user's and the rest of schedlab's cache the script's own, and R, a bare
# repository whose main is that source as shipped. Ends the script with a
# failure when something is missing.
kernel_history() {
	local series=${1:-6.1} link=debian
	[ "$series" = 6.1 ] || link=debian-$series
	require qemu-system-x86:qemu-system-x86_64 flex:flex bison:bison bc:bc make:make gcc:gcc \
		libelf-dev:/usr/include/libelf.h libssl-dev:/usr/include/openssl/ssl.h ccache:ccache \
		xz-utils:xz git:git sqlite3:sqlite3 busybox-static:/bin/busybox cpio:cpio
	[ -f kernels/out/$link/kernel.json ] || make -s -C kernels debian SERIES="$series" >/dev/null 2>&1
	if [ ! -f kernels/out/$link/kernel.json ]; then
		not_ok "Debian kernel imported (make -C kernels debian SERIES=$series)"; done_testing; exit
	fi
	# the Debian source, unpacked where the variant builds unpack it
	kernels/build-variant.sh --series "$series" --key-only hz1000 >/dev/null 2>"$TMP/unpack.err" ||
		{ not_ok "linux-source-$series unpacked" "$(tail -n 3 "$TMP/unpack.err")"; done_testing; exit; }
	SRC=$(ls -d "${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/src/linux-source-$series".[0-9]* | head -n 1)
	export CCACHE_DIR=${CCACHE_DIR:-$(ccache -k cache_dir)}
	export XDG_CACHE_HOME=$TMP/cache TMPDIR=$TMP
	export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-t} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-t@example.org} \
		GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org GIT_CONFIG_NOSYSTEM=1 \
		GIT_CONFIG_GLOBAL=/dev/null
	R=$TMP/linux.git
	git init -q --bare -b main "$R"
	git -C "$R" config core.looseCompression 1
	# a bare repository (no working tree of the user's to be dirty), filled
	# from the unpacked source in place; -f: the source as shipped, whatever
	# the kernel's .gitignore says
	local wt=(-c core.bare=false --git-dir="$R" --work-tree="$SRC")
	git "${wt[@]}" add -A -f -- . ':!.sl-build-*' ':!.schedlab-unpacked' 2>"$TMP/add.err" &&
		git "${wt[@]}" commit -qm "linux-source-$series as shipped" 2>>"$TMP/add.err" &&
		rm -f "$R/index" ||
		{ not_ok "the base commit" "$(tail -n 3 "$TMP/add.err")"; done_testing; exit; }
}
# history_base: a history on the kernel_history's R (t0830, t0835): its
# commits go onto "work" (commit FILE MSG, content on stdin) and main moves
# to a night's head; BASE the base commit, core its kernel/sched/core.c, T0
# the start; in_wakeup CODE: that core.c with a comment on top and CODE at
# the start of try_to_wake_up()
history_base() {
	T0=$(date +%s)
	git -C "$R" update-ref refs/heads/work main
	BASE=$(git -C "$R" rev-parse main)
	core=$(git -C "$R" show main:kernel/sched/core.c)
}
commit() { commit_on work "$@"; }
in_wakeup() {
	printf '/* schedlab robot test: a comment */\n%s\n' "$core" |
		awk -v code="$1" '/^try_to_wake_up\(struct task_struct \*p, unsigned int state, int wake_flags\)/ { f = 1 }
		     f && /^\tint cpu, success = 0;/ { print; print code; f = 0; next } { print }'
}
# night N (t0830, t0835): main moves to ${HEADS[N]}, then "${NIGHTLY[@]}"
# (both the script's) runs with --tag nightly-0N; its output in
# $TMP/nN.out, its exit status in $TMP/nN.rc
night() { # N: move main, run the nightly; output in $TMP/nN.out, exit in $TMP/nN.rc
	local n=$1 t
	git -C "$R" update-ref refs/heads/main "${HEADS[$n]}"
	t=$(date +%s)
	"${NIGHTLY[@]}" --tag "nightly-0$n" >"$TMP/n$n.out" 2>"$TMP/n$n.err"
	echo $? >"$TMP/n$n.rc"
	echo "# night $n: $(( $(date +%s) - t )) s, exit $(cat "$TMP/n$n.rc")"
	sed 's/^/#   /' "$TMP/n$n.out"
}
# commit_on BRANCH FILE MSG: a commit of FILE (content on stdin) on top of
# BRANCH of $R, which moves to it; prints its id
commit_on() {
	local blob tree c
	blob=$(git -C "$R" hash-object -w --stdin) &&
		GIT_INDEX_FILE=$TMP/idx git -C "$R" read-tree "$1" &&
		GIT_INDEX_FILE=$TMP/idx git -C "$R" update-index --add --cacheinfo "100644,$blob,$2" &&
		tree=$(GIT_INDEX_FILE=$TMP/idx git -C "$R" write-tree) &&
		c=$(git -C "$R" commit-tree "$tree" -p "$1" -m "$3") &&
		git -C "$R" update-ref "refs/heads/$1" "$c" && echo "$c"
}
