#!/bin/sh
# Import Debian's distribution kernel for the qemu target (issue 5).
#
# Resolves the versioned package behind the metapackage linux-image-amd64
# (e.g. linux-image-6.1.0-57-amd64), downloads it with `apt-get download`
# into kernels/cache/, unpacks it with `dpkg -x` into a temporary folder and
# installs vmlinuz, the ELF vmlinux extracted from it (for qemu's fast PVH
# boot), config, the modules tree lib/modules/<release>/ and a small
# kernel.json into kernels/out/debian-<abi>/ (e.g. debian-6.1.0-57).
# kernels/out/debian is a symlink to the newest import.
#
# Idempotent: when kernels/out/debian-<abi>/kernel.json exists nothing is
# downloaded. The output folder is written under a temporary name and renamed
# at the end, so an interrupted import never looks complete.
#
# With --rt the same for Debian's PREEMPT_RT kernel (the package behind
# linux-image-rt-amd64, e.g. linux-image-6.1.0-57-rt-amd64) into
# kernels/out/debian-<abi>-rt/ (e.g. debian-6.1.0-57-rt), linked from
# kernels/out/debian-rt: `make -C kernels debian-rt`.
#
# Usage: import-debian.sh [--rt] [OUTDIR] [CACHEDIR]   (defaults: out, cache;
# relative to this script's folder). SCHEDLAB_DEBIAN_KPKG overrides the
# package name.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
meta=linux-image-amd64
link=debian
if [ "${1:-}" = --rt ]; then
	meta=linux-image-rt-amd64
	link=debian-rt
	shift
fi
out=${1:-$here/out}
cache=${2:-$here/cache}

die() { echo "import-debian: $*" >&2; exit 1; }

pkg=${SCHEDLAB_DEBIAN_KPKG:-}
if [ -z "$pkg" ]; then
	command -v apt-cache >/dev/null || die "apt-cache not found (a Debian host is needed)"
	pkg=$(apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	[ -n "$pkg" ] || {
		# offline or no package lists: reuse the newest import, if any
		if [ -f "$out/$link/kernel.json" ]; then
			echo "import-debian: cannot resolve $meta; keeping $(readlink "$out/$link")" >&2
			exit 0
		fi
		die "cannot resolve the versioned package behind $meta (run apt-get update?)"
	}
fi
case "$pkg" in
linux-image-[0-9]*-*) ;;
*) die "unexpected package name '$pkg'" ;;
esac

release=${pkg#linux-image-}          # 6.1.0-57-amd64, 6.1.0-57-rt-amd64
abi=${release%-*}                    # 6.1.0-57, 6.1.0-57-rt
dest="$out/debian-$abi"

# vmlinuz -> vmlinux: the ELF kernel inside the bzImage. qemu boots it
# directly through its PVH entry (CONFIG_PVH=y in Debian's kernel), which
# skips the decompressor: under TCG that saves about 3 s per boot.
extract_vmlinux() { # IMAGE OUT
	for magic in '\xfd7zXZ\x00:xz -dc --single-stream' '\x1f\x8b\x08:gzip -dc' \
		'\x28\xb5\x2f\xfd:zstd -dc'; do
		pat=${magic%%:*}
		cmd=${magic#*:}
		command -v "${cmd%% *}" >/dev/null || continue
		for off in $(LC_ALL=C grep -obUaP "$pat" "$1" 2>/dev/null | cut -d: -f1 | head -n 4); do
			tail -c +$((off + 1)) "$1" | $cmd >"$2.tmp" 2>/dev/null || true
			if [ "$(head -c 4 "$2.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
				mv "$2.tmp" "$2"
				return 0
			fi
		done
	done
	rm -f "$2.tmp"
	return 1
}

add_vmlinux() { # DIR
	[ -f "$1/vmlinux" ] && return 0
	if extract_vmlinux "$1/vmlinuz" "$1/vmlinux"; then
		sed -i 's/"image": "vmlinuz",/"image": "vmlinuz", "vmlinux": "vmlinux",/' "$1/kernel.json"
	else
		echo "import-debian: no ELF vmlinux found in $1/vmlinuz (qemu boots the bzImage)" >&2
	fi
}

if [ -f "$dest/kernel.json" ]; then
	add_vmlinux "$dest"
	ln -sfn "debian-$abi" "$out/$link"
	echo "$dest"
	exit 0
fi

mkdir -p "$out" "$cache"
# apt-get download drops privileges to _apt when run as root; let it write
chmod 755 "$cache" 2>/dev/null || true
deb=$(ls "$cache/${pkg}_"*.deb 2>/dev/null | head -n 1 || true)
if [ -z "$deb" ]; then
	echo "import-debian: downloading $pkg" >&2
	(cd "$cache" && apt-get download -q "$pkg") || die "apt-get download $pkg failed"
	deb=$(ls "$cache/${pkg}_"*.deb 2>/dev/null | head -n 1 || true)
	[ -n "$deb" ] || die "apt-get download left no ${pkg}_*.deb in $cache"
fi
debver=$(dpkg-deb -f "$deb" Version)

tmp=$(mktemp -d "$out/.import.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
dpkg -x "$deb" "$tmp/root" || die "dpkg -x $deb failed"

img="$tmp/root/boot/vmlinuz-$release"
cfg="$tmp/root/boot/config-$release"
mods=""
for m in "$tmp/root/lib/modules/$release" "$tmp/root/usr/lib/modules/$release"; do
	[ -d "$m" ] && mods=$m && break
done
[ -f "$img" ] || die "$deb has no boot/vmlinuz-$release"
[ -f "$cfg" ] || die "$deb has no boot/config-$release"
[ -n "$mods" ] || die "$deb has no lib/modules/$release"

stage="$tmp/stage"
mkdir -p "$stage/lib/modules"
mv "$img" "$stage/vmlinuz"
mv "$cfg" "$stage/config"
mv "$mods" "$stage/lib/modules/$release"
cat >"$stage/kernel.json" <<JSON
{"release": "$release", "image": "vmlinuz", "config": "config", "modules": "lib/modules/$release", "source": "debian $pkg $debver"}
JSON
add_vmlinux "$stage"
rm -rf "$dest"
mv "$stage" "$dest"
ln -sfn "debian-$abi" "$out/$link"
echo "import-debian: $dest ($pkg $debver)" >&2
echo "$dest"
