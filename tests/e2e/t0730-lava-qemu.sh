#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 900 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# End-to-end: a real single-host LAVA (tests/lava/setup.sh: PostgreSQL,
# lava-server, a local lava-worker, `qemu` devices with KVM off) boots
# Debian's 6.1 kernel with a schedlab initramfs (harness/targets/initramfs.c
# with agent_batch: busybox, the agent, hackbench and its libraries) whose
# /init runs the agent in batch mode (`schedlab-agent --batch`: the requests travel with the job in
# the initramfs, the replies come back as SLB1 frame lines on the console
# log). Two jobs, preempt=none and preempt=full (the latter written by the
# lava target's job writer, harness/targets/lava_job.c), run at once on the two
# devices; their logs are fetched from LAVA's REST API and decoded with
# `schedlab agent --unframe`, and the effective mode the agent read in the
# guest must be the one asked for. A third job boots a kernel that panics
# (no init, no root) and must end Incomplete with the panic in its log.
#
# What this does not cover yet (docs/lab.md, "Status"): the `lava` target in
# plans (harness/targets/lava.c), rows in the database, job ids per boot,
# resuming. Setup as root: cold (packages to install) about 5.5 minutes,
# warm about 15 s; each job about 20-30 s from submission to its end.
. "$(dirname "$0")/lib.sh"

require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio curl:curl jq:jq
require_built bin/schedlab-agent bin/schedlab build/libschedlab.a
lava_up
RPC="${LAVA_URL/http:\/\//http://$LAVA_USER:$TOKEN@}/RPC2"

if [ ! -f kernels/out/debian/kernel.json ]; then
	check "make -C kernels debian" make -s -C kernels debian
fi
KDIR=$(readlink -f kernels/out/debian)
KIMG="$KDIR/$(jq -r .image "$KDIR/kernel.json")"
[ -f "$KIMG" ] || { not_ok "kernel image" "missing $KIMG"; done_testing; exit; }

# --- the initramfs: built by harness/targets/initramfs.c with agent_batch
# (busybox, the agent, hackbench with its libraries, the batch file, an /init
# that runs `schedlab-agent --batch`), through a small driver compiled here
mkdir -p "$TMP/etc"
cat >"$TMP/etc/requests.jsonl" <<'EOF'
{"id":1,"op":"sysinfo"}
{"id":2,"op":"exec","args":{"argv":["sh","-c","echo \"quoted\\\\backslash\"; seq 1 3000"],"timeout_s":60}}
{"id":3,"op":"exec","args":{"argv":["hackbench","-g","2","-l","50"],"timeout_s":120}}
EOF
cat >"$TMP/ibuild.c" <<'EOF'
#include <stdio.h>
#include "harness/targets/initramfs.h"
int main(int argc, char **argv)
{
	const char *bins[] = { argv[1], "hackbench", NULL };
	struct initramfs_file files[] = { { argv[2], "/etc/schedlab/requests.jsonl", 0644, 0 } };
	struct initramfs_spec spec = { 0 };
	struct strbuf e = STRBUF_INIT;
	char out[4096];
	if (argc != 4)
		return 2;
	spec.binaries = bins;
	spec.files = files;
	spec.nr_files = 1;
	spec.agent_batch = "/etc/schedlab/requests.jsonl";
	spec.compress = INITRAMFS_LZ4;
	spec.cache_dir = argv[3];
	if (initramfs_build(&spec, out, sizeof(out), NULL, &e)) {
		fprintf(stderr, "%s\n", e.buf);
		return 1;
	}
	puts(out);
	return 0;
}
EOF
INITRD=""
if cc -std=gnu11 -D_GNU_SOURCE -I. -o "$TMP/ibuild" "$TMP/ibuild.c" build/libschedlab.a \
	-ljansson -lsqlite3 -lgsl -lgslcblas -llz4 -lmicrohttpd -lm -pthread 2>"$TMP/ibuild.err" &&
	INITRD=$("$TMP/ibuild" "$PWD/bin/schedlab-agent" "$TMP/etc/requests.jsonl" "$TMP/cache" 2>>"$TMP/ibuild.err"); then
	ok "batch initramfs built by initramfs.c ($(stat -c %s "$INITRD") bytes)"
