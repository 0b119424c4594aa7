#!/bin/sh
# Import Debian's distribution kernel for the qemu target (issues 5, 39).
#
# A kernel series is a parameter (--series, default 6.1):
#   6.1    the package behind linux-image-amd64 (e.g. linux-image-6.1.0-57-amd64)
#          into out/debian-<abi>/ (debian-6.1.0-57), linked from out/debian
#   S      the package behind linux-image-S-amd64 (bookworm-security carries
#          6.12: linux-image-6.12.118+deb12-amd64) into
#          out/debian-<abi>/ (debian-6.12.118+deb12), linked from out/debian-S
#   7.3    (Linux 7 and later) the newest linux-image-7.3.N+deb13-amd64 of
#          trixie-backports, with apt inside the Debian 13 root that
#          debian13-root.sh makes (--backports), into out/debian-<abi>/
#          (debian-7.3.4+deb13), linked from out/debian-7.3 (issue 50)
# With --rt the PREEMPT_RT flavour (linux-image-rt-amd64,
# linux-image-S-rt-amd64) into out/debian-<abi>-rt/, linked from
# out/debian-rt (6.1) or out/debian-S-rt. out/debian and out/debian-rt
# belong to the default series: importing another series never moves them.
#
# --package PKG (or SCHEDLAB_DEBIAN_KPKG) names the package instead of the
# series' metapackage: a metapackage (linux-image-6.12-amd64), an exact
# version (linux-image-6.12.118+deb12-amd64) or its -unsigned twin. Its
# series must be the one asked for (a 6.12 package with the default series
# is refused: SERIES=6.12). The release is read from the package's
# boot/vmlinuz-<release>, never from its name.
#
# Downloads with `apt-get download` into kernels/cache/, unpacks with
# `dpkg -x` into a temporary folder and installs vmlinuz, the ELF vmlinux
# extracted from it (for qemu's fast PVH boot), config, the modules tree
# lib/modules/<release>/ and a small kernel.json.
#
# Idempotent: when the folder of that package's release has kernel.json,
# nothing is downloaded. The output folder is written under a temporary
# name and renamed at the end, so an interrupted import never looks
# complete.
#
# Usage: import-debian.sh [--rt] [--series S] [--package PKG] [OUTDIR] [CACHEDIR]
# (defaults: 6.1, the series' metapackage, out, cache; relative to this
# script's folder). `make -C kernels debian|debian-rt [SERIES=S] [KPKG=PKG]`.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
DEFAULT_SERIES=6.1
rt="" series=$DEFAULT_SERIES pkg=${SCHEDLAB_DEBIAN_KPKG:-}
die() { echo "import-debian: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case "$1" in
	--rt) rt=-rt; shift ;;
	--series) [ $# -ge 2 ] || die "--series needs a value (6.1, 6.12)"; series=$2; shift 2 ;;
	--package) [ $# -ge 2 ] || die "--package needs a package name"; pkg=$2; shift 2 ;;
	--) shift; break ;;
	-*) die "unknown option $1 (valid: --rt, --series S, --package PKG)" ;;
	*) break ;;
	esac
done
case "$series" in
[0-9]*.[0-9]*) case "$series" in *[!0-9.]*|*.*.*) die "--series: a kernel series like 6.1 or 6.12, not '$series'" ;; esac ;;
*) die "--series: a kernel series like 6.1 or 6.12, not '$series'" ;;
esac
# a Debian package name (Policy 5.6.1): a-z 0-9 . + -, starting with a letter
# or a digit, at least 2 characters; nothing else reaches a path or apt
# (a '/' would put the import, and the link to it, outside OUTDIR)
pkgname_ok() {
	case "$1" in
	[a-z0-9]*[a-z0-9.+-]) case "$1" in *[!a-z0-9.+-]*) return 1 ;; esac ;;
	*) return 1 ;;
	esac
}
[ -z "$pkg" ] || pkgname_ok "$pkg" ||
	die "--package (KPKG, SCHEDLAB_DEBIAN_KPKG): '$pkg' is no Debian package name (a-z 0-9 . + - only, starting with a letter or a digit, at least 2 characters: linux-image-6.1.0-57-amd64, linux-image-6.12-amd64)"
out=${1:-$here/out}
cache=${2:-$here/cache}
if [ "$series" = "$DEFAULT_SERIES" ]; then
	meta=linux-image${rt}-amd64
	link=debian$rt
else
	meta=linux-image-$series$rt-amd64
	link=debian-$series$rt
fi

# the Linux series of a package name or a release: 6.1.0-57-amd64 -> 6.1,
# 6.12.118+deb12-rt-amd64 -> 6.12, 6.12-amd64 (metapackage) -> 6.12
series_of() { echo "$1" | sed -n 's/^\([0-9][0-9]*\.[0-9][0-9]*\)[-.+].*/\1/p'; }

