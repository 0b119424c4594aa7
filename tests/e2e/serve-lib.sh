# `schedlab serve` for a test (t0860, t0862): sourced after lib.sh, with SL
# the command and TMP the test's folder.
#   start_serve DB [options]  serve DB on a free port (--listen 127.0.0.1:0;
#                             LISTEN=ADDR another) in the test's process
#                             group; URL its address, SPID its pid, SOUT its
#                             output (SOUT.err)
#   get PATH FILE [curl options]  the page into $TMP/FILE; prints the status
#   jget PATH FILE JQ         the page's JSON into $TMP/FILE; prints JQ of it
#   stop_serve                TERM (KILL after 10 s) and reap it; also at
#                             the test's end (CLEANUP_CMDS)
#   lock_store, unlock_store  the write lock of the store $DB, held by a
#                             python3 process until unlock_store (60 s at
#                             most; also let go at the test's end)
#   three_alerts_store DB     a store of three nights (robot-history.py),
#                             alerts 1-3 of night 3, new (t0864, t0865;
#                             empty_db's tiny session: hold_local_target)
SPID=
stop_serve() {
	[ -n "$SPID" ] || return 0
	kill -TERM "$SPID" 2>/dev/null
	for _ in $(seq 1 100); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
	SPID=
}
CLEANUP_CMDS+=("stop_serve")
NSERVE=0
start_serve() {
	local db=$1
	shift
	NSERVE=$((NSERVE + 1))
	SOUT=$TMP/serve.$NSERVE.out
	: >"$SOUT"
	$SL serve --db "$db" --listen "${LISTEN:-127.0.0.1:0}" "$@" >"$SOUT" 2>"$SOUT.err" &
	SPID=$!
	URL=
	for _ in $(seq 1 300); do
		URL=$(sed -n 's|.* on \(http://[^ ]*/\) .*|\1|p' "$SOUT")
		[ -n "$URL" ] && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$URL" ]
}
get() { local p=$1 f=$2; shift 2; curl -sS --max-time 60 -o "$TMP/$f" -w '%{http_code}' "$@" "${URL%/}$p"; }
jget() { get "$1" "$2" -H 'Accept: application/json' >/dev/null; jq -r "$3" "$TMP/$2"; }
LPID=
lock_store() {
	rm -f "$TMP/locked" "$TMP/unlock"
	python3 - "$DB" "$TMP" <<'EOF' &
import os, sqlite3, sys, time
db, tmp = sys.argv[1:3]
c = sqlite3.connect(db, isolation_level=None, timeout=30)
c.execute("BEGIN IMMEDIATE")
open(os.path.join(tmp, "locked"), "w").close()
end = time.monotonic() + 60
while not os.path.exists(os.path.join(tmp, "unlock")) and time.monotonic() < end:
    time.sleep(0.05)
c.execute("COMMIT")
EOF
	LPID=$!
	for _ in $(seq 1 300); do [ -e "$TMP/locked" ] && return 0; sleep 0.1; done
	return 1
}
unlock_store() { [ -n "$LPID" ] || return 0; touch "$TMP/unlock"; wait "$LPID"; LPID=; }
CLEANUP_CMDS+=("unlock_store")
three_alerts_store() {
	local db=$1
	empty_db "$db"
	python3 "$(dirname "${BASH_SOURCE[0]}")/robot-history.py" "$TMP/gen.sql" "$TMP/no-repo" 3 \
		'{"3": 1.2}' '' c1 c2 c3
	check "synthetic history loaded" sqlite3 -batch "$db" ".read $TMP/gen.sql"
	sqlite3 -batch "$db" "INSERT INTO alert_group (id, plan, machine_id, range_key, good_session,
		bad_session) VALUES (1, 'robot', 1, 'c2..c3', 2, 3);
		INSERT INTO alert (id, group_id, kind, series_key, workload, metric, unit, detector,
		good_session, bad_session, base_value, value, change_pct)
		SELECT n, 1, 'regression', 'robot|syn', 'hackbench', 'time_s', 's', 'changepoint', 2, 3,
		1.0, 1.2, 20 FROM (SELECT 1 AS n UNION SELECT 2 UNION SELECT 3)"
}
