#!/usr/bin/env bash
# tags: qemu kbuild (tests/run.sh: SCHEDLAB_SKIP_TAGS, make test-quick)
# timeout: 1200 (tests/run.sh ends it past this many seconds)
# End-to-end: kernels from git (issue 13, items 1 and 2) with real git, the
# real kernels/build-variant.sh and real qemu boots, on a small repository
# that stands in for a kernel tree: its Makefile answers the make targets the
# recipe uses (tinyconfig, olddefconfig, bzImage, kernelrelease) by copying
# Debian's kernel, and prints kernel/sched/core.c into the build log, so the
# test can see which commit and which patches were built without spending
# minutes on a real kernel build (the real build is t0600's and bisect's).
#
#  - plan time: a ref starting with '-' and a missing patch exit 2, named;
#  - night 1 ("fetch": true, "ref": "origin/main", once plain and once with
#    a patch): the ref is resolved to the full commit id, stored in the plan
#    and on every boot, shown with its `git describe` in the results view;
#    the patch is in the build, the user's clone is untouched (schedlab
#    builds in its own clone); the two kernels have different cache keys;
#  - the session is killed mid-run, upstream moves on, `run --resume` still
#    boots the commit resolved at session start (no mixing);
#  - night 2 fetches the new head: results carry two commits;
#  - the same plan again is a cache hit (no build);
#  - a patch that does not apply: exit 2 before anything is stored, naming
#    the patch, the file it touches and git's message;
#  - a tree with uncommitted changes on the requested commit is refused;
#    "dirty": "ignore" builds the commit as committed, with a warning.
. "$(dirname "$0")/lib.sh"
export TMPDIR=$TMP
export XDG_CACHE_HOME=$TMP/cache   # a cache of our own: hits and misses are ours
require qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio \
	gzip:gzip sqlite3:sqlite3 git:git make:make binutils:objcopy
[ -f kernels/out/debian/kernel.json ] || make -s -C kernels debian >/dev/null 2>&1
if [ ! -f kernels/out/debian/kernel.json ]; then
	not_ok "Debian kernel imported (make -C kernels debian)"; done_testing; exit
fi
DEBK=$(cd kernels/out/debian && pwd -P)
DB=$TMP/g.db
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@example.org GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# --- the stand-in kernel repository (upstream) and the user's clone ---------------
UP=$TMP/upstream
mkdir -p "$UP/scripts/kconfig" "$UP/kernel/sched"
cat >"$UP/Makefile" <<EOF
# stand-in for a kernel tree (tests/e2e/t0610): the make targets that
# kernels/build-variant.sh runs; the "kernel" is Debian's
O ?= .
kernelversion:
	@echo 6.1.0
tinyconfig:
	@cp $DEBK/config \$(O)/.config
olddefconfig:
	@:
