#!/usr/bin/env bash
# End-to-end: kernels/import-debian.sh, a kernel series as a parameter
# (issue 39), offline. apt-cache and apt-get are stubs on PATH that resolve
# the metapackages of a small fake archive (6.1 and 6.12, standard and RT,
# one -unsigned twin) and "download" .debs built here with dpkg-deb; no
# network, no real kernel. Checked: SERIES=6.12 imports beside 6.1 into
# debian-<abi> linked from debian-6.12 (-rt), and out/debian never moves;
# the release comes from the package's boot/vmlinuz-*, so the -unsigned
# name imports; a second import downloads nothing; and each failure names
# what is wrong and the apt command that would get it (a series that is not
# packaged, a 6.12 package with the default series, a download that fails,
# a package without a kernel, RT against not RT).
# timeout: 60
. "$(dirname "$0")/lib.sh"
require dpkg-deb:dpkg-deb
IMP=$PWD/kernels/import-debian.sh
A=$TMP/archive OUT=$TMP/kout CACHE=$TMP/kcache
mkdir -p "$A" "$TMP/bin"

# fakedeb PKG RELEASE [nokernel]: a .deb in the fake archive
fakedeb() {
	local d=$TMP/deb/$1
	mkdir -p "$d/DEBIAN" "$d/boot" "$d/lib/modules/$2/kernel"
	printf 'Package: %s\nVersion: 1.0-fake\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: fake\n' \
		"$1" >"$d/DEBIAN/control"
	if [ "${3:-}" != nokernel ]; then
		echo "not a bzImage" >"$d/boot/vmlinuz-$2"
		printf '# Linux/x86 %s Kernel Configuration\nCONFIG_PREEMPT_DYNAMIC=y\n' "${2%%[-+]*}" \
			>"$d/boot/config-$2"
	fi
	dpkg-deb -b -Zgzip "$d" "$A/${1}_1.0-fake_amd64.deb" >/dev/null
}
fakedeb linux-image-6.1.0-99-amd64 6.1.0-99-amd64
fakedeb linux-image-6.12.9+deb12-amd64 6.12.9+deb12-amd64
fakedeb linux-image-6.12.9+deb12-rt-amd64-unsigned 6.12.9+deb12-rt-amd64
fakedeb linux-image-6.12.8+deb12-amd64 6.12.8+deb12-amd64 nokernel

# apt-cache depends META: the versioned package behind it; apt-get
# download PKG: copies it from the archive (counted in $TMP/downloads)
cat >"$TMP/bin/apt-cache" <<EOF
#!/bin/sh
[ "\$1" = depends ] || exit 1
case "\$2" in
linux-image-amd64) echo "\$2"; echo "  Depends: linux-image-6.1.0-99-amd64" ;;
linux-image-6.12-amd64) echo "\$2"; echo "  Depends: linux-image-6.12.9+deb12-amd64" ;;
linux-image-6.12-rt-amd64) echo "\$2"; echo "  Depends: linux-image-6.12.9+deb12-rt-amd64" ;;
*) echo "E: No packages found" >&2; exit 100 ;;
esac
EOF
cat >"$TMP/bin/apt-get" <<EOF
#!/bin/sh
[ "\$1" = download ] || exit 1
pkg=\$3
echo "\$pkg" >>"$TMP/downloads"
[ -f "$A/\${pkg}_1.0-fake_amd64.deb" ] || { echo "E: Unable to locate package \$pkg" >&2; exit 100; }
cp "$A/\${pkg}_1.0-fake_amd64.deb" .
EOF
chmod +x "$TMP/bin/apt-cache" "$TMP/bin/apt-get"
export PATH=$TMP/bin:$PATH
imp() { "$IMP" "$@" "$OUT" "$CACHE"; }

expect_exit 0 "the default series (6.1) imports into debian-6.1.0-99" imp
equals "out/debian links to it" "$(readlink "$OUT/debian")" debian-6.1.0-99
contains "its kernel.json names the release from boot/vmlinuz-* and the series" \
	"$OUT/debian/kernel.json" '"release": "6.1.0-99-amd64"'

