#!/usr/bin/env bash
# The layering rules of docs/architecture.md, checked on the source tree
# (default: the repository this script is in; or the folder given). Each
# folder may include headers only from the folders listed for it below;
# SQLite (its header or any sqlite3_ call) appears only under db/; and no
# two C files share a basename, because the library archives store members
# by basename and a second jbb.o silently replaces the first.
# Prints one line per violation (file:line: what) and exits 1 if any.
set -u
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$root" || exit 2

# folder: the folders its files may include from (itself always)
declare -A allowed=(
	[analysis]=""
	[db]=""
	[workloads]="analysis harness/util"
	[harness/util]=""
	[harness/agent]="harness/util"
	[harness/targets]="harness/agent harness/util"
	[harness/results]="analysis db harness/util"
	[harness/orchestrate]="analysis db workloads harness/agent harness/targets harness/util"
	[harness/cli]="analysis db workloads harness/agent harness/orchestrate harness/results harness/targets harness/util"
)

bad=0
violation() {
	echo "$1"
	bad=1
}

# the folder (a key of allowed) that a path belongs to
layer_of() {
	case $1 in
	harness/*) echo "$1" | cut -d/ -f1-2 ;;
	*) echo "${1%%/*}" ;;
	esac
}

files=$(find analysis db workloads harness -name '*.[ch]' 2>/dev/null | sort)
[ -n "$files" ] || { echo "check-layers: no sources under $root"; exit 2; }

for f in $files; do
	layer=$(layer_of "$f")
	if [ -z "${allowed[$layer]+set}" ]; then
		violation "$f: folder $layer has no layering rule in scripts/check-layers.sh"
		continue
	fi
	while IFS=: read -r line inc; do
		dep=$(layer_of "$inc")
		[ "$dep" = "$layer" ] && continue
		case " ${allowed[$layer]} " in
		*" $dep "*) ;;
		*) violation "$f:$line: includes $inc, but $layer may include only from: $layer ${allowed[$layer]}" ;;
		esac
	done < <(grep -nE '^#include "[^"]+/' "$f" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
	case $f in
	db/*) ;;
	*)
		while IFS=: read -r line _; do
			violation "$f:$line: SQLite outside db/ (use the functions of db/db.h or db/results.h)"
		done < <(grep -nE '<sqlite3\.h>|\bsqlite3_[a-z_]+ *\(' "$f")
		;;
	esac
done

while read -r name; do
	violation "two C files named $name: $(find analysis db workloads harness -name "$name" | tr '\n' ' ')"
done < <(find analysis db workloads harness -name '*.c' ! -name main.c -printf '%f\n' | sort | uniq -d)

exit $bad