bzImage:
	@echo "  CC      kernel/sched/core.o"
	@cat kernel/sched/*.c
	@mkdir -p \$(O)/arch/x86/boot
	@cp $DEBK/vmlinuz \$(O)/arch/x86/boot/bzImage
	@cp $DEBK/vmlinux \$(O)/vmlinux
kernelrelease:
	@echo 6.1.0-57-amd64
EOF
cat >"$UP/scripts/kconfig/merge_config.sh" <<'EOF'
#!/bin/sh
# stand-in for the kernel's merge_config.sh: the files in order, later lines win
while [ $# -gt 0 ]; do case "$1" in -m) shift ;; -O) shift 2 ;; *) break ;; esac; done
cat "$@" >"$KCONFIG_CONFIG.new" && mv "$KCONFIG_CONFIG.new" "$KCONFIG_CONFIG"
EOF
chmod +x "$UP/scripts/kconfig/merge_config.sh"
printf 'void wake_up(void)\n{\n\tenqueue();\n}\n' >"$UP/kernel/sched/core.c"
git -C "$UP" init -q -b main && git -C "$UP" add -A && git -C "$UP" commit -qm base &&
	git -C "$UP" tag v1.0
printf 'void wake_up(void)\n{\n\tenqueue();\n\tcheck_preempt();\n}\n' >"$UP/kernel/sched/core.c"
git -C "$UP" commit -qam "sched: check preemption on wakeup"
C1=$(git -C "$UP" rev-parse HEAD)
W=$TMP/work
git clone -q "$UP" "$W"

# a patch on top: one more line in core.c (made with git diff, then undone)
sed -i 's/^\tcheck_preempt();/\tcheck_preempt();\n\tpatched_by_series();/' "$W/kernel/sched/core.c"
git -C "$W" diff >"$TMP/good.patch"
git -C "$W" checkout -q -- .
# a patch whose context is not in the tree (on top of good.patch)
cat >"$TMP/bad.patch" <<'EOF'
diff --git a/kernel/sched/core.c b/kernel/sched/core.c
--- a/kernel/sched/core.c
+++ b/kernel/sched/core.c
@@ -1,4 +1,5 @@
 void wake_up(void)
 {
 	not_in_the_tree();
+	udelay(200);
 }
EOF

plan() { # NAME KERNELS
	cat >"$TMP/$1.json" <<EOF
{"name": "$1", "target": {"type": "qemu", "kernel": "kernels/out/debian", "cpus": 2,
  "memory_mb": 768}, "order": "sequential", "repetitions": 2, "switch": "reboot",
 "matrix": {"kernel": $2},
 "workloads": [{"type": "pingpong", "duration_s": 1, "warmup_s": 0}]}
EOF
}
K="{\"git\": \"$W\", \"ref\": \"origin/main\", \"fetch\": true}"
KP="{\"git\": \"$W\", \"ref\": \"origin/main\", \"fetch\": true, \"patches\": [\"$TMP/good.patch\"]}"

# --- plan time ----------------------------------------------------------------------
plan nightly "[$K, $KP]"
expect_exit 0 "plan: a git kernel validates" schedlab plan "$TMP/nightly.json"
contains "plan: the kernel is labelled by repository and ref" "$TMP/out" "git:$W@origin/main"
plan badref "[{\"git\": \"$W\", \"ref\": \"--upload-pack=touch /tmp/x\"}]"
expect_exit 2 "plan: a ref starting with '-' exits 2" schedlab plan "$TMP/badref.json"
contains "plan: ... and names the key" "$TMP/err" "matrix.kernel[0].ref: must be a commit-ish"
plan nopatch "[{\"git\": \"$W\", \"ref\": \"main\", \"patches\": [\"$TMP/none.patch\"]}]"
expect_exit 2 "plan: a missing patch exits 2" schedlab plan "$TMP/nopatch.json"
contains "plan: ... and names it" "$TMP/err" "matrix.kernel[0].patches[0]: $TMP/none.patch"
plan noref "[{\"git\": \"$W\", \"ref\": \"no-such-branch\"}]"
expect_exit 2 "run: a ref that is no commit exits 2" schedlab run "$TMP/noref.json" --db "$DB"
contains "run: ... naming the ref and the repository" "$TMP/err" \
	"matrix.kernel[0].ref: \"no-such-branch\" is not a commit in $W"
equals "run: nothing stored for a bad ref" "$(sql "SELECT count(*) FROM session" 2>/dev/null || echo 0)" 0

# --- night 1, killed mid-run -------------------------------------------------------------
sed -i 's/"duration_s": 1/"duration_s": 4/' "$TMP/nightly.json"
t0=$(date +%s)
schedlab run "$TMP/nightly.json" --db "$DB" --tag night1 >"$TMP/n1.out" 2>"$TMP/n1.err" &
pid=$!
CLEANUP_CMDS+=("kill -9 $pid")
for i in $(seq 1800); do
	[ "$(sqlite3 "$DB" "SELECT count(*) FROM run WHERE status = 'ok'" 2>/dev/null)" = 1 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
echo "# night 1 until killed (two kernels built, one run): $(( $(date +%s) - t0 )) s"
grep -E 'origin/main in|kernel [0-9]/|kbuild: (built|cached)' "$TMP/n1.err" | sed 's/^/#   /'
contains "night 1: the ref is resolved to the full commit id" "$TMP/n1.err" \
	"matrix.kernel[0]: origin/main in $W is $C1 (v1.0-1-g${C1:0:12})"
contains "night 1: the patched kernel says +1 patch" "$TMP/n1.err" \
	"matrix.kernel[1]: origin/main in $W is $C1 (v1.0-1-g${C1:0:12}+1 patch)"
equals "night 1: the stored plan names the commit, not only the ref" \
	"$(sql "SELECT json_extract(plan_json, '\$.matrix.kernel[0].commit') || ' ' ||
		json_extract(plan_json, '\$.matrix.kernel[1].commit') FROM session WHERE tag = 'night1'")" \
	"$C1 $C1"
equals "night 1: every boot row carries the commit" \
	"$(sql "SELECT group_concat(DISTINCT kernel_commit) FROM boot")" "$C1"
f0=$(sql "SELECT req_kernel FROM boot WHERE kernel_describe NOT LIKE '%patch%' LIMIT 1")
f1=$(sql "SELECT req_kernel FROM boot WHERE kernel_describe LIKE '%+1 patch' LIMIT 1")
if [ -n "$f0" ] && [ -n "$f1" ] && [ "$f0" != "$f1" ]; then
	ok "cache key: the patched kernel is another build ($(basename "$f0" | cut -c1-8) vs $(basename "$f1" | cut -c1-8))"
else
	not_ok "cache key: the patched kernel is another build" "plain: $f0" "patched: $f1"
fi
contains "the patch is in the patched build" "$f1/build.log" "patched_by_series();"
if grep -q patched_by_series "$f0/build.log" 2>/dev/null; then
	not_ok "the plain build has no patch"
else ok "the plain build has no patch"; fi
contains "kernel.json: the source is the commit and the patches' hash" "$f1/kernel.json" \
	"\"source\": \"git $C1 patches 1 "
equals "the user's clone is untouched (clean, HEAD and core.c as they were)" \
	"$(git -C "$W" status --porcelain)|$(git -C "$W" rev-parse HEAD)|$(grep -c patched "$W/kernel/sched/core.c")" \
	"|$C1|0"

# --- upstream moves; the killed session resumes with the commit it started with -----
printf 'void new_in_c2(void)\n{\n}\n' >"$UP/kernel/sched/fair.c"
git -C "$UP" add kernel/sched/fair.c && git -C "$UP" commit -qm "sched: something new"
C2=$(git -C "$UP" rev-parse HEAD)
# (T0610_LOSE_GUEST=1 kills the resumed session's first guest while it
# boots, to exercise the recovery below by hand)
inj=""
if [ "${T0610_LOSE_GUEST:-0}" = 1 ]; then
	(
		# (a qemu under TCG: with "accel": "auto" a KVM probe may come first)
		for i in $(seq 6000); do
			pgrep -f -- "-accel tcg.*$TMP/schedlab-qemu" >/dev/null && break
			sleep 0.2
		done
		sleep 1
		echo "# T0610_LOSE_GUEST: killing qemu $(pgrep -f "$TMP/schedlab-qemu" | tr '\n' ' ')"
		kill -9 $(pgrep -f "$TMP/schedlab-qemu")
	) &
	inj=$!
fi
schedlab run --resume last --db "$DB" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ -n "$inj" ] && wait $inj
if [ $rc = 1 ] && grep -q "runs were not done because the target was lost or did not boot" "$TMP/err"; then
	# a TCG guest that did not come up or went away (rare here, never
	# reproduced): its boot's error and console, then what a user does
	echo "# the resumed session lost a guest; its boots:"
	sql "SELECT seq || ' ' || status || ': ' || coalesce(error, '') FROM boot WHERE status != 'ok'" | sed 's/^/#   /'
	expect_exit 0 "resume after SIGKILL (upstream has moved meanwhile; a second resume after a lost guest)" \
		schedlab run --resume last --db "$DB"
else
	equals "resume after SIGKILL (upstream has moved meanwhile)" "$rc" 0
	[ $rc = 0 ] || tail -n 5 "$TMP/err" | sed 's/^/#   /'
fi
equals "resume: the session's boots all used the commit resolved at its start" \
	"$(sql "SELECT group_concat(DISTINCT kernel_commit) FROM results WHERE tag = 'night1'")" "$C1"
equals "resume: every run of night 1 is done" \
	"$(sql "SELECT count(*) FROM run r JOIN session s ON s.id = r.session_id WHERE s.tag = 'night1' AND r.status = 'ok'")" 4
if [ -z "$f0" ] || [ -z "$f1" ] || grep -q new_in_c2 "$f0/build.log" "$f1/build.log"; then
	not_ok "resume built nothing new"
else ok "resume built nothing new"; fi

# --- night 2: the new head ----------------------------------------------------------------
expect_exit 0 "night 2 runs" schedlab run "$TMP/nightly.json" --db "$DB" --tag night2
contains "night 2: fetched and resolved to the new head" "$TMP/err" "origin/main in $W is $C2"
equals "results: two nights, two commits" \
	"$(sql "SELECT group_concat(tag || '=' || c, ' ') FROM (SELECT DISTINCT tag, kernel_commit AS c FROM results ORDER BY tag)")" \
	"night1=$C1 night2=$C2"
equals "results: kernel_describe labels by commit and patches" \
	"$(sql "SELECT group_concat(d, ',') FROM (SELECT DISTINCT kernel_describe AS d FROM results WHERE tag = 'night2' ORDER BY d)")" \
	"v1.0-2-g${C2:0:12},v1.0-2-g${C2:0:12}+1 patch"
f2=$(sql "SELECT req_kernel FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = 'night2' AND b.kernel_describe NOT LIKE '%patch%' LIMIT 1")
contains "night 2 built the new commit" "$f2/build.log" "void new_in_c2(void)"

# --- the same again: a cache hit ----------------------------------------------------------
t0=$(date +%s)
expect_exit 0 "night 2 again" schedlab run "$TMP/nightly.json" --db "$DB" --tag night2b
contains "the same commit and patches again: found in the cache" "$TMP/err" "kbuild: cached:"
if grep -q "kbuild: built" "$TMP/err" || ! grep -q "^session" "$TMP/err"; then not_ok "... and nothing is built" "$(grep 'kbuild: built' "$TMP/err")"
else ok "... and nothing is built"; fi
echo "# night 2 again (cache hits, two boots): $(( $(date +%s) - t0 )) s"

# --- a patch that does not apply ----------------------------------------------------------
n=$(sql "SELECT count(*) FROM session")
plan badpatch "[{\"git\": \"$W\", \"ref\": \"origin/main\", \"patches\": [\"$TMP/good.patch\", \"$TMP/bad.patch\"]}]"
expect_exit 2 "a patch that does not apply: exit 2" schedlab run "$TMP/badpatch.json" --db "$DB"
contains "... naming the patch and the commit" "$TMP/err" \
	"matrix.kernel[0].patches[1]: $TMP/bad.patch does not apply on ${C2:0:12}"
contains "... the file" "$TMP/err" "kernel/sched/core.c"
contains "... and git's message" "$TMP/err" "patch does not apply"
equals "... before anything is stored" "$(sql "SELECT count(*) FROM session")" "$n"

# --- a dirty tree ---------------------------------------------------------------------------
echo "/* local edit */" >>"$W/kernel/sched/core.c"
plan dirty "[{\"git\": \"$W\", \"ref\": \"HEAD\"}]"
expect_exit 2 "uncommitted changes on the requested commit: refused" \
	schedlab run "$TMP/dirty.json" --db "$DB"
