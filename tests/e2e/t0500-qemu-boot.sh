#!/usr/bin/env bash
# tags: qemu (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 600 (tests/run.sh ends it past this many seconds)
# lane: guest (tests/run.sh: beside the local and kernel-building tests)
# End-to-end: the qemu target with Debian's real kernel under TCG (KVM is
# probed and dropped when it hangs or fails, see LAB-NOTES). Imports the
# kernel with `make -C kernels debian` when absent, builds the initramfs
# (and checks its content and the cache; and the kexec form: LZ4, carrying a
# copy of itself, the vmlinux trimmed), boots with preempt=full and checks
# the effective mode the agent reports, switches to preempt=none by kexec
# inside the guest, checks that a panicking boot fails fast with the console
# in the message, and that no qemu process or temporary folder is left.
#
# The target is driven through its target_ops by a small C driver compiled
# here against the library `make` built (build/libschedlab.a), so the test does not
# depend on how the CLI exposes the target. Takes about 30 s.
. "$(dirname "$0")/lib.sh"

require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	kexec-tools:/sbin/kexec gzip:gzip
require_built bin/schedlab-agent build/libschedlab.a

if [ ! -f kernels/out/debian/kernel.json ]; then
	check "make -C kernels debian" make -s -C kernels debian
else
	ok "kernel already imported ($(readlink kernels/out/debian))"
fi
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "no kernel: cannot go on"
	done_testing
	exit
fi
check "kernel folder complete" test -s kernels/out/debian/vmlinuz -a -s kernels/out/debian/config

cat >"$TMP/qboot.c" <<'C'
/* qboot initramfs                      build twice, print path and times
 * qboot kexecramfs VMLINUX              the kexec form, print its path
 * qboot unlz4 IN OUT                    an LZ4 legacy frame decompressed
 * qboot boot CONF PREEMPT[:CMDLINE]... check, open, boot each, print a line */
#include <stdio.h>
#include <string.h>
#include "harness/targets/initramfs.h"
#include "harness/targets/lz4.h"
#include "harness/util/proc.h"
#include "harness/targets/target.h"
extern const struct target_ops qemu_target;
int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	if (argc > 1 && !strcmp(argv[1], "initramfs")) {
		const char *bins[] = { "bin/schedlab-agent", "cyclictest", "kexec", NULL };
		struct initramfs_spec s;
		char p1[4096], p2[4096];
		memset(&s, 0, sizeof(s));
		s.binaries = bins;
		double t0 = now_mono();
		if (initramfs_build(&s, p1, sizeof(p1), NULL, &err)) { printf("error %s\n", err.buf); return 1; }
		double t1 = now_mono();
		if (initramfs_build(&s, p2, sizeof(p2), NULL, &err)) { printf("error %s\n", err.buf); return 1; }
		printf("%s %s %.3f %.3f\n", p1, p2, t1 - t0, now_mono() - t1);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "kexecramfs")) {
		const char *bins[] = { "bin/schedlab-agent", "hackbench", "kexec", NULL };
		struct initramfs_file f = { argv[2], "/boot/vmlinux", 0644, 1 };
		struct initramfs_spec s;
		char p[4096];
		memset(&s, 0, sizeof(s));
		s.binaries = bins;
		s.files = &f;
		s.nr_files = 1;
		s.compress = INITRAMFS_LZ4;
		s.carry = "/boot/initrd.img";
		if (initramfs_build(&s, p, sizeof(p), NULL, &err)) { printf("error %s\n", err.buf); return 1; }
		printf("%s\n", p);
		return 0;
	}
	if (argc > 3 && !strcmp(argv[1], "unlz4")) {
		struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
		FILE *f;
		if (strbuf_read_file(&in, argv[2], 0) || lz4_legacy_decompress(in.buf, in.len, &out, &err)) {
			printf("error %s\n", err.buf);
			return 1;
		}
		f = fopen(argv[3], "wb");
		if (!f || fwrite(out.buf, 1, out.len, f) != out.len || fclose(f))
			return 1;
		return 0;
	}
	if (argc < 4)
		return 2;
	json_error_t je;
	json_t *conf = json_loads(argv[2], 0, &je);
	json_t *r = conf ? qemu_target.check(conf, "t0500", &err) : NULL;
	if (!r) { printf("check-error %s\n", err.buf); return 1; }
	struct target t;
	memset(&t, 0, sizeof(t));
	t.ops = &qemu_target; t.conf = r; t.agent_path = "bin/schedlab-agent";
	if (qemu_target.open(&t, &err)) { printf("open-error %s\n", err.buf); return 1; }
	int rc = 0;
	for (int i = 3; i < argc; i++) {
		char pre[32] = "", *colon;
		snprintf(pre, sizeof(pre), "%s", argv[i]);
		colon = strchr(argv[i], ':');
		if (colon) pre[colon - argv[i]] = '\0';
		struct boot_spec b = { i - 3, NULL, pre, colon ? colon + 1 : "" };
		struct boot_info bi;
		boot_info_init(&bi);
		double t0 = now_mono();
		if (qemu_target.boot(&t, &b, &bi, &err)) {
			char *nl;
			while ((nl = strchr(err.buf, '\n'))) *nl = '|';
			printf("boot-error %.1f %s\n", now_mono() - t0, err.buf);
			strbuf_reset(&err);
			rc = 1;
		} else {
			json_t *pm = json_object_get(json_object_get(bi.sysinfo, "preempt"), "value");
			printf("boot %s %s %s %.1f %s %d\n", bi.method, bi.accel,
			       json_string_value(pm) ? json_string_value(pm) : "?", bi.switch_s,
			       bi.boot_id, strstr(bi.console.buf, "Command line: console=ttyS0 panic=-1") != NULL);
		}
		fflush(stdout);
		boot_info_release(&bi);
	}
	qemu_target.close(&t);
	json_decref(r);
	json_decref(conf);
	return rc;
}
C
check "compile the target driver" cc -std=gnu11 -D_GNU_SOURCE -I. -o "$TMP/qboot" "$TMP/qboot.c" \
	build/libschedlab.a -ljansson -lsqlite3 -lgsl -lgslcblas -llz4 -lmicrohttpd -lm -pthread
