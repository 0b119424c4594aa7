#!/usr/bin/env bash
# End-to-end tests of the analysis commands (schedlab compare, trend, check)
# against a synthetic database: a one-second `schedlab run` of a tiny plan
# creates the file with the real schema (and one real session, tag "real"),
# then sqlite3 adds synthetic sessions on a machine "syn":
#   nightly-01..20  preempt=full, hackbench time_s ~ 1.0 for 01..10 and
#                   ~ 1.2 (a 20% step) from 11 on, 3 repetitions each, with a
#                   latency_us histogram per run (10..29 us, from 11 on 10..39)
#   none-01..05     preempt=none, same workload (a second series)
# and checks exit codes (0/1/2), the output formats, the change point at the
# step and the refusal to mix series. Prints TAP.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
hold_local_target   # its local sessions never wait inside the script (lib.sh)
SL=bin/schedlab
DB=$TMP/a.db

require_built "$SL"
require sqlite3:sqlite3 rt-tests:hackbench
cat >"$TMP/tiny.json" <<'EOF'
{"name": "tiny", "target": "local", "repetitions": 1, "seed": 1,
 "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}]}
EOF
if ! timeout 120 "$SL" run "$TMP/tiny.json" --db "$DB" --tag real >"$TMP/run.out" 2>&1; then
	not_ok "schedlab run of a tiny hackbench plan" "$(tail -n 3 "$TMP/run.out")"
	done_testing
	exit
fi

. tests/e2e/synth.sh
gen >"$TMP/gen.sql"
check "synthetic database generated" sqlite3 -batch "$DB" ".read $TMP/gen.sql"
equals "results view holds the synthetic rows" "$(sql "SELECT count(*) FROM results WHERE machine = 'syn'")" 150

# ---- compare ----------------------------------------------------------------
expect_exit 0 "compare --help" $SL compare --help
contains "compare --help names the selectors" "$TMP/out" "key=value"
expect_exit 2 "compare with one selector: usage error" $SL compare --db "$DB" tag=nightly-01
expect_exit 2 "compare with an unknown key" $SL compare --db "$DB" flavour=full tag=nightly-01
contains "unknown key error names the valid columns" "$TMP/err" "valid keys are the columns of results: session, tag"
expect_exit 2 "compare with a bad --threshold" $SL compare --db "$DB" --threshold -1 tag=nightly-01 tag=nightly-02
expect_exit 2 "compare: a selector that matches nothing" $SL compare --db "$DB" tag=nightly-01 tag=nope

# three nights before the step (9 runs) against the first night after it (3)
BASE=tag=nightly-08,tag=nightly-09,tag=nightly-10
expect_exit 0 "compare before/after the step (table)" $SL compare --db "$DB" $BASE tag=nightly-11
cp "$TMP/out" "$TMP/cmp.txt"
if grep -E '^  time_s ' "$TMP/cmp.txt" | grep -q 'worse'; then ok "compare: time_s is worse"; else not_ok "compare: time_s is worse" "$(cat "$TMP/cmp.txt")"; fi
contains "compare: +20% change" "$TMP/cmp.txt" "+20."
contains "compare: merged histogram p99 row" "$TMP/cmp.txt" "latency_us p99 "
contains "compare: better=none metric shown without verdict" "$TMP/cmp.txt" "loops"
contains "compare: A/A noise floor printed" "$TMP/cmp.txt" "noise floor (A/A)"
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$TMP/cmp.txt")
if [ "$w" -le 100 ]; then ok "compare table fits 100 columns ($w)"; else not_ok "compare table fits 100 columns" "widest line $w"; fi

expect_exit 0 "compare --format csv" $SL compare --db "$DB" --format csv $BASE tag=nightly-11
equals "csv header" "$(head -n 1 "$TMP/out")" "workload,series,metric,kind,unit,better,centre,n_a,n_b,a,b,change_pct,ci_lo_pct,ci_hi_pct,p,verdict,reps_needed,noise_floor_pct,censored_a,censored_b,bound,change_bound"
contains "csv time_s row is worse" "$TMP/out" ",time_s,metric,s,lower,median,9,3,"

expect_exit 0 "compare --format json" $SL compare --db "$DB" --format json $BASE tag=nightly-11
if python3 - "$TMP/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schedlab_format"] == 1 and d["command"] == "compare"
rows = {(r["metric"], r.get("percentile")): r for r in d["rows"]}
t = rows[("time_s", None)]
assert t["verdict"] == "worse" and t["n_a"] == 9 and t["n_b"] == 3, t
assert 19 < t["change_pct"] < 21 and t["ci_lo_pct"] > 0, t
assert rows[("loops", None)]["verdict"] is None
h = rows[("latency_us", 99.0)]
assert h["kind"] == "histogram" and h["runs_a"] == 9 and h["a"] == 19 and h["b"] == 29, h
EOF
then ok "json: verdicts, CI and merged percentiles"; else not_ok "json: verdicts, CI and merged percentiles"; fi

