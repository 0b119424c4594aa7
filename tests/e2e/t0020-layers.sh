#!/usr/bin/env bash
# timeout: 60
# The layering rules (scripts/check-layers.sh, docs/architecture.md) hold
# on this tree, and the checker does catch each kind of violation: an
# include across layers, SQLite outside db/, and two C files with one
# basename (which the library archive would silently merge).
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh

if scripts/check-layers.sh >"$TMP/out" 2>&1; then
	ok "the tree keeps its layering rules"
else
	not_ok "the tree keeps its layering rules" "$(cat "$TMP/out")"
fi

# a copy of the sources to break one rule at a time
fresh() {
	rm -rf "$TMP/tree"
	mkdir -p "$TMP/tree"
	cp -r analysis db workloads harness "$TMP/tree/"
}

fresh
printf '#include "harness/results/select.h"\n' >>"$TMP/tree/analysis/stats.c"
expect_exit 1 "an include from analysis/ into harness/ is refused" scripts/check-layers.sh "$TMP/tree"
contains "... naming the file, the header and what is allowed" "$TMP/out" \
	"analysis/stats.c:"
contains "... and the rule" "$TMP/out" "includes harness/results/select.h, but analysis may include only from"

fresh
printf '#include "harness/orchestrate/session.h"\n' >>"$TMP/tree/harness/targets/local.c"
expect_exit 1 "a target that includes the orchestrator is refused" scripts/check-layers.sh "$TMP/tree"
contains "... by name" "$TMP/out" "harness/targets/local.c"

fresh
printf 'static void f(void *h) { sqlite3_close(h); }\n' >>"$TMP/tree/harness/results/trend.c"
expect_exit 1 "a sqlite3_ call outside db/ is refused" scripts/check-layers.sh "$TMP/tree"
contains "... by file and line" "$TMP/out" "harness/results/trend.c:"
contains "... saying where SQL goes" "$TMP/out" "SQLite outside db/"

fresh
printf '#include <sqlite3.h>\n' >>"$TMP/tree/harness/cli/cmd_query.c"
expect_exit 1 "<sqlite3.h> outside db/ is refused" scripts/check-layers.sh "$TMP/tree"

fresh
cp "$TMP/tree/workloads/jbb.c" "$TMP/tree/workloads/native/jbb.c"
expect_exit 1 "two C files with one basename are refused" scripts/check-layers.sh "$TMP/tree"
contains "... naming both" "$TMP/out" "two C files named jbb.c"

fresh
mkdir -p "$TMP/tree/harness/newpart"
printf 'int x;\n' >"$TMP/tree/harness/newpart/x.c"
expect_exit 1 "a new folder without a rule is refused" scripts/check-layers.sh "$TMP/tree"
contains "... asking for its rule" "$TMP/out" "folder harness/newpart has no layering rule"

done_testing
