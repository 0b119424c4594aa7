#!/usr/bin/env bash
# timeout: 300 (tests/run.sh ends it past this many seconds)
# End-to-end: what `schedlab serve` (docs/serve.md) does when the world
# around it changes or lies, over a small store of three alerts (a night's
# regression as robot-history.py writes it, the alerts inserted):
#  - the CSRF value is an HMAC under a secret of the process: not the hash
#    of the token and the path that anyone could check a guess against, and
#    another serve gives another value;
#  - the token file: a FIFO is refused at once (no hang); a rotated token
#    is taken at the next write (the old one refused); a token file made
#    readable by others, or removed, stops every write (503, said on
#    serve's stderr) until it is put right;
#  - the store file replaced under a running serve (mv of another store
#    over its path): writes refused (503), the new store intact;
#  - the store's write lock held by another process: a triage answers 503
#    with Retry-After at once (not after the 10 s busy timeout), and a page
#    read meanwhile answers;
#  - --listen: 127.0.0.2:0 and [::1]:0 print a URL that answers; 0.0.0.0
#    and [::] warn on stderr that the site is reachable from other machines
#    and answer only Hosts that name this server (421 otherwise);
#  - input: since= as --since takes it (400 naming what is valid),
#    /report?session= of no session 404, %00 anywhere in the URL 400, a
#    multipart form 415 naming the type a write takes.
# About 15 s. Needs sqlite3, python3, curl, jq.
. "$(dirname "$0")/lib.sh"
hold_local_target   # empty_db's tiny local session never waits inside the script
require sqlite3:sqlite3 python3:python3 curl:curl jq:jq
SL=schedlab
DB=$TMP/s.db

# ---- the store: three nights, alerts 1-3 of night 3 (new) ---------------------------------
. "$(dirname "$0")/serve-lib.sh"
three_alerts_store "$DB"
cp "$DB" "$TMP/pristine.db"
TOKEN=tok-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
TF=$TMP/serve.token
(umask 077; printf '%s\n' "$TOKEN" >"$TF")
# triage ALERT ACTION FILE [curl options]: POST the action with a note and
# the page's csrf value, as JSON; prints the status
triage() {
	local a=$1 act=$2 f=$3; shift 3
	local csrf
	csrf=$(jget "/alert/$a" csrf.json .csrf)
	get "/alert/$a" "$f" -H 'Accept: application/json' -d "action=$act" -d note=seen -d "csrf=$csrf" "$@"
}
events() { sqlite3 -batch -noheader "${1:-$DB}" "SELECT count(*) FROM alert_event"; }
# the status, then the serve's stderr grows: what it said since mark_err
mark_err() { ERR0=$(wc -c <"$SOUT.err"); }
said() { tail -c +"$((ERR0 + 1))" "$SOUT.err"; }

