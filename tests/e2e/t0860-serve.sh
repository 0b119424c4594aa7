#!/usr/bin/env bash
# timeout: 300 (tests/run.sh ends it past this many seconds)
# End-to-end: `schedlab serve` (docs/serve.md) over a store holding the
# robot's nightly history of t0820 (plan "robot", machine "syn", a kernel from
# git; night 5 a +20% regression: alert 1, its group of 3 commits; night 8
# +10% of one commit: alert 2, culprit found) and a real local session. The
# server runs in this script's process group on a free port (--listen
# 127.0.0.1:0) and is fetched with curl:
#  - every page answers HTML and, under the same path, JSON; the trend's and
#    the comparison's JSON hold exactly what `schedlab trend` and `schedlab
#    compare --format json` print (the same code, not a second one);
#  - read-only without --token-file: every POST refused, nothing written;
#  - a token file readable by others is refused;
#  - with the token: a triage through the page writes the alert_event row
#    `schedlab alerts` writes for the same move (compared on a copy of the
#    store); refused without the token, with a wrong CSRF value, from
#    another origin, cross-site; a move the life cycle refuses is 409;
#  - hostile text (a note with <script> and control characters, a 60 KB
#    note, the culprit commit's subject with an <img onerror> and ANSI
#    escapes, a run's raw output) comes out as inert, visible text;
#  - headless Chromium renders the trend page (its points and the alert's
#    mark counted by the page's own script) and the alert page without an
#    error, and takes a screenshot.
# Needs sqlite3, git, python3, curl, jq, chromium (scripts/install-deps.sh test).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/robot-history.sh"
hold_local_target   # its local session never waits inside the script (lib.sh)
require sqlite3:sqlite3 git:git python3:python3 curl:curl jq:jq chromium:chromium
SL=schedlab
DB=$TMP/s.db

# ---- the store: t0820's first eight nights, then a real local session --------------
R=$TMP/linux
# night 8's commit, the culprit, has a hostile subject
SUBJECT[8]=$'sched: night 8 <img src=x onerror="document.title=1"> \e[7mrev\e[0m'
check "the history's repository, 8 nights" history_repo "$R" 8
python3 "$(dirname "$0")/robot-history.py" "$TMP/gen.sql" "$R" 8 \
	'{"5": 1.2, "6": 1.2, "7": 1.2, "8": 1.32}' '' "${COMMITS[@]:1}"
empty_db "$DB"
check "synthetic history loaded" sqlite3 -batch "$DB" ".read $TMP/gen.sql"
night() { # N: the robot judges night N (no bisection: a synthetic history has no kernels)
	local n=$1
	local -a more=(--no-bisect)
	[ "$n" = 8 ] && more=()
	$SL nightly --db "$DB" --session "$n" --out-dir "$TMP/rep" "${more[@]}" >"$TMP/n$n.out" 2>&1
	echo $? >"$TMP/n$n.rc"
}
for n in 1 2 3 4 5 6; do night $n; done
equals "nights 1-6: alert 1, a regression of time_s at night 5" \
	"$(sql "SELECT id || ' ' || kind || ' ' || status || ' ' || bad_session FROM alert")" "1 regression new 5"
