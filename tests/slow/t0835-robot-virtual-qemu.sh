#!/usr/bin/env bash
# tags: qemu kbuild slow (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 3600 (tests/run.sh ends it past this many seconds)
# The regression robot in virtual time (docs/virtual-time.md; make
# test-slow, not make test: real kernel builds): a nightly on a branch of a
# real kernel history, on a qemu guest whose clock counts instructions, with
# the default noise threshold (2%), finds a commit that makes every wakeup
# of sl-pingpong execute a few hundred more instructions, a change of a few
# percent that the real clock's noise under TCG hides (t0830 needs +3000%
# and an 80% threshold), and bisects it with one session a step:
#   night 1  base                    the first night
#   night 2  c1 a comment            no alert
#   night 3  c2 spins SPIN loops in every wakeup of sl-pingpong, c3 a comment
#            -> an alert group on c1..c3; the bisection names c2
# SPIN (default 200: about 600 instructions, 2.4 us of a 250 MHz virtual
# CPU, a wakeup or two a request) sets the size; the measured change is
# printed, and asserted below 10% so that the test stays about a small one.
# The guest is sealed (docs/virtual-time.md "Sealed runs": no host input,
# every value repeats bit for bit) on CPUS vCPUs (default 1), the plan's
# seed SEED (default 1); SEALED=false runs the live guest of the first
# version of this test. CPUS=2 (the provided qemu >= 8.1) does not find
# the change with 3 runs a night (2026-12-07): sl-pingpong's two threads
# land on one vCPU or on two, run by run, and req_p50_us is 77.57 or
# 99.07 us exactly (nights 1 and 2: 99.07/99.07/77.57, 77.57/99.07/77.57);
# the spinning commit moves each state (80.64, 104.70: +4.0%, +5.7%), but
# the medians of 3 runs mix the states and the night is inconclusive
# (docs/virtual-time.md, "The robot and bisect").
. "$(dirname "$0")/../e2e/lib.sh"
export GIT_AUTHOR_NAME="Ann Author" GIT_AUTHOR_EMAIL=ann@example.org
SPIN=${SPIN:-200}
CPUS=${CPUS:-1}
SEALED=${SEALED:-true}
SEED=${SEED:-1}
kernel_history
[ "$CPUS" -gt 1 ] && provided_qemu
DB=$TMP/r.db
history_base
spun() { # LOOPS: core.c with LOOPS cpu_relax() in every wakeup of sl-pingpong
	in_wakeup "$(printf '\tif (!strcmp(p->comm, "sl-pingpong")) { /* schedlab robot test: %s loops */\n\t\tint i_;\n\t\tfor (i_ = 0; i_ < %s; i_++)\n\t\t\tcpu_relax();\n\t}' "$1" "$1")"
}
C1=$(printf '/* schedlab robot test: a comment */\n%s\n' "$core" | commit kernel/sched/core.c "sched: a comment")
C2=$(spun "$SPIN" | commit kernel/sched/core.c "sched/core: spin $SPIN loops in every wakeup of sl-pingpong")
C3=$( (spun "$SPIN"; echo '/* another comment */') | commit kernel/sched/core.c "sched: another comment")
if ! grep -q "schedlab robot test: $SPIN loops" <(git -C "$R" show "$C2:kernel/sched/core.c"); then
	not_ok "the spinning commit: try_to_wake_up found in core.c"; done_testing; exit
fi
HEADS=("" "$BASE" "$C1" "$C3")
cat >"$TMP/nightly.json" <<EOF
{"name": "robot-virtual", "target": {"type": "qemu", "kernel": "kernels/out/debian",
  "clock": "virtual", "memory_mb": 512, "cpus": $CPUS, "sealed": $SEALED}, "seed": $SEED,
 "order": "sequential", "switch": "reboot", "repetitions": 3,
 "matrix": {"kernel": {"git": "$R", "ref": "main", "variant": ["hz1000", "sched_mc_off", "tracing"]}},
 "workloads": [{"type": "pingpong", "duration_s": 1, "warmup_s": 0}]}
EOF
NIGHTLY=(schedlab nightly --plan "$TMP/nightly.json" --db "$DB" --out-dir "$TMP/rep"
	--bisect-minutes 60 --metric pingpong.req_p50_us,pingpong.rps)
night 1
equals "night 1: exit 0, no baseline yet" "$(cat "$TMP/n1.rc")" 0
night 2
equals "night 2 (a comment): no alert" "$(sql "SELECT count(*) FROM alert")" 0
echo "# nights 1-2: $(sql "SELECT group_concat(tag || ' ' || metric || '=' || v, '; ') FROM (SELECT tag, metric, group_concat(value, '/') AS v FROM results WHERE metric IN ('req_p50_us', 'rps') GROUP BY tag, metric)")"
night 3
echo "# night 3: $(sql "SELECT group_concat(metric || ' ' || round(change_pct, 2) || '%', '; ') FROM alert")"
equals "night 3: one alert group on c1..c3 (2 commits)" \
	"$(sql "SELECT count(*) || ' ' || group_concat(good_commit || '..' || bad_commit || ' ' || ncommits) FROM alert_group")" \
	"1 $C1..$C3 2"
equals "night 3: the change is small (req_p50_us below +10%)" \
	"$(sql "SELECT change_pct > 0 AND change_pct < 10 FROM alert WHERE metric = 'req_p50_us'")" 1
contains "night 3: the bisection named c2" "$TMP/n3.out" "culprit found by bisection 1: $C2"
equals "the bisection measured one session a commit" \
	"$(sql "SELECT group_concat(n, ',') FROM (SELECT count(*) AS n FROM session WHERE tag LIKE 'bisect-%' GROUP BY json_extract(plan_json, '\$.matrix.kernel.commit'))")" \
	"$(sql "SELECT group_concat(1, ',') FROM (SELECT DISTINCT json_extract(plan_json, '\$.matrix.kernel.commit') FROM session WHERE tag LIKE 'bisect-%')")"
echo "# the whole history: $(( $(date +%s) - T0 )) s"
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi
done_testing
