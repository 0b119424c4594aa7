#!/usr/bin/env bash
# timeout: 300 (tests/run.sh ends it past this many seconds)
# tags: browser (tests/run.sh: SCHEDLAB_SKIP_TAGS; Chromium driven through chromedriver)
# End-to-end: `schedlab serve`'s pages read by a person (docs/serve.md
# "Pages for people"), over t0860's store: the robot's synthetic history
# (tests/e2e/robot-history.py; night 5 a +20% regression, alert 1, its
# group of 3 commits; night 8 +10%, alert 2, culprit found). About 20 s.
#  - No page heads anything with a column name: every page of the site,
#    crawled from / (tests/e2e/headings.py), its <th>, <h1>-<h3> against
#    the store's column names and the pages' JSON keys.
#  - The front page draws each plan and machine's small trend (the nights'
#    points, the open alerts' nights ringed), the latest night's counts,
#    and the open alerts grouped by the change (kernel range) that raised
#    them; moments as words over their ISO time; configurations as chips.
#  - In Chromium (chromedriver, tests/e2e/webdriver.py): on a trend a
#    person hovers a point (its values shown), drags over nights 3-6 (the
#    trend zooms to those 4 points), shows all again, and clicks a point
#    (its session); on /compare picks tag nightly-04 for A and nightly-05
#    for B from the lists and clicks compare: the comparison of those
#    selectors. Screenshots (SERVE_SHOTS=$PWD/docs/img/serve keeps them).
# Needs sqlite3, git, python3, curl, jq, chromium, chromium-driver
# (scripts/install-deps.sh test).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/robot-history.sh"
hold_local_target   # empty_db's tiny local session never waits inside the script
require sqlite3:sqlite3 git:git python3:python3 curl:curl jq:jq chromium:chromium \
	chromium-driver:chromedriver
SL=schedlab
DB=$TMP/s.db
T0=$SECONDS

# ---- the store: t0860's eight nights ------------------------------------------------------
R=$TMP/linux
check "the history's repository, 8 nights" history_repo "$R" 8
python3 "$(dirname "$0")/robot-history.py" "$TMP/gen.sql" "$R" 8 \
	'{"5": 1.2, "6": 1.2, "7": 1.2, "8": 1.32}' '' "${COMMITS[@]:1}"
empty_db "$DB"
check "synthetic history loaded" sqlite3 -batch "$DB" ".read $TMP/gen.sql"
for n in 1 2 3 4 5 6 7 8; do
	more=(--no-bisect)
	[ "$n" = 8 ] && more=()
	$SL nightly --db "$DB" --session "$n" --out-dir "$TMP/rep" "${more[@]}" >"$TMP/n$n.out" 2>&1
done
equals "nights 1-8: alert 1 (3 commits), alert 2 (1 commit)" \
	"$(sql "SELECT group_concat(a.id || ' ' || a.bad_session || ' ' || coalesce(g.ncommits, -1), ', ') FROM alert a JOIN alert_group g ON g.id = a.group_id")" \
	"1 5 3, 2 8 1"

# ---- the server -------------------------------------------------------------------------
. "$(dirname "$0")/serve-lib.sh"
TOKEN=tok-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
(umask 077; printf '%s\n' "$TOKEN" >"$TMP/serve.token")
check "serve starts (with a token: the alert pages' forms too)" \
	start_serve "$DB" --token-file "$TMP/serve.token" --out-dir "$TMP/bis"
ok "the store and serve ready ($((SECONDS - T0)) s)"

# ---- headings: no column names --------------------------------------------------------------
T1=$SECONDS
python3 "$(dirname "$0")/headings.py" "$DB" "$URL" '/compare?a_tag=nightly-04&b_tag=nightly-05' \
	'/trend?metric=hackbench.time_s' '/alerts?status=all' >"$TMP/headings.out" 2>&1
equals "no page heads anything with a column name of the store or of its JSON" \
	"$(grep -v '^checked ' "$TMP/headings.out" | head -20)" ""
