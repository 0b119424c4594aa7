#!/usr/bin/env bash
# timeout: 60
# The layering rules (scripts/check-layers.sh, docs/architecture.md) hold
# on this tree, and the checker does catch each kind of violation: an
# include across layers, SQLite or SQL text outside db/ (its exceptions
# explicit), a command that opens its own database (main does), and two
# C files with one basename (which the library archive would silently
# merge). And the end-to-end scripts look only at their own processes
# (scripts/check-test-procs.sh), which catches each machine-wide lookup.
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
printf 'static const char *q = "SELECT id "\n\t"FROM session WHERE tag = ?";\n' >>"$TMP/tree/harness/results/trend.c"
printf 'static const char *u = "UPDATE run SET status = 1";\n' >>"$TMP/tree/harness/orchestrate/seqrun.c"
printf 'static const char *m = "see: schedlab query "\n\t"\\"SELECT * FROM run\\"";\n' >>"$TMP/tree/harness/cli/cmd_report.c"
expect_exit 1 "SQL text outside db/ is refused" scripts/check-layers.sh "$TMP/tree"
contains "... by file and line" "$TMP/out" "harness/results/trend.c:$(wc -l <harness/results/trend.c | awk '{ print $1 + 1 }'): SQL text outside db/"
contains "... an UPDATE too" "$TMP/out" "harness/orchestrate/seqrun.c:"
if grep -q "cmd_report.c" "$TMP/out"; then not_ok "... but not a message that shows a schedlab query" "$(cat "$TMP/out")"
else ok "... but not a message that shows a schedlab query"; fi
# the exceptions are explicit: a listed file without SQL text is named
fresh
printf 'int x;\n' >"$TMP/tree/workloads/pgbench.c"
expect_exit 0 "an exception whose SQL is gone is no violation" scripts/check-layers.sh "$TMP/tree"
contains "... but is named, to be removed from the list" "$TMP/err" \
	"workloads/pgbench.c has no SQL text (or is gone): remove it from sql_exceptions"

fresh
printf '#include <sqlite3.h>\n' >>"$TMP/tree/harness/cli/cmd_query.c"
expect_exit 1 "<sqlite3.h> outside db/ is refused" scripts/check-layers.sh "$TMP/tree"

# harness/cli holds commands only (issue 40)
fresh
printf 'static const char *q = "SELECT plan_json FROM session WHERE id = ?";\n' >>"$TMP/tree/harness/cli/cmd_alerts.c"
expect_exit 1 "SQL text in harness/cli is refused" scripts/check-layers.sh "$TMP/tree"
contains "... by file and line, saying where it goes" "$TMP/out" "harness/cli/cmd_alerts.c:"

fresh
printf 'static int f(struct child *c, struct strbuf *e) { return proc_start(c, e); }\n' >>"$TMP/tree/harness/cli/cmd_nightly.c"
expect_exit 1 "a child process started in harness/cli is refused" scripts/check-layers.sh "$TMP/tree"
contains "... saying who starts children" "$TMP/out" "harness/orchestrate starts the children"

# a command never opens its database: main does, by its setup flags (issue 41)
fresh
printf 'static struct db *f(struct cmd_ctx *c) { return cmd_db(c, 1); }\n' >>"$TMP/tree/harness/cli/cmd_trend.c"
printf '/* main opens it (no cmd_db(c, 0) here) */\nstatic struct db *g(struct cmd_ctx *c) { return c->db; }\n' >>"$TMP/tree/harness/cli/cmd_export.c"
expect_exit 1 "a command that opens its own database is refused" scripts/check-layers.sh "$TMP/tree"
contains "... by file and line, saying who opens it" "$TMP/out" \
	"harness/cli/cmd_trend.c:$(wc -l <harness/cli/cmd_trend.c | awk '{ print $1 + 1 }'): cmd_db called by a command (main opens the database"
if grep -q "cmd_export.c" "$TMP/out"; then not_ok "... but not a comment that names it" "$(cat "$TMP/out")"
else ok "... but not a comment that names it"; fi

fresh
cp "$TMP/tree/workloads/jbb.c" "$TMP/tree/workloads/native/jbb.c"
expect_exit 1 "two C files with one basename are refused" scripts/check-layers.sh "$TMP/tree"
contains "... naming both" "$TMP/out" "two C files named jbb.c"

fresh
mkdir -p "$TMP/tree/harness/newpart"
printf 'int x;\n' >"$TMP/tree/harness/newpart/x.c"
expect_exit 1 "a new folder without a rule is refused" scripts/check-layers.sh "$TMP/tree"
contains "... asking for its rule" "$TMP/out" "folder harness/newpart has no layering rule"

# the static agent holds only what runs on the target: preempt_offer.c
# (harness/agent/, the controller's) is not linked into it
if [ -x bin/schedlab-agent ]; then
	equals "bin/schedlab-agent has no preempt_offer code" \
		"$(nm bin/schedlab-agent | grep -c ' [Tt] preempt_')" 0
else
	not_ok "bin/schedlab-agent has no preempt_offer code" "bin/schedlab-agent is not built (make)"
fi

# --- the end-to-end scripts look only at their own processes
if scripts/check-test-procs.sh >"$TMP/out" 2>&1; then
	ok "no e2e script looks for processes by name across the machine"
else
	not_ok "no e2e script looks for processes by name across the machine" "$(cat "$TMP/out")"
fi
mkdir -p "$TMP/e2e"
# Each line below that starts with "#>" is, alone in a script, refused
# (kept in comments, which the checker passes over):
#>pgrep -x cyclictest >/dev/null && echo left
#>pkill -9 -x schedlab-agent
#>left=$(pgrep -f "sleep 30")
#>left=$(pidof rt-app)
#>killall -9 hackbench
#>ps -eo pid,comm | grep -w cyclictest
#>n=$(ps aux | grep -c stress-ng)
while IFS= read -r l; do
	printf '#!/bin/bash\n# %s (in a comment: fine)\n%s\n' "$l" "$l" >"$TMP/e2e/t9999-x.sh"
	expect_exit 1 "refused: $l" scripts/check-test-procs.sh "$TMP/e2e/t9999-x.sh"
	contains "... naming the file and line" "$TMP/out" "t9999-x.sh:3: "
done < <(sed -n 's/^#>//p' "$0")
printf '%s\n' '#!/bin/bash' 'pgrep -P $$ -x schedlab-agent' 'pgrep -f "$TMP/schedlab-qemu"' \
	'pkill -s "$SID" stress-ng' 'ps -eo pid=,sid=,comm= | awk -v s=$SID "\$2 == s"' \
	'kill $(ours_named sl-jbb)' >"$TMP/e2e/t9998-ok.sh"
expect_exit 0 "lookups scoped by parent, session, \$TMP or the marker pass" \
	scripts/check-test-procs.sh "$TMP/e2e/t9998-ok.sh"

done_testing
