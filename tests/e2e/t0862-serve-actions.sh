#!/usr/bin/env bash
# timeout: 300 (tests/run.sh ends it past this many seconds)
# tags: browser (tests/run.sh: SCHEDLAB_SKIP_TAGS; Chromium driven through chromedriver)
# End-to-end: what a person does on `schedlab serve`'s alert page
# (docs/serve.md) beyond reading it, over t0860's store: the robot's
# synthetic history (tests/e2e/robot-history.py; night 5 a +20% regression,
# alert 1, its group of 3 commits of a real git repository, left unresolved
# by night 8's bisection; night 8 alert 2, culprit found without a
# bisection). About 15 s of its own.
#  - Bisect from the page: a POST of action=bisect with the token and the
#    page's csrf starts `schedlab alerts bisect 1` as a detached child in a
#    session of its own (202); held by a write lock on the store (the test
#    holds it), the page and its JSON show it running, its command and its
#    log, and a second start is refused (409, naming it); once let go, the
#    bisection of the synthetic history fails fast and predictably (its
#    narrowed plan has no workloads, so `schedlab bisect` exits 2 before a
#    bisection is stored) and the page shows its end (exit 0), the outcome
#    as stored (unresolved, with why) and the log's tail; alert_event holds
#    the rows `schedlab alerts bisect 1` writes on a copy of the store. A
#    bisection under way shows its steps as stored (a bisection row of the
#    group's plan, made here). It outlives serve: stopped and started again
#    while it runs, serve shows it running, refuses a second start, and
#    then its end (its exit status unknown: no serve saw it). Without the
#    token: 403, no child, nothing written. Refused as `alerts bisect`
#    refuses, with its message: a culprit found (the life cycle), and on
#    a copy whose two sessions ran one kernel, ROBOT_NO_KERNEL_CHANGE.
#  - A real click for triage: Chromium through chromedriver (W3C WebDriver,
#    tests/e2e/webdriver.py): on /alert/2 a person types the token and a
#    note and clicks "ack": the page shows the alert acknowledged and the
#    note, and alert_event holds the row `schedlab alerts ack 2 --note`
#    writes (compared on a copy); a click without the token is refused, the
#    page says why, nothing is written; the bisect button of /alert/1 and
#    the page until it shows the end; screenshots of each.
# Needs sqlite3, git, python3, curl, jq, chromium, chromium-driver
# (scripts/install-deps.sh test).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/robot-history.sh"
hold_local_target   # empty_db's tiny local session never waits inside the script
require sqlite3:sqlite3 git:git python3:python3 curl:curl jq:jq chromium:chromium \
	chromium-driver:chromedriver
SL=schedlab
DB=$TMP/s.db

# ---- the store: t0860's eight nights ------------------------------------------------------
R=$TMP/linux
check "the history's repository, 8 nights" history_repo "$R" 8
python3 "$(dirname "$0")/robot-history.py" "$TMP/gen.sql" "$R" 8 \
	'{"5": 1.2, "6": 1.2, "7": 1.2, "8": 1.32}' '' "${COMMITS[@]:1}"
empty_db "$DB"
check "synthetic history loaded" sqlite3 -batch "$DB" ".read $TMP/gen.sql"
cp "$DB" "$TMP/pristine.db"
night() { # N: the robot judges night N (no bisection but night 8's)
	local n=$1
	local -a more=(--no-bisect)
	[ "$n" = 8 ] && more=()
	$SL nightly --db "$DB" --session "$n" --out-dir "$TMP/rep" "${more[@]}" >"$TMP/n$n.out" 2>&1
}
for n in 1 2 3 4 5 6 7 8; do night $n; done
# night 8's bisection queue takes alert 1's group too: its bisection of
# this history fails fast (no kernels: see below), and it is unresolved
equals "nights 1-8: alert 1 unresolved (3 commits), alert 2 culprit found" \
	"$(sql "SELECT group_concat(a.id || ' ' || a.status || ' ' || coalesce(g.ncommits, -1), ', ') FROM alert a JOIN alert_group g ON g.id = a.group_id")" \
	"1 unresolved 3, 2 culprit 1"

