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
#     once; and a night stored twice (before this) counts once.
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
fresh o
ORPHAN="setsid sh -c 'sleep 1000; :' $MARK & sleep 60"
timeout 120 $SL nightly --db "$TMP/o.db" --session 5 --no-bisect --out-dir "$TMP/rep" \
	--on-alert "$ORPHAN" --on-alert-timeout 2 >"$TMP/o.out" 2>"$TMP/o.err"
equals "a hook past its limit whose child left its group (setsid): the night exits 1 (the regression; the hook's 4 is milder)" "$?" 1
left=""
for i in $(seq 50); do
	left=$(ours "$MARK|^sleep 1000$")
	[ -z "$left" ] && break
	sleep 0.1
done
if [ -z "$left" ]; then ok "... and no process the hook started remains (the setsid one and its sleep)"
else
	not_ok "... and no process the hook started remains (the setsid one and its sleep)" "$left"
	for p in $(echo "$left" | cut -d' ' -f1); do kill -9 "$p"; done
fi
contains "... the summary says it and what it started were ended" "$TMP/o.out" \
	"alert group 1 (raised): --on-alert hook killed after 2 s (its time limit, --on-alert-timeout); it and what it started were ended"
# a hook that ends well and leaves a setsid process behind: ended too (the
# hook waits a second: its group is killed when it exits, and the setsid
# one must have left it by then for this to be the case looked at)
fresh o2
timeout 120 $SL nightly --db "$TMP/o2.db" --session 5 --no-bisect --out-dir "$TMP/rep" \
	--on-alert "setsid sh -c 'sleep 1000; :' $MARK & sleep 1; exit 0" >"$TMP/o2.out" 2>"$TMP/o2.err"
equals "a hook that exits 0 leaving a setsid process: the night exits 1 (the regression)" "$?" 1
left=""
for i in $(seq 50); do
	left=$(ours "$MARK|^sleep 1000$")
	[ -z "$left" ] && break
	sleep 0.1
done
if [ -z "$left" ]; then ok "... and what it left is ended with it"
else
	not_ok "... and what it left is ended with it" "$left"
	for p in $(echo "$left" | cut -d' ' -f1); do kill -9 "$p"; done
fi

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

done_testing
