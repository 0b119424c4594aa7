#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 1800 (tests/run.sh ends it past this many seconds; the boot waits scale with the host's load)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# End-to-end: zero-install ssh targets. A qemu guest with dropbear stands in
# for a bare lab box: its initramfs has busybox, dropbear and kexec-tools but
# none of the workloads' programs (the qemu target's "tools": ["kexec"]).
# Checks:
#   - the box really lacks cyclictest, hackbench and stress-ng (command -v
#     over ssh fails);
#   - the issue's bare-box scenario: kexec into preempt=none and =full,
#     cyclictest and hackbench rows stored under both verified modes, every
#     program from the bundle (copied again after each kexec: the box's
#     root is RAM);
#   - a plan with the default "tools" ("bundle") runs cyclictest (with a
#     hackbench load) and hackbench from the workload bundle copied to
#     AGENT_DIR/bundle/<hash>, whose name is the SHA-256 of its MANIFEST and
#     whose files check out with the box's sha256sum -c;
#   - sl-pingpong (static) runs from the bundle too;
#   - every run records which program ran: path in the bundle and the SHA-256
#     of the controller's binary (files."schedlab-tools.json"), the load's too;
#   - a second session finds the bundle and copies nothing (MANIFEST's ctime
#     unchanged, boot sysinfo bundle.copied false), no temporary folder left;
#   - a damaged bundle (one byte appended to a library) is not used: the next
#     session copies it again and runs;
#   - lockholder, perf bench (pipe, messaging) and sockperf from the bundle;
#   - pgbench (scale 1, 2 clients, 5 s) on the box, which has no PostgreSQL,
#     no postgres/pgbench in PATH and no tzdata: PostgreSQL from the bundle's
#     pg/ (wrappers through the bundled loader), the server as nobody; tps
#     and lat_p99_us stored; no process, socket, mount, run folder or System V
#     segment left on the box;
#   - "tools": "target" on the bare box fails every run with the clear
#     message naming the Debian package, and a bad "tools" value is refused
#     at plan time naming target.tools.
. "$(dirname "$0")/lib.sh"
# each boot's wait (kexec, ssh): 150 s scaled by the host's load (lib.sh
# load_scaled; CI at load 20-36 once saw a kexec take longer than 150 s)
boot_wait=$(load_scaled 150)
echo "# boot wait: $boot_wait s ($(host_load))"

require qemu-system-x86:qemu-system-x86_64 openssh-client:ssh openssh-client:ssh-keygen \
	dropbear-bin:dropbear dropbear-bin:dropbearkey python3:python3 sqlite3:sqlite3 \
	rt-tests:cyclictest rt-tests:hackbench postgresql-15:/usr/lib/postgresql/15/bin/postgres \
	linux-perf:perf sockperf:sockperf jq:jq
require_built bin/schedlab-agent build/libschedlab.a
if [ ! -f kernels/out/debian/kernel.json ]; then
	check "make -C kernels debian" make -s -C kernels debian
fi
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "no kernel: cannot go on"
	done_testing
	exit
fi

# --- plan-time refusal (no machine needed)
cat >"$TMP/bad-tools.json" <<'EOF'
{"name": "x", "target": {"type": "ssh", "host": "127.0.0.1", "tools": "box"},
 "workloads": [{"type": "hackbench"}]}
EOF
expect_exit 2 "a bad target.tools is refused" schedlab plan "$TMP/bad-tools.json"
contains "naming target.tools and the valid values" "$TMP/err" 'target.tools: must be one of "bundle", "target"'

# --- keys, port, the guest
ssh_test_keys
G() { ssh -T -o BatchMode=yes -o IdentitiesOnly=yes -i "$TMP/id" -o UserKnownHostsFile="$TMP/known_hosts" \
	-o StrictHostKeyChecking=yes -p "$PORT" root@127.0.0.1 "$@"; }

check "compile the guest driver" cc -std=gnu11 -D_GNU_SOURCE -I. -o "$TMP/vm" tests/e2e/ssh-guest.c \
	build/libschedlab.a -ljansson -lsqlite3 -lgsl -lgslcblas -llz4 -lmicrohttpd -lm -pthread
if [ ! -x "$TMP/vm" ]; then
	done_testing
	exit
