#!/usr/bin/env bash
# tags: qemu kbuild slow (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 3000 (tests/run.sh ends it past this many seconds)
# End-to-end: `schedlab bisect --drift-guard` (issue 32 item 5,
# docs/bisect.md "Drift") on a real kernel history, real builds and real
# qemu boots: after each call, the end the commit was called like is
# measured again beside it and compared with its first measurement.
#
# The history: Debian's linux-source-6.1 committed into a bare repository
# (as t0640), then two commits:
#   c1  a comment in kernel/sched/core.c
#   c2  udelay(2000) in try_to_wake_up() when the wakee is sl-pingpong
# good = the base, bad = c2: c1 is the one midpoint (good). One round a
# commit (6 sessions of 3 runs, each session's median a value: a first
# try with 4 sessions of 1 run could not tell the ends apart under TCG),
# one step. Checked: the log has the drift check (the good end measured
# again beside c1) with its numbers and what it cost; the closing line
# counts the guard's sessions, and the database holds exactly that many
# more sessions than the ends and the midpoint took; the setting is stored
# with the bisection (schema 13) and in the step's detail; the same command
# again takes no new session and prints the same calls (the guard's
# rounds are found again in their order); c2 is named.
. "$(dirname "$0")/../e2e/lib.sh"
kernel_history
DB=$TMP/b.db
git -C "$R" tag base
commit() { commit_on main "$@"; }
core=$(git -C "$R" show main:kernel/sched/core.c)
C1=$(printf '/* schedlab drift test: a comment */\n%s\n' "$core" | commit kernel/sched/core.c "sched: a comment")
slow=$(printf '/* schedlab drift test: a comment */\n%s\n' "$core" |
	awk '/^try_to_wake_up\(struct task_struct \*p, unsigned int state, int wake_flags\)/ { f = 1 }
	     f && /^\tint cpu, success = 0;/ { print; print "\tif (!strcmp(p->comm, \"sl-pingpong\"))\n\t\tudelay(2000); /* schedlab drift test */"; f = 0; next } { print }')
if ! grep -q 'udelay(2000); /\* schedlab drift test' <<<"$slow"; then
	not_ok "the slow commit: try_to_wake_up found in core.c"; done_testing; exit
fi
grep -q '#include <linux/delay.h>' <<<"$slow" || slow=$(printf '#include <linux/delay.h>\n%s\n' "$slow")
C2=$(printf '%s\n' "$slow" | commit kernel/sched/core.c "sched/core: wait 2 ms in every wakeup of sl-pingpong")
git -C "$R" tag bad "$C2"
cat >"$TMP/p.json" <<EOF
{"name": "drift", "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2,
  "memory_mb": 512}, "order": "sequential", "switch": "reboot",
 "matrix": {"kernel": {"git": "$R", "ref": "main", "variant": ["hz1000", "sched_mc_off", "tracing"]},
            "cmdline": ["no_timer_check"]},
 "workloads": [{"type": "pingpong", "duration_s": 1, "warmup_s": 0}]}
EOF
BIS=(schedlab bisect --db "$DB" --plan "$TMP/p.json" --good base --bad bad
	--metric pingpong.req_p50_us --threshold 50 --drift-guard
	--repetitions 6 --max-repetitions 6 --max-steps 1)

expect_exit 2 "--drift-guard with --resume: refused (the setting is the bisection's)" \
	schedlab bisect --db "$DB" --resume last --drift-guard
contains "... saying why" "$TMP/err" "--resume continues a bisection as it was started"

t0=$(date +%s)
expect_exit 0 "bisect --drift-guard finds the first bad commit" "${BIS[@]}"
cp "$TMP/out" "$TMP/b1.out"
echo "# the bisection with the drift guard: $(( $(date +%s) - t0 )) s; the log:"
sed 's/^/#   /' "$TMP/b1.out"
contains "log: says the guard is on" "$TMP/b1.out" "# drift guard: after each call the end it was called like is measured again beside it (6 sessions)"
contains "log: c1 good" "$TMP/b1.out" "git bisect good $C1"
contains "log: c2 named" "$TMP/b1.out" "$C2 is the first bad commit"
grep -E "^# step 1: drift check: the good end measured again beside it, n=6, against its first measurement \(n=6\) [-+].*p=.*: (matches \(6 sessions more\)|DRIFT; .*\(12 sessions more here\))" "$TMP/b1.out" >/dev/null &&
	ok "log: the drift check, the good end, with its numbers and cost" ||
	not_ok "log: the drift check, the good end, with its numbers and cost" "$(grep 'drift' "$TMP/b1.out")"
guard=$(sed -n 's/^# drift guard: \([0-9]*\) sessions more than without it; .*/\1/p' "$TMP/b1.out")
[ -n "$guard" ] && [ "$guard" -ge 6 ] && ok "log: the guard's cost, $guard sessions (at least 6 for the step)" ||
	not_ok "log: the guard's cost (at least 6 for the step)" "$(grep 'drift guard' "$TMP/b1.out")"
equals "stored: every session is one the walk took (ends 6 + 6, the midpoint 6, and the guard's)" \
	"$(sql "SELECT count(*) FROM session WHERE tag LIKE 'bisect-%'")" "$(( 18 + ${guard:-0} ))"
equals "stored: the bisection keeps its setting (schema 13)" \
	"$(sql "SELECT drift_guard || ' ' || json_extract(result, '\$.drift_guard.sessions') FROM bisect ORDER BY id DESC LIMIT 1")" "1 ${guard:-x}"
equals "stored: the midpoint's detail has its drift check" \
	"$(sql "SELECT count(*) FROM bisect_step WHERE role = 'mid' AND json_extract(detail, '\$.drift.sessions') >= 6")" 1

ns=$(sql "SELECT count(*) FROM session")
expect_exit 0 "the same command again" "${BIS[@]}"
equals "... without a new session (the guard's rounds found again)" "$(sql "SELECT count(*) FROM session")" "$ns"
equals "... the same calls and drift checks" \
	"$(grep -E '^(git bisect|# step [0-9]+: drift|# drift guard)' "$TMP/out")" \
	"$(grep -E '^(git bisect|# step [0-9]+: drift|# drift guard)' "$TMP/b1.out")"
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi
done_testing
