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
# Then `make -C kernels` on a copy of kernels/ (issue 51): a package name
# that is not one (KPKG=linux-image-6.1.0-99/../../../fakek-amd64 once
# re-pointed out/debian outside out/) and every command-line variable
# (SERIES, KPKG, BASE, V, SRC) with shell or make syntax in it is refused
# before anything runs (exit non-zero, no file made by the value, the
# kernels folder as it was); SERIES= is the default series; SRC reaches
# build-variant.sh as one argument whatever it holds.
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
fakedeb linux-image-6.1.0-99-rt-amd64 6.1.0-99-rt-amd64
fakedeb linux-image-6.1.0-98-amd64 '6.1.0-98"q-amd64'

# apt-cache depends META: the versioned package behind it; apt-get
# download PKG: copies it from the archive (counted in $TMP/downloads)
cat >"$TMP/bin/apt-cache" <<EOF
#!/bin/sh
[ "\$1" = depends ] || exit 1
case "\$2" in
linux-image-amd64) echo "\$2"; echo "  Depends: linux-image-6.1.0-99-amd64" ;;
linux-image-rt-amd64) echo "\$2"; echo "  Depends: linux-image-6.1.0-99-rt-amd64" ;;
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
expect_exit 1 "a package whose boot/vmlinuz-* names no release: refused" imp --package linux-image-6.1.0-98-amd64
contains "naming the file and the valid characters" "$TMP/err" \
	'its boot/vmlinuz-6.1.0-98"q-amd64 names no kernel release (letters, digits, . + _ ~ -)'
[ -e "$OUT/debian-6.1.0-98" ] && not_ok "and leaves no folder (its kernel.json would be no JSON)" ||
	ok "and leaves no folder (its kernel.json would be no JSON)"
equals "no temporary folder left" "$(ls -A "$OUT" | grep -c '^\.import')" 0

