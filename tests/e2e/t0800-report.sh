#!/usr/bin/env bash
# End-to-end tests of reports, export and nightly operation (docs/reports.md):
#  - contrib/schedlab-nightly runs a small local A/B plan twice (tags
#    nightly-2026-01-01 and -02): the first night has no baseline (exit 0),
#    the second is checked against the first (exit 0 or 1, a summary);
#  - `schedlab report` of that real database (session, compare and since
#    modes; the trends' window of history stated, --history, --max-points) is opened in headless Chromium: the page's script ran without
#    errors (it sets data-ok on <body>; window.onerror writes data-error),
#    and the SVG charts hold data (curves with points, trend points);
#  - escaping: a plan name and a kernel command line holding <script> and
#    quotes come out as text, never as markup;
#  - `schedlab export` as CSV and JSON, selectors with repeated keys;
#  - hostile --out paths for both: a 0600 file keeps its mode, a symlink is
#    written through, /dev/null written through and /dev/full's ENOSPC
#    reported (the devices stay devices), a FIFO and a directory refused;
#  - the systemd units pass `systemd-analyze verify`.
# Needs chromium and systemd (scripts/install-deps.sh test). Prints TAP.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
hold_local_target   # its local sessions never wait inside the script (lib.sh)
SL=bin/schedlab
DB=$TMP/r.db
export SCHEDLAB=$PWD/$SL

require_built "$SL"
require sqlite3:sqlite3 python3:python3 chromium:chromium systemd:systemd-analyze
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)

PLANNAME='t0800 <script>alert("plan")</script> it'"'"'s'
python3 - "$TMP/ab.json" "$PLANNAME" <<'EOF'
import json, sys
plan = {"name": sys.argv[2], "target": "local", "repetitions": 3, "seed": 1,
        "matrix": {"knobs": [{}, {"sysctl": {"sched_rr_timeslice_ms": 50}}]},
        "workloads": [
            {"type": "cyclictest", "duration_s": 1, "interval_us": 500, "priority": 95},
            {"type": "hackbench", "groups": 1, "loops": 50},
            {"type": "pingpong", "stages": 2, "duration_s": 1, "warmup_s": 0}]}
json.dump(plan, open(sys.argv[1], "w"))
EOF

# ---- nightly: two nights -------------------------------------------------------
NIGHTLY="contrib/schedlab-nightly -p $TMP/ab.json -d $DB -o $TMP/reports -n 5"
expect_exit 0 "nightly, first night: no baseline, exit 0" $NIGHTLY -t nightly-2026-01-01
contains "nightly, first night: says there is no baseline" "$TMP/out" "no baseline yet"
if [ "$(sql "SELECT count(*) FROM results WHERE session = 1")" -gt 0 ]; then ok "nightly: session 1 has results"; else not_ok "nightly: session 1 has results" "$(tail -n 5 "$TMP/err")"; fi
$NIGHTLY -t nightly-2026-01-02 >"$TMP/n2.out" 2>"$TMP/n2.err"
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 1 ]; then ok "nightly, second night: checked (exit $rc)"; else not_ok "nightly, second night: checked" "exit $rc" "$(tail -n 8 "$TMP/n2.out")" "$(tail -n 3 "$TMP/n2.err")"; fi
contains "nightly summary names the baseline sessions" "$TMP/n2.out" "baseline: sessions 1 "
contains "nightly summary has the verdict counts" "$TMP/n2.out" "metrics,"
contains "nightly summary states the exit status" "$TMP/n2.out" "exit status $rc"
equals "nightly session tagged by date" "$(sql "SELECT tag FROM session WHERE id = 2")" "nightly-2026-01-02"
check "nightly wrote the HTML report" test -s "$TMP/reports/nightly-2026-01-02.html"
expect_exit 2 "nightly: bad baseline size is a setup failure" $NIGHTLY -n x -t nightly-x
expect_exit 2 "nightly: missing plan is a setup failure" contrib/schedlab-nightly -p "$TMP/none.json" -d "$DB" -o "$TMP/reports"
# the hook's time limit reaches schedlab nightly (-K, SCHEDLAB_ON_ALERT_TIMEOUT; issue 40)
printf '#!/bin/sh\necho "$@"\n' >"$TMP/echo-sl" && chmod +x "$TMP/echo-sl"
expect_exit 0 "nightly -H CMD -K 42: the hook and its time limit passed on" \
	env SCHEDLAB="$TMP/echo-sl" contrib/schedlab-nightly -p "$TMP/ab.json" -d "$DB" -H cat -K 42