fi
export TMPDIR=$TMP
VMCONF="{\"type\":\"qemu\",\"kernel\":\"kernels/out/debian\",\"switch\":\"kexec\",\"cpus\":2,\"memory_mb\":1024,
 \"tools\":[\"kexec\"],
 \"ssh\":{\"port\":$PORT,\"authorized_keys\":\"$TMP/id.pub\",\"host_key\":\"$TMP/hostkey\"}}"
rm -f "$TMP/vm.hold"
mkfifo "$TMP/vm.hold"
sleep 100000 >"$TMP/vm.hold" &
CLEANUP_CMDS+=("kill $!")
"$TMP/vm" "$VMCONF" <"$TMP/vm.hold" >"$TMP/vm.out" 2>&1 &
VM_PID=$!
CLEANUP_CMDS+=("kill $VM_PID")
CLEANUP_CMDS+=("kill -9 \$(pgrep -f '$TMP/schedlab-qemu')")
for i in $(seq 240); do
	grep -qE '^(ready|error)' "$TMP/vm.out" 2>/dev/null && break
	sleep 0.5
done
if grep -q '^ready' "$TMP/vm.out"; then
	ok "bare guest with dropbear up ($(cat "$TMP/vm.out"))"
else
	not_ok "bare guest with dropbear up" "$(cat "$TMP/vm.out")"
	done_testing
	exit
fi

# --- the box lacks the tools
G 'for p in cyclictest hackbench stress-ng; do command -v $p && echo "HAS $p"; done; echo checked' \
	>"$TMP/has" 2>&1
equals "the box has no cyclictest, hackbench or stress-ng (command -v fails)" "$(cat "$TMP/has")" checked
if G 'command -v cyclictest' >/dev/null 2>&1; then
	not_ok "command -v cyclictest fails over ssh"
else
	ok "command -v cyclictest fails over ssh"
fi

plan() { # NAME TOOLS -> $TMP/NAME.json
	cat >"$TMP/$1.json" <<EOF
{"name": "$1", "seed": 1, "repetitions": 1,
 "target": {"type": "ssh", "host": "127.0.0.1", "port": $PORT, "user": "root",
            "identity": "$TMP/id", "known_hosts": "$TMP/known_hosts", "timeout_s": $boot_wait
            $2},
 "workloads": [{"type": "cyclictest", "duration_s": 2, "threads": 1,
                "load": {"type": "hackbench", "groups": 1}},
               {"type": "hackbench", "groups": 1, "loops": 50},
               {"type": "pingpong", "stages": 2, "duration_s": 2}]}
EOF
}
BD=/root/.cache/schedlab/bundle

# --- first session: the bundle is copied and used
plan bundle ""
DB=$TMP/b1.db
start=$(date +%s.%N)
expect_exit 0 "a plan with the default tools runs on the bare box" \
	schedlab run "$TMP/bundle.json" --db "$DB" --quiet
echo "# first session (bundle copied): $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
equals "3 runs ok" "$(sql "SELECT count(*) FROM run WHERE status='ok'")" 3
equals "cyclictest and hackbench metrics stored" \
	"$(sql "SELECT count(DISTINCT workload) FROM results WHERE metric IN ('lat_p99_us','time_s')")" 2
H=$(sql "SELECT json_extract(sysinfo, '\$.bundle.hash') FROM boot")
equals "boot records the bundle as copied" "$(sql "SELECT json_extract(sysinfo, '\$.bundle.copied') FROM boot")" 1
sql "SELECT json_extract(sysinfo, '\$.bundle') FROM boot" | sed 's/^/# bundle: /'
G "cd $BD/$H && sha256sum MANIFEST | cut -c1-64 && sha256sum -c MANIFEST >/dev/null && echo intact" >"$TMP/man" 2>&1
equals "the bundle's folder is the SHA-256 of its MANIFEST, and it checks out on the box" \
	"$(cat "$TMP/man" | tr '\n' ' ')" "$H intact "
TOOLS() { sql "SELECT json_extract(json_extract(files, '\$.\"schedlab-tools.json\"'), '$1') FROM run WHERE workload='$2'"; }
equals "cyclictest ran from the bundle" "$(TOOLS '$.workload.path' cyclictest)" "$BD/$H/bin/cyclictest"
equals "its recorded sha256 is the controller's cyclictest" "$(TOOLS '$.workload.sha256' cyclictest)" \
	"$(sha256sum "$(command -v cyclictest)" | cut -c1-64)"
equals "marked as from the bundle, argv0 cyclictest" \
	"$(TOOLS '$.workload.from' cyclictest) $(TOOLS '$.workload.argv0' cyclictest)" "bundle cyclictest"