# --- make -C kernels: the variables from the command line (issue 51) -------
# a copy of kernels/ (its Makefile and scripts as they are), so that out/ is
# this test's; a stray kernel beside it, where a KPKG with ../ pointed
K=$TMP/k/kernels F=$TMP/F
mkdir -p "$K" "$TMP/k/fakek" "$TMP/xdg"
cp kernels/Makefile kernels/*.sh kernels/*.config "$K/"
cp -r kernels/fragments "$K/"
printf '{"release": "6.1.0-99-amd64", "image": "vmlinuz"}\n' >"$TMP/k/fakek/kernel.json"
echo "not a bzImage" >"$TMP/k/fakek/vmlinuz"
export XDG_CACHE_HOME=$TMP/xdg
mk() { make -s -C "$K" "$@"; }
expect_exit 0 "make debian: the default series" mk debian
expect_exit 0 "make debian SERIES=6.12 KPKG=<a name with a +>: the package reaches the script" \
	mk debian SERIES=6.12 KPKG=linux-image-6.12.9+deb12-amd64
equals "out/debian-6.12 links to it" "$(readlink "$K/out/debian-6.12")" debian-6.12.9+deb12
expect_exit 0 "make debian SERIES= (empty): the default series" mk debian SERIES=
equals "out/debian is 6.1's" "$(readlink "$K/out/debian")" debian-6.1.0-99

# every file under the copy, with link targets and sizes
listing() { (cd "$TMP/k" && find . -printf '%p %y %l %s\n' | sort); }
# unchanged NAME BEFORE: the listing is still BEFORE (else the difference)
unchanged() {
	local now; now=$(listing)
	if [ "$now" = "$2" ]; then ok "$1"
	else not_ok "$1" "$(diff <(echo "$2") <(echo "$now") | grep '^[<>]' | head -n 6)"; fi
}
before=$(listing)
# refused NAME TARGET ASSIGNMENT TEXT: make TARGET ASSIGNMENT exits non-zero
# with TEXT in its error, makes no $F and leaves the kernels folder alone
refused() {
	local was; was=$(listing)
	rm -f "$F"
	expect_exit 2 "$1: refused" mk "$2" "$3"
	contains "$1: the message names it" "$TMP/err" "$4"
	[ -e "$F" ] && not_ok "$1: the value ran nothing" "$F exists" || ok "$1: the value ran nothing"
	unchanged "$1: the kernels folder unchanged" "$was"
}
refused "KPKG with ../ (it re-pointed out/debian outside out/)" debian \
	KPKG=linux-image-6.1.0-99/../../../fakek-amd64 \
	"KPKG='linux-image-6.1.0-99/../../../fakek-amd64' is not valid: a Debian package name has a-z 0-9 . + - only"
equals "out/debian still 6.1's own" "$(readlink "$K/out/debian")" debian-6.1.0-99
refused "KPKG with a command" debian "KPKG=linux-image-amd64; touch $F #" "KPKG='linux-image-amd64; touch $F #'"
refused "KPKG with make syntax" debian-rt "KPKG=\$(shell touch $F)" "KPKG='\$(shell touch $F)' is not valid"
refused "KPKG starting with -" debian KPKG=-linux-image-amd64 "KPKG='-linux-image-amd64' is not valid"
refused "KPKG of one character" debian KPKG=a "at least 2 characters"
refused "KPKG with capitals" debian KPKG=Linux-Image-amd64 "KPKG='Linux-Image-amd64' is not valid"
refused "SERIES with a command" debian "SERIES=x; touch $F #" \
	"SERIES='x; touch $F #' is not valid: a kernel series is digits.digits like 6.1 or 6.12; empty means the default 6.1"
refused "SERIES with an option (it imported the RT kernel)" debian "SERIES=6.1 --rt" "SERIES='6.1 --rt' is not valid"
refused "SERIES with make syntax" debian "SERIES=\$(shell touch $F)" "SERIES='\$(shell touch $F)' is not valid"
refused "SERIES 6.1.2" debian-rt SERIES=6.1.2 "SERIES='6.1.2' is not valid"
refused "SERIES of make source with a command" source "SERIES=6.1; touch $F #" "SERIES='6.1; touch $F #' is not valid"
refused "SERIES of make variant with a command" variant "SERIES=6.1; touch $F #" "SERIES='6.1; touch $F #' is not valid"
refused "BASE with a command" variant "BASE=minimal; touch $F #" \
	"BASE='minimal; touch $F #' is not valid: minimal or distro; empty means minimal"
refused "BASE of two words" variant "BASE=minimal distro" "BASE='minimal distro' is not valid"
refused "V with a command" variant "V=hz1000; touch $F #" "V='hz1000; touch $F #' is not valid: fragment names"
refused "V with an option of the variant builder" variant "V=hz1000 --keep-tree" "V='hz1000 --keep-tree' is not valid"
refused "V with make syntax" variant "V=\$(shell touch $F)" "V='\$(shell touch $F)' is not valid"
# SRC is any path: build-variant.sh gets it as one argument and refuses
# what is no kernel tree
expect_exit 2 "SRC with a quote and a command: one argument to the variant builder" \
	mk variant V=hz1000 "SRC=$TMP/it's; touch $F #"
contains "which says it is no kernel tree" "$TMP/err" "--source $TMP/it's; touch $F #: not a kernel source tree"
[ -e "$F" ] && not_ok "SRC ran nothing" || ok "SRC ran nothing"
expect_exit 2 "SRC with make syntax" mk variant "SRC=\$(shell touch $F)"
contains "reaches the variant builder as written" "$TMP/err" "--source \$(shell touch $F): not a kernel source tree"
[ -e "$F" ] && not_ok "SRC with make syntax ran nothing" || ok "SRC with make syntax ran nothing"
unchanged "the kernels folder unchanged after the SRC refusals" "$before"

# the script itself, given such a name (--package, SCHEDLAB_DEBIAN_KPKG)
expect_exit 1 "import-debian.sh --package with ../: refused" \
	"$IMP" --package linux-image-6.1.0-99/../../../fakek-amd64 "$K/out" "$K/cache"
contains "naming the option and what a package name is" "$TMP/err" \
	"--package (KPKG, SCHEDLAB_DEBIAN_KPKG): 'linux-image-6.1.0-99/../../../fakek-amd64' is no Debian package name (a-z 0-9 . + - only"
expect_exit 1 "SCHEDLAB_DEBIAN_KPKG with ../: refused" \
	env SCHEDLAB_DEBIAN_KPKG=linux-image-6.1.0-99/../../../fakek-amd64 "$IMP" "$K/out" "$K/cache"
unchanged "the kernels folder unchanged after the script's refusals" "$before"
done_testing