# preempt=full vs preempt=none on the synthetic machine: preempt is what is
# compared, and side A (20 sessions with a step) is one series
expect_exit 0 "compare preempt=full vs preempt=none" $SL compare --db "$DB" machine=syn,preempt=full machine=syn,preempt=none
contains "compare names the compared dimension" "$TMP/out" "compared: preempt"
# a side holding two machines warns with the key to add
expect_exit 0 "compare with two machines on side A" $SL compare --db "$DB" workload=hackbench tag=nightly-01
contains "warning names the machines and the key" "$TMP/err" "side A mixes 2 machines"
contains "warning says machine=" "$TMP/err" "add machine=NAME"

# ---- check ------------------------------------------------------------------
# 3 runs against 3: even a clean 20% step cannot be significant (the smallest
# two-sided Mann-Whitney p of 3 vs 3 is 0.1): inconclusive, with what is needed
expect_exit 0 "compare 3 vs 3 across the step" $SL compare --db "$DB" --format json tag=nightly-10 tag=nightly-11
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=[r for r in d["rows"] if r["metric"]=="time_s"][0]; assert t["verdict"].startswith("inconclusive") and t["reps_needed"] >= 4, t' "$TMP/out"; then ok "3 vs 3: inconclusive with the repetitions needed"; else not_ok "3 vs 3: inconclusive with the repetitions needed" "$(head -c 800 "$TMP/out")"; fi
expect_exit 0 "check: 3 vs 3 across the step passes, undecided" $SL check --db "$DB" --baseline tag=nightly-10 --candidate tag=nightly-11
contains "... and says what would decide it" "$TMP/out" \
	"inconclusive, about this many repetitions a side would resolve a 2% change: hackbench.time_s ~"
equals "... before the summary, which stays the last line" "$(tail -n 1 "$TMP/out" | cut -c1-27)" "ok: 1 metrics, 0 worse, 0 b"
# --require-decided: the same undecided pass is exit 4, naming the metric
expect_exit 4 "check --require-decided: 3 vs 3 undecided exits 4" $SL check --db "$DB" \
	--require-decided --baseline tag=nightly-10 --candidate tag=nightly-11
contains "... names the metric with the repetitions needed" "$TMP/out" \
	"a side would resolve a 2% change: hackbench.time_s ~"
contains "... says why it exits 4" "$TMP/err" "1 metric left inconclusive (--require-decided): exit 4"
equals "... and its summary says undecided" "$(tail -n 1 "$TMP/out" | cut -c1-23)" "UNDECIDED: 1 metrics, 0"
expect_exit 1 "check --require-decided: a regression still exits 1" $SL check --db "$DB" \
	--require-decided --baseline $BASE --candidate tag=nightly-11
expect_exit 0 "check --require-decided: decided metrics exit 0" $SL check --db "$DB" \
	--require-decided --baseline $BASE --candidate tag=nightly-11 --threshold 30