equals "the hackbench load too" "$(TOOLS '$.loads[0].path' cyclictest)" "$BD/$H/bin/hackbench"
equals "hackbench's sha256 recorded" "$(TOOLS '$.workload.sha256' hackbench)" \
	"$(sha256sum "$(command -v hackbench)" | cut -c1-64)"
equals "sl-pingpong (static, from next to the agent) ran from the bundle" \
	"$(TOOLS '$.workload.path' pingpong) $(TOOLS '$.workload.sha256' pingpong)" \
	"$BD/$H/bin/sl-pingpong $(sha256sum bin/sl-pingpong | cut -c1-64)"
if G 'command -v cyclictest' >/dev/null 2>&1; then
	not_ok "nothing installed into the box's PATH"
else
	ok "nothing installed into the box's PATH"
fi
G "stat -c %Z $BD/$H/MANIFEST" >"$TMP/ct1" 2>&1

# --- second session: found, nothing copied
sleep 1.1
DB=$TMP/b2.db
start=$(date +%s.%N)
expect_exit 0 "a second session runs" schedlab run "$TMP/bundle.json" --db "$DB" --quiet
echo "# second session (bundle found): $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
sql "SELECT 'boot switch_s ' || round(switch_s, 2) FROM boot; SELECT workload || ' wall_s ' || round(wall_s, 2) || ' ' || started_at || ' ' || finished_at FROM run" | sed 's/^/# /' 
equals "3 runs ok" "$(sql "SELECT count(*) FROM run WHERE status='ok'")" 3
equals "the same bundle" "$(sql "SELECT json_extract(sysinfo, '\$.bundle.hash') FROM boot")" "$H"
equals "boot records it as found, not copied" "$(sql "SELECT json_extract(sysinfo, '\$.bundle.copied') FROM boot")" 0
G "stat -c %Z $BD/$H/MANIFEST" >"$TMP/ct2" 2>&1
equals "MANIFEST not rewritten (same ctime)" "$(cat "$TMP/ct2")" "$(cat "$TMP/ct1")"
equals "one bundle, no temporary folder left" "$(G "ls $BD" 2>&1 | tr '\n' ' ')" "$H "

# --- a damaged bundle is not used
G "chmod u+w $BD/$H/lib/libc.so.6; printf x >>$BD/$H/lib/libc.so.6" >/dev/null 2>&1
DB=$TMP/b3.db
expect_exit 0 "a session after the bundle was damaged runs" schedlab run "$TMP/bundle.json" --db "$DB" --quiet
equals "3 runs ok" "$(sql "SELECT count(*) FROM run WHERE status='ok'")" 3
equals "the bundle was copied again" "$(sql "SELECT json_extract(sysinfo, '\$.bundle.copied') FROM boot")" 1
G "cd $BD/$H && sha256sum -c MANIFEST >/dev/null && echo intact" >"$TMP/man2" 2>&1
equals "and checks out again" "$(cat "$TMP/man2")" intact

# --- pgbench from the bundle: the box has no PostgreSQL (no programs, no
# libraries, no share files, no tzdata); the bundle carries it in pg/ and
# sl-pgbench runs the server as nobody through a bind mount of its own
G 'for p in postgres initdb pgbench psql; do command -v $p && echo "HAS $p"; done;
   for d in /usr/lib/postgresql /usr/share/postgresql /usr/share/zoneinfo; do [ -e $d ] && echo "HAS $d"; done;
   echo checked' >"$TMP/haspg" 2>&1
equals "the box has no postgres, initdb, pgbench, psql, PostgreSQL folders or tzdata" "$(cat "$TMP/haspg")" checked
if G 'command -v pgbench' >/dev/null 2>&1 || G 'command -v postgres' >/dev/null 2>&1; then
	not_ok "command -v pgbench / postgres fail over ssh"
else
	ok "command -v pgbench / postgres fail over ssh"
fi
cat >"$TMP/pg.json" <<EOF
{"name": "pg", "seed": 1, "repetitions": 1,
 "target": {"type": "ssh", "host": "127.0.0.1", "port": $PORT, "user": "root",
            "identity": "$TMP/id", "known_hosts": "$TMP/known_hosts", "timeout_s": $boot_wait},
 "workloads": [{"type": "pgbench", "scale": 1, "clients": 2, "threads": 1, "duration_s": 5}]}