else
	not_ok "batch initramfs built by initramfs.c" "$(tail -n 5 "$TMP/ibuild.err")"
	done_testing
	exit
fi
chmod 755 "$TMP"
chmod -R a+rX "$TMP/cache"

job_yaml() { # NAME APPEND
	cat <<EOF
device_type: qemu
job_name: schedlab t0730 $1
timeouts:
  job: {minutes: 8}
  action: {minutes: 5}
  connection: {minutes: 2}
priority: medium
visibility: public
context:
  arch: amd64
  no_kvm: true
  extra_options: ['-smp 2', '-no-reboot']
actions:
- deploy:
    to: tmpfs
    timeout: {minutes: 2}
    images:
      kernel:
        image_arg: -kernel {kernel} -append "$2"
        url: file://$KIMG
      ramdisk:
        image_arg: -initrd {ramdisk}
        url: file://$INITRD
- boot:
    method: qemu
    media: tmpfs
    timeout: {minutes: 5}
    prompts: ['schedlab-batch: end status']
EOF
}

# the preempt=full job is written by harness/targets/lava_job.c (the lava
# target's job writer, through a small driver compiled here), the others by
# job_yaml above: both must boot
cat >"$TMP/ljob.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "harness/targets/lava_job.h"
int main(int argc, char **argv)
{
	struct strbuf e = STRBUF_INIT;
	json_error_t je;
	json_t *c = argc == 5 ? json_loads(argv[1], 0, &je) : NULL;
	if (!c || lava_conf_check(c, "target.", &e)) {
		fprintf(stderr, "conf: %s\n", e.buf);
		return 1;
	}
	struct lava_job_in in = { "schedlab t0730 full (lava_job.c)", argv[2], argv[3], argv[4],
				  2, 1024, 300 };
	json_t *j = lava_job(c, &in, &e);
	if (!j) {
		fprintf(stderr, "%s\n", e.buf);
		return 1;
	}
	char *s = json_dumps(j, JSON_INDENT(2));
	puts(s);
	free(s);
	json_decref(j);
	json_decref(c);
	return 0;
}
EOF
check "compile the job writer driver" cc -std=gnu11 -D_GNU_SOURCE -I. -o "$TMP/ljob" "$TMP/ljob.c" \
	build/libschedlab.a -ljansson -lsqlite3 -lgsl -lgslcblas -llz4 -lmicrohttpd -lm -pthread

declare -A JOB
submit() { # KEY APPEND
	if [ "$1" = full ] && [ -x "$TMP/ljob" ]; then
		"$TMP/ljob" "{\"type\":\"lava\",\"url\":\"$LAVA_URL\",\"token_file\":\"$LAVA_TOKEN_FILE\",\"user\":\"$LAVA_USER\",\"device_type\":\"qemu\"}" \
			"file://$KIMG" "file://$INITRD" "$2" >"$TMP/$1.yaml" 2>"$TMP/$1.submit.err" ||
			{ not_ok "job $1 written by lava_job.c" "$(cat "$TMP/$1.submit.err")"; return; }
	else
		job_yaml "$1" "$2" >"$TMP/$1.yaml"
	fi
	local id
	if id=$(lavacli --uri "$RPC" jobs submit "$TMP/$1.yaml" 2>"$TMP/$1.submit.err") &&
		[[ "$id" =~ ^[0-9]+$ ]]; then
		JOB[$1]=$id
		CLEANUP_CMDS+=("lavacli --uri '$RPC' jobs cancel $id")
		ok "job $1 submitted: $LAVA_URL/scheduler/job/$id"
	else
		not_ok "job $1 submitted" "$(cat "$TMP/$1.submit.err")"
	fi
}
ts=$(date +%s)
submit none "console=ttyS0,115200 panic=-1 preempt=none"
submit full "console=ttyS0,115200 panic=-1 preempt=full"
submit panic "console=ttyS0,115200 panic=-1 rdinit=/no-such-init root=/dev/no-such-disk"

