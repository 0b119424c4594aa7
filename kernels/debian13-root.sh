#!/bin/sh
# One minimal Debian 13 (trixie) root for the tools this Debian 12 host's
# packages are too old for (issue 49): qemu >= 8.1 for virtual time on more
# than one vCPU (kernels/qemu-vt.sh), and later the sched_ext import. Its
# programs run on the host without chroot through the root's own loader
# (../shared/LAB-NOTES.md, "Debian 13's qemu 10").
#
#   $CACHE/debian13-root        the root (CACHE: ${XDG_CACHE_HOME:-~/.cache}/schedlab)
#   $CACHE/debian13-root.lock   held (flock) while the root is made or changed
#
# Usage: debian13-root.sh [--backports] [--package PKG]... [--run CMD]
# prints the root's path.
# Idempotent: a root that exists is complete and is kept as it is; a
# --package that is not installed in it yet is installed (apt in a chroot).
# --backports adds trixie-backports to the root's apt sources (once, with
# an apt-get update): Linux 7.3 and its source come from there (issue 50,
# kernels/import-debian13.sh); apt still prefers trixie for a package both
# carry. --run CMD runs `sh -c CMD` in the root (chroot, /proc and /dev
# mounted, under the lock) after the packages: the sched_ext schedulers'
# build (kernels/build-scx.sh). Its output goes to stderr.
# A new root is made by `debootstrap --variant=minbase trixie` in a
# temporary folder beside it, gets its packages there and is renamed into
# place only when all of it succeeded, so the root never exists half made;
# the leftovers of an interrupted attempt are removed by the next one.
# Two callers at once (two `make test`s) wait for each other on the lock.
#
# The archive is the host's own Debian mirror as apt knows it (`apt-cache
# policy`: the source of the host's release with label Debian), or
# SCHEDLAB_DEBIAN_MIRROR. Needs root (debootstrap, chroot, mount), the
# debootstrap package and about 1 GB free under $CACHE
# (SCHEDLAB_DEBIAN13_NEED_MB, for tests).
set -eu

SUITE=trixie
NEED_MB=${SCHEDLAB_DEBIAN13_NEED_MB:-1024}
die() { echo "debian13-root: $*" >&2; exit 1; }

pkgs="" backports="" run=""
while [ $# -gt 0 ]; do
	case "$1" in
	--package)
		[ $# -ge 2 ] || die "--package needs a Debian package name"
		case "$2" in
		''|-*|*[!a-z0-9.+-]*) die "--package: not a Debian package name: '$2'" ;;
		esac
		pkgs="$pkgs $2"; shift 2 ;;
	--backports) backports=1; shift ;;
	--run)
		[ $# -ge 2 ] || die "--run needs a command"
		run=$2; shift 2 ;;
	*) die "unknown argument '$1' (valid: --backports, --package PKG, --run CMD)" ;;
	esac
done

cache=${XDG_CACHE_HOME:-${HOME:?neither XDG_CACHE_HOME nor HOME is set}/.cache}/schedlab
root=$cache/debian13-root

# a package is installed in the root when its dpkg database says so
installed() { # ROOT PKG
	[ "$(dpkg-query --admindir="$1/var/lib/dpkg" -W -f '${Status}' "$2" 2>/dev/null)" = \
		"install ok installed" ]
}
missing_in() { # ROOT: the asked packages not installed there
	m=""
	for p in $pkgs; do
		installed "$1" "$p" || m="$m $p"
	done
	echo $m
}

BPO_LIST=etc/apt/sources.list.d/trixie-backports.list
# trixie-backports is in the root's sources and its lists were fetched
has_backports() { # ROOT
	[ -z "$backports" ] || { [ -f "$1/$BPO_LIST" ] &&
		ls "$1/var/lib/apt/lists/"*_dists_trixie-backports_*Packages* >/dev/null 2>&1; }
}

# the fast path, without the lock: everything there already
if [ -z "$run" ] && [ -d "$root" ] && has_backports "$root" && [ -z "$(missing_in "$root")" ]; then
	echo "$root"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "making $root needs root (debootstrap, chroot and mount)"
command -v debootstrap >/dev/null ||
	die "debootstrap not found: install the package debootstrap (apt-get install debootstrap; scripts/install-deps.sh test)"
command -v flock >/dev/null || die "flock not found: install the package util-linux"
mkdir -p "$cache"
exec 9>"$cache/debian13-root.lock"
flock 9

# mounts below DIR, deepest first (from /proc/self/mounts; octal escapes kept)
mounts_under() { # DIR
	awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}
