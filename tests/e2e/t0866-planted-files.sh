#!/usr/bin/env bash
# timeout: 300 (tests/run.sh ends it past this many seconds)
# End-to-end: what another local user (nobody) may plant for schedlab serve
# and the regression robot on a shared lab box, run as root (issue 51's two
# severe items; docs/serve.md "Bisect from the page", docs/alerts.md). The
# robot's synthetic history of t0862 (nights 1-8, no bisection): alert 1,
# its group of 3 commits of a real git repository. About 10 s.
#  - serve's bisection folder (DB.serve): a record planted there naming a
#    secret file as its log, with "ended_at": null and a live pid, is never
#    read: by a read-only serve when the folder appears (nobody's) after its
#    start, nor by a serve with a token when the folder it made was swapped
#    for nobody's after its start (the store in a folder others may write);
#    the page shows no bisection and not the secret, and a start is refused
#    for the folder that path now names, not held busy by the planted record.
#  - the robot's --out-dir: owned by nobody, writable by others, below a
#    folder nobody owns: `alerts bisect` and `nightly` refuse it before
#    anything is read or written; a narrowed plan planted in a folder of
#    root's (nobody's file, or a link to it) is refused and never run.
# Needs sqlite3, git, python3, curl, jq, setpriv (util-linux), root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/robot-history.sh"
hold_local_target   # empty_db's tiny local session never waits inside the script
require sqlite3:sqlite3 git:git python3:python3 curl:curl jq:jq util-linux:setpriv
if [ "$(id -u)" != 0 ]; then
	not_ok "runs as root (it plants files as another user, nobody)" "uid $(id -u)"
	done_testing
fi
SL=schedlab
# as_nobody CMD...: CMD as the other local user
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
chmod 711 "$TMP"   # nobody passes through the test's folder, reads nothing in it

# ---- the store: t0862's nights, in a folder everyone may write (1777) ------------------
R=$TMP/linux
check "the history's repository, 8 nights" history_repo "$R" 8
python3 "$(dirname "$0")/robot-history.py" "$TMP/gen.sql" "$R" 8 \
	'{"5": 1.2, "6": 1.2, "7": 1.2, "8": 1.32}' '' "${COMMITS[@]:1}"
SH=$TMP/shared
mkdir -m 1777 "$SH"
DB=$SH/lab.db
empty_db "$DB"
check "synthetic history loaded" sqlite3 -batch "$DB" ".read $TMP/gen.sql"
for n in 1 2 3 4 5 6 7 8; do
	$SL nightly --db "$DB" --session "$n" --out-dir "$TMP/rep" --no-bisect >"$TMP/n$n.out" 2>&1
done
equals "alert 1 new, its group 3 commits of git" \
	"$(sql "SELECT a.status || ' ' || g.ncommits FROM alert a JOIN alert_group g ON g.id = a.group_id WHERE a.id = 1")" \
	"new 3"
SECRET=$TMP/secret
(umask 077; echo "root-only-secret-$$" >"$SECRET")
# plant DIR: nobody's record of group 1 in DIR (made by nobody, 0700): the
# secret as its log, running (pid 1 as it started), and a log of its own
plant() {
	local d=$1
	as_nobody mkdir -m 700 "$d" &&
		as_nobody sh -c "cat >'$d/group-1.json'" <<EOF &&
{"group": 1, "alert": 1, "pid": 1, "pid_start": "$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/1/stat)",
 "started_at": "2026-12-07T01:00:00Z", "command": "planted", "log": "$SECRET", "log_from": 0,
 "ended_at": null, "exit_code": null, "signal": null, "how": null}
EOF
		as_nobody sh -c "echo planted-log >'$d/group-1.log'"
}

# ---- serve, read-only: the folder appears after its start, nobody's ---------------------
. "$(dirname "$0")/serve-lib.sh"
check "a read-only serve of the store starts (no bisection folder yet)" start_serve "$DB"
check "nobody makes DB.serve and plants a running record naming the secret" plant "$DB.serve"
equals "the alert's page: no bisection shown" "$(jget /alert/1 r1.json .bisect_job)" null
check "... not the secret" bash -c "! grep -q root-only-secret '$TMP/r1.json'"
check "... nor the planted log" bash -c "! grep -q planted-log '$TMP/r1.json'"
get /alert/1 r1.html >/dev/null
check "the page as HTML: not the secret either" bash -c "! grep -q root-only-secret '$TMP/r1.html'"
stop_serve
check "a read-only serve started on nobody's folder: starts, shows none" start_serve "$DB"
equals "... no bisection shown" "$(jget /alert/1 r2.json .bisect_job)" null
stop_serve
rm -rf "$DB.serve"