if [ ! -x "$TMP/qboot" ]; then
	done_testing
	exit
fi

# --- initramfs: content and cache
"$TMP/qboot" initramfs >"$TMP/ir.out" 2>&1
read -r p1 p2 t1 t2 <"$TMP/ir.out"
if [ -f "${p1:-/nonexistent}" ] && [ "$p1" = "$p2" ]; then
	ok "initramfs built and found again in the cache (${t1} s, then ${t2} s)"
else
	not_ok "initramfs build" "$(cat "$TMP/ir.out")"
fi
case "$p1" in
"${XDG_CACHE_HOME:-$HOME/.cache}"/schedlab/initramfs/*.cpio) ok "cached under the XDG cache folder" ;;
*) not_ok "cached under the XDG cache folder" "path $p1" ;;
esac
if [ -f "${p1:-/nonexistent}" ]; then
	cpio -itv <"$p1" >"$TMP/ir.list" 2>/dev/null
	for f in init bin/schedlab-agent bin/cyclictest bin/kexec lib64/ld-linux-x86-64.so.2 \
		lib/x86_64-linux-gnu/libnuma.so.1 dev/console; do
		grep -qE " $f( |$)" "$TMP/ir.list" && ok "archive has /$f" || not_ok "archive has /$f"
	done
	grep -E ' bin/busybox$' "$TMP/ir.list" | grep -q '^-rwx' &&
		ok "busybox is the binary, not a link to itself" ||
		not_ok "busybox is the binary" "$(grep busybox "$TMP/ir.list" | head -3)"
	grep -qE ' bin/sh -> busybox$' "$TMP/ir.list" && ok "applet links point to busybox" ||
		not_ok "applet links point to busybox"
fi

# --- the kexec form: a small plain cpio carrying the LZ4 archive as
# /boot/initrd.img, then that archive itself; inside, only what was asked
# for and the vmlinux without its .bss zeros, which kexec does not load
"$TMP/qboot" kexecramfs kernels/out/debian/vmlinux >"$TMP/kx.out" 2>&1
read -r kx <"$TMP/kx.out"
case "$kx" in
*.carry.cpio.lz4) ok "kexec archive cached as .carry.cpio.lz4" ;;
*) not_ok "kexec archive built" "$(cat "$TMP/kx.out")" ;;
esac
if [ -f "${kx:-/nonexistent}" ]; then
	cpio -it <"$kx" >"$TMP/kx.list" 2>/dev/null
	equals "the carry part holds only the archive" "$(tr '\n' ' ' <"$TMP/kx.list")" "boot boot/initrd.img "
	(cd "$TMP" && cpio -i --quiet --to-stdout boot/initrd.img <"$kx" >"$TMP/kx.z")
	zs=$(stat -c %s "$TMP/kx.z")
	tail -c "$zs" "$kx" | cmp -s - "$TMP/kx.z" && ok "the archive follows, the same bytes as the carried copy" ||
		not_ok "the archive follows the carry part"
	[ $(( $(stat -c %s "$kx") )) -lt $(( 2 * zs + 4096 )) ] && ok "nothing else in the file" ||
		not_ok "nothing else in the file" "$(stat -c %s "$kx") bytes for an archive of $zs"
	if "$TMP/qboot" unlz4 "$TMP/kx.z" "$TMP/kx.cpio"; then
		ok "the archive is an LZ4 legacy frame"
		cpio -itv <"$TMP/kx.cpio" >"$TMP/kx.all" 2>/dev/null
		for f in init bin/schedlab-agent bin/hackbench bin/kexec boot/vmlinux; do
			grep -qE " $f( |$)" "$TMP/kx.all" && ok "kexec archive has /$f" || not_ok "kexec archive has /$f"
		done
		grep -qE " bin/(stress-ng|cyclictest)$" "$TMP/kx.all" && not_ok "no tool that was not asked for" ||
			ok "no tool that was not asked for"
		mkdir -p "$TMP/kxroot"
		(cd "$TMP/kxroot" && cpio -i --quiet -d boot/vmlinux <"$TMP/kx.cpio")
		vs=$(stat -c %s "$TMP/kxroot/boot/vmlinux" 2>/dev/null || echo 0)
		[ "$vs" -gt 0 ] && [ "$vs" -lt "$(stat -c %s kernels/out/debian/vmlinux)" ] &&
			ok "the vmlinux is trimmed ($vs bytes)" || not_ok "the vmlinux is trimmed" "$vs bytes"
		# what kexec loads (the PT_LOAD memory) leaves out the .bss, which
		# a KELF_PT_UNLOADED header still describes: the same end
		python3 - kernels/out/debian/vmlinux "$TMP/kxroot/boot/vmlinux" >"$TMP/kx.mem" <<'PY'
import struct, sys
for path in sys.argv[1:]:
    b = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", b, 32)
    phnum, = struct.unpack_from("<H", b, 56)
    load = unl = end = 0
    for i in range(phnum):
        t, _, _, _, pa, _, msz, _ = struct.unpack_from("<IIQQQQQQ", b, phoff + 56 * i)
        if t == 1:
            load += msz
        if t == 0x6c530001:
            unl += msz
        if t in (1, 0x6c530001):
            end = max(end, pa + msz)
    print(load, unl, end)
PY
		{ read -r l0 u0 e0; read -r l1 u1 e1; } <"$TMP/kx.mem"
		[ "${u0:-1}" = 0 ] && [ "${u1:-0}" -gt 0 ] && [ $(( l0 - l1 )) = "${u1:-x}" ] &&
			ok "kexec loads $((l1 >> 20)) MB of the kernel's $((l0 >> 20)) MB, the .bss unloaded" ||
			not_ok "the .bss is not loaded" "$(cat "$TMP/kx.mem")"
		equals "the kernel's memory end is kept" "${e1:-}" "${e0:-x}"
	else
		not_ok "the archive is an LZ4 legacy frame"
	fi
fi

# --- boot with preempt=full, then kexec to preempt=none, all in one VM
export TMPDIR=$TMP
CLEANUP_CMDS+=("pkill -KILL -f '$TMP/schedlab-qemu'")
start=$(date +%s)
timeout 240 "$TMP/qboot" boot '{"type":"qemu","kernel":"kernels/out/debian","switch":"kexec","cpus":2,"memory_mb":1024}' \
	full none >"$TMP/boot.out" 2>&1
echo "# $(tr '\n' ';' <"$TMP/boot.out") ($(( $(date +%s) - start )) s)"
read -r w1 m1 a1 p1 s1 id1 c1 < <(sed -n 1p "$TMP/boot.out")
read -r w2 m2 a2 p2 s2 id2 c2 < <(sed -n 2p "$TMP/boot.out")
equals "first boot succeeded" "${w1:-}" "boot"
equals "first boot is a new VM" "${m1:-}" "boot"
case "${a1:-}" in tcg | kvm) ok "accel recorded (${a1})" ;; *) not_ok "accel recorded" "got '${a1:-}'" ;; esac
equals "effective preempt after boot with preempt=full" "${p1:-}" "full"
equals "console of the first boot captured" "${c1:-}" "1"
equals "kexec switch succeeded" "${w2:-}" "boot"
equals "second boot is a kexec" "${m2:-}" "kexec"
equals "effective preempt after kexec with preempt=none" "${p2:-}" "none"
[ -n "${id2:-}" ] && [ "${id1:-}" != "${id2:-}" ] && ok "kexec brought a new boot_id" ||
	not_ok "kexec brought a new boot_id" "$id1 / ${id2:-}"
equals "console of the kexec'd boot captured" "${c2:-}" "1"

# --- a panicking kernel (no /init: cannot mount a root fs) fails fast, with the console in the message
# (through a qemu wrapper that records its arguments: TCG runs its vCPUs in
# one thread unless the plan says "tcg_thread": "multi", and its RAM is in
# small host pages unless the plan says "host_thp": "on", docs/qemu.md)
# (qemu's -version, which the target asks once for the boot's record, is
# passed through unlogged: only the boot's own start is looked at)
printf '#!/bin/sh\n[ "$1" = -version ] && exec qemu-system-x86_64 "$@"\necho "$*" >>"%s"\ngrep THP_enabled /proc/$$/status >>"%s"\nexec qemu-system-x86_64 "$@"\n' \
	"$TMP/qemu.args" "$TMP/qemu.args" >"$TMP/qemu-wrap"
chmod +x "$TMP/qemu-wrap"
start=$(date +%s)
timeout 120 "$TMP/qboot" boot "{\"type\":\"qemu\",\"accel\":\"tcg\",\"timeout_s\":60,\"qemu\":\"$TMP/qemu-wrap\"}" \
	"full:rdinit=/nonexistent" >"$TMP/panic.out" 2>&1
took=$(( $(date +%s) - start ))
contains "panic reported as a boot error" "$TMP/panic.out" "boot-error"
contains "error carries the console tail" "$TMP/panic.out" "--- console"
contains "... with the panic line" "$TMP/panic.out" "Kernel panic - not syncing"
[ "$took" -lt 45 ] && ok "panic detected without waiting for the timeout (${took} s)" ||
	not_ok "panic detected fast" "took ${took} s"
contains "TCG runs the vCPUs in one thread by default" "$TMP/qemu.args" "-accel tcg,thread=single -smp 2"
equals "under TCG qemu runs without transparent huge pages by default" \
	"$(sed -n 's/^THP_enabled:[[:space:]]*//p' "$TMP/qemu.args")" "0"
