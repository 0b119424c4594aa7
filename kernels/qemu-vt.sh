#!/bin/sh
# A qemu for virtual time on more than one vCPU (issue 49): qemu >= 8.1,
# whose icount gives every vCPU its turn ("ensure fairness with icount";
# qemu 7.2 hangs a 2-vCPU guest at its CPU bring-up, docs/virtual-time.md).
#
# The system's qemu-system-x86_64 when it is new enough; else qemu from the
# Debian 13 root (debian13-root.sh --package qemu-system-x86), started on
# this host without chroot through the root's own loader by a wrapper at a
# fixed path, which the qemu target uses for "clock": "virtual":
#
#   $CACHE/qemu-vt/qemu-system-x86_64   (CACHE: ${XDG_CACHE_HOME:-~/.cache}/schedlab)
#
# Prints the path of the qemu it provides. Idempotent (the wrapper is
# rewritten only when it differs); `make -C kernels qemu`, also run by
# `make test`'s setup (make deps-test).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
MIN_MAJOR=8 MIN_MINOR=1
die() { echo "qemu-vt: $*" >&2; exit 1; }

# "QEMU emulator version 10.0.13 (Debian ...)" -> 10 0; nothing when unreadable
version_of() { # QEMU
	"$1" -version 2>/dev/null |
		sed -n '1s/^QEMU emulator version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p'
}
new_enough() { # QEMU
	set -- $(version_of "$1")
	[ $# -eq 2 ] && { [ "$1" -gt $MIN_MAJOR ] || { [ "$1" -eq $MIN_MAJOR ] && [ "$2" -ge $MIN_MINOR ]; }; }
}

sys=$(command -v qemu-system-x86_64 || true)
if [ -n "$sys" ] && new_enough "$sys"; then
	echo "$sys"
	exit 0
fi

cache=${XDG_CACHE_HOME:-${HOME:?neither XDG_CACHE_HOME nor HOME is set}/.cache}/schedlab
wrap=$cache/qemu-vt/qemu-system-x86_64
root=$("$here/debian13-root.sh" --package qemu-system-x86) ||
	die "no Debian 13 root with qemu (above); the system's qemu is ${sys:-missing}${sys:+ $(version_of "$sys" | tr ' ' .)}, virtual time on more than one vCPU needs $MIN_MAJOR.$MIN_MINOR"
case "$root" in *\'*) die "the cache path $root has a quote in it" ;; esac
for f in lib64/ld-linux-x86-64.so.2 usr/bin/qemu-system-x86_64; do
	[ -e "$root/$f" ] || die "$root/$f is missing: remove $root and run again"
done

# the root's libraries, qemu's modules and firmware, never the host's
mkdir -p "$cache/qemu-vt"
new=$wrap.new.$$
cat >"$new" <<EOF
#!/bin/sh
# Written by kernels/qemu-vt.sh (make -C kernels qemu): the Debian 13 root's
# qemu, run through the root's own loader and libraries without chroot.
R='$root'
QEMU_MODULE_DIR=\$R/usr/lib/x86_64-linux-gnu/qemu
export QEMU_MODULE_DIR
exec "\$R/lib64/ld-linux-x86-64.so.2" \\
	--library-path "\$R/usr/lib/x86_64-linux-gnu:\$R/lib/x86_64-linux-gnu" \\
	"\$R/usr/bin/qemu-system-x86_64" \\
	-L "\$R/usr/share/qemu" -L "\$R/usr/share/seabios" -L "\$R/usr/lib/ipxe/qemu" "\$@"
EOF
chmod 755 "$new"
if cmp -s "$new" "$wrap"; then
	rm -f "$new"
else
	mv "$new" "$wrap"
fi
new_enough "$wrap" ||
	die "$wrap does not run as qemu >= $MIN_MAJOR.$MIN_MINOR ($("$wrap" -version 2>&1 | head -n 3))"
echo "$wrap"
