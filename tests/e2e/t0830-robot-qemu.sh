#!/usr/bin/env bash
# tags: qemu kbuild (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 3600 (tests/run.sh ends it past this many seconds)
# End-to-end: the regression robot under qemu (issue 28, docs/alerts.md).
# `schedlab nightly` runs night after night on a branch of a real kernel
# history that moves each night, with real builds (the shared variant's
# config, ccache) and real boots; the nightly itself bisects:
#   night 1  base                         the first night: no baseline
#   night 2  c1 a comment                 noise only: no alert
#   night 3  c2 #error in fair.c (no build), c3 mends it, c4 waits 2 ms
#            (busy, on the clock) in every wakeup of sl-pingpong, c5 a comment
#            -> one alert group (req_p50_us and rps) on c1..c5, 4 commits,
#               bisected automatically; the nightly is killed (SIGKILL, its
#               whole process group) while the bisection measures a midpoint
#   night 4  c6 a comment                 "known: alert 1"; the bisection
#            resumes where it stopped and names c4, exactly
#   (alerts expect 1: the baseline of later nights starts at night 3)
#   night 5  c7 waits 16 ms instead       a new alert against the new level
#            (+700%, not +24000%), one commit: c7 is the culprit at once
#   night 6  c8 reverts c7                alert 2 fixed
# Every alert state change is checked in the database; every planned run of
# every session stored exactly once; no qemu left. The wall time of each
# night, the builds and boots are printed (TAP comments).
. "$(dirname "$0")/lib.sh"
export GIT_AUTHOR_NAME="Ann Author" GIT_AUTHOR_EMAIL=ann@example.org
kernel_history
DB=$TMP/r.db
history_base
fair=$(git -C "$R" show main:kernel/sched/fair.c)
# the delay only in the benchmark's wakeups (comm sl-pingpong), a busy wait
# on the clock: udelay() spins loops calibrated at boot, which under TCG on
# a busy host made one kernel's delay three times another's
slowed() { # USEC
	in_wakeup "$(printf '\tif (!strcmp(p->comm, "sl-pingpong")) { /* schedlab robot test: %s us */\n\t\tu64 t0_ = ktime_get_ns();\n\t\twhile (ktime_get_ns() - t0_ < %s000ULL)\n\t\t\tcpu_relax();\n\t}' "$1" "$1")" |
		{ read -r first; printf '%s\n#include <linux/ktime.h>\n' "$first"; cat; }
}
C1=$(printf '/* schedlab robot test: a comment */\n%s\n' "$core" | commit kernel/sched/core.c "sched: a comment")
C2=$(printf '#error "schedlab robot test: this commit does not build"\n%s\n' "$fair" | commit kernel/sched/fair.c "sched/fair: break the build")
C3=$(printf '%s\n' "$fair" | commit kernel/sched/fair.c "sched/fair: mend the build")
C4=$(slowed 2000 | commit kernel/sched/core.c "sched/core: wait 2 ms in every wakeup of sl-pingpong")
C5=$( (slowed 2000; echo '/* another comment */') | commit kernel/sched/core.c "sched: another comment")
C6=$( (slowed 2000; echo '/* another comment */'; echo '/* a third comment */') | commit kernel/sched/core.c "sched: a third comment")
C7=$( (slowed 16000; echo '/* another comment */'; echo '/* a third comment */') | commit kernel/sched/core.c "sched/core: wait 16 ms instead")
C8=$( (slowed 2000; echo '/* another comment */'; echo '/* a third comment */') | commit kernel/sched/core.c "Revert \"sched/core: wait 16 ms instead\"")
if ! grep -q 'schedlab robot test: 2000 us' <(git -C "$R" show "$C4:kernel/sched/core.c"); then
	not_ok "the slow commit: try_to_wake_up found in core.c"; done_testing; exit
fi
equals "the history: eight commits after the base" "$(git -C "$R" rev-list --count main..work)" 8
# night N: main moves to $1 (update-ref), then the nightly runs
HEADS=("" "$BASE" "$C1" "$C5" "$C6" "$C7" "$C8")