: >"$TMP/qemu.args"
timeout 120 "$TMP/qboot" boot "{\"type\":\"qemu\",\"accel\":\"tcg\",\"timeout_s\":60,\"qemu\":\"$TMP/qemu-wrap\",\"tcg_thread\":\"multi\",\"host_thp\":\"on\"}" \
	"full:rdinit=/nonexistent" >"$TMP/panic2.out" 2>&1
contains "\"tcg_thread\": \"multi\" gives one thread per vCPU" "$TMP/qemu.args" "-accel tcg,thread=multi -smp 2"
equals "\"host_thp\": \"on\" leaves qemu its huge pages" \
	"$(sed -n 's/^THP_enabled:[[:space:]]*//p' "$TMP/qemu.args")" "1"
"$TMP/qboot" boot '{"type":"qemu","host_thp":"never"}' full >"$TMP/bad.out" 2>&1
contains "a bad host_thp names the key and the valid values" "$TMP/bad.out" "host_thp"
contains "... the valid values" "$TMP/bad.out" "\"auto\", \"on\", \"off\""
"$TMP/qboot" boot '{"type":"qemu","tcg_thread":"many"}' full >"$TMP/bad.out" 2>&1
contains "a bad tcg_thread names the key and the valid values" "$TMP/bad.out" "tcg_thread"
contains "... the valid values" "$TMP/bad.out" "single"

# --- nothing left behind
sleep 0.5
left=$(pgrep -f "$TMP/schedlab-qemu" | tr '\n' ' ')
[ -z "$left" ] && ok "no qemu process left" || not_ok "no qemu process left" "pids: $left"
left=$(ls -d "$TMP"/schedlab-qemu-* 2>/dev/null | tr '\n' ' ')
[ -z "$left" ] && ok "temporary folders removed" || not_ok "temporary folders removed" "$left"
done_testing
