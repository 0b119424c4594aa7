#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 1200 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# End-to-end: `schedlab run` of plans on the `lava` target
# (harness/targets/lava.c) against the real single-host LAVA of
# tests/lava/setup.sh. Every boot becomes one LAVA job carrying the boot's
# runs in a batch initramfs; the session hands the target all runs of a boot
# at once (target_ops.batch_submit), several boots in flight, and stores
# the boot and each run once, as its job ends.
#  1. preempt=none and preempt=full with hackbench: both boots ok with the
#     effective mode the agent read in the guest, rows in `results`, a
#     distinct LAVA job id and URL stored with each boot;
#  2. a kernel that cannot start init (rdinit=/no-such-init, no root): a
#     failed boot carrying LAVA's reason and the job URL, its run skipped
#     (resumable) with the same reason;
#     a boot in the wrong mode (the target's "append" overrides preempt=):
#     mismatch, quarantined; a lab of two lava members: two jobs at once;
#     the two boots' jobs in flight at once on the two devices (LAVA's
#     start/end times overlap), the whole job log kept with each boot; the
#     lab's plan runs sockperf too (sl-netpair and sockperf in the batch
#     initramfs), its round trips stored;
#     a job the lab fails (its qemu killed under it: LAVA's
#     Infrastructure error): the boot stored failed and submitted again,
#     the run stored once; with infra_retries 0 left for --resume;
#  3. a session interrupted (SIGINT) while its job runs: the job is
#     canceled, the session is interrupted, and `--resume` completes it;
#  4. three boots on two devices with the artifacts served over HTTP by the
#     controller: the third job is submitted when the first ends, a boot is
#     stored while another's job still runs; the controller is SIGKILLed
#     then, and `--resume last` keeps the two stored boots, cancels the
#     orphaned job and submits its boot again; every run stored once.
# Also: `plan --lava-job` (a pgbench plan's initramfs carries PostgreSQL's
# files, listed with cpio), one pgbench run in a LAVA job (about 20 s),
# knob sets through the batch, the plan object's and the token file's
# checks.
# Each job costs about 20-40 s under TCG on this host.
. "$(dirname "$0")/lib.sh"

require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio curl:curl jq:jq sqlite3:sqlite3 \
	sockperf:sockperf postgresql-15:/usr/lib/postgresql/15/bin/postgres
require_built bin/schedlab-agent bin/schedlab
lava_up

if [ ! -f kernels/out/debian/kernel.json ]; then
	check "make -C kernels debian" make -s -C kernels debian
fi
KDIR=$(readlink -f kernels/out/debian)
DB="$TMP/r.db"

plan() { # FILE PREEMPTS-JSON CMDLINES-JSON [KNOBS-JSON [TARGET-APPEND]]
	cat >"$1" <<EOF
{
  "name": "t0740",
  "target": {"type": "lava", "url": "$LAVA_URL", "token_file": "$LAVA_TOKEN_FILE",
             "user": "$LAVA_USER", "device_type": "qemu", "kernel": "$KDIR",
             "timeout_s": 300, "append": "${5:-}"},
  "repetitions": 1,
  "matrix": {"preempt": $2, "cmdline": $3, "knobs": ${4:-[{\}]}},
  "workloads": [ {"type": "hackbench", "groups": 1, "loops": 50} ]
}
EOF
}

# the boots the lab failed (LAVA's Infrastructure error, the kernel said
# nothing wrong) are stored failed and submitted again (section 2b tests
# that, and section 2 that a panicking kernel, whose LAVA error is the
# same, is not one); a loaded host sees one now and then, so the other
# sections look past them
NOLAB="NOT (status = 'failed' AND error LIKE '%(a lab fault: the kernel printed no failure)')"
labfailed() { # DB: the boots the lab failed, for the log
	echo "# boots the lab failed (submitted again): $(sqlite3 "$1" "SELECT count(*) FROM boot WHERE NOT ($NOLAB)")"
}

