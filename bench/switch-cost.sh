#!/usr/bin/env bash
# Switch cost on the qemu target (not a test): seconds from the end of one
# boot's last run to the next boot's first run, for "reboot" (a new VM per
# boot), "kexec" (inside the running VM) and "runtime" (the preempt mode
# written to /sys/kernel/debug/sched/preempt in the running kernel), beside
# the switch time the boot row stores (switch_s), and the share of that time spent
# outside the kernel's own boot (the kernel's part is the printk timestamp of
# "Run /init as init process" on the boot's console). Three preempt modes,
# a short hackbench per boot, ROUNDS interleaved rounds. A second line per
# method gives the initramfs the kernel unpacked ("Freeing initrd memory" on
# the console: for kexec the archive and the copy it carries) and, for kexec,
# the loader the agent used (kexec_load for an ELF vmlinux, kexec_file_load
# for a bzImage; the agent prints it on the console), and a third, for kexec,
# the seconds the agent spent writing the carry archive and in kexec -l (its
# same console line).
#   bench/switch-cost.sh [ROUNDS=2]   (env: KERNEL=a kernel folder with
#   kernel.json, default kernels/out/debian, e.g. one that `schedlab kernel
#   build` made; METHODS="reboot kexec runtime")
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
KERNEL=${KERNEL:-kernels/out/debian}
METHODS=${METHODS:-reboot kexec runtime}
if [ "$KERNEL" = kernels/out/debian ] && [ ! -f "$KERNEL/kernel.json" ]; then
	make -s -C kernels debian
fi
if [ ! -f "$KERNEL/kernel.json" ]; then
	echo "bench: $KERNEL has no kernel.json (a folder from make -C kernels or schedlab kernel build)" >&2
	exit 2
fi
echo "# kernel $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["release"])' "$KERNEL/kernel.json") ($KERNEL), $rounds rounds"
for sw in $METHODS; do
	cat >"$tmp/$sw.json" <<P
{"name": "switch-$sw", "switch": "$sw", "repetitions": $rounds, "seed": 3, "schedstat": false,
 "target": {"type": "qemu", "kernel": "$KERNEL", "cpus": 2, "memory_mb": 768},
 "matrix": {"preempt": ["none", "voluntary", "full"], "cmdline": ["printk.time=1"]},
 "workloads": [{"type": "hackbench", "groups": 1, "loops": 20}]}
P
	bin/schedlab run "$tmp/$sw.json" --db "$tmp/s.db" --tag "$sw" --quiet
done
python3 - "$tmp/s.db" <<'PY'
import re, sqlite3, statistics, sys
from datetime import datetime
db = sqlite3.connect(sys.argv[1])
def ts(s): return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
for tag in [t[0] for t in db.execute("SELECT tag FROM session ORDER BY id")]:
    boots = db.execute("""SELECT b.id, b.method, b.console, b.switch_s FROM boot b JOIN session s ON s.id = b.session_id
                          WHERE s.tag = ? AND b.status = 'ok' ORDER BY b.seq""", (tag,)).fetchall()
    gaps, kern = [], []
    for prev, cur in zip(boots, boots[1:]):
        end = db.execute("SELECT max(finished_at) FROM run WHERE boot_id = ?", (prev[0],)).fetchone()[0]
        start = db.execute("SELECT min(started_at) FROM run WHERE boot_id = ?", (cur[0],)).fetchone()[0]
        gap = ts(start) - ts(end)
        m = re.findall(r"\[\s*(\d+\.\d+)\] Run /init as init process", cur[2] or "")
        gaps.append(gap)
        if m:
            kern.append(float(m[-1]))
    g = statistics.median(gaps)
    sw = statistics.median([b[3] for b in boots[1:]])
    methods = ",".join(sorted({b[1] for b in boots[1:]}))
    line = (f"{tag:7s}: {len(gaps)} switches ({methods}), median {g:.2f} s (min {min(gaps):.2f}, "
            f"max {max(gaps):.2f}); stored switch_s median {sw:.3f} s")
    if kern:
        k = statistics.median(kern)
        line += f"; kernel boot to /init {k:.2f} s; outside the kernel's own boot {100 * (g - k) / g:.0f}%"
    print(line)
    initrd = [int(x) for b in boots[1:] for x in re.findall(r"Freeing initrd memory: (\d+)K", b[2] or "")]
    loaders = sorted({x for b in boots[1:] for x in re.findall(r"loaded with (\w+)", b[2] or "")})
    if tag == "runtime":
        continue
    print(f"{'':7s}  initramfs unpacked by the kernel {statistics.median(initrd) / 1024 if initrd else float('nan'):.1f} MB"
          + (f"; kexec loader {', '.join(loaders)}" if loaders else ""))
    # the agent's kexec line: "... loaded with L in X s (carry Y s)"
    timed = [(float(a), float(b)) for bt in boots[1:]
             for a, b in re.findall(r"loaded with \w+ in ([\d.]+) s \(carry ([\d.]+) s\)", bt[2] or "")]
    if timed:
        print(f"{'':7s}  in the guest before kexec -e: carry archive written {statistics.median(b for _, b in timed):.2f} s, "
              f"kexec -l {statistics.median(a for a, _ in timed):.2f} s (medians)")
PY
