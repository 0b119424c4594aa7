#!/usr/bin/env bash
# timeout: 120
# Every value from an agent is untrusted input (docs/reliability.md): a
# stand-in agent (SCHEDLAB_AGENT) that answers with the wrong types makes
# the controller fail the step with the field named, never crash (a
# sysinfo with "preempt_modes": {"value": [1, 2]} made `plan --check`
# segfault on a strcmp of a non-string).
. "$(dirname "$0")/lib.sh"
hold_local_target   # its local sessions never wait inside the script (lib.sh)
require python3:python3 sqlite3:sqlite3
require_built bin/schedlab
cat >"$TMP/agent.py" <<'PY'
import json, os, sys
lie = os.environ["LIE"]
sys.stdout.write(json.dumps({"agent": "schedlab", "proto": 1, "version": "liar",
                             "boot_id": "b", "pid": os.getpid()}) + "\n")
sys.stdout.flush()
def field(v):
    return {"value": v, "source": "liar"}
for line in sys.stdin:
    req = json.loads(line)
    op, res = req["op"], {}
    if op == "sysinfo":
        res = {"kernel_release": field("6.1.0"), "ncpus": field(2), "preempt": field("none"),
               "preempt_modes": field(["none", "voluntary", "full"]), "hostname": field("liar")}
        if lie == "modes":
            res["preempt_modes"] = field([1, 2])
        elif lie == "ncpus":
            res["ncpus"] = field("two")
        elif lie == "notobject":
            res["preempt"] = "none"
    elif op == "exec":
        res = {"exit_code": 0, "signal": 0, "timed_out": False, "wall_s": 0.1,
               "stdout": "Time: 1.0\n", "stderr": ""}
        if lie == "stdout":
            res["stdout"] = 12345
        elif lie == "exit":
            res["exit_code"] = "zero"
    elif op == "hello":
        res = {"version": "liar", "proto": 1}
    elif op == "shutdown":
        sys.stdout.write(json.dumps({"id": req["id"], "ok": True, "result": {}}) + "\n")
        sys.stdout.flush()
        break
    sys.stdout.write(json.dumps({"id": req["id"], "ok": True, "result": res}) + "\n")
    sys.stdout.flush()
PY
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$TMP/agent.py" >"$TMP/agent"
chmod +x "$TMP/agent"
cat >"$TMP/preempt.json" <<'P'
{ "name": "liar", "target": "local", "matrix": {"preempt": ["full"]},
  "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}] }
P
cat >"$TMP/plain.json" <<'P'
{ "name": "liar", "target": "local", "workloads": [{"type": "hackbench", "groups": 1, "loops": 10}] }
P
for lie in modes ncpus notobject; do
	LIE=$lie SCHEDLAB_AGENT="$TMP/agent" expect_exit 2 "sysinfo lie '$lie': plan --check refuses (no crash)" \
		schedlab plan --check "$TMP/preempt.json"
	contains "... naming the untrusted reply" "$TMP/err" "untrusted reply"
done
contains "... and the field with its type" "$TMP/err" "preempt must be"
LIE=modes SCHEDLAB_AGENT="$TMP/agent" expect_exit 1 "sysinfo lie: schedlab sysinfo fails too" schedlab sysinfo
contains "... naming preempt_modes" "$TMP/err" "preempt_modes must be"
LIE=none SCHEDLAB_AGENT="$TMP/agent" expect_exit 0 "the honest stand-in passes the same check" \
	schedlab plan --check "$TMP/preempt.json"
for lie in stdout exit; do
	LIE=$lie SCHEDLAB_AGENT="$TMP/agent" expect_exit 1 "exec lie '$lie': the run fails (no crash)" \
		schedlab run "$TMP/plain.json" --db "$TMP/l.db" --quiet
	contains "... saying why" <(sqlite3 "$TMP/l.db" "SELECT error FROM run ORDER BY id DESC LIMIT 1") "untrusted reply"
done
done_testing