# ---- the server -------------------------------------------------------------------------
. "$(dirname "$0")/serve-lib.sh"
TOKEN=tok-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
(umask 077; printf '%s\n' "$TOKEN" >"$TMP/serve.token")
# bisect ALERT FILE [curl options]: POST the bisect action of ALERT's page
# as JSON with the page's csrf; prints the status
bisect() {
	local a=$1 f=$2; shift 2
	local csrf
	csrf=$(jget "/alert/$a" csrf.json .csrf)
	get "/alert/$a" "$f" -H 'Accept: application/json' -d action=bisect -d "csrf=$csrf" "$@"
}
# the store's write lock (serve-lib.sh: lock_store): `alerts bisect` waits on it (SQLite's busy timeout, 10 s
# of its own sleeps), long enough for the test to stop it (SIGSTOP) before
# it has written anything; let go then, and the bisection is continued
# (SIGCONT) once the page has been seen while it runs
BPID=
# hold PID: the bisection stopped where it waits for the store, which is let go
hold() { kill -STOP "$1" && unlock_store; }
CLEANUP_CMDS+=('[ -z "$BPID" ] || kill -CONT "$BPID"')
# wait_ended ALERT: until the page says its bisection has ended (90 s)
wait_ended() {
	for _ in $(seq 1 450); do
		[ "$(jget "/alert/$1" wait.json .bisect_job.running)" = false ] && return 0
		sleep 0.2
	done
	return 1
}
OUT=$TMP/bis
STATE=$OUT/serve

# ---- bisect: refused without the token --------------------------------------------------
check "serve starts with a token, --out-dir and --bisect-minutes" \
	start_serve "$DB" --token-file "$TMP/serve.token" --out-dir "$OUT" --bisect-minutes 5
check "... its folder for the bisections is made 0700" test "$(stat -c %a "$STATE")" = 700
N0=$(sql "SELECT count(*) FROM alert_event")
equals "bisect without the token: 403" "$(bisect 1 b0.json)" 403
contains "... saying the token is missing" "$TMP/b0.json" "token is missing or wrong"
equals "... nothing written to the store" "$(sql "SELECT count(*) FROM alert_event")" "$N0"
equals "... no log, no record" "$(ls -A "$STATE")" ""
equals "... no child started" "$(ours 'alerts bisect')" ""
equals "bisect with the token but another origin: 403" \
	"$(bisect 1 b0o.json -d "token=$TOKEN" -H 'Origin: http://evil.example')" 403

# ---- bisect: started, running, refused again, ended ---------------------------------------
cp "$DB" "$TMP/cmd.db"
check "the store's write lock held (the bisection waits on it)" lock_store
T0=$SECONDS
equals "bisect with the token: 202" "$(bisect 1 b1.json -d "token=$TOKEN")" 202
equals "... the answer: the alert, its group, the bisection running" \
	"$(jq -r '"\(.alert) \(.group) \(.bisect_job.running) \(.bisect_job.alert)"' "$TMP/b1.json")" "1 1 true 1"
equals "... its command: alerts bisect with the store, the out dir and the budget" \
	"$(jq -r .bisect_job.command "$TMP/b1.json")" \
	"$(command -v schedlab | xargs readlink -f) alerts bisect 1 --db $DB --out-dir $OUT --bisect-minutes=5"
BPID=$(jq -r .bisect_job.pid "$TMP/b1.json")
check "... stopped where it waits for the store (SIGSTOP), the store let go" hold "$BPID"
equals "... a session and a process group of its own (pid = pgid = sid)" \
	"$(awk '{ sub(/.*\) /, ""); print $3, $4 }' "/proc/$BPID/stat")" "$BPID $BPID"
equals "... its stdin /dev/null" "$(readlink "/proc/$BPID/fd/0")" /dev/null
equals "... its stdout and stderr the log" "$(readlink "/proc/$BPID/fd/1") $(readlink "/proc/$BPID/fd/2")" \
	"$STATE/group-1.log $STATE/group-1.log"