contains "check --help documents exit 4" <($SL check --help) "4 (with --require-decided)"
expect_exit 1 "check: regression exits 1" $SL check --db "$DB" --baseline $BASE --candidate tag=nightly-11
contains "check prints the regression line" "$TMP/out" "hackbench.time_s: baseline"
contains "check prints change and CI" "$TMP/out" "change +20."
expect_exit 0 "check: no regression exits 0" $SL check --db "$DB" --baseline tag=nightly-09 --candidate tag=nightly-10
contains "check summary" "$TMP/out" "ok: 1 metrics, 0 worse"
expect_exit 0 "check: an improvement exits 0" $SL check --db "$DB" --baseline tag=nightly-11 --candidate tag=nightly-10
expect_exit 0 "check: a large threshold hides the step" $SL check --db "$DB" --threshold 30 --baseline $BASE --candidate tag=nightly-11
expect_exit 2 "check: fewer than 3 repetitions refused" $SL check --db "$DB" --baseline tag=real --candidate tag=real
contains "check names the repetitions rule" "$TMP/err" "fewer than 3 repetitions"
expect_exit 2 "check without --candidate" $SL check --db "$DB" --baseline tag=nightly-10
expect_exit 2 "check with an unknown key" $SL check --db "$DB" --baseline tga=x --candidate tag=nightly-10

# ---- exact data (issue 38): a guest on a virtual clock repeats itself -------
# machine vclk: ex-a time_s 1.1 x3, ex-b 1.0 x3 (-9.1%), ex-c 1.1005 x3
# (+0.05%), ex-d 1.1 x2; identical repeats are read off (docs/statistics.md
# "Exact and near-exact data"): 3 a side decide, p 0.035
gen_exact() {
	fx machine id=200 name=vclk fingerprint=fp-vclk
	local s=200 run=2000 tag v rep n
	for tag in ex-a:1.1:3 ex-b:1.0:3 ex-c:1.1005:3 ex-d:1.1:2; do
		s=$((s + 1))
		v=$(echo "$tag" | cut -d: -f2) n=$(echo "$tag" | cut -d: -f3) tag=${tag%%:*}
		fx session id=$s name=vclk tag="$tag" target=qemu started_at="2026-03-0${s#20}T03:00:00.000Z"
		fx boot id=$s session_id=$s machine_id=200 kernel_id=100 preempt=full cmdline=root=/dev/vda
		for rep in $(seq 0 $((n - 1))); do
			run=$((run + 1))
			fx run id=$run session_id=$s boot_id=$s seq=$rep workload=hackbench params="$P" \
				rep=$rep started_at="2026-03-0${s#20}T03:00:0$rep"
			fx metric run_id=$run workload=hackbench name=time_s value=$v unit=s better=lower
		done
	done
}
gen_exact | fixture_sql >"$TMP/exact.sql"
check "exact sessions added" sqlite3 -batch "$DB" ".read $TMP/exact.sql"
expect_exit 1 "check, exact data 3 vs 3 beyond the threshold: a regression" $SL check --db "$DB" --baseline tag=ex-b --candidate tag=ex-a
contains "... read off the values: the interval is a point" "$TMP/out" "change +10.0% [+10.0, +10.0], p=0.035 (exact data)"
expect_exit 0 "check, exact data within the threshold: no regression" $SL check --db "$DB" --baseline tag=ex-a --candidate tag=ex-c
contains "... and decided: no change" "$TMP/out" "ok: 1 metrics, 0 worse, 0 better, 1 no change, 0 inconclusive"
expect_exit 0 "compare, exact data: better" $SL compare --db "$DB" tag=ex-a tag=ex-b
contains "... the verdict says exact data" "$TMP/out" "better (exact data)"
expect_exit 0 "compare --format json, exact data" $SL compare --db "$DB" --format json tag=ex-a tag=ex-b
if python3 - "$TMP/out" <<'EOF'
import json, sys
t = [r for r in json.load(open(sys.argv[1]))["rows"] if r["metric"] == "time_s"][0]
assert t["verdict"] == "better" and t["exact_data"] == "identical", t
assert t["ci_lo_pct"] == t["ci_hi_pct"] == t["change_pct"] and 0.03 < t["p"] < 0.04, t
assert abs(t["p_mwu"] - 0.1) < 1e-9, t
EOF
then ok "json: exact_data, a point interval, p_exact and the rank test's p"; else not_ok "json: exact_data, a point interval, p_exact and the rank test's p" "$(head -c 800 "$TMP/out")"; fi
expect_exit 0 "compare, exact data 2 vs 3: identical by chance too often" $SL compare --db "$DB" --format json tag=ex-d tag=ex-b
if python3 -c 'import json,sys; t=[r for r in json.load(open(sys.argv[1]))["rows"] if r["metric"]=="time_s"][0]; assert t["verdict"]=="inconclusive" and t["reps_needed"]==4 and t["exact_data"]=="identical", t' "$TMP/out"; then ok "... inconclusive, 4 a side would do"; else not_ok "... inconclusive, 4 a side would do" "$(head -c 800 "$TMP/out")"; fi