# --- follow them all until each is Finished
declare -A FIN
for _ in $(seq 1 400); do
	left=0
	for k in "${!JOB[@]}"; do
		[ -n "${FIN[$k]:-}" ] && continue
		st=$(api "jobs/${JOB[$k]}/" | jq -r '.state + " " + .health' 2>/dev/null || true)
		case "$st" in
		Finished*) FIN[$k]="${st#Finished }"; echo "# job $k (${JOB[$k]}): $st after $(($(date +%s) - ts)) s" ;;
		*) left=$((left + 1)) ;;
		esac
	done
	[ "$left" -eq 0 ] && break
	sleep 2
done

for mode in none full; do
	id=${JOB[$mode]:-}
	[ -n "$id" ] || continue
	equals "job $mode ($id) Complete" "${FIN[$mode]:-unfinished}" "Complete"
	api "jobs/$id/logs/" >"$TMP/$mode.log" || true
	if bin/schedlab agent --unframe "$TMP/$mode.log" >"$TMP/$mode.msgs" 2>"$TMP/$mode.unframe.err"; then
		ok "job $mode: frames decoded ($(wc -l <"$TMP/$mode.msgs") messages)"
	else
		not_ok "job $mode: frames decoded" "$(cat "$TMP/$mode.unframe.err")" "$(grep -c SLB1 "$TMP/$mode.log") SLB1 lines"
	fi
	equals "job $mode: banner first" "$(head -n 1 "$TMP/$mode.msgs" | jq -r .agent)" schedlab
	equals "job $mode: effective preempt mode" \
		"$(jq -r 'select(.id == 1) | .result.preempt.value' "$TMP/$mode.msgs")" "$mode"
	equals "job $mode: kernel" \
		"$(jq -r 'select(.id == 1) | .result.kernel_release.value' "$TMP/$mode.msgs")" \
		"$(jq -r .release "$KDIR/kernel.json")"
	# quotes and backslashes survive LAVA's log escaping, and a reply of
	# several frame parts (about 14 KB of stdout) is reassembled
	out=$(jq -r 'select(.id == 2) | .result.stdout' "$TMP/$mode.msgs")
	equals "job $mode: exec stdout intact" "$(printf '%s' "$out" | head -n 1)|$(printf '%s' "$out" | tail -n 1)" 'quoted\backslash|3000'
	equals "job $mode: exec exit code" "$(jq -r 'select(.id == 2) | .result.exit_code' "$TMP/$mode.msgs")" 0
	hb=$(jq -r 'select(.id == 3) | "\(.result.exit_code) \(.result.stdout)"' "$TMP/$mode.msgs")
	case "$hb" in
	"0 "*Time:*) ok "job $mode: hackbench ran in the guest" ;;
	*) not_ok "job $mode: hackbench ran in the guest" "reply: $(head -c 300 <<<"$hb")" ;;
	esac
done

if [ -n "${JOB[panic]:-}" ]; then
	equals "panicking job Incomplete" "${FIN[panic]:-unfinished}" "Incomplete"
	api "jobs/${JOB[panic]}/logs/" >"$TMP/panic.log" || true
	contains "panicking job: the panic is in its log" "$TMP/panic.log" "Kernel panic - not syncing"
	contains "panicking job: LAVA's reason is in its log" "$TMP/panic.log" "error_msg"
	expect_exit 1 "no agent messages in the panicking job's log" bin/schedlab agent --unframe "$TMP/panic.log"
fi
CLEANUP_CMDS=()
done_testing