equals "... the log is the owner's alone" "$(stat -c %a "$STATE/group-1.log")" 600
equals "the page's JSON: running, since when" \
	"$(jget /alert/1 r.json '"\(.bisect_job.running) \(.bisect_job.started_at | test("^20[0-9-]+T[0-9:]+Z$")) \(.bisect_job.ended_at)"')" \
	"true true null"
equals "the page shows it running" "$(get /alert/1 r.html)" 200
contains "... as running" "$TMP/r.html" '<p id="bisect-job" data-running="1"><b>running</b> since'
contains "... its log's tail, its command first" "$TMP/r.html" "<pre id=\"bisect-log\">==== "
contains "... and reloads itself while it runs" "$TMP/r.html" '<meta http-equiv="refresh" content="10">'
equals "a second start while it runs: 409" "$(bisect 1 b2.json -d "token=$TOKEN")" 409
contains "... naming the one that runs" "$TMP/b2.json" "alert group 1: the bisection started from this page at"
contains "... its pid" "$TMP/b2.json" "pid $BPID) is still running"
kill -CONT "$BPID"
if wait_ended 1; then ok "the bisection ends ($((SECONDS - T0)) s)"; else not_ok "the bisection ends" "$(cat "$TMP/wait.json")"; fi
jget /alert/1 e.json . >/dev/null
equals "... how: exit 0 (alerts bisect ran to its end)" \
	"$(jq -r '"\(.bisect_job.how) \(.bisect_job.exit_code) \(.bisect_job.ended_at != null)"' "$TMP/e.json")" "exit 0 0 true"
equals "... the outcome as stored: unresolved" "$(jq -r .bisect_job.outcome.status "$TMP/e.json")" unresolved
equals "... the alert too" "$(jq -r .alert.status "$TMP/e.json")" unresolved
contains "... why: bisect failed before storing a bisection" "$TMP/e.json" \
	"bisect exited 2 before a bisection was stored (see $OUT/alert-group-1.log)"
contains "... the log's tail: schedlab bisect's own message" "$TMP/e.json" \
	"schedlab bisect: $OUT/alert-group-1.json: workloads: missing"
get /alert/1 e.html >/dev/null
contains "the page shows its end" "$TMP/e.html" '<p id="bisect-job" data-running="0">started'
contains "... exit 0" "$TMP/e.html" '<span id="bisect-how">exit 0</span>'
contains "... the outcome" "$TMP/e.html" '<p id="bisect-outcome">outcome: <b>unresolved</b>: bisect exited 2'
check "... no longer reloads itself" bash -c "! grep -q 'http-equiv=\"refresh\"' '$TMP/e.html'"
equals "the child is reaped (no zombie of serve's)" "$(ps -o stat= --ppid "$SPID" | tr -d ' \n')" ""
expect_exit 0 "alerts bisect 1, the command, on the copy of the store" \
	$SL alerts bisect 1 --db "$TMP/cmd.db" --out-dir "$OUT" --bisect-minutes 5
ev='SELECT actor, from_status, to_status, quote(note), quote(session) FROM alert_event WHERE alert_id = 1 ORDER BY id'
equals "alert_event: the rows of the command (through the same code)" "$(sql "$ev")" \
	"$(sqlite3 -batch "$TMP/cmd.db" "$ev")"
# a bisection under way shows its steps as stored: a bisection of the
# group's narrowed plan, its ends measured (as `schedlab bisect` stores
# them before its middle steps)
PLAN=$(sql "SELECT bisect_plan FROM alert_group WHERE id = 1")
equals "the group names its narrowed plan" "$PLAN" "$OUT/alert-group-1.json"
sql "INSERT INTO bisect (id, inputs, plan_path, plan_json, git_dir, good, bad, good_ref, bad_ref,
	workload, metric, repetitions, max_repetitions, max_steps, alpha, threshold_pct)
	VALUES (7, 'x', '$PLAN', '{}', '$R', '${COMMITS[4]}', '${COMMITS[5]}', 'g', 'b', 'hackbench',
	'time_s', 3, 9, 8, 0.05, 5);
	INSERT INTO bisect_step VALUES (7, 0, '${COMMITS[4]}', 'good', 'good', NULL),
	(7, 1, '${COMMITS[5]}', 'bad', 'bad', NULL)"