cat >"$TMP/nightly.json" <<EOF
{"name": "robot", "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2,
  "memory_mb": 512}, "order": "sequential", "switch": "reboot", "repetitions": 5,
 "matrix": {"kernel": {"git": "$R", "ref": "main", "variant": ["hz1000", "sched_mc_off", "tracing"]},
            "cmdline": ["no_timer_check"]},
 "workloads": [{"type": "pingpong", "duration_s": 1, "warmup_s": 0}]}
EOF
# the thresholds: runs of one boot are not independent under TCG (two boots
# of one kernel were seen +72% apart, t0640): 80% keeps noise nights quiet;
# the changes are +3000%, +700% and the revert -87%. The bisection's own, as
# t0640: 50%
NIGHTLY=(schedlab nightly --plan "$TMP/nightly.json" --db "$DB" --out-dir "$TMP/rep"
	--threshold 80 --bisect-threshold 50 --bisect-minutes 60
	--metric pingpong.req_p50_us,pingpong.rps --on-alert "cat >>$TMP/hook.txt")
alerts() { sql "SELECT count(*) FROM alert"; }
status_of() { sql "SELECT status FROM alert WHERE id = $1"; }

night 1
equals "night 1: exit 0, no baseline yet" "$(cat "$TMP/n1.rc") $(grep -c 'no baseline yet' "$TMP/n1.out")" "0 1"
night 2
equals "night 2 (noise): exit 0" "$(cat "$TMP/n2.rc")" 0
equals "night 2 (noise): no alert" "$(alerts)" 0
equals "nights 1-2: the commits booted are the heads" \
	"$(sql "SELECT group_concat(kernel_commit, ' ') FROM (SELECT DISTINCT session, kernel_commit FROM results WHERE tag LIKE 'nightly-%' ORDER BY session)")" \
	"$BASE $C1"

