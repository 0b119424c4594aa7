#!/usr/bin/env bash
# End-to-end A/A on the local target: the same small plan (hackbench, a
# stress-ng cpu stressor, cyclictest; 3 repetitions) run twice, as two
# sessions tagged a and b, then `schedlab compare tag=a tag=b` and
# `schedlab check`. Nothing changed between the sessions, so no metric with a
# direction may come out `worse` or `better`: each must be `no change` or
# `inconclusive...`, and check must exit 0. Prints TAP; about 30 s.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
hold_local_target   # its local sessions never wait inside the script (lib.sh)
SL=bin/schedlab
DB=$TMP/aa.db

require_built "$SL"
require sqlite3:sqlite3 jq:jq rt-tests:hackbench stress-ng:stress-ng rt-tests:cyclictest

cat >"$TMP/aa.json" <<'EOF'
{"name": "aa", "target": "local", "repetitions": 3, "seed": 7,
 "workloads": [
   {"type": "hackbench", "groups": 1, "loops": 100},
   {"type": "stress-ng", "stressor": "cpu", "threads": 1, "duration_s": 1},
   {"type": "cyclictest", "duration_s": 1, "threads": 1}
 ]}
EOF

for tag in a b; do
	expect_exit 0 "session $tag: run the plan on the local target" \
		timeout 120 "$SL" run "$TMP/aa.json" --db "$DB" --tag "$tag"
done
equals "both sessions done" "$(sql "SELECT group_concat(tag || ':' || status, ' ') FROM (SELECT tag, status FROM session ORDER BY id)")" "a:done b:done"
equals "every run ok (2 sessions x 3 workloads x 3 repetitions)" \
	"$(sql "SELECT count(*) FROM run WHERE status = 'ok'")" 18
equals "both sessions have the same metrics" \
	"$(sql "SELECT count(*) FROM (SELECT workload, metric FROM results WHERE tag = 'a' EXCEPT SELECT workload, metric FROM results WHERE tag = 'b')")" 0

# ---- compare ----------------------------------------------------------------
expect_exit 0 "compare tag=a tag=b --format json" $SL compare tag=a tag=b --db "$DB" --format json
cp "$TMP/out" "$TMP/cmp.json"
if jq -e . "$TMP/cmp.json" >/dev/null 2>&1; then ok "compare output is JSON"; else not_ok "compare output is JSON" "$(head -c 300 "$TMP/cmp.json")"; fi
equals "A/A: same configuration, nothing compared" \
	"$(jq -r '[.same_configuration, (.compared | length)] | @tsv' "$TMP/cmp.json")" "$(printf 'true\t0')"
# metric rows with a direction: their verdicts
jq -r '.rows[] | select(.kind == "metric" and .better != "none")
       | "\(.workload).\(.metric)\t\(.verdict)\t\(.verdict_text)\t\(.n_a)/\(.n_b)\t\(.change_pct)\t[\(.ci_lo_pct), \(.ci_hi_pct)]"' \
	"$TMP/cmp.json" >"$TMP/verdicts.tsv"
n=$(wc -l <"$TMP/verdicts.tsv")
[ "$n" -ge 10 ] && ok "metrics with a direction compared ($n)" || not_ok "metrics with a direction compared" "only $n" "$(cat "$TMP/verdicts.tsv")"
for w in hackbench stress-ng cyclictest; do
	contains "$w compared" "$TMP/verdicts.tsv" "$w."
done
equals "every metric has 3 repetitions a side" "$(cut -f4 "$TMP/verdicts.tsv" | sort -u)" "3/3"
bad=$(awk -F'\t' '$2 != "no change" && $3 !~ /^inconclusive/' "$TMP/verdicts.tsv")
if [ -z "$bad" ]; then
	ok "A/A: every verdict is 'no change' or 'inconclusive'"
else
	not_ok "A/A: every verdict is 'no change' or 'inconclusive'" "$bad"
fi
equals "A/A: no metric worse" "$(awk -F'\t' '$2 == "worse"' "$TMP/verdicts.tsv" | wc -l | tr -d ' ')" 0
equals "A/A: no metric better" "$(awk -F'\t' '$2 == "better"' "$TMP/verdicts.tsv" | wc -l | tr -d ' ')" 0
# the verdicts, for whoever reads the log
sed 's/^/# /' "$TMP/verdicts.tsv"
# (a side with censored values, a latency beyond cyclictest's histogram on
# a loaded host, has a bound, not a noise floor: compare.c)
equals "A/A: every uncensored metric row with a change carries its noise floor" \
	"$(jq -c '[.rows[] | select(.kind == "metric" and .better != "none" and .change_pct != null and .noise_floor == null and (.censored_a + .censored_b) == 0) | "\(.workload).\(.metric)"]' "$TMP/cmp.json")" "[]"

# ---- check ------------------------------------------------------------------
expect_exit 0 "check --baseline tag=a --candidate tag=b exits 0" \
	$SL check --baseline tag=a --candidate tag=b --db "$DB"
contains "check says ok" "$TMP/out" "ok: "
if [ -s "$TMP/err" ]; then sed 's/^/# check stderr: /' "$TMP/err"; fi
done_testing