# ---- the CSRF value ------------------------------------------------------------------------
check "serve starts with a token" start_serve "$DB" --token-file "$TF"
C1=$(jget /alert/1 c1.json .csrf)
OLD=$(python3 -c 'import hashlib, sys
t, p = sys.argv[1:3]
print(hashlib.sha256(b"schedlab serve csrf v1\0" + t.encode() + b"\0" + p.encode() + b"\0").hexdigest())' "$TOKEN" /alert/1)
check "the csrf value is 64 hex digits" test "$(printf %s "$C1" | grep -cxE '[0-9a-f]{64}')" = 1
check "... not the SHA-256 of a fixed tag, the token and the path (a guess of the token could be checked offline)" \
	test "$C1" != "$OLD"
equals "... the same for the page on the next load" "$(jget /alert/1 c1b.json .csrf)" "$C1"
check "... another page's differs" test "$(jget /alert/2 c2.json .csrf)" != "$C1"
equals "a triage with it: 200" "$(triage 1 ack t1.json -d "token=$TOKEN")" 200
stop_serve
check "serve started again" start_serve "$DB" --token-file "$TF"
check "... another process, another secret: another csrf value for the same page" \
	test "$(jget /alert/1 c1c.json .csrf)" != "$C1"
equals "... the old page's value is refused: 403" \
	"$(get /alert/2 t1o.json -H 'Accept: application/json' -d action=ack -d note=x -d "csrf=$C1" -d "token=$TOKEN")" 403
stop_serve

# ---- the token file --------------------------------------------------------------------------
mkfifo -m 600 "$TMP/fifo.token"
T0=$SECONDS
expect_exit 2 "a FIFO as --token-file: refused (not waited on for a writer)" \
	timeout 20 $SL serve --db "$DB" --listen 127.0.0.1:0 --token-file "$TMP/fifo.token"
contains "... saying it is not a regular file" "$TMP/err" "fifo.token: not a regular file"
check "... at once (well before the 20 s timeout)" test $((SECONDS - T0)) -lt 15

check "serve starts with the token file" start_serve "$DB" --token-file "$TF"
N=$(events)
NEW=tok-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
(umask 077; printf '%s\n' "$NEW" >"$TF.new")
mv "$TF.new" "$TF"
equals "the token rotated (a new file moved over it): the old token is refused (403)" \
	"$(triage 1 reopen r1.json -d "token=$TOKEN")" 403
equals "... the new one is taken: 200" "$(triage 1 reopen r2.json -d "token=$NEW")" 200
printf '%s\n' "$TOKEN" >"$TF"
equals "the token file rewritten in place: the token it holds now is taken" \
	"$(triage 2 ack r3.json -d "token=$TOKEN")" 200
equals "... two moves stored" "$(events)" "$((N + 2))"
N=$(events)
mark_err
chmod 644 "$TF"
equals "the token file made readable by others: every write refused (503)" \
	"$(triage 3 ack m1.json -d "token=$TOKEN")" 503
contains "... saying why" "$TMP/m1.json" "lets others read or change the token"
contains "... and on serve's stderr, naming the file" <(said) "--token-file $TF: mode 0644"
equals "... nothing written" "$(events)" "$N"
chmod 600 "$TF"
equals "chmod 600 again: the write is taken" "$(triage 3 ack m2.json -d "token=$TOKEN")" 200
N=$(events)
mark_err
mv "$TF" "$TF.away"
equals "the token file removed: every write refused (503)" \
	"$(triage 2 reopen d1.json -d "token=$TOKEN")" 503
contains "... saying why" "$TMP/d1.json" "No such file or directory"
contains "... and on serve's stderr" <(said) "--token-file $TF: No such file or directory"
equals "... nothing written" "$(events)" "$N"
equals "... pages are still read: 200" "$(get /alert/2 d2.html)" 200
mv "$TF.away" "$TF"
equals "put back: the write is taken" "$(triage 2 reopen d3.json -d "token=$TOKEN")" 200
stop_serve

# ---- the store replaced under serve ----------------------------------------------------------
cp "$TMP/pristine.db" "$DB"
rm -f "$DB-wal" "$DB-shm"
cp "$TMP/pristine.db" "$TMP/other.db"
sqlite3 -batch "$TMP/other.db" "UPDATE alert SET status = 'acknowledged' WHERE id = 3"
check "serve starts on the store" start_serve "$DB" --token-file "$TF"
equals "a page read first (the store open)" "$(get /alert/1 s0.html)" 200
mv "$TMP/other.db" "$DB"
mark_err
equals "another store moved over its path: a triage is refused (503)" \
	"$(triage 1 ack s1.json -d "token=$TOKEN")" 503
contains "... saying the file was replaced" "$TMP/s1.json" "was replaced"
contains "... and on serve's stderr" <(said) "$DB: the store was replaced"
equals "... the new store is intact" "$(sqlite3 -batch "$DB" 'PRAGMA integrity_check')" ok
equals "... and holds what it held: no event, alert 3 acknowledged, alert 1 new" \
	"$(sqlite3 -batch "$DB" "SELECT count(*) FROM alert_event; SELECT group_concat(status) FROM alert ORDER BY id")" \
	"$(printf '0\nnew,new,acknowledged')"
rm -f "$DB"
equals "the store removed: refused too (503)" "$(triage 1 ack s2.json -d "token=$TOKEN")" 503
stop_serve

# ---- the store's write lock held by another process ------------------------------------------
cp "$TMP/pristine.db" "$DB"
rm -f "$DB-wal" "$DB-shm"
check "serve starts on the store" start_serve "$DB" --token-file "$TF"
CSRF=$(jget /alert/1 l0.json .csrf)
check "another process holds the store's write lock" lock_store
T0=$(date +%s%N)
get /alert/1 l1.json -H 'Accept: application/json' -D "$TMP/l1.head" -d action=ack -d note=x \
	-d "csrf=$CSRF" -d "token=$TOKEN" >"$TMP/l1.code" &
GP=$!
equals "a page read while a triage meets the lock: 200" "$(get / l2.html)" 200
wait "$GP"
MS=$((($(date +%s%N) - T0) / 1000000))
equals "the triage: 503" "$(cat "$TMP/l1.code")" 503
contains "... with Retry-After" "$TMP/l1.head" "Retry-After: "
contains "... saying the store is being written by another process" "$TMP/l1.json" "another process"
check "... without waiting out the 10 s busy timeout ($MS ms)" test "$MS" -lt 8000
unlock_store
equals "the lock let go: the triage is taken" \
	"$(get /alert/1 l3.json -H 'Accept: application/json' -d action=ack -d note=x -d "csrf=$CSRF" -d "token=$TOKEN")" 200
stop_serve

# ---- --listen ----------------------------------------------------------------------------------
PORT() { local p=${URL%/}; echo "${p##*:}"; }
LISTEN=127.0.0.2:0 check "--listen 127.0.0.2:0 starts" start_serve "$DB"
equals "... its printed URL answers 200" "$(get / l127.html)" 200
stop_serve
LISTEN='[::1]:0' check "--listen [::1]:0 starts" start_serve "$DB"
equals "... its printed URL answers 200" "$(get / l6.html)" 200
equals "... a Host of another name: 421 (DNS rebinding)" "$(get / l6e.html -H 'Host: evil.example')" 421
stop_serve
LISTEN=0.0.0.0:0 check "--listen 0.0.0.0:0 starts" start_serve "$DB"
contains "... warning on stderr that the site is reachable from other machines" "$SOUT.err" \
	"reachable from other machines"
contains "... that it is read-only" "$SOUT.err" "read-only"
equals "... its printed URL answers 200" "$(get / w1.html)" 200
P=$(PORT)
equals "... as 127.0.0.1:PORT: 200" "$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/")" 200
equals "... as localhost:PORT: 200" \
	"$(curl -sS -o /dev/null -w '%{http_code}' -H "Host: localhost:$P" "http://127.0.0.1:$P/")" 200