# ---- serve with a token: its folder swapped after the start --------------------------------
TOKEN=tok-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
(umask 077; printf '%s\n' "$TOKEN" >"$TMP/serve.token")
chmod 0777 "$SH"   # others may rename what is in it (no sticky bit)
check "serve with a token starts, makes DB.serve (0700, root's)" \
	start_serve "$DB" --token-file "$TMP/serve.token"
equals "... root's, 0700" "$(stat -c '%U %a' "$DB.serve")" "root 700"
check "nobody moves it away and plants a folder of its own in its place" \
	bash -c "as() { setpriv --reuid=65534 --regid=65534 --clear-groups -- \"\$@\"; }; as mv '$DB.serve' '$SH/moved'"
check "... with a running record naming the secret" plant "$DB.serve"
equals "the alert's page: no bisection shown" "$(jget /alert/1 s1.json .bisect_job)" null
check "... not the secret" bash -c "! grep -q root-only-secret '$TMP/s1.json'"
csrf=$(jget /alert/1 c.json .csrf)
equals "a bisect start: refused (409), not held busy by the planted record" \
	"$(get /alert/1 s2.json -H 'Accept: application/json' -d action=bisect -d "csrf=$csrf" -d "token=$TOKEN")" 409
check "... not for a bisection 'still running'" bash -c "! grep -q 'still running' '$TMP/s2.json'"
contains "... but for the folder at that path, now nobody's" "$TMP/s2.json" "lab.db.serve: owned by uid 65534, not by this user"
equals "... no child started" "$(ours 'alerts bisect')" ""
stop_serve
chmod 1777 "$SH"

# ---- the robot's --out-dir ------------------------------------------------------------------
N0=$(sql "SELECT count(*) FROM alert_event")
O=$SH/out-nobody
as_nobody mkdir -m 755 "$O"
as_nobody sh -c "echo '{\"planted\": true}' >'$O/alert-group-1.json'"
expect_exit 2 "alerts bisect: an --out-dir nobody owns is refused" \
	$SL alerts bisect 1 --db "$DB" --out-dir "$O" --bisect-minutes 1
contains "... naming its owner" "$TMP/err" "owned by uid 65534, not by this user"
equals "... nothing written to the store" "$(sql "SELECT count(*) FROM alert_event")" "$N0"
equals "... no bisection stored" "$(sql "SELECT count(*) FROM bisect")" 0
equals "... nothing written there" "$(ls "$O")" "alert-group-1.json"
expect_exit 2 "nightly: the same --out-dir refused" \
	$SL nightly --db "$DB" --session 8 --out-dir "$O"
contains "... naming its owner" "$TMP/err" "owned by uid 65534"
O2=$SH/out-open
mkdir -m 777 "$O2"
chmod 777 "$O2"
expect_exit 2 "an --out-dir of root's that others may write is refused" \
	$SL alerts bisect 1 --db "$DB" --out-dir "$O2" --bisect-minutes 1
contains "... naming its mode" "$TMP/err" "mode 0777 lets other users write into it"
P=$SH/nobodys
as_nobody mkdir -m 755 "$P"
mkdir "$P/out"   # root's, 0755, below nobody's folder
expect_exit 2 "an --out-dir below a folder nobody owns is refused" \
	$SL alerts bisect 1 --db "$DB" --out-dir "$P/out" --bisect-minutes 1
contains "... naming the folder above" "$TMP/err" "the folder $P above it is owned by uid 65534"
# a folder of root's where nobody could write once (0777, since closed):
# a plan nobody left there, or a link to one, is never run
O3=$SH/out-closed
mkdir -m 777 "$O3"
chmod 777 "$O3"
as_nobody sh -c "echo '{\"planted\": true}' >'$O3/alert-group-1.json'"
chmod 755 "$O3"
expect_exit 2 "a narrowed plan nobody planted is refused, not run" \
	$SL alerts bisect 1 --db "$DB" --out-dir "$O3" --bisect-minutes 1
contains "... naming the file" "$TMP/err" "$O3/alert-group-1.json: not written by this user"
equals "... no bisection stored" "$(sql "SELECT count(*) FROM bisect")" 0
equals "... the alert still new" "$(sql "SELECT status FROM alert WHERE id = 1")" new
rm -f "$O3/alert-group-1.json"
as_nobody sh -c "echo '{\"planted\": true}' >'$SH/nobody-plan.json'"
ln -s "$SH/nobody-plan.json" "$O3/alert-group-1.json"
expect_exit 2 "a narrowed plan that is a link is refused, not followed" \
	$SL alerts bisect 1 --db "$DB" --out-dir "$O3" --bisect-minutes 1
contains "... saying so" "$TMP/err" "a symlink, not followed"
equals "... no bisection stored" "$(sql "SELECT count(*) FROM bisect")" 0
done_testing