N=$(sed -n 's/^checked \([0-9]*\) pages.*/\1/p' "$TMP/headings.out")
if [ "${N:-0}" -ge 20 ]; then ok "... over every page reached from / ($N pages, $((SECONDS - T1)) s)"
else not_ok "... over every page reached from /" "$(cat "$TMP/headings.out")"; fi

# ---- the front page -----------------------------------------------------------------------
equals "/ answers 200" "$(get / home.html)" 200
equals "/ draws the plan and machine's small trend: one per headline metric" \
	"$(grep -o '<svg class="spark"' "$TMP/home.html" | wc -l)" 1
equals "... a point for each of the 8 nights, the 2 open alerts' nights ringed" \
	"$(grep -o '<circle class="spark-pt"' "$TMP/home.html" | wc -l) $(grep -o '<circle class="spark-alert"' "$TMP/home.html" | wc -l)" "6 2"
contains "... a ring's title names its alert" "$TMP/home.html" "nightly-05 2026-02-05T03:00:00.000Z: 1.201 s (alert 1)</title>"
contains "... linked to the metric's trend on the machine" "$TMP/home.html" \
	'<a class="spark" href="/trend?metric=hackbench.time_s&amp;where=machine%3Dsyn">'
contains "the latest night's counts: its runs, its alerts new, still there, fixed" "$TMP/home.html" \
	'<span class="worse">1 new</span>, 1 still there, <span class="">0 fixed</span>'
equals "the open alerts grouped by the change that raised them: 2 kernel ranges" \
	"$(grep -c '<section class="change"><h3>robot on syn: <code title="[0-9a-f]\{40\}\.\.[0-9a-f]\{40\}">' "$TMP/home.html")" 2
contains "... the range of alert 1: 3 commits, nights 4 to 5" "$TMP/home.html" \
	"${COMMITS[4]:0:12}..${COMMITS[5]:0:12}</code></h3>"
contains "... said in words" "$TMP/home.html" "3 commits, nights 4 to 5, 1 alert"
contains "a moment in words over its ISO time" "$TMP/home.html" \
	'<time datetime="2026-02-08T03:00:00.000Z" title="2026-02-08T03:00:00.000Z">'
equals "the front page's JSON: the trend's 8 points of the latest 14 nights" \
	"$(jget / home.json '"\(.nights) \(.trends[0].metrics[0].metric) \(.trends[0].metrics[0].points | length) \([.trends[0].metrics[0].points[] | select(.alert != null) | .alert] | join(","))"')" \
	"14 hackbench.time_s 8 1,2"
get /alert/1 a1.html >/dev/null
contains "an alert's configuration as chips, not a selector" "$TMP/a1.html" \
	'<th>configuration</th><td><span class="chip" title="preempt=full">preempt full</span> <span class="chip" title="hz=250">250 Hz</span>'
contains "... its change in words: before, after, %, its interval" "$TMP/a1.html" \
	"hackbench.time_s: 1 s &rarr; <b>1.2012 s</b> (<b>+20.1%</b>, 95% CI"
get /alerts a.html >/dev/null
contains "a table of alerts names once what its rows share" "$TMP/a.html" \
	'<p class="common">every row: <span class="chip" title="preempt=full">preempt full</span>'
contains "... and in each row only what differs (here: nothing)" "$TMP/a.html" \
	'<span class="muted">the same as the others</span>'

# ---- in Chromium: hover, zoom, a point's session, compare ------------------------------
TREND=$(jget /alert/1 a1.json .alert.trend_url)
cat >"$TMP/visit.py" <<'PYEOF'
# a person's visit: a trend (hover a point, drag over nights 3-6, show all,
# click a point), then /compare picked from the lists. What they see, as JSON.
import json, os, sys, time
sys.path.insert(0, os.environ["E2E"])
from webdriver import Browser
url, trend, tmp = sys.argv[1:4]
seen = {}
def attr(b, css, name):
    return b.attribute(css, name)