contains "... as --on-alert-timeout" "$TMP/out" "--on-alert cat --on-alert-timeout 42"
expect_exit 2 "nightly -K 0 is a setup failure" env SCHEDLAB="$TMP/echo-sl" contrib/schedlab-nightly -p "$TMP/ab.json" -K 0

# ---- report ----------------------------------------------------------------------
expect_exit 0 "report --help" "$SL" report --help
contains "report --help shows the syntax" "$TMP/out" "--compare A B"
expect_exit 0 "report --session last" "$SL" report --db "$DB" --session last --out "$TMP/s.html"
expect_exit 0 "report --compare A B" "$SL" report --db "$DB" --compare session=1 session=2 --out "$TMP/c.html" --summary
contains "report --summary prints verdict counts" "$TMP/out" "metrics,"
expect_exit 0 "report --since" "$SL" report --db "$DB" --since 2000-01-01 --out "$TMP/t.html"
# a symlink planted at the old temporary name is not followed
echo victim >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/p.html.tmp"
expect_exit 0 "report --out beside a planted symlink" "$SL" report --db "$DB" --session last --out "$TMP/p.html"
equals "... the symlink's target is untouched" "$(cat "$TMP/victim")" victim
contains "... and the page is written" "$TMP/p.html" "<html"
equals "... with nothing left beside it" "$(ls -a "$TMP" | grep -c '^\.p\.html\.')" 0
# hostile output paths (docs/reliability.md, "Output paths"): a regular file
# keeps its mode, a symlink is written through, a character device is
# written through (never replaced), a FIFO or directory is refused at once
echo old >"$TMP/priv.html"; chmod 600 "$TMP/priv.html"
expect_exit 0 "report --out over a 0600 file" "$SL" report --db "$DB" --session last --out "$TMP/priv.html"
equals "... the file keeps its mode 600" "$(stat -c %a "$TMP/priv.html")" 600
contains "... and holds the page" "$TMP/priv.html" "<html"
echo old >"$TMP/real.html"; ln -s real.html "$TMP/link.html"
expect_exit 0 "report --out through a symlink" "$SL" report --db "$DB" --session last --out "$TMP/link.html"
check "... the symlink stays a symlink" test -L "$TMP/link.html"
contains "... its target holds the page" "$TMP/real.html" "<html"
DEVNULL_BEFORE=$(stat -c '%F %t:%T %a' /dev/null)
expect_exit 0 "report --out /dev/null writes through" "$SL" report --db "$DB" --session last --out /dev/null
equals "... /dev/null is still the same character device" "$(stat -c '%F %t:%T %a' /dev/null)" "$DEVNULL_BEFORE"
expect_exit 2 "report --out /dev/full fails with the device's error" "$SL" report --db "$DB" --session last --out /dev/full
contains "... naming ENOSPC" "$TMP/err" "No space left on device"
equals "... /dev/full is still a character device" "$(stat -c %F /dev/full)" "character special file"
mkfifo "$TMP/fifo"
timeout 60 "$SL" report --db "$DB" --session last --out "$TMP/fifo" >"$TMP/out" 2>"$TMP/err"
equals "report --out FIFO is refused at once (exit 2, not a hang)" "$?" 2
contains "... saying it is a FIFO" "$TMP/err" "is a FIFO"
check "... the FIFO is still a FIFO" test -p "$TMP/fifo"
mkdir -p "$TMP/adir"
expect_exit 2 "report --out DIRECTORY is refused" "$SL" report --db "$DB" --session last --out "$TMP/adir"
contains "... saying it is a directory" "$TMP/err" "is a directory"
equals "... nothing left in the folder" "$(ls -A "$TMP/adir" | wc -l)" 0
expect_exit 2 "report of an unknown session" "$SL" report --db "$DB" --session 99 --out "$TMP/x.html"
expect_exit 2 "report with an unknown selector key" "$SL" report --db "$DB" --compare nokey=1 session=2 --out "$TMP/x.html"
expect_exit 2 "report with two modes" "$SL" report --db "$DB" --session 1 --since 2000-01-01
expect_exit 2 "report with a bad date" "$SL" report --db "$DB" --since yesterday
# the trends' window of history (bounded; tests/unit/test_report.c checks the points)
expect_exit 0 "report --history 0: trends of the scope only" "$SL" report --db "$DB" --compare session=1 session=2 --history 0 --out "$TMP/h.html"
contains "... the page states the window" "$TMP/h.html" 'the 2 sessions in scope, the 0 before the last of them and the 0 after it'
expect_exit 2 "report --max-points below 2" "$SL" report --db "$DB" --session last --max-points 1
contains "... names the option and the range" "$TMP/err" "max-points"
if grep -qE '(src|href)="(https?:)?//' "$TMP/c.html"; then not_ok "report references no external resource" "$(grep -oE '(src|href)="(https?:)?//[^"]*' "$TMP/c.html" | head -3)"; else ok "report references no external resource"; fi
contains "report has the comparison table" "$TMP/c.html" '<table class="sortable cmp">'
contains "report has the sysinfo (effective preempt, HZ, SCHED_MC)" "$TMP/c.html" '<td class="k">sched_mc</td>'
contains "report has a trend per metric" "$TMP/c.html" 'class="chart-svg trend"'
contains "session report compares the knob sets" "$TMP/s.html" 'compared: knobs'