# --- 1. two preempt modes
plan "$TMP/modes.json" '["none", "full"]' '[""]' \
	'[{}, {"sysctl": {"sched_rr_timeslice_ms": 50}}, {"sysctl": {"no_such_sysctl": 1}}]'
# the plan's target object is checked at plan time, the token file too
# (issue 33: exit 2 before anything is stored, nothing submitted)
sed 's|"url": "[^"]*"|"url": "ftp://lava"|' "$TMP/modes.json" >"$TMP/badurl.json"
expect_exit 2 "plan: a lava url that is not http(s)" bin/schedlab plan "$TMP/badurl.json"
contains "  ... names the key and what is valid" "$TMP/err" "target.url: must be the LAVA server's http:// or https:// URL"
install -m 644 "$LAVA_TOKEN_FILE" "$TMP/open-token"
sed "s|\"token_file\": \"[^\"]*\"|\"token_file\": \"$TMP/open-token\"|" "$TMP/modes.json" >"$TMP/opentoken.json"
expect_exit 2 "run: a token file others can read is refused" bin/schedlab run --db "$TMP/tok.db" "$TMP/opentoken.json"
contains "  ... says so" "$TMP/err" "is readable by group or others (mode 644; chmod 600 it)"
if [ -e "$TMP/tok.db" ]; then not_ok "  ... before anything is stored (no database made)"; else ok "  ... before anything is stored (no database made)"; fi

# the job of the first boot, for review
expect_exit 0 "plan --lava-job" bin/schedlab plan --lava-job "$TMP/modes.json"
equals "plan --lava-job: the first boot's job" \
	"$(jq -r '.job_name + " | " + .actions[0].deploy.images.kernel.image_arg' "$TMP/out")" \
	'schedlab boot 1 preempt=none | -kernel {kernel} -append "console=ttyS0,115200 panic=-1 preempt=none"'
initrd=$(jq -r '.actions[0].deploy.images.ramdisk.url' "$TMP/out")
if [ -f "${initrd#file://}" ] && cpio -it <"${initrd#file://}" 2>/dev/null | grep -qx "etc/schedlab/requests.jsonl"; then
	ok "plan --lava-job: its initramfs carries the requests"
else
	not_ok "plan --lava-job: its initramfs carries the requests" "ramdisk url: $initrd"
fi
# pgbench on lava: the job's batch initramfs carries PostgreSQL as a qemu
# guest's does (harness/targets/pgfiles.c): programs in /bin, share files,
# plpgsql and dict_snowball in /lib, sl-pgbench; no manual pages
sed 's|"workloads": \[.*|"workloads": [ {"type": "pgbench", "scale": 1, "clients": 2, "duration_s": 3} ]|' \
	"$TMP/modes.json" >"$TMP/pg.json"
expect_exit 0 "plan --lava-job of a plan with pgbench" bin/schedlab plan --lava-job "$TMP/pg.json"
pinitrd=$(jq -r '.actions[0].deploy.images.ramdisk.url' "$TMP/out")
cpio -it <"${pinitrd#file://}" >"$TMP/pg.list" 2>/dev/null
pgmiss=""
for f in bin/postgres bin/initdb bin/pgbench bin/sl-pgbench lib/plpgsql.so lib/dict_snowball.so \
	usr/share/postgresql/15/postgres.bki usr/share/postgresql/15/timezonesets/Default \
	usr/share/postgresql/15/extension/plpgsql.control etc/passwd etc/schedlab/requests.jsonl; do
	grep -qx "$f" "$TMP/pg.list" || pgmiss+=" $f"
done
grep -q 'libicudata\.so' "$TMP/pg.list" || pgmiss+=" libicudata"
equals "  ... its initramfs carries PostgreSQL (programs, share files, modules, libicu)" "${pgmiss:-none missing}" "none missing"
equals "  ... without manual pages or other extensions" \
	"$(grep -cE '^usr/share/postgresql/15/(man/|extension/[^p])' "$TMP/pg.list")" 0