expect_exit 0 "--series 6.12 imports the package behind linux-image-6.12-amd64" imp --series 6.12
equals "into debian-6.12.9+deb12, linked from debian-6.12" "$(readlink "$OUT/debian-6.12")" debian-6.12.9+deb12
contains "with the release and series 6.12" "$OUT/debian-6.12/kernel.json" \
	'"release": "6.12.9+deb12-amd64", "image": "vmlinuz", "config": "config", "modules": "lib/modules/6.12.9+deb12-amd64", "source": "debian linux-image-6.12.9+deb12-amd64 1.0-fake", "series": "6.12"'
equals "out/debian did not move" "$(readlink "$OUT/debian")" debian-6.1.0-99

: >"$TMP/downloads"
expect_exit 0 "--series 6.12 again" imp --series 6.12
equals "nothing downloaded the second time" "$(wc -l <"$TMP/downloads")" 0

expect_exit 0 "an -unsigned package imports with --rt: the release from its boot/vmlinuz-*" \
	imp --rt --series 6.12 --package linux-image-6.12.9+deb12-rt-amd64-unsigned
equals "into debian-6.12.9+deb12-rt, linked from debian-6.12-rt" \
	"$(readlink "$OUT/debian-6.12-rt")" debian-6.12.9+deb12-rt
contains "its release has no -unsigned" "$OUT/debian-6.12-rt/kernel.json" '"release": "6.12.9+deb12-rt-amd64"'
[ -e "$OUT/debian-rt" ] && not_ok "no out/debian-rt made by a 6.12 RT import" || ok "no out/debian-rt made by a 6.12 RT import"

expect_exit 1 "a series Debian does not package: refused" imp --series 6.13
contains "naming the metapackage and the apt commands that would find it" "$TMP/err" \
	"no package linux-image-6.13-amd64 in the apt lists (Debian 12 has Linux 6.13 only if bookworm-security carries it): apt-get update, then apt-cache policy linux-image-6.13-amd64"

expect_exit 1 "a 6.12 package with the default series: refused" \
	env SCHEDLAB_DEBIAN_KPKG=linux-image-6.12.9+deb12-amd64 "$IMP" "$OUT" "$CACHE"
contains "saying how to import it without moving out/debian" "$TMP/err" \
	"linux-image-6.12.9+deb12-amd64 is Linux 6.12, not the default series 6.1: import it with --series 6.12 (make -C kernels debian SERIES=6.12), which leaves out/debian alone"
equals "out/debian still 6.1" "$(readlink "$OUT/debian")" debian-6.1.0-99

expect_exit 1 "a package the archive lacks: refused" imp --series 6.12 --package linux-image-6.12.7+deb12-amd64
contains "naming the apt-get download that failed and apt-cache policy" "$TMP/err" \
	"apt-get download linux-image-6.12.7+deb12-amd64 failed (into $CACHE; apt-get update? apt-cache policy linux-image-6.12.7+deb12-amd64 shows where it comes from)"

expect_exit 1 "a package without a kernel: refused" imp --series 6.12 --package linux-image-6.12.8+deb12-amd64
contains "it says there is no boot/vmlinuz-*" "$TMP/err" "has no boot/vmlinuz-* (not a kernel image package?)"
[ -e "$OUT/debian-6.12.8+deb12" ] && not_ok "and leaves no folder" || ok "and leaves no folder"
equals "debian-6.12 still the good import" "$(readlink "$OUT/debian-6.12")" debian-6.12.9+deb12

expect_exit 1 "an RT package without --rt: refused" \
	imp --series 6.12 --package linux-image-6.12.9+deb12-rt-amd64-unsigned
contains "saying so" "$TMP/err" "is a PREEMPT_RT kernel: import it with --rt"
expect_exit 1 "a bad series: refused" imp --series six
contains "naming valid ones" "$TMP/err" "--series: a kernel series like 6.1 or 6.12, not 'six'"
equals "no temporary folder left" "$(ls -A "$OUT" | grep -c '^\.import')" 0
done_testing