equals "... a Host of another name: 421 (the Host check stays on)" \
	"$(get / w2.html -H "Host: evil.example:$P")" 421
contains "... naming the names it answers to" "$TMP/w2.html" "answers only to"
stop_serve
LISTEN='[::]:0' check "--listen [::]:0 with a token starts" start_serve "$DB" --token-file "$TF"
contains "... warning on stderr that the site is reachable from other machines" "$SOUT.err" \
	"reachable from other machines"
contains "... and that the token crosses the network" "$SOUT.err" "token"
P=$(PORT)
equals "... as [::1]:PORT: 200" "$(curl -sS -o /dev/null -w '%{http_code}' "http://[::1]:$P/")" 200
equals "... a Host of another name: 421" \
	"$(curl -sS -o /dev/null -w '%{http_code}' -H "Host: evil.example:$P" "http://[::1]:$P/")" 421
stop_serve
expect_exit 2 "--listen '[::1' is refused" $SL serve --db "$DB" --listen '[::1'
contains "... naming what is valid" "$TMP/err" "ADDR[:PORT]"

# ---- input ---------------------------------------------------------------------------------------
check "serve starts with a token" start_serve "$DB" --token-file "$TF"
expect_exit 2 "alerts list --since garbage: refused by the command" $SL alerts list --db "$DB" --since garbage
equals "/alerts?since=garbage: 400" "$(get '/alerts?since=garbage' i1.json -H 'Accept: application/json')" 400
contains "... naming the parameter and what is valid" "$TMP/i1.json" "since=garbage: expected YYYY-MM-DD[THH:MM:SS]"
equals "/alerts?since=2026-02-01: 200" "$(get '/alerts?since=2026-02-01' i1b.json)" 200
equals "/trend?...&since=garbage: 400" \
	"$(get '/trend?metric=hackbench.time_s&where=machine=syn&since=garbage' i2.html)" 400
equals "/report?since=garbage: 400" "$(get '/report?since=garbage' i3.html)" 400
equals "/report?session=99999: 404" "$(get '/report?session=99999' i4.html)" 404
contains "... saying it does not exist" "$TMP/i4.html" "session 99999 does not exist"
equals "/report?session=x: 400" "$(get '/report?session=x' i4b.html)" 400
equals "%00 in a query value: 400" "$(get '/alerts?since=2026-02-01%00junk' i5.json -H 'Accept: application/json')" 400
contains "... saying so" "$TMP/i5.json" "%00"
equals "%00 in the path: 400" "$(get '/alert/1%00x' i6.html)" 400
N=$(events)
CSRF=$(jget /alert/1 i7c.json .csrf)
equals "a multipart POST: 415" \
	"$(get /alert/1 i7.json -H 'Accept: application/json' -F action=ack -F note=x -F "csrf=$CSRF" -F "token=$TOKEN")" 415
contains "... naming the type a write takes" "$TMP/i7.json" "application/x-www-form-urlencoded"
equals "... nothing written" "$(events)" "$N"
stop_serve
done_testing
