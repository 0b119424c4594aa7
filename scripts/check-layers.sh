#!/usr/bin/env bash
# The layering rules of docs/architecture.md, checked on the source tree
# (default: the repository this script is in; or the folder given). Each
# folder may include headers only from the folders listed for it below;
# SQLite (its header or any sqlite3_ call) appears only under db/, and so
# does SQL text (a string literal with SELECT, INSERT, UPDATE or DELETE in
# capitals), except in a message that shows the user a `schedlab query`
# (on its line or the line before) and in the files of sql_exceptions
# below, each with its reason; and no
# two C files share a basename, because the library archives store members
# by basename and a second jbb.o silently replaces the first (the programs'
# entry points, harness/cli/main.c and harness/agent/main.c, are linked as
# objects, never archived, and are the one name allowed twice). And
# harness/cli holds commands only: no SQL text (a string literal that starts
# with an SQL statement: the queries live in db/) and no child-process
# orchestration (proc_exec, proc_start and the like, fork, exec*, system,
# popen: the children of a command are started by harness/orchestrate);
# and a command (harness/cli/cmd_*.c) never opens its database: a call of
# cmd_db outside a comment is refused (main opens what the command's
# setup flags ask for between its parse and its work, harness/cli/cmd.h).
# Prints one line per violation (file:line: what) and exits 1 if any.
#
# One find and one awk over every file: a check that starts a few processes
# per file took 12 s on a loaded machine; this takes a few milliseconds.
set -u
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$root" || exit 2

# folder: the folders its files may include from (itself always)
rules='
analysis:
db:
workloads: analysis harness/util
harness/util:
harness/agent: harness/util
harness/targets: harness/agent harness/util
harness/results: analysis db harness/util
harness/orchestrate: analysis db workloads harness/agent harness/results harness/targets harness/util
harness/serve: analysis db harness/orchestrate harness/results harness/util
harness/cli: analysis db workloads harness/agent harness/orchestrate harness/results harness/serve harness/targets harness/util
'

# file (exact path): why SQL text is allowed in it. A file that no longer
# has any is named in a note (remove its line); the list is meant to shrink.
sql_exceptions='
workloads/pgbench.c: the pgbench custom script it writes is SQL for the PostgreSQL under test, not our database
'

files=$(find analysis db workloads harness -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)
[ -n "$files" ] || { echo "check-layers: no sources under $root"; exit 2; }

# shellcheck disable=SC2086 # the file names have no blanks (find above)
exec awk -v rules="$rules" -v sqlex="$sql_exceptions" '
function layer_of(p,   a) {
	split(p, a, "/")
	return a[1] == "harness" ? a[1] "/" a[2] : a[1]
}
BEGIN {
	n = split(rules, lines, "\n")
	for (i = 1; i <= n; i++) {
		if (lines[i] == "") continue
		k = lines[i]; sub(/:.*/, "", k)
		v = lines[i]; sub(/^[^:]*: */, "", v)
		allowed[k] = v
	}
	n = split(sqlex, lines, "\n")
	for (i = 1; i <= n; i++) {
		if (lines[i] == "") continue
		k = lines[i]; sub(/:.*/, "", k)
		sqlok[k] = 1
		sqlseen[k] = 0
	}
	bad = 0
}
FNR == 1 {
	prev = ""
	layer = layer_of(FILENAME)
	ruled = (layer in allowed)
	if (!ruled) {
		print FILENAME ": folder " layer " has no layering rule in scripts/check-layers.sh"
		bad = 1
	}
	if (FILENAME ~ /\.c$/) {
		base = FILENAME; sub(/.*\//, "", base)
		if (base != "main.c") paths[base] = paths[base] FILENAME " "
		count[base]++
	}
}
!ruled { nextfile }
/^#include "[^"]+\// {
	inc = $0
	sub(/^#include "/, "", inc); sub(/".*/, "", inc)
	dep = layer_of(inc)
	if (dep != layer && index(" " allowed[layer] " ", " " dep " ") == 0) {
		print FILENAME ":" FNR ": includes " inc ", but " layer " may include only from: " layer " " allowed[layer]
		bad = 1
	}
}
layer != "db" && /<sqlite3\.h>|(^|[^A-Za-z0-9_])sqlite3_[a-z_]+ *\(/ {
	print FILENAME ":" FNR ": SQLite outside db/ (use the functions of db/db.h or db/results.h)"
	bad = 1
}
# SQL text: a string literal with a statement'"'"'s verb in capitals, outside
# a comment line and a `schedlab query` message
layer != "db" && /"[^"]*(SELECT|INSERT|UPDATE|DELETE)[ (]/ && !/^[ \t]*(\*|\/\/|\/\*)/ &&
    !/schedlab query/ && prev !~ /schedlab query/ {
	if (FILENAME in sqlok) {
		sqlseen[FILENAME] = 1
	} else {
		print FILENAME ":" FNR ": SQL text outside db/ (a query belongs in db/: db.h, db/results.h; or a reason in sql_exceptions of scripts/check-layers.sh)"
		bad = 1
	}
}
{ prev = $0 }
layer == "harness/cli" && /(^|[^\\])"(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|PRAGMA|REPLACE) / {
	print FILENAME ":" FNR ": SQL text in harness/cli (a query belongs in db/, behind a function)"
	bad = 1
}
layer == "harness/cli" && /(^|[^A-Za-z0-9_])(proc_(run|exec|start|capture|wait|try_wait|stop|kill)|fork|vfork|exec[lv]p?e?|posix_spawnp?|system|popen) *\(/ {
	print FILENAME ":" FNR ": a child process started in harness/cli (harness/orchestrate starts the children)"
	bad = 1
}
FILENAME ~ /^harness\/cli\/cmd_[^\/]*\.c$/ && /(^|[^A-Za-z0-9_])cmd_db *\(/ &&
    !/^[ \t]*(\*|\/\/|\/\*)/ {
	print FILENAME ":" FNR ": cmd_db called by a command (main opens the database its setup flags ask for, harness/cli/cmd.h)"
	bad = 1
}
END {
	for (f in sqlok)
		if (!sqlseen[f])
			print "check-layers: note: " f " has no SQL text (or is gone): remove it from sql_exceptions" > "/dev/stderr"
	for (b in paths)
		if (count[b] > 1) {
			print "two C files named " b ": " paths[b]
			bad = 1
		}
	exit bad
}
' $files
