#!/usr/bin/env bash
# timeout: 400 (tests/run.sh ends it past this many seconds)
# End-to-end: no request of `schedlab serve` (docs/serve.md "Limits") waits
# for another's page, and the site behind a TLS proxy (--public-url), over a
# small store of three alerts:
#  - a heavy page made slow (the fault point serve-slow-page: it waits
#    SCHEDLAB_FAULT_MS before it is built) and 80 idle connections beside
#    it: /alerts answers while the heavy page is still under way (no speed
#    asserted: only that it answers before the heavy one does); a second
#    heavy page beyond the workers' half: 503 at once; the slow one answers
#    200 in the end;
#  - the time budget (--page-seconds): the slow page answers 503 saying its
#    budget and what to narrow, with Retry-After;
#  - the size bound (--page-max-mb): /report?since= of a range too large is
#    422 before it is built, saying what it would read;
#  - the connections from one address (--per-address): one more is refused,
#    another address is answered; let go, the address is answered again;
#  - a request whose headers stop coming, or trickle in a line at a time (a
#    slowloris): closed after --header-seconds; keep-alive still answered;
#  - --public-url https://lab.example: the proxied Host is answered, a triage
#    from that origin passes, one from another origin is refused (403), a
#    foreign Host 421; malformed URLs are refused naming what is valid.
# About 60 s (the slow page's 20 s among them). Needs sqlite3, python3, curl, jq.
. "$(dirname "$0")/lib.sh"
hold_local_target   # empty_db's tiny local session never waits inside the script
require sqlite3:sqlite3 python3:python3 curl:curl jq:jq
SL=schedlab
DB=$TMP/s.db

# ---- the store: three nights, alerts 1-3 of night 3 (new) ---------------------------------
. "$(dirname "$0")/serve-lib.sh"
three_alerts_store "$DB"
PORT() { local p=${URL%/}; echo "${p##*:}"; }
# idle N [SRC]: N connections to serve that send nothing, held by a python3
# process (IPID) until let_go (120 s at most); $TMP/idle.ready once open
IPID=
idle() {
	rm -f "$TMP/idle.ready" "$TMP/idle.go"
	python3 - "$(PORT)" "$1" "${2:-127.0.0.1}" "$TMP" <<'EOF' &
import os, socket, sys, time
port, n, src, tmp = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
socks = []
for _ in range(n):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    socks.append(s)
open(os.path.join(tmp, "idle.ready"), "w").close()
end = time.monotonic() + 120
while not os.path.exists(os.path.join(tmp, "idle.go")) and time.monotonic() < end:
    time.sleep(0.05)
EOF
	IPID=$!
	for _ in $(seq 1 300); do [ -e "$TMP/idle.ready" ] && return 0; kill -0 "$IPID" 2>/dev/null || return 1; sleep 0.1; done
	return 1
}
let_go() { [ -n "$IPID" ] || return 0; touch "$TMP/idle.go"; wait "$IPID"; IPID=; }
CLEANUP_CMDS+=("let_go")

# ---- a slow heavy page beside 80 idle connections ----------------------------------------------
SCHEDLAB_FAULT=serve-slow-page SCHEDLAB_FAULT_MS=20000 check "serve starts (heavy pages made slow: 20 s)" \
	start_serve "$DB" --workers 2 --page-seconds 200 --header-seconds 120
curl -sS --max-time 200 -o "$TMP/heavy.html" -w '%{http_code}' "${URL%/}/report?since=2000-01-01" \
	>"$TMP/heavy.code" 2>"$TMP/heavy.err" &
HP=$!
check "80 idle connections beside it" idle 80
equals "/alerts answers: 200" "$(get /alerts a1.html --max-time 15)" 200
check "... while the heavy page is still being built (its request not answered yet)" kill -0 "$HP"
equals "/alert/1 as JSON answers: 200" "$(get /alert/1 a2.json --max-time 15 -H 'Accept: application/json')" 200
equals "a second heavy page, beyond half of --workers 2: 503 at once" \
	"$(get '/trend?metric=hackbench.time_s&where=machine=syn' t1.json --max-time 15 -H 'Accept: application/json')" 503
