#!/usr/bin/env bash
# End-to-end tests of censored values (issue 17): percentiles beyond a
# histogram's range are stored flagged (results.censored), and compare,
# check, trend and report never rest a verdict on them unless the direction
# is provable. A one-second `schedlab run` creates the database (real
# schema) and proves a real run flags its bounds; sqlite3 then adds
# synthetic cyclictest sessions as TCG produces them:
#   ab-none  preempt=none       p99.9 and p99 beyond 10000 us in all 6 runs
#   ab-vol   preempt=voluntary  p99.9 beyond, p99 measured (8700..9800 us)
#   ab-full  preempt=full       everything measured (p99 2000..2500 us)
#   tr-01..12 (machine tcgt)    p99.9 measured ~2000 us, beyond the range
#                               in 05..08 (as plain numbers: two steps)
# The cmdlines differ only by preempt=: labels say "preempt", not cmdline.
# Prints TAP.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
hold_local_target   # its local sessions never wait inside the script (lib.sh)
SL=bin/schedlab
DB=$TMP/c.db

require_built "$SL"
require sqlite3:sqlite3 rt-tests:cyclictest python3:python3

# ---- a real run whose histogram is far too small ----------------------------
cat >"$TMP/small.json" <<'EOF'
{"name": "small-range", "target": "local", "repetitions": 1, "seed": 1,
 "workloads": [{"type": "cyclictest", "duration_s": 1, "interval_us": 200,
                "priority": 95, "histogram_us": 10}]}
EOF
if ! timeout 120 "$SL" run "$TMP/small.json" --db "$DB" --tag real >"$TMP/run.out" 2>&1; then
	not_ok "schedlab run of cyclictest with a 10 us histogram" "$(tail -n 3 "$TMP/run.out")"
	done_testing
	exit
fi
equals "a run whose samples all lie beyond the histogram is stored, not failed" \
	"$(sql "SELECT group_concat(r.status) FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag = 'real'")" ok
contains "its progress line prints the bound as a bound" "$TMP/run.out" "lat_p99_us>="
contains "its progress line warns and names the parameter" "$TMP/run.out" "beyond the histogram range (>= 10 us), raise histogram_us"
equals "its percentiles are flagged in results.censored" \
	"$(sql "SELECT group_concat(metric || '=' || censored, ' ') FROM (SELECT metric, censored FROM results WHERE tag = 'real' AND metric IN ('lat_p50_us', 'lat_p99_us', 'lat_p999_us', 'lat_max_us') ORDER BY metric)")" \
	"lat_max_us=0 lat_p50_us=1 lat_p999_us=1 lat_p99_us=1"

# ---- synthetic TCG-like history ---------------------------------------------
P='{"duration_s":10,"histogram_us":10000,"interval_us":1000,"type":"cyclictest"}'
gen() {
	fx machine id=300 name=tcg fingerprint=fp-tcg
	fx machine id=301 name=tcgt fingerprint=fp-tcgt
	fx kernel id=300 release=6.1.0-tcg config_hash=cafe hz=250 sched_mc=1
	local s=300 run=3000 i rep tag pre m n
	for tag in ab-none ab-vol ab-full $(seq -f 'tr-%02g' 1 12); do
		s=$((s + 1))
		case $tag in
		ab-none) pre=none m=300 ;;
		ab-vol) pre=voluntary m=300 ;;
		ab-full) pre=full m=300 ;;
		*) pre=full m=301 ;;
		esac
		n=$([ "${tag#tr-}" = "$tag" ] && echo 6 || echo 3)
		i=$((s - 300))
		fx session id=$s name=tcg tag="$tag" target=qemu started_at="2026-02-$(printf %02d $i)T03:00:00.000Z"
		fx boot id=$s session_id=$s machine_id=$m kernel_id=300 preempt=$pre \
			cmdline="console=ttyS0 panic=-1 preempt=$pre"
		for rep in $(seq 0 $((n - 1))); do
			run=$((run + 1))
			fx run id=$run session_id=$s boot_id=$s seq=$rep workload=cyclictest params="$P" \
				rep=$rep started_at="2026-02-$(printf %02d $i)T03:00:0$rep"
			local p50=$((900 + rep)) p99 c99 p999 c999
			case $tag in
			ab-none) p99=10000 c99=1 p999=10000 c999=1 ;;
			ab-vol) p99=$((8700 + 200 * rep)) c99=0 p999=10000 c999=1 ;;
			ab-full) p99=$((2000 + 100 * rep)) c99=0 p999=$((3000 + 100 * rep)) c999=0 ;;
			tr-0[5-8]) p99=1500 c99=0 p999=10000 c999=1 ;;
			*) p99=1500 c99=0 p999=$((2000 + 10 * rep + 3 * (i % 3))) c999=0 ;;
			esac
			local m v c
			for m in lat_p50_us:$p50:0 lat_p99_us:$p99:$c99 lat_p999_us:$p999:$c999 \
				 lat_max_us:$((30000 + 100 * rep)):0; do
				IFS=: read -r m v c <<<"$m"
				fx metric run_id=$run workload=cyclictest name=$m value=$v unit=us better=lower censored=$c
			done
			fx histogram run_id=$run name=latency_us unit=us \
				data='{"scheme":"linear","nbuckets":10000,"buckets":[[900,90]],"overflow":10,"total":100}'
		done
	done
}
gen | fixture_sql >"$TMP/gen.sql"
check "synthetic database generated" sqlite3 -batch "$DB" ".read $TMP/gen.sql"
equals "the results view carries the flag" "$(sql "SELECT sum(censored) FROM results WHERE machine = 'tcg'")" 18

