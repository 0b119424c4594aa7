#!/bin/sh
# Installs the Debian packages schedlab needs that are missing, and says
# which. Groups:
#   build  gcc make libc6-dev libjansson-dev libsqlite3-dev libgsl-dev liblz4-dev
#          libmicrohttpd-dev (the lava target serves job artifacts over HTTP)
#   run    rt-tests (cyclictest, hackbench) stress-ng
#          rtla (the timerlat and osnoise workloads; Debian 12's rtla is 6.1's)
#          linux-perf (perf bench sched: the perf-messaging and perf-pipe
#          workloads) sockperf (the sockperf workload)
#   pgbench postgresql-15 (the pgbench workload: initdb, postgres, pgbench;
#          its postinst also makes and starts Debian's own "15 main" cluster
#          on localhost:5432, which schedlab never uses; with --all)
#   test   python3, jq (JSON checks in end-to-end tests) sqlite3 procps
#          chromium (report and serve tests, headless) chromium-driver (chromedriver:
#          serve's clicks through W3C WebDriver, t0862) systemd (systemd-analyze verify)
#          rt-app (the rtapp workload's end-to-end test) curl (LAVA's REST API, serve's pages)
#          debootstrap (the Debian 13 root whose qemu >= 8.1 runs virtual time on
#          more than one vCPU: `make -C kernels qemu`, which make test's setup runs)
#   (LAVA: lava-server lava-dispatcher lavacli postgresql are installed by
#    tests/lava/setup.sh, not here: PostgreSQL must be running before
#    lava-server's postinst creates its database, and setup.sh starts it)
#   qemu   qemu-system-x86 busybox-static cpio kexec-tools gzip (the qemu target)
#          dropbear-bin openssh-client (a guest reachable by ssh; the ssh target)
#          curl (the lava target: LAVA's REST API; it builds its initramfs too)
#   kernel flex bison libelf-dev libssl-dev bc ccache (building kernel variants;
#          the source, linux-source-<series>, comes with `make -C kernels source
#          [SERIES=6.12]`; Debian's kernels of any series with `make -C kernels
#          debian|debian-rt [SERIES=6.12]`, which the tests that boot them run)
# Usage: scripts/install-deps.sh [build run pgbench test qemu kernel]   (default: build run)
#        scripts/install-deps.sh --all
set -eu
groups="${*:-build run}"
[ "$groups" = "--all" ] && groups="build run pgbench test qemu kernel"
pkgs=""
for g in $groups; do
	case "$g" in
	build) pkgs="$pkgs gcc make libc6-dev libjansson-dev libsqlite3-dev libgsl-dev liblz4-dev libmicrohttpd-dev" ;;
	run) pkgs="$pkgs rt-tests stress-ng rtla linux-perf sockperf" ;;
	pgbench) pkgs="$pkgs postgresql-15" ;;
	test) pkgs="$pkgs python3 sqlite3 procps jq chromium chromium-driver systemd clang libclang-rt-14-dev rt-app curl debootstrap" ;;
	qemu) pkgs="$pkgs qemu-system-x86 busybox-static cpio kexec-tools gzip dropbear-bin openssh-client curl" ;;
	kernel) pkgs="$pkgs flex bison libelf-dev libssl-dev bc ccache make gcc xz-utils" ;;
	*) echo "install-deps: unknown group '$g' (valid: build run pgbench test qemu kernel --all)" >&2; exit 2 ;;
	esac
done
missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	echo "install-deps: all present:$pkgs"
	exit 0
fi
echo "install-deps: installing:$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "install-deps: not root and no sudo; run as root: apt-get install -y$missing" >&2
		exit 1
	fi
fi
# refresh the package lists when they are missing or older than a day
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages' -mtime -1 2>/dev/null | head -n 1)" ]; then
	$SUDO apt-get update -q
fi
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
