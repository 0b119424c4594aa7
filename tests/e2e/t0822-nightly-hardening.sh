#!/usr/bin/env bash
# timeout: 300 (tests/run.sh ends it past this many seconds)
# End-to-end: the nightly's hardening of issue 51 (docs/alerts.md), on the
# robot's synthetic history (robot-history.py: plan "robot" on machine
# "syn", five nights, night 5 a 20% regression of hackbench time_s), no qemu:
#   - the hook's time limit ends what it started even when that left the
#     hook's process group (`setsid`): the nightly is the hook's child
#     subreaper, and after the nightly no process of the hook's remains
#     (looked for by a marker of this script's own, among its own
#     processes: lib.sh `ours`);
#   - a night is one session (plan, target, tag): a second `nightly --plan`
#     of the night runs nothing beside the first and judges nothing twice,
#     naming the first; a complete session of the night not yet judged is
#     judged, not run again; the next night's baseline holds the night
#     once; and a night stored twice (before this) counts once;
#   - a nightly killed between its judgement's commit and its hook (the
#     fault point SCHEDLAB_FAULT=nightly-judged, harness/util/fault.h)
#     leaves the hook's call pending in the store: the rerun of the night
#     calls the hook once with the alert, a third run no more (the night
#     by `--plan --tag`, and by `--session`).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/robot-history.sh"
hold_local_target   # its local sessions never wait inside the script (lib.sh)
require sqlite3:sqlite3 git:git python3:python3 rt-tests:hackbench
SL=schedlab

# the repository and the history's SQL: five nights, night 5 +20%
R=$TMP/linux
check "the history's repository, 5 nights" history_repo "$R" 5
python3 "$(dirname "$0")/robot-history.py" "$TMP/gen.sql" "$R" 5 '{"5": 1.2}' "" "${COMMITS[@]:1}"
empty_db "$TMP/pristine.db"
check "synthetic history loaded" sqlite3 -batch "$TMP/pristine.db" ".read $TMP/gen.sql"
# fresh NAME: a fresh copy of the history at $TMP/NAME.db
fresh() { cp "$TMP/pristine.db" "$TMP/$1.db"; }

# ---- 16. a hook's descendant that calls setsid is ended at the time limit -------------------
# The hook starts a shell in a session of its own (setsid: out of the
# hook's process group) whose command line carries the marker, then sleeps
# past its limit
MARK="orphan-$SCHEDLAB_TEST_MARK"
# none_left NAME: within 5 s, no process of this script's with the marker
# (nor the sleep under it) is left; those that are get SIGKILL after
none_left() {
	local left="" i p
	for i in $(seq 50); do
		left=$(ours "$MARK|^sleep 1000$")
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -z "$left" ]; then ok "$1"; else
		not_ok "$1" "$left"
		for p in $(echo "$left" | cut -d' ' -f1); do kill -9 "$p"; done
	fi
}
fresh o
ORPHAN="setsid sh -c 'sleep 1000; :' $MARK & sleep 60"
timeout 120 $SL nightly --db "$TMP/o.db" --session 5 --no-bisect --out-dir "$TMP/rep" \
	--on-alert "$ORPHAN" --on-alert-timeout 2 >"$TMP/o.out" 2>"$TMP/o.err"
equals "a hook past its limit whose child left its group (setsid): the night exits 1 (the regression; the hook's 4 is milder)" "$?" 1
none_left "... and no process the hook started remains (the setsid one and its sleep)"
contains "... the summary says it and what it started were ended" "$TMP/o.out" \
	"alert group 1 (raised): --on-alert hook killed after 2 s (its time limit, --on-alert-timeout); it and what it started were ended"
# a hook that ends well and leaves a setsid process behind: ended too (the
# hook waits a second: its group is killed when it exits, and the setsid
# one must have left it by then for this to be the case looked at)
fresh o2
timeout 120 $SL nightly --db "$TMP/o2.db" --session 5 --no-bisect --out-dir "$TMP/rep" \
	--on-alert "setsid sh -c 'sleep 1000; :' $MARK & sleep 1; exit 0" >"$TMP/o2.out" 2>"$TMP/o2.err"
equals "a hook that exits 0 leaving a setsid process: the night exits 1 (the regression)" "$?" 1
none_left "... and what it left is ended with it"

# ---- 17. one night, one session ---------------------------------------------------------
printf '%s\n' '{"name": "robot", "target": "local", "repetitions": 3,' \
	'"workloads": [{"type": "hackbench", "groups": 1, "loops": 10}]}' >"$TMP/local.json"
DB=$TMP/l.db
lnight() { # NAME TAG: nightly --plan of local.json tagged TAG; $TMP/NAME.out, .err, .rc
	timeout 300 $SL nightly --plan "$TMP/local.json" --db "$DB" --tag "$2" --no-bisect \
		--out-dir "$TMP/lrep" >"$TMP/$1.out" 2>"$TMP/$1.err"
	echo $? >"$TMP/$1.rc"
}
lnight l1 night-a
equals "night-a: the first night exits 0" "$(cat "$TMP/l1.rc")" 0
contains "... with no baseline yet" "$TMP/l1.out" "no baseline yet: this is the first nightly session of robot"
lnight l2 night-a
equals "night-a again: exits 0" "$(cat "$TMP/l2.rc")" 0
equals "... and stores no second session of the night" "$(sql "SELECT count(*) FROM session WHERE tag = 'night-a'")" 1
contains "... naming the first, and how to judge it again" "$TMP/l2.err" \
	"the night night-a of plan robot on local is session 1, run already (a night is one session): not run again; it was judged too (\`schedlab nightly --session N\` judges a session again; another --tag is another night)"
