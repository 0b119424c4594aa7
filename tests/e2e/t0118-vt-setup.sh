#!/usr/bin/env bash
# End-to-end, offline: kernels/qemu-vt.sh (`make -C kernels qemu`) and
# kernels/debian13-root.sh (issue 49) without a network or a real Debian 13
# root, each against its own cache (XDG_CACHE_HOME). Checked: a system qemu
# >= 8.1 is taken as it is and nothing is made; with an older one, a
# complete root (a fake: its loader a script that answers -version) is
# taken without the lock and gets the wrapper, which runs the root's loader
# with its libraries, modules and firmware, and is not rewritten by a
# second call; and a failed setup names what is missing: debootstrap (the
# package), disk (how much), the archive (the URL it could not fetch),
# with the leftovers of an interrupted build removed and no root made.
# Two builds at once wait for each other (a fake debootstrap): one runs.
# The real root (debootstrap, about 1 minute) is made by make test's setup
# and used by t0546.
# timeout: 120
. "$(dirname "$0")/lib.sh"
require dpkg:dpkg-query
VT=$PWD/kernels/qemu-vt.sh
mkdir -p "$TMP/bin"
# fakeqemu PATH VERSION: a qemu that answers -version
fakeqemu() {
	printf '#!/bin/sh\n[ "$1" = -version ] && echo "QEMU emulator version %s (fake)"\n' "$2" >"$1"
	chmod +x "$1"
}

# --- the system's qemu when it is new enough: nothing made
fakeqemu "$TMP/bin/qemu-system-x86_64" 9.2.1
got=$(XDG_CACHE_HOME=$TMP/c1 PATH=$TMP/bin:$PATH "$VT" 2>"$TMP/e1")
equals "a system qemu >= 8.1 is the one provided" "$got" "$TMP/bin/qemu-system-x86_64"
equals "and nothing is made under the cache" "$(ls -A "$TMP/c1" 2>/dev/null)" ""

# --- an older system qemu and a complete root: the wrapper
fakeqemu "$TMP/bin/qemu-system-x86_64" 7.2.22
R=$TMP/c2/schedlab/debian13-root
mkdir -p "$R/var/lib/dpkg" "$R/lib64" "$R/usr/bin"
printf 'Package: qemu-system-x86\nStatus: install ok installed\nVersion: 1:10.0.13\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: fake\n' \
	>"$R/var/lib/dpkg/status"
# the root's loader: records how it was started, answers as qemu 10
cat >"$R/lib64/ld-linux-x86-64.so.2" <<EOF
#!/bin/sh
echo "\$QEMU_MODULE_DIR \$*" >>"$TMP/ld.calls"
echo "QEMU emulator version 10.0.13 (fake)"
EOF
chmod +x "$R/lib64/ld-linux-x86-64.so.2"
: >"$R/usr/bin/qemu-system-x86_64"
got=$(XDG_CACHE_HOME=$TMP/c2 PATH=$TMP/bin:$PATH "$VT" 2>"$TMP/e2")
equals "with qemu 7.2 on the system, the root's qemu behind the wrapper" "$got" "$TMP/c2/schedlab/qemu-vt/qemu-system-x86_64"
[ -f "$TMP/c2/schedlab/debian13-root.lock" ] && not_ok "a complete root is taken without the lock" ||
	ok "a complete root is taken without the lock"
"$got" -version -smp 2 >/dev/null
contains "the wrapper runs the root's loader with its libraries, modules and firmware" "$TMP/ld.calls" \
	"$R/usr/lib/x86_64-linux-gnu/qemu --library-path $R/usr/lib/x86_64-linux-gnu:$R/lib/x86_64-linux-gnu $R/usr/bin/qemu-system-x86_64 -L $R/usr/share/qemu -L $R/usr/share/seabios -L $R/usr/lib/ipxe/qemu -version -smp 2"
m1=$(stat -c %Y.%i "$got")
sleep 1
got2=$(XDG_CACHE_HOME=$TMP/c2 PATH=$TMP/bin:$PATH "$VT" 2>>"$TMP/e2")
equals "a second call provides the same" "$got2" "$got"
equals "and leaves the wrapper as it was" "$(stat -c %Y.%i "$got")" "$m1"

