#!/usr/bin/env bash
# Measurement neutrality: is a result taken through schedlab the same as the
# same tool run by hand? Runs cyclictest N times by hand and N times through
# `schedlab run` (local target), interleaved (hand, schedlab, hand, ...), with
# identical arguments, and reports the median p99 and max latency of each and
# their ratio (schedlab / hand). Percentiles of both are computed the same way
# (nearest rank over the merged per-thread histograms, overflow counted).
# Not a test: timings on a shared VM are noisy; compare the ratio, not the
# absolute numbers.
#   bench/neutrality.sh [ROUNDS=6] [DURATION_S=5]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-6}
dur=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/plan.json" <<P
{"name": "neutrality", "schedstat": false,
 "workloads": [{"type": "cyclictest", "duration_s": $dur, "interval_us": 1000,
                "priority": 95, "threads": 0, "histogram_us": 10000}]}
P
pct() { # JSON FILE -> "p99 max"
	python3 - "$1" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
counts = {}
total = 0
mx = 0
for t in d["thread"].values():
    h = t.get("histogram", {})
    n = 0
    for k, v in h.items():
        counts[int(k)] = counts.get(int(k), 0) + v
        n += v
    total += t["cycles"]
    mx = max(mx, t["max"])
rank = math.ceil(0.99 * total)
seen = 0
p99 = None
for k in sorted(counts):
    seen += counts[k]
    if seen >= rank:
        p99 = k
        break
print(p99 if p99 is not None else 10000, mx)
PY
}
echo "round  hand_p99  hand_max  schedlab_p99  schedlab_max"
for r in $(seq "$rounds"); do
	( cd "$tmp" && cyclictest -q -m --priority=95 --policy=fifo --interval=1000 \
		--duration="$dur" --histogram=10000 -t -a --json=hand.json >/dev/null )
	read -r hp hm < <(pct "$tmp/hand.json")
	bin/schedlab run "$tmp/plan.json" --db "$tmp/n.db" --quiet
	sp=$(sqlite3 "$tmp/n.db" "SELECT value FROM results WHERE metric='lat_p99_us' ORDER BY run_id DESC LIMIT 1")
	sm=$(sqlite3 "$tmp/n.db" "SELECT value FROM results WHERE metric='lat_max_us' ORDER BY run_id DESC LIMIT 1")
	printf "%5d  %8s  %8s  %12s  %12s\n" "$r" "$hp" "$hm" "${sp%.0}" "${sm%.0}"
	echo "$hp $hm ${sp%.0} ${sm%.0}" >>"$tmp/all"
done
python3 - "$tmp/all" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
hp, hm, sp, sm = (statistics.median(c) for c in zip(*rows))
print(f"median p99: hand {hp:.0f} us, schedlab {sp:.0f} us, ratio {sp/hp:.3f}")
print(f"median max: hand {hm:.0f} us, schedlab {sm:.0f} us, ratio {sm/hm:.3f}")
PY