equals "the page shows the steps of the bisection under way (the group names none yet)" \
	"$(jget /alert/1 st.json '"\(.group.bisection) \([.bisection_steps[] | "\(.role):\(.verdict)"] | join(","))"')" \
	"null good:good,bad:bad"
sql "DELETE FROM bisect_step; DELETE FROM bisect"

# ---- bisect: it outlives serve -------------------------------------------------------------
check "the store's write lock held again" lock_store
equals "an unresolved alert is bisected again: 202" "$(bisect 1 b3.json -d "token=$TOKEN")" 202
BPID=$(jq -r .bisect_job.pid "$TMP/b3.json")
check "... held (SIGSTOP) where it waits for the store" hold "$BPID"
stop_serve
check "serve stopped while it runs: the bisection goes on" kill -0 "$BPID"
check "serve starts again on the same folder" \
	start_serve "$DB" --token-file "$TMP/serve.token" --out-dir "$OUT" --bisect-minutes 5
equals "the page shows it running (by its pid and start time)" \
	"$(jget /alert/1 r2.json '"\(.bisect_job.running) \(.bisect_job.pid)"')" "true $BPID"
equals "... a second start is refused: 409" "$(bisect 1 b4.json -d "token=$TOKEN")" 409
kill -CONT "$BPID"
if wait_ended 1; then ok "... then its end"; else not_ok "... then its end" "$(cat "$TMP/wait.json")"; fi
contains "... its exit status unknown (no serve saw it end)" "$TMP/wait.json" "its exit status is unknown"
equals "... the outcome as stored" "$(jq -r '"\(.bisect_job.outcome.status) \(.bisect_job.exit_code)"' "$TMP/wait.json")" "unresolved null"
equals "... its log holds both starts" "$(grep -c '^==== ' "$STATE/group-1.log")" 2
equals "... the page's tail only the latest" "$(jq -r .bisect_job.log_tail "$TMP/wait.json" | grep -c '^==== ')" 1

# ---- bisect: refused as the command refuses ----------------------------------------------------
N1=$(sql "SELECT count(*) FROM alert_event")
equals "bisect of a culprit found: 409" "$(bisect 2 b5.json -d "token=$TOKEN")" 409
expect_exit 2 "... as alerts bisect 2 refuses" $SL alerts bisect 2 --db "$DB" --out-dir "$OUT"
equals "... with its message" "$(jq -r .error "$TMP/b5.json")" "$(sed -n 's/^schedlab alerts: bisect: //p' "$TMP/err")"
contains "... the life cycle's" "$TMP/b5.json" "alert 2: it is culprit found and cannot become bisecting"
equals "... nothing written, no record" "$(sql "SELECT count(*) FROM alert_event") $(ls "$STATE" | grep -c group-2)" "$N1 0"
stop_serve
# one kernel: night 5 of a copy boots night 4's commit
cp "$TMP/pristine.db" "$TMP/k.db"
sqlite3 -batch "$TMP/k.db" "UPDATE boot SET kernel_commit = (SELECT kernel_commit FROM boot WHERE session_id = 4) WHERE session_id = 5"
for n in 1 2 3 4 5; do $SL nightly --db "$TMP/k.db" --session $n --no-bisect --out-dir "$TMP/krep" >/dev/null 2>&1; done
check "serve on the copy, its folder beside the store (no --out-dir)" \
	start_serve "$TMP/k.db" --token-file "$TMP/serve.token"
