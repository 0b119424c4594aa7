#!/usr/bin/env bash
# The layering rules of docs/architecture.md, checked on the source tree
# (default: the repository this script is in; or the folder given). Each
# folder may include headers only from the folders listed for it below;
# SQLite (its header or any sqlite3_ call) appears only under db/; and no
# two C files share a basename, because the library archives store members
# by basename and a second jbb.o silently replaces the first (the programs'
# entry points, harness/cli/main.c and harness/agent/main.c, are linked as
# objects, never archived, and are the one name allowed twice). And
# harness/cli holds commands only: no SQL text (a string literal that starts
# with an SQL statement: the queries live in db/) and no child-process
# orchestration (proc_run, proc_start and the like, fork, exec*, system,
# popen: the children of a command are started by harness/orchestrate).
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
harness/cli: analysis db workloads harness/agent harness/orchestrate harness/results harness/targets harness/util
'

files=$(find analysis db workloads harness -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)
[ -n "$files" ] || { echo "check-layers: no sources under $root"; exit 2; }

# shellcheck disable=SC2086 # the file names have no blanks (find above)
exec awk -v rules="$rules" '
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
	bad = 0
}
FNR == 1 {
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
layer == "harness/cli" && /(^|[^\\])"(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|PRAGMA|REPLACE) / {
	print FILENAME ":" FNR ": SQL text in harness/cli (a query belongs in db/, behind a function)"
	bad = 1
}
layer == "harness/cli" && /(^|[^A-Za-z0-9_])(proc_(run|start|capture|wait|try_wait|stop|kill)|fork|vfork|exec[lv]p?e?|posix_spawnp?|system|popen) *\(/ {
	print FILENAME ":" FNR ": a child process started in harness/cli (harness/orchestrate starts the children)"
	bad = 1
}
END {
	for (b in paths)
		if (count[b] > 1) {
			print "two C files named " b ": " paths[b]
			bad = 1
		}
	exit bad
}
' $files
