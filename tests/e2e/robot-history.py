# The robot's synthetic history (t0820, t0860): one nightly session a night
# of plan "robot" on machine "syn", its kernel the night's commit of a git
# repository, three hackbench runs a night with time_s (and, when asked,
# rate_per_s) at the night's level times a small fixed noise. Writes SQL.
#   python3 robot-history.py OUT REPO NIGHTS TIME RATE COMMIT...
# TIME and RATE: JSON objects of night -> level (default 1.0 and 100); RATE
# "" stores no rate_per_s. COMMIT: night 1's first. Sessions are marked as
# nights (session.nightly, schema 15). The rows go through fixture.py.
import json, sys

import fixture

out, repo, nights, time, rate = sys.argv[1:6]
commits = sys.argv[6:]
nights = int(nights)
time = {int(k): v for k, v in json.loads(time).items()}
rate = {int(k): v for k, v in json.loads(rate).items()} if rate else None
plan = json.dumps({"name": "robot", "matrix": {"kernel": {"git": repo, "ref": "main"}}})
P = '{"groups":2,"loops":200,"type":"hackbench"}'
r = fixture.Rows()
r.add("machine", id=1, name="syn", fingerprint="fp-syn")
r.add("kernel", id=1, release="6.1.0-robot", config_hash="feedbeef", hz=250, sched_mc=1)
run = 0
for i in range(1, nights + 1):
    day = "2026-02-%02dT03:00:00.000Z" % i
    r.add("session", id=i, name="robot", plan_json=plan, tag="nightly-%02d" % i, started_at=day,
          nightly=1)
    r.add("boot", id=i, session_id=i, machine_id=1, kernel_id=1, preempt="full",
          kernel_commit=commits[i - 1], kernel_describe="v-%d" % i)
    for rep in range(3):
        run += 1
        noise = 1 + 0.004 * (rep - 1) + 0.001 * ((i * 7) % 3 - 1)
        r.add("run", id=run, session_id=i, boot_id=i, seq=rep, workload="hackbench", params=P,
              rep=rep, started_at="%s%d" % (day[:-1], rep))
        r.add("metric", run_id=run, workload="hackbench", name="time_s",
              value="%.5f" % (time.get(i, 1.0) * noise), unit="s", better="lower")
        if rate is not None:
            r.add("metric", run_id=run, workload="hackbench", name="rate_per_s",
                  value="%.5f" % (rate.get(i, 100) * noise), unit="1/s", better="higher")
open(out, "w").write(r.text())