# --- failures name what is missing (the build path needs root)
if [ "$(id -u)" != 0 ]; then
	skip "failures of the root's build" "not root"
	done_testing; exit
fi
# no debootstrap: PATH without the sbin folders (Debian keeps it in /usr/sbin)
XDG_CACHE_HOME=$TMP/c3 PATH=$TMP/bin:/usr/bin:/bin "$VT" >"$TMP/o3" 2>"$TMP/e3"
equals "without debootstrap, qemu-vt fails (exit 1)" "$?" 1
if command -v debootstrap | grep -q '^/usr/bin/\|^/bin/'; then
	skip "the missing debootstrap is named" "debootstrap is in /usr/bin here"
else
	contains "the missing debootstrap is named, with its package" "$TMP/e3" \
		"debootstrap not found: install the package debootstrap"
fi
contains "and qemu-vt says what it needed it for" "$TMP/e3" "the system's qemu is $TMP/bin/qemu-system-x86_64 7.2, virtual time on more than one vCPU needs 8.1"
if ! command -v debootstrap >/dev/null; then
	skip "disk and archive failures" "no debootstrap"
	done_testing; exit
fi
# two builds at once (two make tests): one debootstrap, both get the root,
# never a half one (a fake debootstrap and wget on PATH; no packages asked)
mkdir -p "$TMP/fake"
cat >"$TMP/fake/debootstrap" <<EOF
#!/bin/sh
echo "\$*" >>"$TMP/debootstrap.calls"
sleep 2
mkdir -p "\$3/etc/apt" "\$3/var/lib/dpkg" && : >"\$3/var/lib/dpkg/status"
EOF
printf '#!/bin/sh\nexit 0\n' >"$TMP/fake/wget"
chmod +x "$TMP/fake/debootstrap" "$TMP/fake/wget"
for i in 1 2; do
	SCHEDLAB_DEBIAN_MIRROR=http://mirror.invalid/debian XDG_CACHE_HOME=$TMP/c6 PATH=$TMP/fake:$PATH \
		kernels/debian13-root.sh >"$TMP/o6.$i" 2>"$TMP/e6.$i" &
done
wait
equals "two builds at once: one debootstrap" "$(wc -l <"$TMP/debootstrap.calls")" 1
equals "both print the root" "$(cat "$TMP/o6.1" "$TMP/o6.2" | sort -u)" "$TMP/c6/schedlab/debian13-root"
equals "the root has the mirror's sources" \
	"$(cat "$TMP/c6/schedlab/debian13-root/etc/apt/sources.list")" "deb http://mirror.invalid/debian trixie main"
equals "no temporary folder is left" "$(ls -A "$TMP/c6/schedlab" | grep -c tmp)" 0
# no disk (the need raised past what any disk has)
SCHEDLAB_DEBIAN13_NEED_MB=999999999 XDG_CACHE_HOME=$TMP/c4 PATH=$TMP/bin:$PATH "$VT" >"$TMP/o4" 2>"$TMP/e4"
equals "without the disk, qemu-vt fails (exit 1)" "$?" 1
contains "the disk is named, with what is free" "$TMP/e4" "not enough disk under $TMP/c4/schedlab:"
# the archive unreachable; an interrupted build's leftovers are removed
mkdir -p "$TMP/c5/schedlab/debian13-root.tmp.old/etc"
SCHEDLAB_DEBIAN_MIRROR=http://127.0.0.1:9/debian XDG_CACHE_HOME=$TMP/c5 PATH=$TMP/bin:$PATH \
	timeout 100 "$VT" >"$TMP/o5" 2>"$TMP/e5"
equals "without the archive, qemu-vt fails (exit 1)" "$?" 1
contains "the archive is named, with the URL" "$TMP/e5" \
	"the Debian archive is unreachable: cannot fetch http://127.0.0.1:9/debian/dists/trixie/Release"
equals "the leftovers of an interrupted build are gone, no root made" \
	"$(ls -A "$TMP/c5/schedlab" | grep -v '^debian13-root\.lock$' | tr '\n' ' ')" ""
done_testing
