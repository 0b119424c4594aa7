# The robot's synthetic history (t0820, t0860): one nightly session a night
# of plan "robot" on machine "syn", its kernel the night's commit of a git
# repository, three hackbench runs a night with time_s (and, when asked,
# rate_per_s) at the night's level times a small fixed noise. Writes SQL.
#   python3 robot-history.py OUT REPO NIGHTS TIME RATE COMMIT...
# TIME and RATE: JSON objects of night -> level (default 1.0 and 100); RATE
# "" stores no rate_per_s. COMMIT: night 1's first. Sessions are marked as
# nights (session.nightly, schema 15).
import json, sys

out, repo, nights, time, rate = sys.argv[1:6]
commits = sys.argv[6:]
nights = int(nights)
time = {int(k): v for k, v in json.loads(time).items()}
rate = {int(k): v for k, v in json.loads(rate).items()} if rate else None
plan = json.dumps({"name": "robot", "matrix": {"kernel": {"git": repo, "ref": "main"}}})
P = '{"groups":2,"loops":200,"type":"hackbench"}'
s = ["BEGIN;",
     "INSERT INTO machine (id, name, fingerprint) VALUES (1, 'syn', 'fp-syn');",
     "INSERT INTO kernel (id, release, config_hash, hz, sched_mc) VALUES (1, '6.1.0-robot', 'feedbeef', 250, 1);"]
run = 0
for i in range(1, nights + 1):
    day = "2026-02-%02dT03:00:00.000Z" % i
    s.append("INSERT INTO session (id, name, plan_json, tag, target, harness_version, status, started_at, nightly)"
             " VALUES (%d, 'robot', '%s', 'nightly-%02d', 'local', 'test', 'done', '%s', 1);" % (i, plan, i, day))
    s.append("INSERT INTO boot (id, session_id, seq, cfg, status, machine_id, kernel_id, preempt, cmdline,"
             " kernel_commit, kernel_describe) VALUES (%d, %d, 0, 0, 'ok', 1, 1, 'full', 'root=/dev/vda', '%s', 'v-%d');"
             % (i, i, commits[i - 1], i))
    for rep in range(3):
        run += 1
        noise = 1 + 0.004 * (rep - 1) + 0.001 * ((i * 7) % 3 - 1)
        s.append("INSERT INTO run (id, session_id, boot_id, seq, round, workload, params, knobs, rep, status,"
                 " started_at) VALUES (%d, %d, %d, %d, 0, 'hackbench', '%s', '{}', %d, 'ok', '%s%d');"
                 % (run, i, i, rep, P, rep, day[:-1], rep))
        s.append("INSERT INTO metric (run_id, workload, name, value, unit, better) VALUES"
                 " (%d, 'hackbench', 'time_s', %.5f, 's', 'lower');" % (run, time.get(i, 1.0) * noise))
        if rate is not None:
            s.append("INSERT INTO metric (run_id, workload, name, value, unit, better) VALUES"
                     " (%d, 'hackbench', 'rate_per_s', %.5f, '1/s', 'higher');"
                     % (run, rate.get(i, 100) * noise))
s.append("COMMIT;")
open(out, "w").write("\n".join(s) + "\n")