if cpio -it <"${initrd#file://}" 2>/dev/null | grep -q 'bin/postgres$'; then
	not_ok "  ... a plan without pgbench gets none of it"
else
	ok "  ... a plan without pgbench gets none of it"
fi
expect_exit 2 "plan --lava-job on a plan whose target is not lava" \
	bin/schedlab plan --lava-job "$TMP/modes.json" --target local
contains "  ... says why" "$TMP/err" "which submits no batch jobs"
ts=$(date +%s)
expect_exit 1 "run: two boots, two LAVA jobs (exit 1: the runs of the missing knob are skipped)" bin/schedlab run --db "$DB" "$TMP/modes.json"
echo "# two jobs: $(($(date +%s) - ts)) s"
cp "$TMP/err" "$TMP/modes.err"
S1=$(sql "SELECT max(id) FROM session")
equals "boots ok with the effective mode" \
	"$(sql "SELECT group_concat(req_preempt || '=' || preempt || ':' || status, ' ') FROM (SELECT * FROM boot WHERE session_id = $S1 AND $NOLAB ORDER BY seq)")" \
	"none=none:ok full=full:ok"
equals "a distinct LAVA job per boot" \
	"$(sql "SELECT count(DISTINCT lava_job_id) FROM boot WHERE session_id = $S1 AND $NOLAB AND lava_job_id > 0")" 2
equals "job URLs stored with the boots" \
	"$(sql "SELECT count(*) FROM boot WHERE session_id = $S1 AND $NOLAB AND lava_job_url = '$LAVA_URL/scheduler/job/' || lava_job_id")" 2
for id in $(sql "SELECT lava_job_id FROM boot WHERE session_id = $S1 AND $NOLAB"); do
	equals "job $id Complete in LAVA" "$(api "jobs/$id/" | jq -r '.state + " " + .health')" "Finished Complete"
done
equals "every run stored once: ok, ok with a knob, skipped for a missing knob" \
	"$(sql "SELECT group_concat(n, ' ') FROM (SELECT status || '=' || count(*) AS n FROM run WHERE session_id = $S1 GROUP BY status ORDER BY status)")" \
	"ok=4 skipped=2"
equals "the knob write travelled with the job (old, new, read back)" \
	"$(sql "SELECT count(*) FROM run WHERE session_id = $S1 AND status = 'ok' AND knobs_applied LIKE '%sched_rr_timeslice_ms%' AND knobs_applied LIKE '%50%'")" 2
equals "a knob the kernel lacks: skipped as on other targets" \
	"$(sql "SELECT count(*) FROM run WHERE session_id = $S1 AND status = 'skipped' AND error LIKE 'unsupported by this kernel%no_such_sysctl%'")" 2
equals "hackbench rows under both modes" \
	"$(sql "SELECT group_concat(preempt, ' ') FROM (SELECT preempt FROM results WHERE session = $S1 AND metric = 'time_s' ORDER BY preempt)")" \
	"full full none none"
equals "the boot's console (the job log) kept" \
	"$(sql "SELECT count(*) FROM boot WHERE session_id = $S1 AND $NOLAB AND console LIKE '%Linux version%'")" 2
equals "  ... whole: LAVA's own lines and the agent's frames too" \
	"$(sql "SELECT count(*) FROM boot WHERE session_id = $S1 AND $NOLAB AND console LIKE '%lava-dispatcher, installed at version%' AND console LIKE '%SLB1 %' AND console LIKE '%schedlab-batch: end status%'")" 2
contains "one session, its boots' jobs in flight at once" "$TMP/modes.err" "up to 2 jobs in flight"
overlap() { # JOB JOB: their LAVA start/end times overlap
	local a b
	a=$(api "jobs/$1/" | jq -r '.start_time + " " + .end_time')
	b=$(api "jobs/$2/" | jq -r '.start_time + " " + .end_time')
	if [[ "${a% *}" < "${b#* }" && "${b% *}" < "${a#* }" ]]; then
		ok "$3 ($1: $a, $2: $b)"
	else
		not_ok "$3" "job $1: $a" "job $2: $b"
	fi
}
mapfile -t MJ < <(sql "SELECT lava_job_id FROM boot WHERE session_id = $S1 AND $NOLAB ORDER BY seq")
overlap "${MJ[0]}" "${MJ[1]}" "  ... the two jobs ran at the same time"

