#!/usr/bin/env bash
# The docs' option tables written from the code's (harness/util/opts.h):
# each region of docs/*.md between
#   <!-- options: plan -->            (or: <!-- options: target NAME -->)
#   <!-- end options -->
# is replaced by `schedlab help plan --markdown` (or `help targets NAME
# --markdown`). Run it after changing a key of the plan's top level or of a
# target; tests/unit/test_opts.c fails while a table and the code disagree.
# Usage: scripts/doc-tables.sh [SCHEDLAB] (default: bin/schedlab of this tree)
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
bin=${1:-"$root/bin/schedlab"}
[ -x "$bin" ] || { echo "doc-tables: $bin: not built (make)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for doc in "$root"/docs/*.md; do
	grep -q '^<!-- options: ' "$doc" || continue
	: >"$tmp/out"
	skip=0
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		'<!-- options: plan -->')
			printf '%s\n' "$line" >>"$tmp/out"
			"$bin" help plan --markdown >>"$tmp/out"
			skip=1 ;;
		'<!-- options: target '*' -->')
			name=${line#'<!-- options: target '}
			name=${name%' -->'}
			printf '%s\n' "$line" >>"$tmp/out"
			"$bin" help targets "$name" --markdown >>"$tmp/out"
			skip=1 ;;
		'<!-- end options -->')
			printf '%s\n' "$line" >>"$tmp/out"
			skip=0 ;;
		*)
			[ "$skip" = 1 ] || printf '%s\n' "$line" >>"$tmp/out" ;;
		esac
	done <"$doc"
	[ "$skip" = 0 ] || { echo "doc-tables: $doc: an options region without its end" >&2; exit 2; }
	cmp -s "$tmp/out" "$doc" || { cat "$tmp/out" >"$doc"; echo "doc-tables: ${doc#"$root"/} written"; }
done