cat >"$TMP/local.json" <<'EOF'
{"name": "serve-local", "target": "local", "repetitions": 2,
 "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}]}
EOF
expect_exit 0 "a real local session into the same store" \
	timeout 120 $SL run "$TMP/local.json" --db "$DB" --quiet
LS=$(sql "SELECT max(id) FROM session WHERE name = 'serve-local'")
LRUN=$(sql "SELECT min(id) FROM run WHERE session_id = $LS")
# a run's raw output with markup and control characters (a tool's output is
# as hostile as a commit subject)
sql "UPDATE run SET stderr = '<b>bold</b> ' || char(27) || '[1mesc' WHERE id = 1"

# ---- the server ---------------------------------------------------------------------
. "$(dirname "$0")/serve-lib.sh"

printf 'an-open-token-of-thirty-two-chars\n' >"$TMP/open.token"
chmod 644 "$TMP/open.token"
expect_exit 2 "a token file readable by others is refused" $SL serve --db "$DB" --token-file "$TMP/open.token"
contains "... saying to chmod 600 it" "$TMP/err" "chmod 600"
expect_exit 2 "--listen with a port that is no number is refused" $SL serve --db "$DB" --listen 127.0.0.1:http
contains "... naming what is valid" "$TMP/err" "the port must be a number 0-65535"
expect_exit 2 "--listen of an IPv6 address without brackets is refused" $SL serve --db "$DB" --listen ::1
contains "... naming what is valid" "$TMP/err" "[::1]:8080"

check "serve starts read-only on a free port" start_serve "$DB"
contains "... and says so" "$SOUT" "(read-only)"
ALERTS_BEFORE=$(sql "SELECT count(*) FROM alert_event")

equals "/ answers 200" "$(get / home.html)" 200
contains "/ lists the plan" "$TMP/home.html" "<td>robot</td><td>syn</td>"
contains "/ links the open alert" "$TMP/home.html" 'href="/alert/1"'
equals "/ as JSON (?format=json): the plan, its machine, its open alert" \
	"$(jget '/?format=json' home.json '[.plans[] | select(.plan == "robot") | .machine, .latest_session, .open_alerts] | join(" ")')" "syn 8 1"
equals "/ as JSON (Accept): the open alerts" "$(jget / home2.json '[.open_alerts[].alert] | join(",")')" 1
equals "/alerts as JSON" "$(jget /alerts alerts.json '.alerts[0] | "\(.alert) \(.status) \(.metric) \(.bad_session)"')" \
	"1 new hackbench.time_s 5"
equals "/alerts?status=fixed: none" "$(jget '/alerts?status=fixed' af.json '.alerts | length')" 0
equals "/alerts?status=bogus is 400" "$(get '/alerts?status=bogus' bad.html)" 400
contains "... naming the valid ones" "$TMP/bad.html" "one of new, bisecting"
equals "/alert/1 answers 200" "$(get /alert/1 a1.html)" 200
contains "/alert/1 shows its status" "$TMP/a1.html" 'data-status="new"'
contains "/alert/1: read-only, no triage form" "$TMP/a1.html" "triage is off"
equals "/alert/1 as JSON: its group's commit range of 3 commits" \
	"$(jget /alert/1 a1.json '"\(.group.commits) \(.group.good_commit) \(.group.bad_commit)"')" "3 ${COMMITS[4]} ${COMMITS[5]}"
contains "/alert/1: the culprit report (robot_group_report's text)" "$TMP/a1.html" "good ${COMMITS[4]}"
TREND=$(jq -r .alert.trend_url "$TMP/a1.json")
equals "/alert/1 links its trend" "${TREND%%\?*}" /trend

# the trend: the page's JSON is the command's, plus the alerts on it
equals "the trend page answers 200" "$(get "$TREND" trend.html)" 200
get "$TREND" trend.json -H 'Accept: application/json' >/dev/null
WHERE=$(jq -r '.alert.series_where' "$TMP/a1.json")
$SL trend --db "$DB" --metric hackbench.time_s --where "machine=syn,$WHERE" --format json >"$TMP/trend.cmd.json" 2>"$TMP/trend.cmd.err"
equals "trend JSON: the same points and change points as the command" \
	"$(jq -c '[(.points | map(del(.kernel))), .change_points]' "$TMP/trend.json")" \
	"$(jq -c '[.points, .change_points]' "$TMP/trend.cmd.json")"
equals "trend JSON: eight nights, a change point at session 5, alert 1 on it" \
	"$(jq -r '"\(.points | length) \([.change_points[].session] | join(",")) \([.alerts[].alert] | join(","))"' "$TMP/trend.json")" "8 5 1"
equals "trend HTML: a point per night" "$(grep -c '<circle class="pt' "$TMP/trend.html")" 8
equals "trend HTML: the alert marked" "$(grep -c 'class="alert-mark"' "$TMP/trend.html")" 1
contains "trend HTML: the change point drawn" "$TMP/trend.html" 'class="cp"'
equals "trend HTML: a noise band on each side of it" "$(grep -c '<rect class="band"' "$TMP/trend.html")" 2
equals "/trend without metric is 400" "$(get /trend t400.html)" 400
equals "/trend with a bad selector is 400" "$(get '/trend?metric=hackbench.time_s&where=nosuchcol=1' t400b.html)" 400
contains "... with the selector's message" "$TMP/t400b.html" "nosuchcol"
equals "/trend over two machines lists the series to pick" \
	"$(jget '/trend?metric=hackbench.time_s' t2.json '.several_series | length')" 2

# the comparison: the command's document
equals "/compare answers 200" "$(get '/compare?a=tag%3Dnightly-04&b=tag%3Dnightly-05' cmp.html)" 200
get '/compare?a=tag%3Dnightly-04&b=tag%3Dnightly-05&format=json' cmp.json >/dev/null
$SL compare --db "$DB" tag=nightly-04 tag=nightly-05 --format json >"$TMP/cmp.cmd.json" 2>/dev/null
equals "compare JSON: the rows of \`schedlab compare --format json\`" \
	"$(jq -c .rows "$TMP/cmp.json")" "$(jq -c .rows "$TMP/cmp.cmd.json")"
contains "compare HTML: the verdict" "$TMP/cmp.html" "worse"
contains "compare HTML: links the report of the comparison" "$TMP/cmp.html" 'href="/report?a=tag%3Dnightly-04&amp;b=tag%3Dnightly-05"'
equals "/report?a=&b= (schedlab report --compare's page) answers 200" \
	"$(get '/report?a=tag%3Dnightly-04&b=tag%3Dnightly-05' report.html)" 200
contains "... the report's page" "$TMP/report.html" "<svg"
check "... its inline scripts allowed by their hashes, nothing else" \
	grep -qi "^content-security-policy:.*script-src 'self' 'sha256-[A-Za-z0-9+/=]*' 'sha256-" \
	<(curl -sSI "${URL}report?a=tag%3Dnightly-04&b=tag%3Dnightly-05")
equals "/report as JSON: 406 (HTML only)" "$(get '/report?a=tag%3Dnightly-04&b=tag%3Dnightly-05&format=json' rj.json)" 406
equals "/report without a scope: 400" "$(get /report r400.html)" 400
equals "/bisect/N of no bisection: 404" "$(get /bisect/1 b404.html)" 404
equals "/compare with a selector of nothing is 404" "$(get '/compare?a=tag%3Dnone&b=tag%3Dnightly-05' c404.html)" 404

# sessions
equals "/sessions answers 200" "$(get /sessions sessions.html)" 200
contains "/sessions lists the local session" "$TMP/sessions.html" "serve-local"
equals "/session/N of the local session answers 200" "$(get "/session/$LS" ls.html)" 200
equals "/session/N as JSON: its runs and the machine it ran on" \
	"$(jget "/session/$LS" ls.json '"\(.runs | length) \(.runs[0].status) \(.boots[0].machine == "") \(.metrics | length > 0)"')" \
	"2 ok false true"
contains "/session/N shows the sysinfo of its boot" "$TMP/ls.html" "sysinfo of boot"
equals "/run/N of the local session answers 200" "$(get "/run/$LRUN" run.html)" 200
equals "/run/N as JSON: its argv as an array, its metrics" \
	"$(jget "/run/$LRUN" run.json '"\(.run.argv | type) \(.run.status) \(.metrics | length > 0)"')" "array ok true"
contains "/session/N links its runs" "$TMP/ls.html" "href=\"/run/$LRUN\""
get /run/1 run1.html >/dev/null
contains "/run/N: raw output with markup and control characters shown inert" "$TMP/run1.html" \
	'<pre id="stderr">&lt;b&gt;bold&lt;/b&gt; ␛[1mesc</pre>'
equals "/session/99999 is 404" "$(get /session/99999 s404.html)" 404
equals "/nowhere is 404" "$(get /nowhere n404.html)" 404
equals "on loopback, another Host (DNS rebinding) is refused: 421" \
	"$(get /alerts rebind.html -H 'Host: evil.example:80')" 421
equals "... localhost is answered" "$(get /alerts lh.html -H "Host: localhost:$(u=${URL%/}; echo "${u##*:}")")" 200
check "every page sends a content security policy" \
	grep -qi '^content-security-policy:.*script-src .self.' <(curl -sSI "${URL}alert/1")

# read-only: every write refused, nothing written
equals "read-only: a POST is refused (403)" \
	"$(get /alert/1 ro.json -d action=ack -d note=x -d token=whatever -H 'Accept: application/json')" 403
contains "... saying why" "$TMP/ro.json" "read-only"
equals "read-only: nothing written" "$(sql "SELECT count(*) FROM alert_event")" "$ALERTS_BEFORE"
stop_serve
equals "serve said nothing on stderr (a sanitizer's report would be there)" "$(head -c 2000 "$SOUT.err")" ""

# ---- triage with the token ---------------------------------------------------------------
TOKEN=tok-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
(umask 077; printf '%s\n' "$TOKEN" >"$TMP/serve.token")
check "serve starts with a 0600 token file" start_serve "$DB" --token-file "$TMP/serve.token"
get /alert/1 a1t.html >/dev/null
# the triage form and the bisect form (t0862) carry the same value
CSRF=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$TMP/a1t.html" | sort -u)
equals "the alert page carries a 64-hex CSRF value (one, in both its forms)" "${#CSRF}" 64
contains "... the bisect button beside the triage form" "$TMP/a1t.html" 'id="do-bisect"'
equals "... the same in its JSON" "$(jget /alert/1 a1t.json .csrf)" "$CSRF"
NOTE=$(printf 'EEVDF trade-off <script>document.title="owned"</script> \033[31mred\033[0m & "q"')
post() { # FILE [curl options]: POST the expect of alert 1 with the token; prints the status
	local f=$1; shift
	get /alert/1 "$f" --data-urlencode "note=$NOTE" -d action=expect "$@"
}
N0=$(sql "SELECT count(*) FROM alert_event")
equals "without the token: 403" "$(post p1.txt -d "csrf=$CSRF")" 403
contains "... saying the token is missing" "$TMP/p1.txt" "token is missing or wrong"
equals "with a wrong token: 403" "$(post p2.txt -d "csrf=$CSRF" -d token=wrong-token-of-some-length)" 403
equals "without the CSRF value: 403" "$(post p3.txt -d "token=$TOKEN")" 403
contains "... saying so" "$TMP/p3.txt" "csrf value"
equals "with a wrong CSRF value: 403" \
	"$(post p4.txt -d "token=$TOKEN" -d "csrf=$(printf %s "$CSRF" | tr 0-9a-f 1-9a-f0)")" 403
equals "from another origin: 403" "$(post p5.txt -d "token=$TOKEN" -d "csrf=$CSRF" -H 'Origin: http://evil.example')" 403
contains "... saying so" "$TMP/p5.txt" "another origin"
equals "cross-site (Sec-Fetch-Site): 403" "$(post p6.txt -d "token=$TOKEN" -d "csrf=$CSRF" -H 'Sec-Fetch-Site: cross-site')" 403
equals "a GET does not write: the form's fields in a query are ignored" \
	"$(get "/alert/1?action=expect&note=x&token=$TOKEN&csrf=$CSRF" g.html)" 200
equals "ack without a note: 400" "$(get /alert/1 p7.txt -d action=ack -d "token=$TOKEN" -d "csrf=$CSRF")" 400
contains "... a note is required" "$TMP/p7.txt" "a note is required"
equals "a form over 256 KiB: 413" \
	"$(head -c 270000 /dev/zero | tr '\0' x | sed 's/^/note=/' | get /alert/1 p8.txt --data-binary @- -d action=ack -d "token=$TOKEN" -d "csrf=$CSRF")" 413
equals "nothing written by the refused requests" "$(sql "SELECT count(*) FROM alert_event")" "$N0"

cp "$DB" "$TMP/cmd.db"
equals "expect through the page, same origin: 303 to the alert's page" \
	"$(post p9.txt -d "token=$TOKEN" -d "csrf=$CSRF" -H "Origin: ${URL%/}" -H 'Sec-Fetch-Site: same-origin')" 303
equals "... the alert is expected" "$(sql "SELECT status FROM alert WHERE id = 1")" expected
expect_exit 0 "the same move by the command, on a copy of the store" \
	$SL alerts expect 1 --note "$NOTE" --db "$TMP/cmd.db"
ev='SELECT actor, from_status, to_status, quote(note), quote(session) FROM alert_event ORDER BY rowid DESC LIMIT 1'
equals "the page's alert_event row is the command's" "$(sql "$ev")" "$(sqlite3 -batch "$TMP/cmd.db" "$ev")"
equals "... and so is the alert" "$(sql 'SELECT status, updated_at > created_at FROM alert WHERE id = 1')" \
	"$(sqlite3 -batch "$TMP/cmd.db" 'SELECT status, updated_at > created_at FROM alert WHERE id = 1')"

# hostile text comes out inert and visible
get /alert/1 a1h.html >/dev/null
contains "the note's markup is escaped" "$TMP/a1h.html" 'EEVDF trade-off &lt;script&gt;document.title=&quot;owned&quot;&lt;/script&gt;'
contains "its control characters are shown (ESC as U+241B)" "$TMP/a1h.html" "␛[31mred␛[0m &amp; &quot;q&quot;"
equals "the page holds one script element, the site's own" "$(grep -c '<script' "$TMP/a1h.html")" 1
equals "the JSON holds the note as it was written" "$(jget /alert/1 a1h.json '.history[-1].note')" "$NOTE"
# the nights go on while the site is up: alert 2, culprit found
night 7
night 8
equals "night 8: alert 2 raised with its culprit" "$(sql "SELECT a.status || ' ' || (g.culprit IS NOT NULL) FROM alert a JOIN alert_group g ON g.id = a.group_id WHERE a.id = 2")" "culprit 1"
equals "the running site shows it at once" "$(jget '/alerts?status=all' live.json '[.alerts[] | "\(.alert):\(.status):\(.culprit // "")"] | join(" ")')" \
	"1:expected: 2:culprit found:${COMMITS[8]}"
get /alert/2 a2.html >/dev/null
contains "/alert/2 names the culprit commit at the top, its hostile subject inert" "$TMP/a2.html" \
	"<p id=\"culprit\">culprit: <code>${COMMITS[8]}</code> sched: night 8 &lt;img src=x onerror=&quot;document.title=1&quot;&gt; ␛[7mrev␛[0m (Ann Author"
contains "... and so in the culprit report" "$TMP/a2.html" "subject:  sched: night 8 &lt;img src=x"
equals "... no img element on the page" "$(grep -c '<img' "$TMP/a2.html")" 0

BIG=$(head -c 60000 /dev/zero | tr '\0' '<')
equals "a note of 60,000 '<' (180 KB as a form) is accepted (JSON, bearer token)" \
	"$(get /alert/1 p10.json -H 'Accept: application/json' -H "Authorization: Bearer $TOKEN" \
		-d "csrf=$CSRF" -d action=reopen --data-urlencode "note=$BIG")" 200
equals "... reopened: new" "$(jq -r .status "$TMP/p10.json")" new
get /alert/1 a1big.html >/dev/null
equals "... and shown as 60,000 escaped '<' (and the 2 of the note before)" "$(grep -o '&lt;' "$TMP/a1big.html" | wc -l)" 60002
equals "a move the life cycle refuses: 409" \
	"$(get /alert/1 p11.json -H 'Accept: application/json' -H "Authorization: Bearer $TOKEN" -d "csrf=$CSRF" -d action=reopen)" 409
contains "... with the store's reason" "$TMP/p11.json" "alert 1"

# ---- a real browser -----------------------------------------------------------------------
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
browse() { # PATH OUT [flags]: headless chromium on the page
	local p=$1 out=$2; shift 2
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--user-data-dir="$TMP/chrome" "$@" "${URL%/}$p" >"$TMP/$out" 2>"$TMP/$out.err"
}
get "$TREND" trend2.json -H 'Accept: application/json' >/dev/null
NP=$(jq '.points | length' "$TMP/trend2.json")
if browse "$TREND" trend.dom --dump-dom && [ -s "$TMP/trend.dom" ]; then
	ok "chromium renders the trend page"
	contains "... its script ran without an error" "$TMP/trend.dom" 'data-ok="1"'
	contains "... and counted every point ($NP)" "$TMP/trend.dom" "data-points=\"$NP\""
	contains "... and the alerts' marks (2)" "$TMP/trend.dom" 'data-alert-marks="2"'
	check "... no error" bash -c "! grep -q data-error '$TMP/trend.dom'"
else
	not_ok "chromium renders the trend page" "$(tail -n 3 "$TMP/trend.dom.err")"
fi
if browse /alert/1 alert.dom --dump-dom && [ -s "$TMP/alert.dom" ]; then
	contains "chromium: the alert page's hostile note stays text" "$TMP/alert.dom" '&lt;script&gt;document.title="owned"'
	check "... and never ran (the title is the page's)" bash -c "! grep -q '<title>owned' '$TMP/alert.dom'"
	contains "... the triage form is there" "$TMP/alert.dom" 'id="do-ack"'
else
	not_ok "chromium renders the alert page" "$(tail -n 3 "$TMP/alert.dom.err")"
fi
if browse /alert/2 alert2.dom --dump-dom && [ -s "$TMP/alert2.dom" ]; then
	contains "chromium: the culprit's hostile subject is text" "$TMP/alert2.dom" '&lt;img src=x onerror="document.title=1"&gt;'
	equals "... no img element in the DOM" "$(grep -c '<img' "$TMP/alert2.dom")" 0
	check "... its handler never ran" bash -c "! grep -q '<title>1</title>' '$TMP/alert2.dom'"
else
	not_ok "chromium renders the culprit's alert page" "$(tail -n 3 "$TMP/alert2.dom.err")"
fi
if browse '/report?a=tag%3Dnightly-04&b=tag%3Dnightly-05' report.dom --dump-dom && [ -s "$TMP/report.dom" ]; then
	contains "chromium: the report's own script ran under serve's policy" "$TMP/report.dom" 'data-ok="1"'
	check "... without an error" bash -c "! grep -q 'data-error=' '$TMP/report.dom'"
else
	not_ok "chromium renders the report page" "$(tail -n 3 "$TMP/report.dom.err")"
fi
(cd "$TMP" && browse "$TREND" shot.out --screenshot="$TMP/shot.png" --window-size=1100,900)
if [ "$(stat -c %s "$TMP/shot.png" 2>/dev/null || echo 0)" -gt 20000 ]; then ok "chromium takes a screenshot of the trend page"; else not_ok "chromium takes a screenshot of the trend page" "$(tail -n 3 "$TMP/shot.out.err")"; fi
[ -n "${SERVE_SHOTS:-}" ] && {
	# docs/serve.md's pictures: SERVE_SHOTS=docs/serve tests/run.sh t0860
	for pg in "/:overview" "$TREND:trend" "/alert/2:alert"; do
		browse "${pg%:*}" s.out --screenshot="$SERVE_SHOTS-${pg##*:}.png" --window-size=1100,900
	done
}

stop_serve
check "serve ended by SIGTERM" grep -q 'stopped (SIGTERM)' "$SOUT"
equals "... and said nothing on stderr" "$(head -c 2000 "$SOUT.err")" ""
done_testing