# apt inside a root needs /proc and /dev; every mount made here is undone on
# any exit (the trap below), and a root is never removed while something is
# mounted in it
mounted=""
unmount_all() {
	for m in $mounted; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	mounted=""
}
remove_tree() { # DIR: a root of ours, its mounts first
	for m in $(mounts_under "$1"); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
			die "cannot unmount $m (left by an interrupted build); unmount it, then run again"
	done
	[ -z "$(mounts_under "$1")" ] || die "$1 still has mounts in it; not removing it"
	rm -rf --one-file-system "$1"
}
tmp=""
cleanup() {
	unmount_all
	[ -z "$tmp" ] || [ ! -d "$tmp" ] || remove_tree "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

mount_for_apt() { # ROOT
	mount -t proc proc "$1/proc" && mounted="$1/proc $mounted"
	mount --bind /dev "$1/dev" && mounted="$1/dev $mounted"
	mount --bind /dev/pts "$1/dev/pts" && mounted="$1/dev/pts $mounted"
}
apt_install() { # ROOT PKG...
	r=$1; shift
	mount_for_apt "$r"
	chroot "$r" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 \
		apt-get install -y -q --no-install-recommends "$@" >>"$cache/debian13-root.log" 2>&1 ||
		{ tail -n 20 "$cache/debian13-root.log" >&2
		  die "apt-get install $* in the Debian 13 root failed (log: $cache/debian13-root.log)"; }
	chroot "$r" apt-get clean >/dev/null 2>&1 || true
	unmount_all
}

add_backports() { # ROOT
	has_backports "$1" && return 0
	mirror_of=$(sed -n 's/^deb \([^ ]*\) trixie main$/\1/p' "$1/etc/apt/sources.list" | head -n 1)
	[ -n "$mirror_of" ] || die "$1/etc/apt/sources.list names no trixie mirror"
	printf 'deb %s trixie-backports main\n' "$mirror_of" >"$1/$BPO_LIST"
	echo "debian13-root: adding trixie-backports to $1" >&2
	mount_for_apt "$1"
	chroot "$1" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 apt-get update -q \
		>>"$cache/debian13-root.log" 2>&1 ||
		{ rm -f "$1/$BPO_LIST"
		  die "apt-get update with trixie-backports failed: the Debian archive $mirror_of unreachable? (log: $cache/debian13-root.log)"; }
	unmount_all
}
run_in() { # ROOT
	[ -n "$run" ] || return 0
	mount_for_apt "$1"
	rc=0
	chroot "$1" env LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root sh -c "$run" >&2 || rc=$?
	unmount_all
	[ $rc = 0 ] || die "the command in the Debian 13 root failed (exit $rc)"
}

# someone else made it while we waited for the lock, or only packages are missing
if [ -d "$root" ]; then
	add_backports "$root"
	m=$(missing_in "$root")
	if [ -n "$m" ]; then
		echo "debian13-root: installing $m into $root" >&2
		apt_install "$root" $m
	fi
	run_in "$root"
	echo "$root"
	exit 0
fi

# the leftovers of an interrupted attempt (we hold the lock: nobody works in them)
for old in "$cache"/debian13-root.tmp.*; do
	[ -d "$old" ] && remove_tree "$old"
done

# the host's Debian mirror: the source apt uses for the host's own release
mirror=${SCHEDLAB_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
	codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "cannot tell this host's Debian release (/etc/os-release); set SCHEDLAB_DEBIAN_MIRROR to a Debian mirror"
	mirror=$(apt-cache policy 2>/dev/null | awk -v n="$codename" '
		$1 ~ /^[0-9-]+$/ && $2 ~ /^[a-z]+:\/\// { url = $2; next }
		$1 == "release" && url != "" && index($2, "n=" n ",") && index($2, "l=Debian,") && index($2, "c=main") {
			print url; exit }')
	[ -n "$mirror" ] || die "no Debian mirror for $codename in this host's apt sources (apt-cache policy); set SCHEDLAB_DEBIAN_MIRROR to one"
fi
mirror=${mirror%/}

avail=$(df -Pm "$cache" | awk 'NR == 2 { print $4 }')
[ "${avail:-0}" -ge "$NEED_MB" ] ||
	die "not enough disk under $cache: ${avail:-?} MB free, the Debian 13 root needs about $NEED_MB MB"

command -v wget >/dev/null || die "wget not found: install the package wget (debootstrap needs it)"
wget -q -T 30 -t 2 -O /dev/null "$mirror/dists/$SUITE/Release" ||
	die "the Debian archive is unreachable: cannot fetch $mirror/dists/$SUITE/Release (network down? set SCHEDLAB_DEBIAN_MIRROR to a reachable mirror)"

tmp=$(mktemp -d "$cache/debian13-root.tmp.XXXXXX")
echo "debian13-root: debootstrap $SUITE from $mirror into $tmp (a few minutes)" >&2
debootstrap --variant=minbase "$SUITE" "$tmp" "$mirror" >"$cache/debian13-root.log" 2>&1 || {
	tail -n 20 "$cache/debian13-root.log" >&2
	grep -q 'Couldn.t download\|Failed getting release file\|Temporary failure resolving' \
		"$cache/debian13-root.log" &&
		die "debootstrap could not download from the Debian archive $mirror (log: $cache/debian13-root.log)"
	die "debootstrap $SUITE failed (log: $cache/debian13-root.log)"
}
printf 'deb %s %s main\n' "$mirror" "$SUITE" >"$tmp/etc/apt/sources.list"
[ -z "$backports" ] || printf 'deb %s %s-backports main\n' "$mirror" "$SUITE" >"$tmp/$BPO_LIST"
[ -z "$pkgs$backports" ] || {
	mount_for_apt "$tmp"
	chroot "$tmp" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 apt-get update -q \
		>>"$cache/debian13-root.log" 2>&1 ||
		die "apt-get update in the new root failed: the Debian archive $mirror unreachable? (log: $cache/debian13-root.log)"
	unmount_all
	[ -z "$pkgs" ] || apt_install "$tmp" $pkgs
}
[ -z "$(mounts_under "$tmp")" ] || die "$tmp still has mounts in it"
mv "$tmp" "$root"
tmp=""
run_in "$root"
echo "$root"