# ---- compare ----------------------------------------------------------------
expect_exit 0 "compare preempt=none vs preempt=voluntary" $SL compare --db "$DB" tag=ab-none tag=ab-vol
cp "$TMP/out" "$TMP/cmp.txt"
contains "compared dimension is preempt" "$TMP/cmp.txt" "compared: preempt"
if grep -q '^compared:.*cmdline' "$TMP/cmp.txt"; then not_ok "cmdline that differs only by preempt= is not named" "$(grep '^compared' "$TMP/cmp.txt")"; else ok "cmdline that differs only by preempt= is not named"; fi
if grep -E '^  lat_p999_us ' "$TMP/cmp.txt" | grep -q 'no change'; then not_ok "p99.9 bounds on both sides: not 'no change'" "$(grep lat_p999 "$TMP/cmp.txt")"; else ok "p99.9 bounds on both sides: not 'no change'"; fi
contains "p99.9: the reason with bound, counts and advice" "$TMP/cmp.txt" "cyclictest.lat_p999_us: inconclusive: beyond the histogram range (>= 10000 us) in 12 of 12 runs; raise cyclictest's histogram_us"
contains "p99: every measured B below A's bound: better, as a bound" "$TMP/cmp.txt" "cyclictest.lat_p99_us: better, at least -"
contains "bounds are printed with >=" "$TMP/cmp.txt" ">=10000"
expect_exit 0 "compare --format json" $SL compare --db "$DB" --format json tag=ab-none tag=ab-vol
if python3 - "$TMP/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["metric"]: r for r in d["rows"] if r["kind"] == "metric"}
r = rows["lat_p999_us"]
assert r["verdict"] == "inconclusive" and r["censored_a"] == 6 and r["censored_b"] == 6, r
assert r["bound"] == 10000 and r["change_pct"] is None and r["ci_lo_pct"] is None, r
assert "raise cyclictest's histogram_us" in r["verdict_text"], r
r = rows["lat_p99_us"]
assert r["verdict"] == "better" and r["change_bound"] == "at_most" and r["change_pct"] < -5, r
r = rows["lat_p50_us"]
assert r["censored_a"] == 0 and r["censored_b"] == 0 and r["change_bound"] is None, r
assert "preempt" in d["compared"], d["compared"]
EOF
then ok "json: censored counts, bound, change_bound, verdict text"; else not_ok "json: censored counts, bound, change_bound, verdict text" "$(head -c 1500 "$TMP/out")"; fi
expect_exit 0 "compare --format csv" $SL compare --db "$DB" --format csv tag=ab-none tag=ab-vol
contains "csv: the bound columns" "$TMP/out" ",6,6,10000,"

# ---- check ------------------------------------------------------------------
expect_exit 1 "check: candidate beyond the range, baseline measured below it: regression" \
	$SL check --db "$DB" --baseline tag=ab-full --candidate tag=ab-none