# --- 2. a kernel that panics
plan "$TMP/panic.json" '["full"]' '["rdinit=/no-such-init root=/dev/no-such-disk"]'
expect_exit 1 "run: a boot whose kernel panics fails" bin/schedlab run --db "$DB" "$TMP/panic.json"
S2=$(sql "SELECT max(id) FROM session")
equals "the boot failed" "$(sql "SELECT status FROM boot WHERE session_id = $S2")" failed
err=$(sql "SELECT error FROM boot WHERE session_id = $S2")
jid=$(sql "SELECT lava_job_id FROM boot WHERE session_id = $S2")
case "$err" in
"lava job $LAVA_URL/scheduler/job/$jid (Incomplete): "*error:*) ok "LAVA's reason and the job URL with the boot" ;;
*) not_ok "LAVA's reason and the job URL with the boot" "error: $err" ;;
esac
run2=$(sql "SELECT status || ': ' || error FROM run WHERE session_id = $S2")
case "$run2" in
"skipped: boot failed: lava job $LAVA_URL/scheduler/job/$jid"*) ok "its run skipped with LAVA's reason (resumable)" ;;
*) not_ok "its run skipped with LAVA's reason (resumable)" "run: $run2" ;;
esac
equals "the session is resumable" "$(sql "SELECT status FROM session WHERE id = $S2")" interrupted
case "$err" in
*"lab fault"*) not_ok "  ... the panic is the kernel's failure, not the lab's" "error: $err" ;;
*) ok "  ... the panic is the kernel's failure, not the lab's" ;;
esac
equals "  ... and is not submitted again (LAVA ends it with the same Infrastructure error)" \
	"$(sql "SELECT count(*) FROM boot WHERE session_id = $S2")" 1

# --- 2b. the lab fails a job: its qemu goes away under it (as on a loaded
# host: LAVA's "Infrastructure error: Connection closed"). The boot is
# stored failed with LAVA's reason and its job log, and submitted again
# (target.infra_retries, default 1); with infra_retries 0 it is not.
job_qemu() { # JOB: the qemu LAVA's dispatcher runs for our job (its own folder)
	local f
	for f in /proc/[0-9]*/cmdline; do
		tr '\0' ' ' <"$f" 2>/dev/null | grep -q "^/usr/bin/qemu-system-x86_64 .*/lava/dispatcher/tmp/$1/" &&
			{ f=${f%/cmdline}; echo "${f#/proc/}"; return; }
	done
}
kill_first_qemu() { # DB: SIGKILL the qemu of the session's first job once it runs
	local jid="" q="" i
	for i in $(seq 1 240); do
		jid=$(sqlite3 "$1" "SELECT lava_job_id FROM boot WHERE status = 'planned' AND lava_job_id > 0" 2>/dev/null || true)
		[ -n "$jid" ] && q=$(job_qemu "$jid")
		[ -n "$q" ] && break
		sleep 0.5
	done
	[ -n "$q" ] && kill -9 "$q"
	echo "${jid:-none} ${q:-none}"
}
plan "$TMP/lab-fault.json" '["full"]' '[""]'
for r in 1 0; do
	jq ".target.infra_retries = $r" "$TMP/lab-fault.json" >"$TMP/lab-fault$r.json"
	rm -f "$TMP/lf$r.db"
	bin/schedlab run --db "$TMP/lf$r.db" "$TMP/lab-fault$r.json" >"$TMP/lf$r.out" 2>"$TMP/lf$r.err" &
	pid=$!
	CLEANUP_CMDS+=("kill $pid")
	read -r LFJOB[r] LFQ <<<"$(kill_first_qemu "$TMP/lf$r.db")"
	wait "$pid"
	LFRC[r]=$?
	CLEANUP_CMDS=("${CLEANUP_CMDS[@]:0:${#CLEANUP_CMDS[@]}-1}")
	echo "# infra_retries $r: job ${LFJOB[r]}, its qemu $LFQ killed; exit ${LFRC[r]}"
