#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 600 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# The initramfs cache is one folder for every schedlab process of a user,
# and each build prunes it to the 6 most recently used archives (docs/qemu.md,
# "Cache"). Here another process builds 7 archives of its own right before
# each qemu of a session starts, as other sessions of the machine did beside
# t0510 and t0540 (issue 51: a boot lost in each session, "qemu: error
# reading initrd ... No such file or directory"): a qemu wrapper runs those
# builds, then checks that the -initrd it was given is still there and
# execs qemu. The session's archive is held while its target is open, so
# every boot comes up and every run is ok; after the session the archive is
# no longer held and the next build prunes it. Two new VMs under TCG, about
# 30 s.
. "$(dirname "$0")/lib.sh"
DB=$TMP/q.db
export TMPDIR=$TMP XDG_CACHE_HOME=$TMP/cache   # the cache is this script's own
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio sqlite3:sqlite3
require_built bin/schedlab-agent build/libschedlab.a
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi
CACHE=$XDG_CACHE_HOME/schedlab/initramfs

# another process's builds: N small archives of their own (busybox and an
# /init that says TAG and a number), each build pruning the cache
cat >"$TMP/churn.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness/targets/initramfs.h"
int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	if (argc != 4)
		return 2;
	for (int i = 0; i < atoi(argv[2]); i++) {
		struct initramfs_spec s;
		char p[4096], cmd[200];
		memset(&s, 0, sizeof(s));
		snprintf(cmd, sizeof(cmd), "echo another session %s %d", argv[3], i);
		s.init_cmd = cmd;
		s.busybox = "/bin/busybox";
		s.cache_dir = argv[1];
		if (initramfs_build(&s, p, sizeof(p), NULL, &err)) {
			fprintf(stderr, "churn: %s\n", err.buf);
			return 1;
		}
	}
	return 0;
}
C
check "compile the other process's builder" cc -std=gnu11 -D_GNU_SOURCE -I. -o "$TMP/churn" \
	"$TMP/churn.c" build/libschedlab.a -ljansson -lsqlite3 -lgsl -lgslcblas -llz4 -lmicrohttpd \
	-lm -pthread
[ -x "$TMP/churn" ] || { done_testing; exit; }

# qemu, started by the session after its initramfs build: first the other
# process's 7 builds (one more than the cache keeps), then is -initrd there?
cat >"$TMP/qemu-churn" <<S
#!/bin/sh
n=\$(cat "$TMP/starts" 2>/dev/null || echo 0); echo \$((n + 1)) >"$TMP/starts"
"$TMP/churn" "$CACHE" 7 "\$\$-\$n" || exit 1
prev=
for a; do
	[ "\$prev" = -initrd ] && { [ -f "\$a" ] || echo "\$a" >>"$TMP/gone"; }
	prev=\$a
done
exec qemu-system-x86_64 "\$@"
S
chmod +x "$TMP/qemu-churn"

cat >"$TMP/plan.json" <<P
{ "name": "initramfs-cache", "switch": "reboot", "order": "sequential", "seed": 2,
  "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2, "memory_mb": 768,
             "qemu": "$TMP/qemu-churn"},
  "matrix": {"preempt": ["full", "none"], "cmdline": [""]},
  "workloads": [ {"type": "hackbench", "groups": 1, "loops": 20} ] }
P
expect_exit 0 "a session while another process builds 7 archives before each qemu starts" \
	schedlab run "$TMP/plan.json" --db "$DB" --quiet
[ -s "$TMP/err" ] && sed 's/^/#   /' "$TMP/err" | head -n 12
starts=$(cat "$TMP/starts" 2>/dev/null || echo 0)
if [ "$starts" -ge 2 ]; then ok "qemu started $starts times, 7 other archives built before each"
else not_ok "qemu started at least twice" "started $starts times"; fi
if [ -s "$TMP/gone" ]; then
	not_ok "every qemu found its -initrd after the other builds" "gone: $(head -n 2 "$TMP/gone")"
else
	ok "every qemu found its -initrd after the other builds"
fi
equals "two new VMs, both ok" "$(sql "SELECT group_concat(method || ':' || status) FROM (SELECT method, status FROM boot ORDER BY seq)")" "boot:ok,boot:ok"
equals "both runs ok" "$(sql "SELECT count(*) || ':' || sum(status = 'ok') FROM run")" "2:2"
# the session's archive (LZ4: Debian's kernel unpacks it) and the other
# process's plain ones
equals "after the session its archive is still in the cache (held through both boots)" \
	"$(ls "$CACHE" | grep -c '\.cpio\.lz4$')" 1
equals "... beside the other's 6 most recent" "$(ls "$CACHE" | grep -c '\.cpio$')" 6

# the session has ended: its hold is gone, and the next build prunes its
# archive (the oldest), so a hold does not outlive its target
"$TMP/churn" "$CACHE" 1 after >"$TMP/churn.out" 2>&1
equals "after the session the next build prunes its archive" "$(ls "$CACHE" | grep -c '\.cpio\.lz4$')" 0
equals "... and the cache keeps 6" "$(ls "$CACHE" | grep -c '\.cpio$')" 6
done_testing