EOF
DB=$TMP/pg.db
start=$(date +%s.%N)
expect_exit 0 "pgbench (scale 1, 2 clients, 5 s) runs on the bare box from the bundle" \
	schedlab run "$TMP/pg.json" --db "$DB" --quiet
echo "# pgbench session (bundle with PostgreSQL copied): $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
sql "SELECT json_extract(sysinfo, '\$.bundle') FROM boot" | sed 's/^/# pg bundle: /'
sql "SELECT 'run wall_s ' || round(wall_s, 1) FROM run" | sed 's/^/# /'
sql "SELECT metric || ' ' || round(value, 1) FROM results WHERE metric IN ('tps','lat_p50_us','lat_p99_us','init_s')" | sed 's/^/# /'
equals "the run is ok" "$(sql "SELECT status FROM run")" ok
equals "tps and lat_p99_us stored, positive, p50 <= p99" \
	"$(sql "SELECT count(*) FROM (SELECT
		max(CASE WHEN metric='tps' THEN value END) t,
		max(CASE WHEN metric='lat_p50_us' THEN value END) p50,
		max(CASE WHEN metric='lat_p99_us' THEN value END) p99
		FROM results WHERE workload = 'pgbench') WHERE t > 0 AND 0 < p50 AND p50 <= p99")" 1
PH=$(sql "SELECT json_extract(sysinfo, '\$.bundle.hash') FROM boot")
PGJ() { sql "SELECT json_extract(json_extract(files, '\$.\"sl-pgbench.json\"'), '$1') FROM run"; }
equals "the server ran as nobody, PostgreSQL from the bundle" "$(PGJ '$.user') $(PGJ '$.postgresql')" "nobody bundle"
equals "sl-pgbench ran from the bundle" "$(TOOLS '$.workload.path' pgbench)" "$BD/$PH/bin/sl-pgbench"
contains "the server's log: the Unix socket in the run folder" \
	<(sql "SELECT json_extract(files, '\$.\"postgres.log\"') FROM run") 'listening on Unix socket "/tmp/schedlab-run-'
contains "initdb made the cluster with the bundle's programs" \
	<(sql "SELECT json_extract(files, '\$.\"initdb.txt\"') FROM run") "/bundle/pg/usr/lib/postgresql/15/bin/pg_ctl"
G "cd $BD/$PH && ls pg/usr/lib/postgresql/15/bin && sha256sum -c MANIFEST >/dev/null && echo intact" >"$TMP/pgman" 2>&1
equals "the bundle holds the wrappers and programs and checks out" "$(tr '\n' ' ' <"$TMP/pgman")" \
	"initdb initdb.real pgbench pgbench.real postgres postgres.real intact "
G 'for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline 2>/dev/null; echo; done | grep -E "postgres|pgbench|ld-linux" | grep -v grep;
   grep -c PGSQL /proc/net/unix; grep -c schedlab-run /proc/mounts; ls -d /tmp/schedlab-run-* 2>/dev/null;
   awk "NR > 1 && \$8 == 65534" /proc/sysvipc/shm; echo end' >"$TMP/pgleft" 2>&1
equals "no postgres or pgbench process, socket, mount, run folder or shared memory left on the box" \
	"$(tr '\n' ' ' <"$TMP/pgleft")" "0 0 end "

# --- the other workloads of issue 30 from the bundle on the bare box:
# sl-lockholder (static), perf bench (Debian's perf, dynamic) and sockperf
# (sl-netpair starting sockperf from the bundle through its loader)
G 'for p in perf sockperf; do command -v $p >/dev/null && echo "HAS $p"; done; echo checked' >"$TMP/hasnew"
# (the box has neither, so a run that is ok ran them from the bundle)
equals "the box has no perf or sockperf" "$(cat "$TMP/hasnew")" checked
jq '.name = "new" | .workloads = [
      {"type": "lockholder", "duration_s": 2, "threads": 4},
      {"type": "perf-pipe", "loops": 2000},
      {"type": "perf-messaging", "groups": 1, "loops": 10},
      {"type": "sockperf", "duration_s": 2}]' "$TMP/pg.json" >"$TMP/new.json"
DB=$TMP/new.db
expect_exit 0 "lockholder, perf bench and sockperf run on the bare box from the bundle" \
	schedlab run "$TMP/new.json" --db "$DB" --quiet