done
equals "the lab's fault: exit 0 once the boot is submitted again" "${LFRC[1]}" 0
equals "  ... boots: the failed job's and the new one's" \
	"$(sqlite3 "$TMP/lf1.db" "SELECT group_concat(status || ':' || (lava_job_id = ${LFJOB[1]}), ' ') FROM (SELECT * FROM boot ORDER BY id)")" \
	"failed:1 ok:0"
case "$(sqlite3 "$TMP/lf1.db" "SELECT error FROM boot WHERE status = 'failed'")" in
"lava job $LAVA_URL/scheduler/job/${LFJOB[1]} (Incomplete): Infrastructure error: "*"(a lab fault: the kernel printed no failure)") ok "  ... the failed boot keeps LAVA's reason and the job URL" ;;
*) not_ok "  ... the failed boot keeps LAVA's reason and the job URL" "$(sqlite3 "$TMP/lf1.db" "SELECT error FROM boot WHERE status = 'failed'")" ;;
esac
equals "  ... and its job log" \
	"$(sqlite3 "$TMP/lf1.db" "SELECT count(*) FROM boot WHERE status = 'failed' AND console LIKE '%lava-dispatcher, installed at version%'")" 1
contains "  ... says why it submits again" "$TMP/lf1.err" "(a lab fault: the kernel printed no failure); submitting it again (1 of 1)"
equals "  ... the run stored once, ok, with the new boot, one row" \
	"$(sqlite3 "$TMP/lf1.db" "SELECT count(*) || ' ' || sum(r.status = 'ok') || ' ' || sum(b.status = 'ok') || ' ' || (SELECT count(*) FROM results WHERE metric = 'time_s') FROM run r JOIN boot b ON b.id = r.boot_id")" \
	"1 1 1 1"
equals "infra_retries 0: not submitted again (exit 1)" "${LFRC[0]}" 1
equals "  ... the boot failed, its run left for --resume" \
	"$(sqlite3 "$TMP/lf0.db" "SELECT (SELECT group_concat(status, ' ') FROM boot) || ' / ' || status || ' / ' || (SELECT status FROM session) FROM run")" \
	"failed / skipped / interrupted"

# --- a boot whose effective mode is not the one asked for (the target's
# "append" puts a later preempt= on the command line, which wins):
# quarantined as on other targets
plan "$TMP/mismatch.json" '["full"]' '[""]' '[{}]' 'preempt=none'
expect_exit 1 "run: a boot in the wrong mode" bin/schedlab run --db "$DB" "$TMP/mismatch.json"
S4=$(sql "SELECT max(id) FROM session")
equals "the boot is a mismatch" \
	"$(sql "SELECT status || ': ' || error FROM boot WHERE session_id = $S4")" \
	"mismatch: requested preempt=full, effective none"
equals "its run skipped, no rows" \
	"$(sql "SELECT status || ' ' || (SELECT count(*) FROM results WHERE session = $S4) FROM run WHERE session_id = $S4")" \
	"skipped 0"

# --- a lab of two lava members: one session each, their jobs in flight at
# once on the two devices
plan "$TMP/one.json" '["full"]' '[""]'
# (with sockperf too, whose lava path, sl-netpair starting sockperf from
# the batch initramfs, runs here)
jq '{name: "t0740-lab", targets: [.target, .target], matrix: {preempt: ["full"]},
     workloads: (.workloads + [{type: "sockperf", duration_s: 2}])}' \
	"$TMP/one.json" >"$TMP/lab.json"