# a metapackage (linux-image-6.12-amd64, linux-image-amd64) resolves to the
# versioned package it depends on; apt-cache prints nothing for an unknown name
resolve() { # META
	apt-cache depends "$1" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1
}

# Linux 7 and later: Debian 12 carries none; trixie-backports does (7.3,
# issue 50), fetched with apt inside the Debian 13 root that
# debian13-root.sh makes (also qemu-vt.sh's). A package of it is three:
# linux-image-R is a metapackage over linux-binary-R (vmlinuz),
# linux-base-R (config, System.map) and linux-modules-R, each under
# usr/lib/modules/R/.
from13=""
case "$series" in [7-9].*|[1-9][0-9]*.*) from13=1 ;; esac
case "$pkg" in *+deb1[3-9]-*) from13=1 ;; esac
root13=""
if [ -n "$from13" ]; then
	root13=$("$here/debian13-root.sh" --backports) ||
		die "Linux $series comes from trixie-backports in the Debian 13 root, which is not there (above; make -C kernels qemu makes it)"
	if [ -z "$pkg" ]; then
		sre=$(echo "$series" | sed 's/\./\\./g')
		pkg=$(chroot "$root13" apt-cache pkgnames "linux-image-$series." 2>/dev/null |
			grep -E "^linux-image-$sre\.[0-9]+\+deb1[3-9]$rt-amd64\$" | sort -V | tail -n 1 || true)
		[ -n "$pkg" ] || {
			if [ -f "$out/$link/kernel.json" ]; then
				echo "import-debian: no Linux $series in trixie-backports; keeping $(readlink "$out/$link")" >&2
				exit 0
			fi
			die "no package linux-image-$series.N+deb13$rt-amd64 in the Debian 13 root's trixie-backports (chroot $root13 apt-cache pkgnames linux-image-$series.)"
		}
	fi
fi

command -v apt-cache >/dev/null || [ -n "$pkg" ] ||
	die "apt-cache not found (a Debian host is needed, or --package with a .deb in $cache)"
if [ -z "$pkg" ]; then
	pkg=$(resolve "$meta")
	[ -n "$pkg" ] || {
		# offline or no package lists: reuse the import, if any
		if [ -f "$out/$link/kernel.json" ]; then
			echo "import-debian: cannot resolve $meta; keeping $(readlink "$out/$link")" >&2
			exit 0
		fi
		if [ "$series" = "$DEFAULT_SERIES" ]; then
			die "cannot resolve the versioned package behind $meta: apt-get update, then apt-cache depends $meta"
		fi
		die "no package $meta in the apt lists (Debian 12 has Linux $series only if bookworm-security carries it): apt-get update, then apt-cache policy $meta"
	}
else
	# a metapackage given by name resolves like the series' own; a
	# versioned name (6.12.118+deb12, 6.1.0-57, -unsigned) is taken as is
	case "$pkg" in
	*-unsigned|linux-image-[0-9]*.[0-9]*[.+-][0-9]*) ;;
	*) if command -v apt-cache >/dev/null; then
		r=$(resolve "$pkg")
		[ -n "$r" ] || die "no package $pkg in the apt lists: apt-get update, then apt-cache policy $pkg"
		pkg=$r
	   fi ;;
	esac
fi
pkgname_ok "$pkg" || die "apt-cache named '$pkg', which is no Debian package name"
case "$pkg" in
linux-image-[0-9]*-*) ;;
*) die "unexpected package name '$pkg'" ;;
esac
pseries=$(series_of "${pkg#linux-image-}")
[ "$pseries" = "$series" ] || {
	if [ "$series" = "$DEFAULT_SERIES" ]; then
		die "$pkg is Linux $pseries, not the default series $series: import it with --series $pseries (make -C kernels debian${rt} SERIES=$pseries), which leaves out/$link alone"
	fi
	die "$pkg is Linux $pseries, not series $series"
}
case "$pkg" in
*-rt-amd64|*-rt-amd64-unsigned) [ -n "$rt" ] || die "$pkg is a PREEMPT_RT kernel: import it with --rt (make -C kernels debian-rt)" ;;
*) [ -z "$rt" ] || die "$pkg is no PREEMPT_RT kernel (--rt wants linux-image-${series}-rt-amd64 or a versioned -rt-amd64 package)" ;;
esac

