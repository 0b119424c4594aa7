# `schedlab serve` for a test (t0860, t0862): sourced after lib.sh, with SL
# the command and TMP the test's folder.
#   start_serve DB [options]  serve DB on a free port (--listen 127.0.0.1:0)
#                             in the test's process group; URL its address,
#                             SPID its pid, SOUT its output (SOUT.err)
#   get PATH FILE [curl options]  the page into $TMP/FILE; prints the status
#   jget PATH FILE JQ         the page's JSON into $TMP/FILE; prints JQ of it
#   stop_serve                TERM (KILL after 10 s) and reap it; also at
#                             the test's end (CLEANUP_CMDS)
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
	$SL serve --db "$db" --listen 127.0.0.1:0 "$@" >"$SOUT" 2>"$SOUT.err" &
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