with Browser(profile=os.path.join(tmp, "wd-profile"),
             log=os.path.join(tmp, "chromedriver.log"), window="1200,1000") as b:
    try:  # a trend: hover, zoom, show all, a click
        b.get(url + trend.lstrip("/"))
        seen["ok"] = attr(b, "body", "data-ok")
        seen["error"] = attr(b, "body", "data-error")
        seen["points"] = attr(b, "#trend-svg", "data-zoom-points")
        # hover the point of night 5
        b.hover('circle.pt[data-session="5"]')
        seen["tip_hidden"] = attr(b, "#tip", "hidden")
        seen["tip"] = b.text("#tip")
        seen["tip_session"] = attr(b, "#tip", "data-session")
        seen["shot_hover"] = b.screenshot(os.path.join(tmp, "trend-hover.png"), "div.trend")
        # drag from just left of night 3 to just right of night 6
        svg = b.rect("#trend-svg")
        r3, r6 = b.rect('circle.pt[data-session="3"]'), b.rect('circle.pt[data-session="6"]')
        mid = svg["x"] + svg["width"] / 2
        x0 = int(r3["x"] + r3["width"] / 2 - 8 - mid)
        x1 = int(r6["x"] + r6["width"] / 2 + 8 - mid)
        b.drag("#trend-svg", x0, x1, 40)
        seen["zoomed"] = attr(b, "#trend-svg", "data-zoomed")
        seen["zoom_points"] = attr(b, "#trend-svg", "data-zoom-points")
        seen["zoom_info"] = b.text("#zoom-info")
        seen["shown"] = [c for c in range(1, 9)
                         if attr(b, 'circle.pt[data-session="%d"]' % c, "style") in (None, "")]
        r3z, r6z = b.rect('circle.pt[data-session="3"]'), b.rect('circle.pt[data-session="6"]')
        seen["spread_before"] = r6["x"] - r3["x"]
        seen["spread_after"] = r6z["x"] - r3z["x"]
        seen["url_after_drag"] = b.url()
        seen["shot_zoom"] = b.screenshot(os.path.join(tmp, "trend-zoom.png"), "div.trend")
        b.click("#zoom-reset")
        seen["reset_points"] = attr(b, "#trend-svg", "data-zoom-points")
        seen["reset_zoomed"] = attr(b, "#trend-svg", "data-zoomed")
        # a click on a point opens its session
        b.click('circle.pt[data-session="4"]')
        seen["point_url"] = b.url()
    except Exception as e:  # what went wrong, for the checks below
        seen["exception_trend"] = str(e)
    try:  # compare: both sides from the lists
        b.get(url + "compare")
        seen["tag_options"] = len(b.find_all("#a-tag option"))
        b.click('#a-tag option[value="nightly-04"]')
        b.click('#b-tag option[value="nightly-05"]')
        b.click("#do-compare")
        seen["compare_url"] = b.url()
        seen["compare_sel"] = [b.text("#side-a code.selector"), b.text("#side-b code.selector")]
        seen["compare_row"] = b.text("table tr:nth-child(2)")
        seen["compare_picked"] = [attr(b, '#a-tag option[value="nightly-04"]', "selected"),
                                  attr(b, '#b-tag option[value="nightly-05"]', "selected")]
        seen["shot_compare"] = b.screenshot(os.path.join(tmp, "compare.png"))
        b.get(url)
        seen["shot_home"] = b.screenshot(os.path.join(tmp, "home.png"))
    except Exception as e:
        seen["exception_compare"] = str(e)
json.dump(seen, open(os.path.join(tmp, "visit.json"), "w"), indent=1)
PYEOF
T2=$SECONDS
E2E=$(cd "$(dirname "$0")" && pwd) timeout 240 python3 "$TMP/visit.py" "$URL" "$TREND" "$TMP" \
	>"$TMP/visit.out" 2>&1