# the folder this package's release is expected in (its -unsigned twin is
# the same kernel); checked again against boot/vmlinuz-* after unpacking
guess=${pkg#linux-image-}
guess=${guess%-unsigned}
abi=${guess%-*}                      # 6.1.0-57, 6.12.118+deb12-rt
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
debs=""
if [ -n "$from13" ]; then
	rel13=${pkg#linux-image-}
	parts="linux-binary-$rel13 linux-base-$rel13 linux-modules-$rel13"
	need=""
	for p in $parts; do
		ls "$cache/${p}_"*.deb >/dev/null 2>&1 || need="$need $p"
	done
	if [ -n "$need" ]; then
		echo "import-debian: downloading$need from trixie-backports" >&2
		rm -rf "$root13/var/cache/schedlab-debs"
		"$here/debian13-root.sh" --backports --run "mkdir -p /var/cache/schedlab-debs && cd /var/cache/schedlab-debs && apt-get download -q$need" >/dev/null ||
			die "apt-get download$need in the Debian 13 root $root13 failed (chroot $root13 apt-cache policy linux-binary-$rel13 shows where it comes from)"
		mv "$root13/var/cache/schedlab-debs/"*.deb "$cache/" && rm -rf "$root13/var/cache/schedlab-debs"
	fi
	for p in $parts; do
		d=$(ls "$cache/${p}_"*.deb 2>/dev/null | head -n 1 || true)
		[ -n "$d" ] || die "the download left no ${p}_*.deb in $cache"
		debs="$debs $d"
	done
	deb=$(ls "$cache/linux-binary-${rel13}_"*.deb | head -n 1)
else
deb=$(ls "$cache/${pkg}_"*.deb 2>/dev/null | head -n 1 || true)
if [ -z "$deb" ]; then
	echo "import-debian: downloading $pkg" >&2
	(cd "$cache" && apt-get download -q "$pkg") ||
		die "apt-get download $pkg failed (into $cache; apt-get update? apt-cache policy $pkg shows where it comes from)"
	deb=$(ls "$cache/${pkg}_"*.deb 2>/dev/null | head -n 1 || true)
	[ -n "$deb" ] || die "apt-get download left no ${pkg}_*.deb in $cache"
fi
debs=$deb
fi
debver=$(dpkg-deb -f "$deb" Version)

tmp=$(mktemp -d "$out/.import.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
for d in $debs; do
	dpkg -x "$d" "$tmp/root" || die "dpkg -x $d failed"
done

# the release from the package's own boot/vmlinuz-<release> (Debian 13's
# usr/lib/modules/<release>/vmlinuz)
release=""
for f in "$tmp/root/boot/vmlinuz-"* "$tmp/root/usr/lib/modules/"*/vmlinuz; do
	[ -f "$f" ] || continue
	[ -z "$release" ] || die "$deb has more than one boot/vmlinuz-*"
	case "$f" in
	*/vmlinuz-*) release=${f##*/vmlinuz-} ;;
	*) release=${f%/vmlinuz}; release=${release##*/}
	   mkdir -p "$tmp/root/boot"
	   mv "$f" "$tmp/root/boot/vmlinuz-$release"
	   [ ! -f "${f%/vmlinuz}/config" ] || mv "${f%/vmlinuz}/config" "$tmp/root/boot/config-$release"
	   [ ! -f "${f%/vmlinuz}/System.map" ] || mv "${f%/vmlinuz}/System.map" "$tmp/root/boot/System.map-$release" ;;
	esac
done
[ -n "$release" ] || die "$deb has no boot/vmlinuz-* (not a kernel image package?)"
case "$release" in
*[!A-Za-z0-9.+_~-]*) die "$deb: its boot/vmlinuz-$release names no kernel release (letters, digits, . + _ ~ -)" ;;
esac
[ "$(series_of "$release")" = "$series" ] ||
	die "$deb holds Linux $release, not series $series"
abi=${release%-*}
dest="$out/debian-$abi"
img="$tmp/root/boot/vmlinuz-$release"
cfg="$tmp/root/boot/config-$release"
mods=""
for m in "$tmp/root/lib/modules/$release" "$tmp/root/usr/lib/modules/$release"; do
	[ -d "$m" ] && mods=$m && break
done
[ -f "$cfg" ] || die "$deb has no boot/config-$release"
[ -n "$mods" ] || die "$deb has no lib/modules/$release"

stage="$tmp/stage"
mkdir -p "$stage/lib/modules"
mv "$img" "$stage/vmlinuz"
mv "$cfg" "$stage/config"
mv "$mods" "$stage/lib/modules/$release"
cat >"$stage/kernel.json" <<JSON
{"release": "$release", "image": "vmlinuz", "config": "config", "modules": "lib/modules/$release", "source": "debian $pkg $debver", "series": "$series"}
JSON
add_vmlinux "$stage"
rm -rf "$dest"
mv "$stage" "$dest"
ln -sfn "debian-$abi" "$out/$link"
echo "import-debian: $dest ($pkg $debver)" >&2
echo "$dest"