check "... $TMP/k.db.serve, 0700" test "$(stat -c %a "$TMP/k.db.serve")" = 700
K0=$(sqlite3 -batch "$TMP/k.db" "SELECT count(*) FROM alert_event")
equals "bisect of an alert over one kernel: 409" "$(bisect 1 b6.json -d "token=$TOKEN")" 409
contains "... ROBOT_NO_KERNEL_CHANGE, the command's message" "$TMP/b6.json" \
	"alert 1: no kernel change between its sessions (sessions 4 and 5 ran the same kernel, configuration and knobs): there is nothing to bisect"
equals "... nothing written, no child" \
	"$(sqlite3 -batch "$TMP/k.db" "SELECT count(*) FROM alert_event") $(ls -A "$TMP/k.db.serve")" "$K0 "
stop_serve

# ---- serve outlives an upgrade: its program file replaced while it runs ------------------
# (a package upgrade or a new build; /proc/self/exe then reads "PATH (deleted)")
cp "$DB" "$TMP/u.db"
mkdir -p "$TMP/upg"
cp "$(command -v schedlab)" "$TMP/upg/schedlab"
SL=$TMP/upg/schedlab
check "serve started from a copy of the program" \
	start_serve "$TMP/u.db" --token-file "$TMP/serve.token" --out-dir "$TMP/ubis"
SL=schedlab
rm -f "$TMP/upg/schedlab"
equals "its program file removed, a bisection still starts: 202" \
	"$(bisect 1 b7.json -d "token=$TOKEN")" 202
if wait_ended 1; then ok "... and runs to its end"; else not_ok "... and runs to its end" "$(cat "$TMP/wait.json")"; fi
equals "... exit 0, run by serve's own program" \
	"$(jq -r '"\(.bisect_job.how) \(.bisect_job.command | startswith("/proc/self/exe alerts bisect 1"))"' "$TMP/wait.json")" \
	"exit 0 true"
stop_serve

# ---- a real click: triage in Chromium through chromedriver --------------------------------
check "serve starts again" start_serve "$DB" --token-file "$TMP/serve.token" --out-dir "$OUT"
cp "$DB" "$TMP/cmd2.db"
N2=$(sql "SELECT count(*) FROM alert_event WHERE alert_id = 2")
NOTE='known: EEVDF trade-off <b>not bold</b> & "quoted"'
cat >"$TMP/click.py" <<'EOF'
# the person's visit: on /alert/2 type the token and a note, click ack;
# then a click of expect without the token; then the bisect button of
# /alert/1 and its end. What they see, as JSON.
import json, os, sys, time
sys.path.insert(0, os.environ["E2E"])
from webdriver import Browser
url, token, note, tmp = sys.argv[1:5]
seen = {}
try:
    with Browser(profile=os.path.join(tmp, "wd-profile"),
                 log=os.path.join(tmp, "chromedriver.log")) as b:
        b.get(url + "alert/2")
        seen["before"] = b.text("#status")
        b.type("form.triage textarea[name=note]", note)
        b.type("form.triage input[name=token]", token)
        b.click("#do-ack")
        seen["after"] = b.wait_text("#status", "acknowledged")
        seen["after_url"] = b.url()
        seen["after_title"] = b.title()
        seen["history_note"] = b.text("table:last-of-type tr:last-child td:last-child")
        seen["shot_ack"] = b.screenshot(os.path.join(tmp, "click-ack.png"))
        # without the token: the form is sent, the server refuses
        b.type("form.triage textarea[name=note]", "no token given")
        b.click("#do-expect")
        seen["refused_text"] = b.wait_text("p.err", "token")
        seen["refused_title"] = b.title()
        seen["shot_refused"] = b.screenshot(os.path.join(tmp, "click-refused.png"))
        b.get(url + "alert/2")
        seen["still"] = b.text("#status")
        # the bisect button of alert 1 (unresolved: bisected again), then
        # the page until it shows the end (reloaded here, not in 10 s)
        b.get(url + "alert/1")
        b.type("#bisect-form input[name=token]", token)
        b.click("#do-bisect")
        seen["bisect_url"] = b.url()
        end = time.monotonic() + 90
        while time.monotonic() < end:
            if b.find_all("#bisect-how"):
                break
            time.sleep(0.5)
            b.get(url + "alert/1")
        seen["bisect_how"] = b.text("#bisect-how")
        seen["bisect_outcome"] = b.text("#bisect-outcome")
        seen["bisect_log"] = b.text("#bisect-log")
        seen["shot_bisect"] = b.screenshot(os.path.join(tmp, "click-bisect.png"), "#bisect")
