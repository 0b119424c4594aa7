#!/usr/bin/env bash
# The end-to-end scripts look only at their own processes: tests run beside
# each other and beside other work, and a test that looks for "any
# cyclictest on the machine" fails when something else runs one. This
# checks the scripts (default: tests/e2e/*.sh of the repository this script
# is in; or the files given) and prints one line per use of a machine-wide
# lookup (file:line: what), exiting 1 if any:
#   - pidof and killall: by name only, always refused;
#   - pgrep and pkill: need a scope: a parent, session or process group
#     (-P, -s, -g, --parent, --session, --pgroup), or a -f pattern naming
#     the script's own $TMP; else use ours/ours_named of tests/e2e/lib.sh
#     (the processes carrying the script's SCHEDLAB_TEST_MARK);
#   - ps over every process (-e, -A, ax, aux): must filter by sid or pgid.
# Comments do not count. One awk over all files.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ]; then
	cd "$root" || exit 2
	set -- tests/e2e/*.sh
fi

exec awk '
function refuse(what) {
	print FILENAME ":" FNR ": " what
	bad = 1
}
/^[ \t]*#/ { next }
{
	line = $0
	sub(/[ \t]#[^"'\'']*$/, "", line) # a trailing comment
}
line ~ /(^|[^A-Za-z0-9_.\/-])(pidof|killall)([ \t]|$)/ {
	refuse("pidof/killall look for a name on the whole machine (use ours_named of tests/e2e/lib.sh)")
	next
}
line ~ /(^|[^A-Za-z0-9_.\/-])(pgrep|pkill)[ \t]/ {
	if (line !~ /(pgrep|pkill)[^|;]*([ \t]-[A-Za-z]*[Psg]([ \t]|[0-9$])|--(parent|session|pgroup))/ &&
	    line !~ /(pgrep|pkill)[^|;]*[ \t]-[A-Za-z]*f[^|;]*\$\{?TMP/)
		refuse("pgrep/pkill without a scope (-P, -s, -g, or -f with $TMP; or ours/ours_named of tests/e2e/lib.sh)")
	next
}
line ~ /(^|[^A-Za-z0-9_.\/-])ps[ \t]+(-[A-Za-z]*[eA][A-Za-z]*|a?ux?|ax)([ \t]|$)/ && line !~ /sid|pgid/ {
	refuse("ps over every process without a filter by sid or pgid (use ours of tests/e2e/lib.sh)")
}
END { exit bad }
' "$@"
