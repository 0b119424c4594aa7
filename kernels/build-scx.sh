#!/bin/sh
# The kernel's example sched_ext schedulers (issue 50, docs/sched_ext.md),
# built once per kernel from that kernel's own source and BTF.
#
# Usage: build-scx.sh KERNELDIR      prints KERNELDIR/scx
#
# KERNELDIR is an imported Debian kernel (out/debian-7.3: kernel.json with
# its "series", config, vmlinux). Its config must have
# CONFIG_SCHED_CLASS_EXT=y. In the Debian 13 root (debian13-root.sh, the
# one qemu-vt.sh uses) with trixie-backports, linux-source-<series> and the
# build's packages installed, `make -C tools/sched_ext` builds every
# example the source has (scx_simple, scx_qmap, scx_central, scx_flatcg,
# ...) against the BTF of KERNELDIR/vmlinux. They link Debian 13's libc,
# libelf, libz and libzstd, newer than the host's that the initramfs
# carries (and libelf.a cannot be linked statically: it lacks libeu), so
# those go beside them with Debian 13's loader, which the agent runs them
# through (harness/agent/scx.c). Into KERNELDIR/scx/:
#   scx_NAME ...     the schedulers
#   lib/             their libraries and ld-linux-x86-64.so.2
#   schedulers       their names, one a line
#   build.log        the build's output
# written under a temporary name and renamed when complete: a folder with
# `schedulers` is a finished build and is kept (cached). A failed build
# prints the end of its log (the compiler's error) and exits 1.
# `make -C kernels scx SERIES=7.3`; make test's setup runs it.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "build-scx: $*" >&2; exit 1; }
BUILD_PKGS="clang llvm make gcc libc6-dev libelf-dev zlib1g-dev libzstd-dev pkg-config libssl-dev python3 xz-utils"

[ $# = 1 ] || die "usage: build-scx.sh KERNELDIR (an imported kernel, out/debian-7.3)"
k=$(cd "$1" 2>/dev/null && pwd -P) || die "$1: no such folder (make -C kernels debian SERIES=7.3)"
[ -f "$k/kernel.json" ] || die "$k has no kernel.json (make -C kernels debian SERIES=7.3)"
grep -qx 'CONFIG_SCHED_CLASS_EXT=y' "$k/config" 2>/dev/null ||
	die "$k: its config has no CONFIG_SCHED_CLASS_EXT=y (no sched_ext; Debian's 6.1 and 6.12 have none, Linux 7.3 from trixie-backports has it: make -C kernels debian SERIES=7.3)"
if [ -f "$k/scx/schedulers" ]; then
	echo "$k/scx"
	exit 0
fi
[ -f "$k/vmlinux" ] || die "$k has no vmlinux (the BTF the schedulers are built against; import-debian.sh extracts it)"
series=$(sed -n 's/.*"series": "\([0-9][0-9]*\.[0-9][0-9]*\)".*/\1/p' "$k/kernel.json")
release=$(sed -n 's/.*"release": "\([A-Za-z0-9.+_~-]*\)".*/\1/p' "$k/kernel.json")
[ -n "$series" ] && [ -n "$release" ] || die "$k/kernel.json names no series or release"

set --
for p in $BUILD_PKGS linux-source-$series; do set -- "$@" --package "$p"; done
root=$("$here/debian13-root.sh" --backports "$@") ||
	die "no Debian 13 root with linux-source-$series and the build's packages (above)"
src=/usr/src/linux-source-$series.tar.xz
[ -f "$root$src" ] || die "linux-source-$series installed no $src in $root"

w=/var/tmp/schedlab-scx/$release
rm -rf "$root$w"
mkdir -p "$root$w"
cp "$k/vmlinux" "$root$w/vmlinux"
tmp=$(mktemp -d "$k/.scx.XXXXXX")
trap 'rm -rf "$tmp" "$root$w"' EXIT INT TERM
log=$tmp/build.log
echo "build-scx: building the sched_ext examples of linux-source-$series (a few minutes)" >&2
# the tarball's parts tools/sched_ext builds from; every example it builds
# (c-sched-targets), with the libraries ldd names
"$here/debian13-root.sh" --run "set -e; cd $w
tar -xaf $src linux-source-$series/tools linux-source-$series/include linux-source-$series/scripts linux-source-$series/arch/x86 linux-source-$series/kernel/bpf linux-source-$series/Makefile
cd linux-source-$series/tools/sched_ext
make -j2 VMLINUX_BTF=$w/vmlinux
mkdir -p $w/out/lib
cp /lib64/ld-linux-x86-64.so.2 $w/out/lib/
for f in build/bin/scx_*; do
	n=\${f##*/}
	cp \$f $w/out/\$n
	echo \$n >>$w/out/schedulers
	for l in \$(ldd \$f | awk '\$2 == \"=>\" && \$3 ~ /^\\// { print \$3 }'); do
		cp -L \$l $w/out/lib/
	done
done" >"$log" 2>&1 || {
	cp "$log" "$k/scx-failed.log" 2>/dev/null || true
	tail -n 30 "$log" >&2
	die "the sched_ext schedulers of linux-source-$series did not build (above; the whole log: kept in $k/scx-failed.log)"
}
[ -s "$root$w/out/schedulers" ] || die "the build named no scheduler (make -C tools/sched_ext help)"
mkdir -p "$tmp/scx"
mv "$root$w/out/"* "$tmp/scx/"
mv "$log" "$tmp/scx/build.log"
rm -f "$k/scx-failed.log"
rm -rf "$k/scx"
mv "$tmp/scx" "$k/scx"
echo "build-scx: $k/scx: $(tr '\n' ' ' <"$k/scx/schedulers")" >&2
echo "$k/scx"