except Exception as e:  # what went wrong, for the checks below
    seen["error"] = str(e)
json.dump(seen, open(os.path.join(tmp, "click.json"), "w"), indent=1)
EOF
E2E=$(cd "$(dirname "$0")" && pwd) timeout 240 python3 "$TMP/click.py" "$URL" "$TOKEN" "$NOTE" "$TMP" \
	>"$TMP/click.out" 2>&1
C=$TMP/click.json
equals "chromedriver drove Chromium without an error" "$(jq -r '.error // ""' "$C" 2>/dev/null || cat "$TMP/click.out")" ""
equals "before the click: culprit found" "$(jq -r .before "$C")" "status: culprit found"
equals "after typing the token and a note and clicking ack: the page shows the alert acknowledged" \
	"$(jq -r .after "$C")" "status: acknowledged"
equals "... on the alert's own page (the answer's redirect)" "$(jq -r .after_url "$C")" "${URL}alert/2"
equals "... its title says so" "$(jq -r .after_title "$C")" "alert 2: regression acknowledged - schedlab"
equals "... and its history the note, as text" "$(jq -r .history_note "$C")" "$NOTE"
expect_exit 0 "the same move by the command on a copy" $SL alerts ack 2 --note "$NOTE" --db "$TMP/cmd2.db"
ev='SELECT actor, from_status, to_status, quote(note), quote(session) FROM alert_event WHERE alert_id = 2 ORDER BY id DESC LIMIT 1'
equals "alert_event: the click's row is the command's" "$(sql "$ev")" "$(sqlite3 -batch "$TMP/cmd2.db" "$ev")"
equals "... one row written" "$(sql "SELECT count(*) FROM alert_event WHERE alert_id = 2")" "$((N2 + 1))"
equals "a click without the token: the page says it was refused" "$(jq -r .refused_title "$C")" "refused - schedlab"
contains "... and why" <(jq -r .refused_text "$C") "the token is missing or wrong"
equals "... the alert is still acknowledged" "$(jq -r .still "$C")" "status: acknowledged"
equals "... nothing written" "$(sql "SELECT count(*) FROM alert_event WHERE alert_id = 2")" "$((N2 + 1))"
H0=$(grep -c '^==== ' "$STATE/group-1.log")
equals "the bisect button clicked: back on the alert's page" "$(jq -r .bisect_url "$C")" "${URL}alert/1"
equals "... which shows its end" "$(jq -r .bisect_how "$C")" "exit 0"
contains "... its outcome" <(jq -r .bisect_outcome "$C") "outcome: unresolved: bisect exited 2"
contains "... its log" <(jq -r .bisect_log "$C") "workloads: missing"
equals "... a third start in the log" "$H0" 3
for s in ack refused bisect; do
	if [ "$(jq -r ".shot_$s" "$C")" -gt 10000 ] 2>/dev/null; then ok "a screenshot ($s)"; else not_ok "a screenshot ($s)" "$(jq -r ".shot_$s" "$C")"; fi
done
# docs/serve.md's picture of a bisection's end: SERVE_SHOTS=docs/serve tests/run.sh t0862
[ -n "${SERVE_SHOTS:-}" ] && cp "$TMP/click-bisect.png" "$SERVE_SHOTS-bisect.png"
equals "chromedriver and Chromium ended with the session" "$(ours 'chromedriver|chromium')" ""
stop_serve
equals "serve said nothing on stderr" "$(head -c 2000 "$SOUT.err")" ""
done_testing