# ---- trend ------------------------------------------------------------------
expect_exit 2 "trend refuses to mix series" $SL trend --db "$DB" --metric hackbench.time_s --where machine=syn
contains "trend lists the series" "$TMP/err" "holds 2 series"
contains "trend lists session counts and values" "$TMP/err" "20 sessions: preempt=full"
contains "trend tells how to narrow" "$TMP/err" "--where 'preempt=full'"
expect_exit 0 "trend of one series" $SL trend --db "$DB" --metric hackbench.time_s --where machine=syn,preempt=full
contains "trend marks the change point" "$TMP/out" "<- +20"
contains "trend summary" "$TMP/out" "1 change point"
expect_exit 0 "trend --format json" $SL trend --db "$DB" --metric hackbench.time_s --where machine=syn,preempt=full --format json
if python3 - "$TMP/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schedlab_format"] == 1 and d["command"] == "trend"
assert len(d["points"]) == 20, len(d["points"])
assert [p["started_at"] for p in d["points"]] == sorted(p["started_at"] for p in d["points"])
cps = d["change_points"]
assert len(cps) == 1, cps
cp = cps[0]
assert cp["index"] == 10 and cp["session"] == 111, cp
assert 19 < cp["change_pct"] < 21 and cp["pvalue"] < 0.001, cp
assert abs(cp["mean_before"] - 1.0) < 0.01 and abs(cp["mean_after"] - 1.2) < 0.01, cp
EOF
then ok "trend json: one change point at nightly-11"; else not_ok "trend json: one change point at nightly-11"; fi
expect_exit 0 "trend --format csv" $SL trend --db "$DB" --metric hackbench.time_s --where machine=syn,preempt=full --format csv
equals "trend csv header" "$(head -n 1 "$TMP/out")" "session,tag,started_at,n,value,change_point,mean_before,mean_after,change_pct,magnitude,pvalue,censored,bound"
equals "trend csv marks one change point" "$(awk -F, 'NR > 1 && $6 == 1' "$TMP/out" | wc -l | tr -d ' ')" 1
expect_exit 0 "trend --since after the step" $SL trend --db "$DB" --metric hackbench.time_s --where machine=syn,preempt=full --since 2026-01-12 --format json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["points"]) == 9 and not d["change_points"]' "$TMP/out"; then ok "trend --since: 9 sessions, no change point"; else not_ok "trend --since: 9 sessions, no change point"; fi
expect_exit 2 "trend without WORKLOAD.METRIC" $SL trend --db "$DB" --metric time_s
expect_exit 2 "trend with a bad --since" $SL trend --db "$DB" --metric hackbench.time_s --since yesterday
expect_exit 2 "trend with a bad --p" $SL trend --db "$DB" --metric hackbench.time_s --p 2
expect_exit 2 "trend of an unknown metric" $SL trend --db "$DB" --metric hackbench.nope
# ---- the nightly summary names the regression and where it starts -----------
expect_exit 0 "report --summary over the step" $SL report --db "$DB" --compare session=108,session=109,session=110 session=111 --summary --out "$TMP/step.html"
contains "summary: the regressed metric, its change and CI" "$TMP/out" "hackbench.time_s: 1 -> 1.201 s, +20.1% (95% CI"
contains "summary: the change point it starts at" "$TMP/out" "starts at change point: session 111 (nightly-11)"
contains "summary: the verdict line" "$TMP/out" "REGRESSION: 1 metrics, 1 worse"
done_testing