# headless chromium: the page draws, its script runs without errors
dom() { # FILE OUT
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$TMP/chr.XXXXXX")" --dump-dom "file://$1" >"$2" 2>"$2.err"
}
if [ -z "$CHROMIUM" ]; then
	not_ok "headless chromium available" "chromium is not installed: scripts/install-deps.sh test"
else
	for f in s c t; do
		if dom "$TMP/$f.html" "$TMP/$f.dom" && [ -s "$TMP/$f.dom" ]; then ok "chromium renders $f.html"; else not_ok "chromium renders $f.html" "$(tail -n 3 "$TMP/$f.dom.err")"; fi
		if grep -q 'data-ok="1"' "$TMP/$f.dom" && ! grep -q 'data-error=' "$TMP/$f.dom"; then
			ok "$f.html: the page's script ran without errors"
		else
			not_ok "$f.html: the page's script ran without errors" "$(grep -o 'data-error="[^"]*"' "$TMP/$f.dom")"
		fi
	done
	python3 - "$TMP/c.dom" "$TMP/s.dom" >"$TMP/py.out" 2>&1 <<'EOF'
import re, sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.curves = []; s.marks = 0; s.pts = 0; s.svgs = 0; s.cps = 0; s.bands = 0
    def handle_starttag(s, tag, attrs):
        a = dict(attrs); c = a.get("class", "")
        if tag == "svg" and "chart-svg" in c: s.svgs += 1
        if tag == "path" and "curve" in c: s.curves.append(int(a.get("data-points", "0")))
        if tag == "circle" and "mark" in c and "data-value" in a: s.marks += 1
        if tag == "circle" and "pt" in c and "data-session" in a: s.pts += 1
        if tag == "rect" and "band" in c: s.bands += 1
for f in sys.argv[1:]:
    p = P(); p.feed(open(f).read())
    print(f, "svgs", p.svgs, "curves", p.curves, "marks", p.marks, "points", p.pts, "bands", p.bands)
    assert p.svgs >= 2, "no SVG charts"
    assert len(p.curves) >= 2 and all(n >= 2 for n in p.curves), "latency curves without points"
    assert p.marks >= 3, "no percentile marks"
    assert p.pts >= 4, "no trend points"
    assert p.bands >= 1, "no noise band"
EOF
	if [ $? -eq 0 ]; then ok "the SVG charts hold data (curves with points, percentile marks, trend points, bands)"; else not_ok "the SVG charts hold data" "$(tail -n 4 "$TMP/py.out")"; fi
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$TMP/chr.XXXXXX")" --window-size=1280,1600 \
		--screenshot="$TMP/shot.png" "file://$TMP/c.html" >/dev/null 2>&1
	if [ "$(stat -c %s "$TMP/shot.png" 2>/dev/null || echo 0)" -gt 20000 ]; then ok "chromium takes a screenshot of the report"; else not_ok "chromium takes a screenshot of the report"; fi
fi

# ---- escaping --------------------------------------------------------------------
sqlite3 "$DB" ".backup '$TMP/esc.db'"
CMDLINE='quiet x="<script>alert(1)</script>" y='"'"'q'"'"' <img src=x onerror=alert(2)>'
python3 - "$TMP/esc.db" "$CMDLINE" <<'EOF'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); c = sys.argv[2]
for bid, si in db.execute("SELECT id, sysinfo FROM boot WHERE sysinfo IS NOT NULL").fetchall():
    j = json.loads(si); j["cmdline"] = {"value": c, "source": "/proc/cmdline"}
    db.execute("UPDATE boot SET cmdline = ?, sysinfo = ? WHERE id = ?", (c, json.dumps(j), bid))
db.commit()
EOF
expect_exit 0 "report of a database with hostile strings" "$SL" report --db "$TMP/esc.db" --compare session=1 session=2 --out "$TMP/e.html"
if grep -q '<script>alert' "$TMP/e.html" || grep -q '<img src=x' "$TMP/e.html"; then
	not_ok "no markup from the plan or the kernel reaches the page" "$(grep -o '.\{40\}<script>alert.\{20\}' "$TMP/e.html" | head -3)"
