#!/usr/bin/env bash
# Overhead of evidence traces (not a test; root and tracefs needed): the
# same workloads run through the agent (bin/schedlab-agent, the path a
# traced run takes) with and without the exec request's "trace" (the four
# default sched events in a tracefs instance, buffer 8192 KiB per CPU, as
# "evidence" asks), interleaved ABBA over ROUNDS rounds so that drift hits
# both alike. Prints per workload the median of each mode and the change:
# hackbench -g 2 -l 1000 (time_s, lower is better) and sl-pingpong
# (closed loop, pipe, 2 s: rps and its wakeup p99). docs/metrics.md quotes it.
#   bench/evidence-overhead.sh [ROUNDS=8]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-8}
[ -x bin/schedlab-agent ] || { echo "run make first" >&2; exit 2; }
python3 - "$rounds" <<'PY'
import json, os, re, statistics, subprocess, sys
rounds = int(sys.argv[1])
agent = subprocess.Popen(["bin/schedlab-agent"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, bufsize=1)
ids = iter(range(1, 1 << 30))
def call(argv, traced):
    args = {"argv": argv, "timeout_s": 120}
    if traced:
        args["trace"] = {"events": ["sched_switch", "sched_waking", "sched_wakeup",
                                    "sched_migrate_task"], "buffer_kb": 8192,
                         "max_bytes": 1 << 20}
    rid = next(ids)
    agent.stdin.write(json.dumps({"id": rid, "op": "exec", "args": args}) + "\n")
    while True:
        line = agent.stdout.readline()
        if not line:
            sys.exit("agent ended")
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("id") == rid:
            if not m.get("ok"):
                sys.exit("exec failed: %s" % m.get("error"))
            return m["result"]
def hackbench(traced):
    r = call(["hackbench", "-g", "2", "-l", "1000"], traced)
    return {"time_s": float(re.search(r"Time:\s*([0-9.]+)", r["stdout"]).group(1))}
def pingpong(traced):
    r = call([os.path.abspath("bin/sl-pingpong"), "-d", "2", "-w", "0.3"], traced)
    d = json.loads(r["stdout"])
    return {"rps": d["rps"], "wakeup_p99_us": d["wakeup_p99_us"]}
res = {}
for rnd in range(rounds):
    order = [False, True] if rnd % 2 == 0 else [True, False]
    for name, fn in (("hackbench", hackbench), ("sl-pingpong", pingpong)):
        for traced in order:
            for k, v in fn(traced).items():
                res.setdefault((name, k), {False: [], True: []})[traced].append(v)
agent.stdin.close()
agent.wait()
# the spread of each mode (min..max over the rounds) says how much of the
# change is the machine's noise
print("%-12s %-14s %6s %12s %12s %8s  %s" % ("workload", "metric", "rounds", "untraced", "traced",
                                             "change", "range untraced | traced"))
for (name, k), v in res.items():
    a, b = statistics.median(v[False]), statistics.median(v[True])
    print("%-12s %-14s %6d %12.4g %12.4g %+7.1f%%  %.4g..%.4g | %.4g..%.4g" % (
        name, k, rounds, a, b, 100 * (b / a - 1), min(v[False]), max(v[False]),
        min(v[True]), max(v[True])))
PY