equals "each run ok with its primary metric stored" \
	"$(sql "SELECT group_concat(workload || ':' || status || ':' || (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.metric IN ('acq_per_s', 'usecs_per_op', 'time_s', 'rtt_p50_us') AND x.value > 0), ' ')
	        FROM (SELECT * FROM run ORDER BY workload) r")" \
	"lockholder:ok:1 perf-messaging:ok:1 perf-pipe:ok:2 sockperf:ok:1"

# --- "tools": "target" on the bare box
plan target ', "tools": "target"'
DB=$TMP/t.db
expect_exit 1 "tools target on the bare box: runs fail" schedlab run "$TMP/target.json" --db "$DB" --quiet
equals "cyclictest and hackbench failed" \
	"$(sql "SELECT group_concat(workload || ':' || status) FROM (SELECT * FROM run ORDER BY workload)")" \
	"cyclictest:failed,hackbench:failed,pingpong:ok"
# (the guest's initramfs has every sl-* program: the box's own is used and recorded)
equals "sl-pingpong ran from the box's PATH, recorded as from the target" \
	"$(TOOLS '$.workload.path' pingpong) $(TOOLS '$.workload.from' pingpong)" \
	"$(G 'command -v sl-pingpong') target"
contains "with the package message" <(sql "SELECT error FROM run WHERE workload='cyclictest'") \
	"cyclictest: command not found in PATH (install the Debian package rt-tests)"
equals "no bundle recorded for that boot" "$(sql "SELECT json_type(sysinfo, '\$.bundle') IS NULL FROM boot")" 1

# --- the issue's scenario: kexec the bare box into two preempt modes (the
# kernel copied from here, the guest's initramfs carried for kexec) and run
# cyclictest and hackbench from the bundle in each; a kexec'd box starts
# from RAM, so the bundle is copied again after each kexec
cat >"$TMP/modes.json" <<EOF
{"name": "bare-modes", "seed": 2, "repetitions": 1, "switch": "kexec",
 "target": {"type": "ssh", "host": "127.0.0.1", "port": $PORT, "user": "root",
            "identity": "$TMP/id", "known_hosts": "$TMP/known_hosts",
            "initrd": "/boot/initrd.cpio", "timeout_s": $boot_wait},
 "matrix": {"kernel": ["kernels/out/debian"], "preempt": ["none", "full"]},
 "workloads": [{"type": "cyclictest", "duration_s": 2, "threads": 1,
                "load": {"type": "hackbench", "groups": 1}},
               {"type": "hackbench", "groups": 1, "loops": 50}]}
EOF
DB=$TMP/m.db
start=$(date +%s)
expect_exit 0 "kexec the bare box into none and full, cyclictest and hackbench in each" \
	schedlab run "$TMP/modes.json" --db "$DB" --quiet
echo "# two kexec boots on the bare box: $(( $(date +%s) - start )) s"
equals "both boots by kexec, ok, the effective mode as asked" \
	"$(sql "SELECT group_concat(method || ':' || status || ':' || (preempt = req_preempt)) FROM (SELECT * FROM boot ORDER BY seq)")" \
	"kexec:ok:1,kexec:ok:1"
equals "cyclictest and hackbench rows under both verified modes" \
	"$(sql "SELECT group_concat(x) FROM (SELECT DISTINCT preempt || '/' || workload AS x FROM results WHERE metric IN ('lat_p99_us','time_s') ORDER BY x)")" \
	"full/cyclictest,full/hackbench,none/cyclictest,none/hackbench"
equals "every run from the bundle" \
	"$(sql "SELECT DISTINCT json_extract(json_extract(files, '\$.\"schedlab-tools.json\"'), '\$.workload.from') FROM run")" bundle
if G 'command -v cyclictest' >/dev/null 2>&1; then
	not_ok "still nothing in the box's PATH after the kexecs"
else
	ok "still nothing in the box's PATH after the kexecs"
fi

# --- nothing left behind
kill $VM_PID 2>/dev/null
wait $VM_PID 2>/dev/null
sleep 0.5
left=$(pgrep -f "$TMP/schedlab-qemu" | tr '\n' ' ')
[ -z "$left" ] && ok "no qemu process left" || not_ok "no qemu process left" "$left"
left=$(ours "ssh .*-p $PORT" | cut -d" " -f1 | tr "\n" " ")
[ -z "$left" ] && ok "no ssh process left" || not_ok "no ssh process left" "$left"
done_testing
