#!/usr/bin/env bash
# timeout: 300 (tests/run.sh ends it past this many seconds)
# End-to-end: a nightly on a moving git ref names the commit range in which a
# change point appears (issue 13, item 3), without qemu: the synthetic
# history of tests/e2e/synth.sh (nightly-01..20, a 20% step from nightly-11
# on), each night's boot labelled with the commit a real git repository had
# at its head that night (kernel_commit, kernel_describe as `schedlab run`
# stores them for a kernel from git). Then:
#  - `schedlab report --compare ... --summary` (what the nightly script
#    prints) says where the regression starts: the change point's kernel by
#    its description and commit, and "commit range: good C10 .. bad C11";
#  - `schedlab nightly` judging night 11 raises an alert whose group names
#    the range with the number of commits in it ("good .. bad ..., 3 commits");
#  - a bare repository is a git kernel's repository too (no working tree to
#    be dirty): resolved, cloned, its patch refused by name;
#  - compare names the commits each side ran when they share one release
#    (one kernel to the pairing, which goes by release and config).
. "$(dirname "$0")/lib.sh"
hold_local_target   # its local sessions never wait inside the script (lib.sh)
require sqlite3:sqlite3 git:git rt-tests:hackbench
SL=schedlab
DB=$TMP/n.db
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t \
	GIT_COMMITTER_EMAIL=t@example.org GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# a repository whose head moves one night at a time; between nights 10 and
# 11 three commits land (the culprit is among them)
R=$TMP/linux
git init -q -b main "$R"
C=()
for i in $(seq 1 20); do
	k=1
	[ "$i" = 11 ] && k=3
	for j in $(seq 1 $k); do
		echo "$i.$j" >"$R/core.c"
		git -C "$R" add core.c && git -C "$R" commit -qm "night $i change $j"
		[ "$i.$j" = 1.1 ] && git -C "$R" tag v1.0
	done
	C[$i]=$(git -C "$R" rev-parse HEAD)
done

# the database, migrated and empty: `run --resume` on a new path makes no
# file, so the schema (and its version) of one a tiny run made elsewhere
expect_exit 2 "a new database: nothing to resume" $SL run --resume last --db "$DB"
if [ -e "$DB" ]; then not_ok "... and makes no file"; else ok "... and makes no file"; fi
empty_db "$DB"
. tests/e2e/synth.sh
gen >"$TMP/gen.sql"
check "synthetic history loaded" sqlite3 -batch "$DB" ".read $TMP/gen.sql"
for i in $(seq 1 20); do
	d=$(git -C "$R" describe --tags --always --abbrev=12 "${C[$i]}")
	sql "UPDATE boot SET kernel_commit = '${C[$i]}', kernel_describe = '$d' WHERE session_id = $((100 + i))"
done
equals "results: one commit per night" "$(sql "SELECT count(DISTINCT kernel_commit) FROM results WHERE tag LIKE 'nightly-%'")" 20

expect_exit 0 "report --summary over the step" $SL report --db "$DB" \
	--compare session=108,session=109,session=110 session=111 --summary --out "$TMP/step.html"
contains "summary: the regression" "$TMP/out" "hackbench.time_s: 1 -> 1.201 s, +20.1%"
d11=$(git -C "$R" describe --tags --always --abbrev=12 "${C[11]}")
contains "summary: the change point's kernel by description and commit" "$TMP/out" \
	"starts at change point: session 111 (nightly-11), 2026-01-11, kernel $d11 (${C[11]})"
contains "summary: the first commit range with the change" "$TMP/out" \
	"commit range: good ${C[10]:0:12} .. bad ${C[11]:0:12}"

# the nightly's part (schedlab nightly, docs/alerts.md): the alert's group
# names the range with the number of commits in it, counted in the plan's
# repository
sql "UPDATE session SET plan_json = json_object('name', 'syn', 'matrix', json_object('kernel', json_object('git', '$R', 'ref', 'main')))"
expect_exit 1 "nightly judges night 11: a new regression" \
	$SL nightly --db "$DB" --session 111 --no-bisect --out-dir "$TMP/rep"
contains "nightly: the range with its commit count" "$TMP/out" \
	"commit range: good ${C[10]:0:12} .. bad ${C[11]:0:12}, 3 commits"
equals "nightly: the group stores the range" \
	"$(sql "SELECT good_commit || '..' || bad_commit || ' ' || ncommits FROM alert_group")" "${C[10]}..${C[11]} 3"

# compare: kernels told apart by commit even with one release and config
expect_exit 0 "compare two nights of one release" $SL compare --db "$DB" session=101 session=102
d1=$(git -C "$R" describe --tags --always --abbrev=12 "${C[1]}")
d2=$(git -C "$R" describe --tags --always --abbrev=12 "${C[2]}")
contains "compare names the commits of one release" "$TMP/out" \
	"kernels from git: A $d1 (${C[1]}), B $d2 (${C[2]})"

# a bare repository: resolved and cloned (no dirty check: no working tree);
# the patch does not apply, so the run stops before qemu (the image is a
# placeholder that is never booted)
git clone -q --bare "$R" "$TMP/bare.git"
: >"$TMP/vmlinuz"
printf 'diff --git a/core.c b/core.c\n--- a/core.c\n+++ b/core.c\n@@ -1 +1 @@\n-0.0\n+x\n' >"$TMP/x.patch"
cat >"$TMP/bare.json" <<P
{"name": "bare", "target": {"type": "qemu", "kernel": "$TMP/vmlinuz"},
 "matrix": {"kernel": {"git": "$TMP/bare.git", "ref": "v1.0", "patches": ["$TMP/x.patch"]}},
 "workloads": [{"type": "pingpong"}]}
P
XDG_CACHE_HOME=$TMP/cache expect_exit 2 "a bare repository: resolved, its patch refused" \
	$SL run "$TMP/bare.json" --db "$TMP/bare.db"
contains "... the tag resolved to its commit" "$TMP/err" "v1.0 in $TMP/bare.git is ${C[1]} (v1.0+1 patch)"
contains "... checked out in schedlab's clone" "$TMP/err" "checking out ${C[1]:0:12} (v1.0+1 patch) in $TMP/cache/schedlab/git/"
contains "... the patch named" "$TMP/err" "matrix.kernel[0].patches[0]: $TMP/x.patch does not apply on ${C[1]:0:12}"
done_testing