contains "... saying heavy pages are being built" "$TMP/t1.json" "heavy pages"
check "... the first still under way" kill -0 "$HP"
wait "$HP"
equals "the slow page answers in the end: 200" "$(cat "$TMP/heavy.code")" 200
contains "... the report" "$TMP/heavy.html" "<html"
let_go
stop_serve

# ---- the time budget ---------------------------------------------------------------------------
SCHEDLAB_FAULT=serve-slow-page SCHEDLAB_FAULT_MS=120000 check "serve starts with --page-seconds 2" \
	start_serve "$DB" --page-seconds 2
equals "the slow page past its budget: 503" \
	"$(get '/report?since=2000-01-01' b1.html --max-time 60 -D "$TMP/b1.head")" 503
contains "... saying its budget" "$TMP/b1.html" "time budget of 2 s"
contains "... and what to narrow" "$TMP/b1.html" "narrow it"
contains "... with Retry-After" "$TMP/b1.head" "Retry-After: "
equals "... as JSON too" "$(get '/trend?metric=hackbench.time_s&where=machine=syn' b2.json --max-time 60 -H 'Accept: application/json')" 503
equals "... its status in the document" "$(jq -r .status "$TMP/b2.json")" 503
equals "a light page meanwhile: 200" "$(get / b3.html --max-time 15)" 200
stop_serve

# ---- the size bound ----------------------------------------------------------------------------
# a session of 3000 runs x 10 metrics (30,000 metric rows: a report of
# about 1.2 MB) on another copy of the store
cp "$DB" "$TMP/big.db"
sqlite3 -batch "$TMP/big.db" "INSERT INTO session (id, name, plan_json, tag, target, harness_version,
	status, started_at) VALUES (100, 'big', '{}', 'big', 'local', 't', 'done', '2030-03-01T03:00:00Z');
	INSERT INTO boot (id, session_id, seq, cfg, status, machine_id, kernel_id, preempt, cmdline)
	SELECT 100, 100, 0, 0, 'ok', machine_id, kernel_id, 'full', 'x' FROM boot LIMIT 1;
	WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
	INSERT INTO run (id, session_id, boot_id, seq, round, workload, params, knobs, rep, status,
	started_at) SELECT 100000 + i, 100, 100, i, 0, 'w', '{}', '{}', 0, 'ok', '2030-03-01T03:00:00Z' FROM n;
	WITH RECURSIVE k(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM k WHERE j < 9)
	INSERT INTO metric (run_id, workload, name, value, unit, better)
	SELECT r.id, 'w', 'm' || k.j, 1.0, 'us', 'lower' FROM run r, k WHERE r.session_id = 100"
check "serve starts with --page-max-mb 1" start_serve "$TMP/big.db" --page-max-mb 1
equals "/report?since= of 30,000 metric rows: 422, not built" \
	"$(get '/report?since=2030-02-01' z1.json -H 'Accept: application/json')" 422
contains "... saying what it would read" "$TMP/z1.json" "30000 metric rows"
contains "... and asking for a narrower range" "$TMP/z1.json" "narrow the range"
equals "/report?session=1, another report: 200" "$(get '/report?session=1' z2.html)" 200
stop_serve

# ---- connections from one address ----------------------------------------------------------------
LISTEN=0.0.0.0:0 check "serve starts on every address with --per-address 3" \
	start_serve "$DB" --per-address 3 --header-seconds 120
check "3 idle connections from 127.0.0.1" idle 3
equals "a 4th from 127.0.0.1: refused (no answer)" \
	"$(curl -sS --max-time 15 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(PORT)/alerts" 2>/dev/null)" 000
equals "one from 127.0.0.2: 200" \
	"$(curl -sS --max-time 15 --interface 127.0.0.2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(PORT)/alerts")" 200
let_go
ok=0
for _ in $(seq 1 50); do
	[ "$(curl -sS --max-time 15 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(PORT)/alerts" 2>/dev/null)" = 200 ] && { ok=1; break; }
	sleep 0.2
done
equals "the idle ones closed: 127.0.0.1 answered again" "$ok" 1
stop_serve

