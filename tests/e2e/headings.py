# No page of `schedlab serve` heads anything with a column name (t0868):
# crawl the site from / (every link to a page of the site, 400 pages at
# most), and check the text of every <th>, <h1>, <h2>, <h3> against the
# names a person should not have to read: the store's column names
# (PRAGMA table_info of every table and view) and the keys of the pages'
# own JSON documents (latest_started_at, change_pct, ...), less the plain
# words below that a person uses too ("status", "plan", "metric").
#
#   python3 headings.py DB URL [PATH...]   (more pages to start from)
# prints "checked N pages, M headings" and each offender as
# "PAGE: <th>NAME</th>"; exit 1 when there is one, 2 when a page fails.
import html.parser
import json
import sqlite3
import sys
import urllib.error
import urllib.parse
import urllib.request

WORDS = {
    "alert", "boot", "change", "clock", "command", "commit", "detail", "error", "failed", "from",
    "group", "host", "kernel", "kind", "machine", "metric", "note", "notes", "ok", "plan",
    "role", "round", "run", "runs", "seed", "series", "session", "sessions", "status", "step",
    "tag", "target", "to", "unit", "value", "verdict", "why", "workload", "knobs", "a", "b",
    "subject", "author", "name", "culprit", "bisection",
}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.heads, self.cur = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            h = dict(attrs).get("href")
            if h:
                self.links.append(h)
        if tag in ("th", "h1", "h2", "h3"):
            self.cur = [tag, ""]

    def handle_endtag(self, tag):
        if self.cur and tag == self.cur[0]:
            self.heads.append((self.cur[0], " ".join(self.cur[1].split())))
            self.cur = None

    def handle_data(self, data):
        if self.cur:
            self.cur[1] += data


def keys(doc, out):
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.add(k)
            keys(v, out)
    elif isinstance(doc, list):
        for v in doc:
            keys(v, out)


def fetch(url, accept):
    req = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def main():
    db, base = sys.argv[1], sys.argv[2].rstrip("/")
    limit = 400
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    names = set()
    for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"):
        for row in c.execute("PRAGMA table_info(\"%s\")" % t.replace('"', '""')):
            names.add(row[1])
    todo, seen, pages, heads, bad, failed = ["/"] + sys.argv[3:], set(), 0, [], [], 0
    while todo and pages < limit:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        status, body = fetch(base + path, "text/html")
        if status >= 500:
            print("%s: HTTP %d" % (path, status))
            failed += 1
            continue
        pages += 1
        js_status, js = fetch(base + path, "application/json")
        if js_status < 400:
            try:
                keys(json.loads(js), names)
            except ValueError:
                pass
        p = Page()
        p.feed(body)
        heads += [(path, tag, text) for tag, text in p.heads]
        for h in p.links:
            u = urllib.parse.urlsplit(h)
            if u.scheme or u.netloc or not u.path.startswith("/") or u.path.startswith("/static"):
                continue
            todo.append(h)
    # against every name, the JSON keys of pages fetched later too
    for path, tag, text in heads:
        if text in names and text not in WORDS:
            bad.append("%s: <%s>%s</%s>" % (path, tag, text, tag))
    print("checked %d pages, %d headings" % (pages, len(heads)))
    for b in bad:
        print(b)
    sys.exit(2 if failed else 1 if bad else 0)


main()