contains "... saying why and what to do" "$TMP/err" "has uncommitted changes (1 file"
contains "... naming the way out" "$TMP/err" "\"dirty\": \"ignore\""
plan dirtyok "[{\"git\": \"$W\", \"ref\": \"HEAD\", \"dirty\": \"ignore\"}]"
expect_exit 0 "\"dirty\": \"ignore\": the commit is built as committed" \
	schedlab run "$TMP/dirtyok.json" --db "$DB" --tag dirty
contains "... with a warning" "$TMP/err" "warning: $W has uncommitted changes"
equals "... and the results name the committed HEAD" \
	"$(sql "SELECT DISTINCT kernel_commit FROM results WHERE tag = 'dirty'")" "$C1"
fd=$(sql "SELECT req_kernel FROM boot b JOIN session s ON s.id = b.session_id WHERE s.tag = 'dirty' LIMIT 1")
if grep -q "local edit" "$fd/build.log"; then not_ok "... without the local edit"
else ok "... without the local edit"; fi
equals "the user's edit is still there" "$(tail -n 1 "$W/kernel/sched/core.c")" "/* local edit */"
if pgrep -f "$TMP/schedlab-qemu" >/dev/null; then not_ok "no qemu process left"; else ok "no qemu process left"; fi
done_testing