# ---- a request whose headers stop coming --------------------------------------------------------
check "serve starts with --header-seconds 2" start_serve "$DB" --header-seconds 2
python3 - "$(PORT)" >"$TMP/slow.out" 2>&1 <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /alerts HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
t0 = time.monotonic()
s.settimeout(60)
try:
    data = s.recv(4096)
    print("closed" if not data else "answered", round(time.monotonic() - t0, 1))
except socket.timeout:
    print("open after 60 s")
except ConnectionResetError:
    print("closed", round(time.monotonic() - t0, 1))
EOF
contains "headers that stop coming: the connection is closed (not held for 60 s)" "$TMP/slow.out" "closed"
# a slowloris proper: a header line every 0.5 s, never the end of them
python3 - "$(PORT)" >"$TMP/trickle.out" 2>&1 <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /alerts HTTP/1.1\r\nHost: localhost\r\n")
t0 = time.monotonic()
s.settimeout(0.5)
res = "open after 60 s of a header line every 0.5 s"
while time.monotonic() - t0 < 60:
    try:
        s.sendall(b"X-Slow: a\r\n")
        if not s.recv(4096):
            res = "closed"
            break
        res = "answered"
        break
    except socket.timeout:
        pass
    except OSError:
        res = "closed"
        break
print(res, round(time.monotonic() - t0, 1))
EOF
contains "headers that trickle in, a line every 0.5 s: closed after --header-seconds all the same" \
	"$TMP/trickle.out" "closed"
equals "a keep-alive connection's two requests: both answered" \
	"$(curl -sS -o /dev/null -o /dev/null -w '%{http_code}' "${URL%/}/alerts" "${URL%/}/sessions")" 200200
equals "the site answers meanwhile: 200" "$(get /alerts s1.html)" 200
stop_serve

# ---- --public-url behind a TLS proxy ----------------------------------------------------------
TOKEN=tok-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
TF=$TMP/serve.token
(umask 077; printf '%s\n' "$TOKEN" >"$TF")
check "serve starts with --public-url https://lab.example" \
	start_serve "$DB" --token-file "$TF" --public-url https://lab.example
contains "... saying where it is reached" "$SOUT" "reached at https://lab.example/"
equals "the proxied Host lab.example: 200" "$(get /alert/1 p1.json -H 'Host: lab.example' -H 'Accept: application/json')" 200
CSRF=$(jq -r .csrf "$TMP/p1.json")
# proxied: the Host the proxy passes and the browser's https Origin
triage() { # ACTION ORIGIN FILE
	get /alert/1 "$3" -H 'Host: lab.example' -H "Origin: $2" -H 'Sec-Fetch-Site: same-origin' \
		-H 'Accept: application/json' -d "action=$1" -d note=proxied -d "csrf=$CSRF" -d "token=$TOKEN"
}
equals "a triage from https://lab.example: 200" "$(triage ack https://lab.example p2.json)" 200
equals "... stored" "$(sql "SELECT status FROM alert WHERE id = 1")" acknowledged
equals "a triage from another origin: 403" "$(triage reopen https://evil.example p3.json)" 403
contains "... saying so" "$TMP/p3.json" "another origin"
equals "... from http://lab.example (not the https one): 403" "$(triage reopen http://lab.example p4.json)" 403
equals "... nothing written" "$(sql "SELECT status FROM alert WHERE id = 1")" acknowledged
equals "the proxied Host with the default port, lab.example:443: 200" \
	"$(get /alerts p5.html -H 'Host: lab.example:443')" 200
equals "a foreign Host: 421" "$(get /alerts p6.html -H 'Host: evil.example')" 421
contains "... naming --public-url's" "$TMP/p6.html" "--public-url"
equals "serve's own address still: 200" "$(get /alerts p7.html)" 200
stop_serve
for bad in ftp://lab.example https://lab.example/sub 'https://u@lab.example' https://lab.example:99999 \
	'https://' 'https://lab..example' 'https://lab.example?x=1'; do
	expect_exit 2 "--public-url $bad: refused" $SL serve --db "$DB" --listen 127.0.0.1:0 --public-url "$bad"
	contains "... naming what is valid" "$TMP/err" "http(s)://HOST[:PORT][/]"
done
done_testing
