#!/usr/bin/env bash
# sched_ext on Debian 12 (not a test; issue 39, docs/kernels.md "sched_ext"):
# builds what Debian does not ship and boots it once under qemu/TCG.
#   1. the kernel: the minimal base + kernels/fragments/sched_ext.config from
#      Debian's linux-source-6.12 (build-variant.sh --series 6.12; BTF needs
#      pahole from dwarves: 1.24 on Debian 12), or KERNEL=folder;
#   2. tools/sched_ext of the same source (the scheduler asked for: scx_simple,
#      scx_qmap, scx_central; scx_flatcg needs cgroups, EXT_GROUP_SCHED), with the tree's own libbpf and bpftool, clang-16 (Debian 12's
#      default clang 14 is older than the README's 16) and the vmlinux.h
#      dumped from that kernel's BTF, into $CACHE/scx-<kernel key>/;
#   3. a busybox initramfs with SCHED (default scx_simple), hackbench and their
#      libraries; its /init starts the scheduler, prints
#      /sys/kernel/sched_ext/state and root/ops, runs a hackbench under it,
#      stops it and prints the state again; this script checks that the
#      state was "enabled" with the scheduler's ops while hackbench ran.
# Needs: flex bison bc libelf-dev libssl-dev dwarves clang-16 llvm-16
# zlib1g-dev busybox-static cpio qemu-system-x86 rt-tests.
#   bench/sched-ext-smoke.sh            env SCHED=scx_qmap, KERNEL=DIR, TIMEOUT=300
set -euo pipefail
cd "$(dirname "$0")/.."
SCHED=${SCHED:-scx_simple}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/schedlab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s)
say() { echo "sched-ext: $* ($(($(date +%s) - t0)) s)" >&2; }
for t in clang-16 pahole busybox cpio qemu-system-x86_64 hackbench; do
	command -v "$t" >/dev/null || [ -x /bin/$t ] ||
		{ echo "sched-ext: $t missing (apt-get install -y dwarves clang-16 llvm-16 busybox-static cpio qemu-system-x86 rt-tests)" >&2; exit 2; }
done

# 1. the kernel (a cache hit once built)
K=${KERNEL:-}
if [ -z "$K" ]; then
	say "kernel: minimal + sched_ext from linux-source-6.12 (20-60 min cold on 2 busy cores)"
	K=$(kernels/build-variant.sh --series 6.12 --base minimal --keep-tree sched_ext | tail -n 1)
fi
grep -q '^CONFIG_SCHED_CLASS_EXT=y' "$K/config" || { echo "sched-ext: $K/config has no SCHED_CLASS_EXT" >&2; exit 1; }
key=$(basename "$K")
src=$(ls -d "$cache"/src/linux-source-6.12.[0-9]* | head -n 1)

# 2. the example schedulers
out=$cache/scx-$key
if [ ! -x "$out/build/bin/$SCHED" ]; then
	say "tools/sched_ext with clang-16 against $K/vmlinux's BTF into $out"
	mkdir -p "$out"
	# the one scheduler asked for: scx_flatcg needs the cgroup interface
	# (EXT_GROUP_SCHED), which the minimal base has not
	make -C "$src/tools/sched_ext" -j"$(nproc)" O="$out" CLANG=clang-16 \
		VMLINUX_BTF="$K/vmlinux" "$SCHED" >"$out/build.log" 2>&1 ||
		{ tail -n 20 "$out/build.log" >&2; echo "sched-ext: tools/sched_ext failed (log: $out/build.log)" >&2; exit 1; }
fi
ls "$out/build/bin/"

# 3. a guest: busybox, the scheduler, hackbench
r=$tmp/root
mkdir -p "$r"/{bin,dev,proc,sys,lib64,lib/x86_64-linux-gnu,usr/lib/x86_64-linux-gnu}
cp /bin/busybox "$r/bin/busybox"
for a in sh mount cat sleep echo kill poweroff grep sed head dmesg; do ln -sf busybox "$r/bin/$a"; done
cp "$out/build/bin/$SCHED" "$(command -v hackbench)" "$r/bin/"
for b in "$out/build/bin/$SCHED" "$(command -v hackbench)"; do
	for l in $(ldd "$b" | grep -o '/[^ ]*'); do cp -L "$l" "$r$l"; done
done
cat >"$r/init" <<EOF
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug
echo "SCX before: \$(cat /sys/kernel/sched_ext/state)"
dmesg | grep -iE 'btf|sched_ext|scx|bpf' | sed 's/^/SCX dmesg: /'
/bin/$SCHED >/scx.log 2>&1 &
pid=\$!
sleep 3
echo "SCX running: state \$(cat /sys/kernel/sched_ext/state) ops \$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
hackbench -g 1 -l 50 2>&1 | grep Time | sed 's/^/SCX hackbench /'
echo "SCX after hackbench: state \$(cat /sys/kernel/sched_ext/state) ops \$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
kill -INT \$pid; sleep 2
echo "SCX stopped: state \$(cat /sys/kernel/sched_ext/state)"
sed 's/^/SCX log: /' /scx.log | head -n 20
poweroff -f
EOF
chmod +x "$r/init"
(cd "$r" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$tmp/initrd.gz"
img=$K/vmlinux
[ -f "$img" ] || img=$K/vmlinuz
say "booting $img under TCG"
timeout "${TIMEOUT:-300}" qemu-system-x86_64 -accel tcg -m 512 -smp 1 -nographic -no-reboot \
	-kernel "$img" -initrd "$tmp/initrd.gz" -append "console=ttyS0 panic=-1 quiet" \
	</dev/null >"$tmp/console" 2>&1 || true
cp "$tmp/console" "$out/console.log"
grep '^SCX' "$tmp/console" || { tail -n 30 "$tmp/console"; exit 1; }
name=${SCHED#scx_}
if grep -q "^SCX after hackbench: state enabled ops $name" "$tmp/console"; then
	say "ok: $SCHED was the active scheduler while hackbench ran"
else
	say "not verified: no 'state enabled ops $name' while hackbench ran"
	exit 1
fi