contains "check: the regression is a bound" "$TMP/out" "cyclictest.lat_p99_us: worse, at least +"
contains "check: p99.9 too" "$TMP/out" "cyclictest.lat_p999_us: worse, at least +"
expect_exit 0 "check: bounds on both sides are no regression" \
	$SL check --db "$DB" --baseline tag=ab-none --candidate tag=ab-vol
contains "check: ... but it says why it cannot judge" "$TMP/out" "cyclictest.lat_p999_us: inconclusive: beyond the histogram range"
if grep -q "no change" "$TMP/out" && grep "lat_p999" "$TMP/out" | grep -q "no change"; then not_ok "check: no 'no change' from bounds"; else ok "check: no 'no change' from bounds"; fi

# ---- trend ------------------------------------------------------------------
expect_exit 0 "trend across a censored stretch" $SL trend --db "$DB" --metric cyclictest.lat_p999_us --where machine=tcgt
contains "trend marks bounds" "$TMP/out" ">=10000"
contains "trend says how many sessions are bounds" "$TMP/out" "4 sessions whose median is only a lower bound"
contains "trend: no change point from the bounds" "$TMP/out" "0 change points"
expect_exit 0 "trend --format json" $SL trend --db "$DB" --metric cyclictest.lat_p999_us --where machine=tcgt --format json
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
b = [p["bound"] for p in d["points"]]
assert b == [False] * 4 + [True] * 4 + [False] * 4, b
assert d["change_points"] == [], d["change_points"]
assert all(p["censored"] == (3 if p["bound"] else 0) for p in d["points"])' "$TMP/out"; then ok "trend json: bound points, no change point"; else not_ok "trend json: bound points, no change point" "$(head -c 800 "$TMP/out")"; fi

# ---- report -----------------------------------------------------------------
expect_exit 0 "report --summary of the A/B" $SL report --db "$DB" --compare tag=ab-none tag=ab-vol --summary --out "$TMP/ab.html"
contains "summary: the bound and the advice" "$TMP/out" "lat_p999_us: inconclusive: beyond the histogram range (>= 10000 us) in 12 of 12 runs; raise cyclictest's histogram_us"
contains "report notes a histogram too small for its data" "$TMP/err" "10% of 600 samples beyond the histogram range (>= 10000 us)"
contains "the note names the parameter" "$TMP/err" "raise cyclictest's histogram_us"
contains "html: the verdict text with the advice" "$TMP/ab.html" "raise cyclictest&#39;s histogram_us"
if grep -q "cmdline=console" "$TMP/ab.html" "$TMP/out"; then not_ok "report labels do not repeat the mode in a cmdline" "$(grep -o 'cmdline=console[^<]*' "$TMP/ab.html" | head -3)"; else ok "report labels do not repeat the mode in a cmdline"; fi
# one session with two boots whose cmdlines differ only by preempt=: the
# report's selectors and labels name the mode once
{
	fx session id=400 name=tcg tag=both target=qemu started_at=2026-03-01T03:00:00.000Z
	fx boot id=400 session_id=400 machine_id=300 kernel_id=300 preempt=none cmdline="console=ttyS0 panic=-1 preempt=none"
	fx boot id=401 session_id=400 seq=1 cfg=1 machine_id=300 kernel_id=300 preempt=full \
		cmdline="console=ttyS0 panic=-1 preempt=full"
	fx run id=4000 session_id=400 boot_id=400 seq=0 workload=hackbench params={} started_at=2026-03-01T03:00:01
	fx run id=4001 session_id=400 boot_id=401 seq=1 workload=hackbench params={} started_at=2026-03-01T03:00:02
	fx metric run_id=4000 workload=hackbench name=time_s value=1.0 unit=s better=lower
	fx metric run_id=4001 workload=hackbench name=time_s value=1.1 unit=s better=lower
} | fixture_sql >"$TMP/both.sql"
check "a session with two boots added" sqlite3 -batch "$DB" ".read $TMP/both.sql"
expect_exit 0 "report of that session" $SL report --db "$DB" --session 400 --summary --out "$TMP/both.html"
contains "its selectors name the mode once" "$TMP/both.html" "session=400,preempt=full</code>"
contains "its summary labels name the mode once" "$TMP/out" "candidate: preempt=full"
if grep -q "cmdline=console" "$TMP/both.html"; then not_ok "no cmdline=... preempt= repetition in the page"; else ok "no cmdline=... preempt= repetition in the page"; fi
done_testing