contains "... and judges nothing twice" "$TMP/l2.out" \
	"session 1 tagged night-a was judged by an earlier nightly of the night: not judged again"
if grep -q "no baseline" "$TMP/l2.out"; then not_ok "... no second 'first night'" "$(grep baseline "$TMP/l2.out")"
else ok "... no second 'first night'"; fi
lnight l3 night-b
contains "night-b: its baseline is night-a, once" "$TMP/l3.out" "baseline: sessions 1 (1 previous nightly runs"
# a session of the night run by hand (complete, not judged): judged, not run again
expect_exit 0 "schedlab run tagged night-c (by hand)" $SL run "$TMP/local.json" --db "$DB" --tag night-c --quiet
lnight l4 night-c
equals "night-c: the nightly runs nothing beside it" "$(sql "SELECT count(*) FROM session WHERE tag = 'night-c'")" 1
contains "... saying it judges it" "$TMP/l4.err" "is session 3, run already (a night is one session): not run again; judging it"
contains "... against nights a and b" "$TMP/l4.out" "baseline: sessions 2 1 (2 previous nightly runs"
# a night stored twice (by a nightly before this one): one night in the
# baseline, its newest session
fresh d
sqlite3 -batch "$TMP/d.db" "UPDATE session SET tag = 'nightly-03' WHERE id = 4"
$SL nightly --db "$TMP/d.db" --session 5 --no-bisect --out-dir "$TMP/rep" >"$TMP/d.out" 2>"$TMP/d.err"
contains "a night stored twice counts once in the baseline" "$TMP/d.out" "baseline: sessions 4 2 1 (3 previous nightly runs"

# ---- 7. killed after the judgement's commit, before the hook ------------------------------
# night 5 of the history, not yet judged, is tonight's night of local.json
# (plan robot on local, tag nightly-05): judged, not run
KHOOK="cat >\"$TMP/k-\$SCHEDLAB_ALERT_GROUP-\$SCHEDLAB_ALERT_EVENT.txt\"; echo \"\$SCHEDLAB_ALERT_GROUP \$SCHEDLAB_ALERT_EVENT\" >>\"$TMP/k.calls\""
fresh k
DB=$TMP/k.db
sql "UPDATE session SET nightly = 0 WHERE id = 5"
knight() { # NAME [env...]: nightly --plan local.json of night nightly-05 with the hook
	local n=$1; shift
	env "$@" timeout 120 $SL nightly --plan "$TMP/local.json" --db "$DB" --tag nightly-05 \
		--no-bisect --out-dir "$TMP/krep" --on-alert "$KHOOK" >"$TMP/$n.out" 2>"$TMP/$n.err"
	echo $? >"$TMP/$n.rc"
}
knight k1 SCHEDLAB_FAULT=nightly-judged
equals "a nightly killed after its judgement's commit (SCHEDLAB_FAULT=nightly-judged): SIGKILL" "$(cat "$TMP/k1.rc")" 137
check "... its hook was not called" test ! -e "$TMP/k.calls"
equals "... the judgement is stored: alert 1, a regression" "$(sql "SELECT id || ' ' || kind FROM alert")" "1 regression"
equals "... with the hook's call pending beside it" \
	"$(sql "SELECT group_id || ' ' || session_id || ' ' || event || ' ' || (delivered_at IS NULL) FROM alert_hook")" "1 5 raised 1"
knight k2
equals "the rerun of the night exits 0 (judged already: nothing run or judged)" "$(cat "$TMP/k2.rc")" 0
equals "... and calls the hook once, with the alert" "$(cat "$TMP/k.calls" 2>/dev/null)" "1 raised"
contains "... the group's report on its stdin" "$TMP/k-1-raised.txt" "alert 1 regression new: hackbench.time_s"
equals "... the call marked delivered" "$(sql "SELECT delivered_at IS NOT NULL FROM alert_hook")" 1
equals "... no session run beside the night's" "$(sql "SELECT count(*) FROM session WHERE tag = 'nightly-05'")" 1
knight k3
equals "a third run: exit 0" "$(cat "$TMP/k3.rc")" 0
equals "... and the hook called no more" "$(wc -l <"$TMP/k.calls")" 1
# the same by --session: the rerun judges the session again (known) and
# makes the call the killed one left
fresh ks
rm -f "$TMP/k.calls"
DB=$TMP/ks.db
SCHEDLAB_FAULT=nightly-judged $SL nightly --db "$DB" --session 5 --no-bisect --out-dir "$TMP/krep" \
	--on-alert "$KHOOK" >"$TMP/ks1.out" 2>&1
equals "nightly --session killed after its judgement: SIGKILL, no hook called" "$? $(test -e "$TMP/k.calls"; echo $?)" "137 1"
$SL nightly --db "$DB" --session 5 --no-bisect --out-dir "$TMP/krep" --on-alert "$KHOOK" >"$TMP/ks2.out" 2>&1
equals "... the rerun calls the hook once, with the alert" "$(cat "$TMP/k.calls" 2>/dev/null)" "1 raised"
$SL nightly --db "$DB" --session 5 --no-bisect --out-dir "$TMP/krep" --on-alert "$KHOOK" >"$TMP/ks3.out" 2>&1
equals "... a third run no more" "$(wc -l <"$TMP/k.calls")" 1

done_testing