else
	ok "no markup from the plan or the kernel reaches the page"
fi
contains "the plan name comes out escaped" "$TMP/e.html" 't0800 &lt;script&gt;alert(&quot;plan&quot;)&lt;/script&gt; it&#39;s'
contains "the kernel command line comes out escaped" "$TMP/e.html" 'quiet x=&quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot; y=&#39;q&#39; &lt;img src=x onerror=alert(2)&gt;'
if [ -n "$CHROMIUM" ]; then
	dom "$TMP/e.html" "$TMP/e.dom"
	n=$(grep -o '<script' "$TMP/e.dom" | wc -l)
	if [ "$n" -eq 2 ] && ! grep -q '<img' "$TMP/e.dom" && grep -q 'data-ok="1"' "$TMP/e.dom"; then
		ok "in the browser: only the page's own two scripts, no injected element"
	else
		not_ok "in the browser: only the page's own two scripts, no injected element" "$n script elements"
	fi
fi

# ---- export ------------------------------------------------------------------------
expect_exit 0 "export --help" "$SL" export --help
NR=$(sql "SELECT count(*) FROM results WHERE session = 1")
expect_exit 0 "export csv of a session" "$SL" export --db "$DB" --where session=1 --format csv --out "$TMP/e1.csv"
equals "export csv: header names the results columns" "$(head -n 1 "$TMP/e1.csv" | cut -d, -f1-3)" "session,tag,run_id"
N=$(python3 -c 'import csv,sys; print(sum(1 for _ in csv.DictReader(open(sys.argv[1]))))' "$TMP/e1.csv")
equals "export csv: one row per results row" "$N" "$NR"
expect_exit 0 "export json to stdout" "$SL" export --db "$DB" --where session=1,session=2 --format json
python3 - "$TMP/out" "$(sql "SELECT count(*) FROM results WHERE session IN (1, 2)")" >"$TMP/py.out" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schedlab_format"] == 1
assert d["columns"][:3] == ["session", "tag", "run_id"], d["columns"]
assert len(d["rows"]) == int(sys.argv[2]), (len(d["rows"]), sys.argv[2])
i = d["columns"].index("value"); assert all(isinstance(r[i], (int, float)) for r in d["rows"])
EOF
if [ $? -eq 0 ]; then ok "export json: versioned, a repeated key matches either value, numbers as numbers"; else not_ok "export json" "$(tail -n 3 "$TMP/py.out")"; fi
"$SL" export --db "$DB" --where 'workload=hackbench,metric=time_s' >"$TMP/hb.csv"
equals "export with a selector of two keys" "$(($(wc -l <"$TMP/hb.csv") - 1))" "$(sql "SELECT count(*) FROM results WHERE workload = 'hackbench' AND metric = 'time_s'")"
echo old >"$TMP/priv.csv"; chmod 600 "$TMP/priv.csv"
expect_exit 0 "export --out over a 0600 file" "$SL" export --db "$DB" --where session=1 --out "$TMP/priv.csv"
equals "... keeps its mode 600" "$(stat -c %a "$TMP/priv.csv")" 600
equals "... and holds the rows" "$(($(wc -l <"$TMP/priv.csv") - 1))" "$NR"
expect_exit 2 "export --out /dev/full reports the write error" "$SL" export --db "$DB" --where session=1 --out /dev/full
contains "... naming ENOSPC" "$TMP/err" "No space left on device"
timeout 60 "$SL" export --db "$DB" --where session=1 --out "$TMP/fifo" >"$TMP/out" 2>"$TMP/err"
equals "export --out FIFO is refused at once" "$?" 2
contains "... saying it is a FIFO" "$TMP/err" "is a FIFO"
expect_exit 2 "export with an unknown key" "$SL" export --db "$DB" --where 'nokey=1'
contains "export names the valid keys" "$TMP/err" "valid keys"
expect_exit 2 "export with a bad format" "$SL" export --db "$DB" --format xml

# ---- systemd units -------------------------------------------------------------------
if ! command -v systemd-analyze >/dev/null 2>&1; then
	not_ok "systemd-analyze available" "systemd is not installed: scripts/install-deps.sh test"
else
	check "systemd-analyze verify of the service and the timer as shipped" \
		systemd-analyze verify --man=no contrib/schedlab-nightly.service contrib/schedlab-nightly.timer
fi
no_leftovers "no workload processes left"
done_testing