expect_exit 0 "lab of two lava targets" bin/schedlab run --db "$TMP/lab.db" "$TMP/lab.json"
equals "  ... two sessions, each its boot ok and both runs ok" \
	"$(sqlite3 "$TMP/lab.db" "SELECT group_concat(b.status || '/' || r.status, ' ') FROM boot b JOIN run r ON r.boot_id = b.id")" \
	"ok/ok ok/ok ok/ok ok/ok"
equals "  ... sockperf's round trips stored from both (p50 <= p99, positive)" \
	"$(sqlite3 "$TMP/lab.db" "SELECT count(*) FROM (SELECT run_id, max(CASE WHEN metric = 'rtt_p50_us' THEN value END) p50,
		max(CASE WHEN metric = 'rtt_p99_us' THEN value END) p99 FROM results WHERE workload = 'sockperf' GROUP BY run_id)
		WHERE 0 < p50 AND p50 <= p99")" 2
mapfile -t LJ < <(sqlite3 "$TMP/lab.db" "SELECT lava_job_id FROM boot ORDER BY id")
if [ "${#LJ[@]}" -eq 2 ]; then
	a=$(api "jobs/${LJ[0]}/" | jq -r '.start_time + " " + .end_time')
	b=$(api "jobs/${LJ[1]}/" | jq -r '.start_time + " " + .end_time')
	if [[ "${a% *}" < "${b#* }" && "${b% *}" < "${a#* }" ]]; then
		ok "  ... their jobs ran at the same time ($a / $b)"
	else
		not_ok "  ... their jobs ran at the same time" "job ${LJ[0]}: $a" "job ${LJ[1]}: $b"
	fi
else
	not_ok "  ... two jobs" "ids: ${LJ[*]}"
fi

# --- pgbench in a LAVA job: the batch initramfs carries PostgreSQL; the
# server runs as nobody from /bin in the guest
plan "$TMP/pgrun.json" '["full"]' '[""]'
sed -i 's|"workloads": \[.*|"workloads": [ {"type": "pgbench", "scale": 1, "clients": 2, "duration_s": 3} ]|' "$TMP/pgrun.json"
ts=$(date +%s)
expect_exit 0 "run: pgbench (scale 1, 2 clients, 3 s) in a LAVA job" bin/schedlab run --db "$TMP/pg.db" "$TMP/pgrun.json"
echo "# pgbench job: $(($(date +%s) - ts)) s"
equals "  ... the run ok, tps and lat_p99_us stored (positive, p50 <= p99) under full" \
	"$(sqlite3 "$TMP/pg.db" "SELECT r.status || ' ' || (SELECT count(*) FROM (SELECT
		max(CASE WHEN metric = 'tps' THEN value END) t, max(CASE WHEN metric = 'lat_p50_us' THEN value END) p50,
		max(CASE WHEN metric = 'lat_p99_us' THEN value END) p99, max(preempt) pr FROM results)
		WHERE t > 0 AND 0 < p50 AND p50 <= p99 AND pr = 'full') FROM run r")" "ok 1"
equals "  ... the server ran as nobody, PostgreSQL from the initramfs's /bin" \
	"$(sqlite3 "$TMP/pg.db" "SELECT json_extract(json_extract(files, '\$.\"sl-pgbench.json\"'), '\$.user') || ' ' ||
		json_extract(json_extract(files, '\$.\"sl-pgbench.json\"'), '\$.postgresql') FROM run")" "nobody /bin"

# --- 3. interrupted while the job runs, then --resume
plan "$TMP/intr.json" '["none"]' '[""]'
bin/schedlab run --db "$DB" "$TMP/intr.json" >"$TMP/intr.out" 2>"$TMP/intr.err" &
pid=$!
CLEANUP_CMDS+=("kill $pid")
for _ in $(seq 1 120); do
	grep -q "lava job [0-9]*:" "$TMP/intr.err" && break
	sleep 0.5