V=$TMP/visit.json
equals "chromedriver drove Chromium on the trend without an error ($((SECONDS - T2)) s)" \
	"$(jq -r '.exception_trend // ""' "$V" 2>/dev/null || cat "$TMP/visit.out")" ""
equals "... and on the comparison" "$(jq -r '.exception_compare // ""' "$V" 2>/dev/null)" ""
equals "the trend page's script ran, without an error: 8 points shown" \
	"$(jq -r '"\(.ok) \(.error) \(.points)"' "$V")" "1 null 8"
equals "hover a point: its values are shown" "$(jq -r '"\(.tip_hidden) \(.tip_session)"' "$V")" "null 5"
equals "... its session, tag, time, value and unit, kernel" "$(jq -r .tip "$V" | tr '\n' '|')" \
	"session 5|nightly-05|$(jget "$TREND" t.json '.points[4].started_at')|1.2012 s|kernel 6.1.0-robot|"
equals "drag over nights 3-6: the trend zooms to those 4 points" \
	"$(jq -r '"\(.zoomed) \(.zoom_points) \(.shown | map(tostring) | join(","))"' "$V")" "1 4 3,4,5,6"
equals "... and says so" "$(jq -r .zoom_info "$V")" "4 of 8 points: sessions 3 to 6"
if [ "$(jq '.spread_after > 2 * .spread_before' "$V")" = true ]; then ok "... spread over the plot (nights 3 to 6: $(jq -r '"\(.spread_before) px, now \(.spread_after)"' "$V"))"
else not_ok "... spread over the plot" "$(jq -c '[.spread_before, .spread_after]' "$V")"; fi
equals "... the drag opened no session" "$(jq -r .url_after_drag "$V")" "${URL}${TREND#/}"
equals "show all: the 8 points again" "$(jq -r '"\(.reset_points) \(.reset_zoomed)"' "$V")" "8 null"
equals "a click on a point opens its session" "$(jq -r .point_url "$V")" "${URL}session/4"
equals "compare: A and B picked from the lists of tags (8 tags and 'any')" "$(jq -r .tag_options "$V")" 9
equals "... compare clicked: the selectors they make" "$(jq -r '.compare_sel | join(" / ")' "$V")" \
	"tag=nightly-04 / tag=nightly-05"
equals "... in the page's address" "$(jq -r .compare_url "$V")" \
	"${URL}compare?a_tag=nightly-04&a_kernel=&a_config=&a_machine=&b_tag=nightly-05&b_kernel=&b_config=&b_machine=&metric="
contains "... the comparison's row: +20.1%" <(jq -r .compare_row "$V") "+20.1%"
equals "... the picks kept selected" "$(jq -r '.compare_picked | join(" ")' "$V")" "true true"
equals "the comparison is the command's" \
	"$(jget '/compare?a_tag=nightly-04&b_tag=nightly-05' c.json '.rows[0].change_pct')" \
	"$($SL compare tag=nightly-04 tag=nightly-05 --db "$DB" --format json | jq '.rows[0].change_pct')"
for s in hover zoom compare home; do
	if [ "$(jq -r ".shot_$s" "$V")" -gt 5000 ] 2>/dev/null; then ok "a screenshot ($s)"; else not_ok "a screenshot ($s)" "$(jq -r ".shot_$s" "$V")"; fi
done
# docs/serve.md's pictures: SERVE_SHOTS=$PWD/docs/img/serve tests/run.sh t0868
if [ -n "${SERVE_SHOTS:-}" ]; then
	for s in home trend-hover trend-zoom compare; do cp "$TMP/$s.png" "$SERVE_SHOTS-$s.png"; done
fi
equals "chromedriver and Chromium ended with the session" "$(ours 'chromedriver|chromium')" ""
stop_serve
equals "serve said nothing on stderr" "$(head -c 2000 "$SOUT.err")" ""
done_testing