# --- night 3: the regression; the nightly killed mid-bisection ---------------------
git -C "$R" update-ref refs/heads/main "$C5"
t=$(date +%s)
setsid "${NIGHTLY[@]}" --tag nightly-03 >"$TMP/n3.out" 2>"$TMP/n3.err" &
pid=$!
CLEANUP_CMDS+=("kill -9 -- -$pid")
for i in $(seq 3000); do
	kill -0 $pid 2>/dev/null || break
	n=$(sql "SELECT count(*) FROM run r JOIN session s ON s.id = r.session_id
		 WHERE s.tag LIKE 'bisect-%' AND r.status = 'ok'
		 AND json_extract(s.plan_json, '\$.matrix.kernel.commit') NOT IN ('$C1', '$C5')" 2>/dev/null)
	[ "${n:-0}" -ge 2 ] && break
	sleep 1
done
if kill -0 $pid 2>/dev/null; then ok "night 3: still bisecting when killed"; else not_ok "night 3: still bisecting when killed" "$(tail -n 20 "$TMP/n3.out" "$TMP/n3.err")"; fi
kill -9 -- -$pid 2>/dev/null
wait $pid 2>/dev/null
echo "# night 3 until killed: $(( $(date +%s) - t )) s"
{ tail -n 15 "$TMP/n3.err"; echo; } | sed 's/^/#   /'
equals "night 3: one alert group on c1..c5 with its 4 commits" \
	"$(sql "SELECT count(*) || ' ' || group_concat(good_commit || '..' || bad_commit || ' ' || ncommits) FROM alert_group")" \
	"1 $C1..$C5 4"
equals "night 3: its alerts: req_p50_us and rps, both regressions, bisecting" \
	"$(sql "SELECT group_concat(metric || ':' || kind || ':' || status, ' ') FROM (SELECT * FROM alert ORDER BY metric)")" \
	"req_p50_us:regression:bisecting rps:regression:bisecting"
equals "night 3: the group names its narrowed plan, which the bisection runs" \
	"$(sql "SELECT count(*) FROM alert_group g JOIN bisect b ON b.plan_path = g.bisect_plan")" 1
equals "night 3: the bisection left unfinished" "$(sql "SELECT status FROM bisect")" running

# --- night 4: known; the bisection resumes and names c4 ----------------------------
night 4
equals "night 4: exit 0 (nothing new)" "$(cat "$TMP/n4.rc")" 0
contains "night 4: known: alert 1" "$TMP/n4.out" "known: alert 1"
equals "night 4: no alert raised again" "$(alerts)" 2
contains "night 4: the bisection resumed and named c4" "$TMP/n4.out" "culprit found by bisection 1: $C4"
equals "night 4: alerts 1 and 2 are culprit found, c4 stored with the group" \
	"$(sql "SELECT group_concat(status, ' ') FROM alert") $(sql "SELECT json_extract(culprit, '\$.commit') FROM alert_group WHERE id = 1")" \
	"culprit culprit $C4"
equals "night 4: the group has its bisection" "$(sql "SELECT bisect_id FROM alert_group WHERE id = 1")" 1
equals "night 4: the calls: the ends, then c3 good and c4 bad (c2, which does not build, not needed)" \
	"$(sql "SELECT group_concat(commit_id || '=' || verdict, ' ') FROM (SELECT * FROM bisect_step ORDER BY seq)")" \
	"$C1=good $C5=bad $C3=good $C4=bad"
equals "stored: each alert's history: new, bisecting, culprit" \
	"$(sql "SELECT group_concat(to_status, ' ') FROM (SELECT * FROM alert_event WHERE alert_id = 1 ORDER BY id)")" \
	"new bisecting culprit"
equals "the bisection's sessions of each commit are those its steps name (the killed one resumed, not doubled)" \
	"$(sql "SELECT group_concat(n, ',') FROM (SELECT count(*) AS n FROM session WHERE tag LIKE 'bisect-%' GROUP BY json_extract(plan_json, '\$.matrix.kernel.commit') ORDER BY min(id))")" \
	"$(sql "SELECT group_concat(json_extract(detail, '\$.rounds'), ',') FROM (SELECT * FROM bisect_step WHERE verdict != 'skip' ORDER BY seq)")"
contains "the hook got the culprit report" "$TMP/hook.txt" "schedlab: $C4 is the first bad commit of alert group 1"
# the night's page (issue 45), written after the night's bisection: what
# the night decided first, the culprit it named on it
P4=$TMP/rep/nightly-04.html
equals "night 4's page: its first section is what the night decided" \
	"$(grep -o '<h2 id="[a-z]*"' "$P4" | head -n 1)" '<h2 id="decided"'
contains "... alert 1 known, culprit found, with the culprit named that night" "$P4" \
	'<td>1</td><td><b>known</b></td><td>regression</td><td>culprit found</td>'
contains "... the culprit" "$P4" "<b class=\"culprit\">${C4:0:12}</b> sched/core: wait 2 ms in every wakeup of sl-pingpong"
expect_exit 0 "alerts report 1" schedlab alerts report 1 --db "$DB"
contains "... names the commit and subject" "$TMP/out" "subject:  sched/core: wait 2 ms in every wakeup of sl-pingpong"
contains "... how sure the bisection is" "$TMP/out" "how sure: the whole bisection's error rate is at most"
contains "... the commits tested" "$TMP/out" "commits tested:"
contains "... the commands that reproduce it" "$TMP/out" "schedlab bisect --resume"
echo "# the culprit report:"; sed 's/^/#   /' "$TMP/out"
B_BUILDS=$(sql "SELECT json_extract(culprit, '\$.builds') FROM alert_group WHERE id = 1")
B_BOOTS=$(sql "SELECT json_extract(culprit, '\$.boots') FROM alert_group WHERE id = 1")
echo "# from the regression's night to the culprit: $(( $(date +%s) - t )) s, 2 nights, bisection $B_BUILDS builds (commits measured) and $B_BOOTS boots"

# --- expected: the baseline moves ----------------------------------------------------
expect_exit 0 "alerts expect 1" schedlab alerts expect 1 --note "a deliberate trade-off" --db "$DB"
expect_exit 0 "alerts expect 2" schedlab alerts expect 2 --note "the same change" --db "$DB"

# --- night 5: a later regression, measured against the new level -----------------------
night 5
equals "night 5: exit 1 (a new regression)" "$(cat "$TMP/n5.rc")" 1
contains "night 5: the baseline starts at the expected change" "$TMP/n5.out" "the expected change)"
S3=$(sql "SELECT id FROM session WHERE tag = 'nightly-03'")
equals "night 5: its alerts were measured against nights 3 and 4 only" \
	"$(sql "SELECT DISTINCT baseline FROM alert WHERE id > 2")" "[$(sql "SELECT id FROM session WHERE tag = 'nightly-04'"),$S3]"
# (the size under TCG's noise: +700% as a rule, +284% once, 2026-12-06,
# when night 5's requests waited out one 16 ms wakeup, not two; the check
# is that the baseline is the new level, far from the old one's +24000%)
equals "night 5: req_p50_us against the new level, not +24000% (between +150% and +1500%)" \
	"$(sql "SELECT change_pct BETWEEN 150 AND 1500 FROM alert WHERE id > 2 AND metric = 'req_p50_us'")" 1
equals "night 5: one commit in the range: c7 is the culprit at once" \
	"$(sql "SELECT group_concat(DISTINCT a.status) || ' ' || json_extract(g.culprit, '\$.commit') FROM alert a JOIN alert_group g ON g.id = a.group_id WHERE a.id > 2")" \
	"culprit $C7"

P5=$TMP/rep/nightly-05.html
equals "night 5's page: its first section is what the night decided" \
	"$(grep -o '<h2 id="[a-z]*"' "$P5" | head -n 1)" '<h2 id="decided"'
check "... headed by the new regression alerts" grep -qE '<span class="worse">[1-9] new regression alerts?</span>' "$P5"
contains "... req_p50_us raised, culprit found" "$P5" '<td><b>raised</b></td><td>regression</td><td>culprit found</td><td>pingpong.req_p50_us</td>'
contains "... with its one-commit range" "$P5" "(1 commit)"
contains "... and its culprit, found that night" "$P5" "<b class=\"culprit\">${C7:0:12}</b> sched/core: wait 16 ms instead"
H5=$(grep -o '<p class="headline">.*</p>' "$P5")
if [ -n "$H5" ] && ! grep -qi "inconclusive" <<<"$H5"; then ok "... not headlined as inconclusive"; else not_ok "... not headlined as inconclusive" "$H5"; fi
if [ -n "${KEEP_PAGES:-}" ]; then cp "$P4" "$P5" "$KEEP_PAGES/"; fi

# --- night 6: the revert ----------------------------------------------------------------
night 6
equals "night 6: the new alerts are fixed" \
	"$(sql "SELECT group_concat(DISTINCT status) FROM alert WHERE id > 2 AND metric = 'req_p50_us'")" fixed
contains "night 6: the summary says fixed" "$TMP/n6.out" "fixed: alert"
equals "night 6: alerts 1 and 2 stay expected" "$(sql "SELECT group_concat(status, ' ') FROM alert WHERE id <= 2")" "expected expected"

equals "every alert's state changes, in the database" \
	"$(sql "SELECT group_concat(alert_id || ':' || to_status, ' ') FROM (SELECT * FROM alert_event ORDER BY alert_id, id)")" \
	"1:new 1:bisecting 1:culprit 1:expected 2:new 2:bisecting 2:culprit 2:expected 3:new 3:bisecting 3:culprit 3:fixed 4:new 4:bisecting 4:culprit 4:fixed"

# --- what was stored ---------------------------------------------------------------------
equals "every planned run of every session stored exactly once, none left to do" \
	"$(sql "SELECT count(*) FROM run WHERE status NOT IN ('ok', 'failed', 'skipped')")" 0
equals "nightly sessions: five runs each" \
	"$(sql "SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag LIKE 'nightly-%' GROUP BY s.id ORDER BY s.id)")" \
	"5 5 5 5 5 5"
echo "# the whole history: $(( $(date +%s) - T0 )) s; builds: $(grep -h -c 'kbuild: built' "$TMP"/n*.err | paste -sd+ | bc) (nights and bisection)"
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi
done_testing