done
sleep 3
kill -INT "$pid"
wait "$pid"
equals "SIGINT while the job runs: exit 130" "$?" 130
S3=$(sql "SELECT max(id) FROM session")
equals "session interrupted" "$(sql "SELECT status FROM session WHERE id = $S3")" interrupted
jid=$(sql "SELECT lava_job_id FROM boot WHERE session_id = $S3 AND $NOLAB")
st=""
for _ in $(seq 1 30); do
	st=$(api "jobs/$jid/" | jq -r '.state + " " + .health')
	case "$st" in Finished*) break ;; esac
	sleep 2
done
equals "its LAVA job canceled" "$st" "Finished Canceled"
expect_exit 0 "--resume completes the session" bin/schedlab run --db "$DB" --resume "$S3"
equals "the run stored ok" "$(sql "SELECT status FROM run WHERE session_id = $S3")" ok
equals "boots: the interrupted one and the resumed one" \
	"$(sql "SELECT group_concat(status, ' ') FROM (SELECT status FROM boot WHERE session_id = $S3 AND $NOLAB ORDER BY id)")" \
	"failed ok"
equals "a new job for the resumed boot" \
	"$(sql "SELECT count(DISTINCT lava_job_id) FROM boot WHERE session_id = $S3 AND $NOLAB")" 2
equals "session done" "$(sql "SELECT status FROM session WHERE id = $S3")" done
labfailed "$DB"

# --- 4. three boots on two devices, artifacts over HTTP; SIGKILL with a
# job in flight, then --resume last
plan "$TMP/three.json" '["none", "voluntary", "full"]' '[""]'
jq '.target.artifacts = {"serve": "http", "listen": "127.0.0.1:0"}' "$TMP/three.json" >"$TMP/http3.json"
KDB="$TMP/kill.db"
ts=$(date +%s)
bin/schedlab run --db "$KDB" "$TMP/http3.json" >"$TMP/kill.out" 2>"$TMP/kill.err" &
pid=$!
CLEANUP_CMDS+=("kill -9 $pid")
st=""
# (a deadline, not a count of polls: on a loaded host each poll is slower)
deadline=$(($(date +%s) + 600))
while [ "$(date +%s)" -lt "$deadline" ]; do
	st=$(sqlite3 "$KDB" "SELECT sum(status = 'ok') || ' ' || sum(status = 'planned' AND lava_job_id > 0) FROM boot" 2>/dev/null || true)
	[ "$st" = "2 1" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
orphan=$(sqlite3 "$KDB" "SELECT lava_job_id FROM boot WHERE status = 'planned' AND lava_job_id > 0")
ostate=$(api "jobs/$orphan/" | jq -r .state)
kill -9 "$pid"
wait "$pid" 2>/dev/null
echo "# killed $(($(date +%s) - ts)) s after the start"
kept=$(sqlite3 "$KDB" "SELECT group_concat(id || ':' || lava_job_id, ' ') FROM (SELECT * FROM boot WHERE status = 'ok' ORDER BY id)")
equals "two boots stored, the third's job submitted when a device was free" "$st" "2 1"
case "$ostate" in
Submitted | Scheduling | Scheduled | Running) ok "a boot was stored while another's job still ran (job $orphan: $ostate)" ;;
*) not_ok "a boot was stored while another's job still ran" "job $orphan: $ostate" ;;
esac
equals "  ... each stored boot with its run" \
	"$(sqlite3 "$KDB" "SELECT count(*) FROM run r JOIN boot b ON b.id = r.boot_id WHERE b.status = 'ok' AND r.status = 'ok'")" 2
# at most two in flight (max_jobs = 2 devices): no job was submitted while
# two others were between their submission and their end (a job the lab
# failed and its new one included)
: >"$TMP/jobtimes"
for j in $(sqlite3 "$KDB" "SELECT lava_job_id FROM boot WHERE lava_job_id > 0"); do
	api "jobs/$j/" | jq -r '[.id, .submit_time, (.end_time // "9999")] | @tsv' >>"$TMP/jobtimes"
done
over=$(awk -F'\t' '{ id[NR] = $1; sub_[NR] = $2; end_[NR] = $3 }
	END { for (i = 1; i <= NR; i++) { n = 0
		for (k = 1; k <= NR; k++) if (k != i && sub_[k] <= sub_[i] && end_[k] > sub_[i]) n++
		if (n >= 2) printf "job %s submitted with %d in flight; ", id[i], n } }' "$TMP/jobtimes")
equals "  ... never more than two jobs in flight ($(wc -l <"$TMP/jobtimes") jobs: LAVA's submit and end times)" "${over:-none}" none
expect_exit 0 "--resume last after SIGKILL" bin/schedlab run --db "$KDB" --resume last
cp "$TMP/err" "$TMP/resume.err"
contains "  ... finds the orphaned job and cancels it" "$TMP/resume.err" "orphaned: the controller ended while job $orphan ran"
st=""
for _ in $(seq 1 30); do
	st=$(api "jobs/$orphan/" | jq -r '.state + " " + .health')
	case "$st" in Finished*) break ;; esac
	sleep 2
done
equals "  ... the orphan is Canceled in LAVA" "$st" "Finished Canceled"
equals "boots: the two stored before the kill kept" \
	"$(sqlite3 "$KDB" "SELECT group_concat(id || ':' || lava_job_id, ' ') FROM (SELECT * FROM boot WHERE status = 'ok' AND id IN ($(echo "$kept" | sed 's/:[0-9]*//g; s/ /,/g')) ORDER BY id)")" \
	"$kept"
equals "  ... one boot ok under each mode (the orphan's submitted again)" \
	"$(sqlite3 "$KDB" "SELECT group_concat(req_preempt, ' ') FROM (SELECT req_preempt FROM boot WHERE status = 'ok' ORDER BY req_preempt)")" \
	"full none voluntary"
equals "  ... no other boot failed but the orphan's (and any the lab failed, submitted again)" \
	"$(sqlite3 "$KDB" "SELECT count(*) FROM boot WHERE status = 'failed' AND lava_job_id != $orphan AND error NOT LIKE '%Infrastructure error%'")" 0
case "$(sqlite3 "$KDB" "SELECT error FROM boot WHERE status = 'failed' AND lava_job_id = $orphan")" in
"orphaned: the controller ended while job $orphan ran ($LAVA_URL/scheduler/job/$orphan): it was still "*": canceled") ok "  ... the failed boot says so" ;;
*) not_ok "  ... the failed boot says so" "$(sqlite3 "$KDB" "SELECT error FROM boot WHERE status = 'failed' AND lava_job_id = $orphan")" ;;
esac
equals "every run stored exactly once, all ok, one row each" \
	"$(sqlite3 "$KDB" "SELECT count(*) || ' ' || sum(status = 'ok') || ' ' || (SELECT count(*) FROM results WHERE metric = 'time_s') FROM run")" \
	"3 3 3"
equals "  ... under each mode" \
	"$(sqlite3 "$KDB" "SELECT group_concat(preempt, ' ') FROM (SELECT preempt FROM results WHERE metric = 'time_s' ORDER BY preempt)")" \
	"full none voluntary"
equals "session done" "$(sqlite3 "$KDB" "SELECT status FROM session")" done
# the kernel and initramfs came from the controller over HTTP, each job
# under its own prefix
nhttp=$(sqlite3 "$KDB" "SELECT console FROM boot WHERE status = 'ok'" |
	grep -oE "http://127\.0\.0\.1:[0-9]+/[0-9a-f]{32}/(kernel|initrd)" | sort -u | wc -l)
equals "artifacts over HTTP: a kernel and an initramfs URL per job (3 jobs)" "$nhttp" 6
deployed=$(sqlite3 "$KDB" "SELECT console FROM boot WHERE status = 'ok'" | grep -cE "(downloading|Downloading|http-download).*http://127\.0\.0\.1" || true)
if [ "$deployed" -ge 3 ]; then
	ok "  ... and LAVA downloaded them ($deployed log lines)"
else
	not_ok "  ... and LAVA downloaded them" "$deployed log lines name an http download"
fi
CLEANUP_CMDS=()
done_testing
