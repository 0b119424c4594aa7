# A W3C WebDriver client in the Python standard library alone, for the
# browser tests (t0862): Debian's chromedriver (package chromium-driver)
# started on a free port of 127.0.0.1 in the caller's process group (never
# a session of its own: the test's cleanup ends it with the test), one
# headless Chromium session, and the few commands a person's visit needs:
# navigate, find an element by CSS selector, type into it, click it, read
# its text or an attribute, the page's title and URL, a screenshot (of the
# window, or of one element), the mouse over an element and a drag across
# one (W3C actions: a pointer's moves, press and release), an element's
# place and size; then
# the session deleted and chromedriver ended.
#
#   from webdriver import Browser
#   with Browser(profile="/tmp/x/profile", log="/tmp/x/chromedriver.log") as b:
#       b.get("http://127.0.0.1:8080/alert/1")
#       b.type("textarea[name=note]", "known")
#       b.click("#do-ack")
#       b.text("#status")
#       b.screenshot("/tmp/x/shot.png")
#
# Every command has a time limit (TIMEOUT s; a loaded machine starts
# Chromium slowly); an error of the protocol raises WebDriverError with the
# driver's message.
import base64
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

TIMEOUT = 90
# the W3C element reference key
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class WebDriverError(Exception):
    pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Browser:
    def __init__(self, profile, log=None, chromedriver=None, chromium=None,
                 window="1100,900"):
        self.driver = chromedriver or shutil.which("chromedriver") or "/usr/bin/chromedriver"
        binary = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        self.logf = open(log, "ab") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [self.driver, "--port=%d" % self.port, "--allowed-ips=127.0.0.1"],
            stdin=subprocess.DEVNULL, stdout=self.logf, stderr=self.logf)
        self.session = None
        try:
            self._wait_ready()
            opts = {"args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                             "--disable-dev-shm-usage", "--user-data-dir=" + profile,
                             "--window-size=" + window, "--no-first-run",
                             "--no-default-browser-check"]}
            if binary:
                opts["binary"] = binary
            caps = {"capabilities": {"alwaysMatch": {
                "browserName": "chrome", "goog:chromeOptions": opts,
                "timeouts": {"pageLoad": TIMEOUT * 1000, "script": 30000, "implicit": 0}}}}
            v = self._call("POST", "/session", caps)
            self.session = v["sessionId"]
        except BaseException:
            self.quit()
            raise

    def _wait_ready(self):
        end = time.monotonic() + TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise WebDriverError("chromedriver exited %d at its start" % self.proc.returncode)
            try:
                v = self._call("GET", "/status", timeout=5)
                if v.get("ready"):
                    return
            except (OSError, WebDriverError):
                pass
            if time.monotonic() > end:
                raise WebDriverError("chromedriver not ready on port %d after %d s"
                                     % (self.port, TIMEOUT))
            time.sleep(0.2)

    def _call(self, method, path, body=None, timeout=TIMEOUT):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                doc = json.load(r)
        except urllib.error.HTTPError as e:
            try:
                doc = json.load(e)
            except ValueError:
                raise WebDriverError("%s %s: HTTP %d" % (method, path, e.code))
            v = doc.get("value") or {}
            raise WebDriverError("%s %s: %s: %s" % (method, path, v.get("error"),
                                                    (v.get("message") or "").split("\n")[0]))
        except urllib.error.URLError as e:
            raise WebDriverError("%s %s: %s" % (method, path, e.reason))
        return doc.get("value")

    def _s(self, path, method="POST", body=None):
        if body is None and method == "POST":
            body = {}
        return self._call(method, "/session/%s%s" % (self.session, path), body)

    # ---- what a person does -----------------------------------------------------
    def get(self, url):
        self._s("/url", body={"url": url})

    def find(self, css):
        v = self._s("/element", body={"using": "css selector", "value": css})
        return v[ELEMENT]

    def find_all(self, css):
        v = self._s("/elements", body={"using": "css selector", "value": css})
        return [e[ELEMENT] for e in v]

    def type(self, css, text):
        self._s("/element/%s/value" % self.find(css), body={"text": text})

    def click(self, css):
        self._s("/element/%s/click" % self.find(css))

    def text(self, css):
        return self._s("/element/%s/text" % self.find(css), method="GET")

    def attribute(self, css, name):
        return self._s("/element/%s/attribute/%s" % (self.find(css), name), method="GET")

    def rect(self, css):
        """the element's x, y, width, height (CSS pixels)"""
        return self._s("/element/%s/rect" % self.find(css), method="GET")

    def _pointer(self, steps):
        self._s("/actions", body={"actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": steps}]})
        self._s("/actions", method="DELETE")

    def hover(self, css):
        """the mouse moved onto the middle of the element"""
        self._pointer([{"type": "pointerMove", "duration": 50, "origin": {ELEMENT: self.find(css)},
                        "x": 0, "y": 0}])

    def drag(self, css, x0, x1, y=0):
        """a press at x0 and a release at x1 (CSS pixels from the element's
        middle, at height y from it), through moves between them"""
        e = {ELEMENT: self.find(css)}
        steps = [{"type": "pointerMove", "duration": 0, "origin": e, "x": x0, "y": y},
                 {"type": "pointerDown", "button": 0}]
        for k in range(1, 6):
            steps.append({"type": "pointerMove", "duration": 30, "origin": e,
                          "x": int(x0 + (x1 - x0) * k / 5), "y": y})
        steps.append({"type": "pointerUp", "button": 0})
        self._pointer(steps)

    def title(self):
        return self._s("/title", method="GET")

    def url(self):
        return self._s("/url", method="GET")

    def wait_text(self, css, want, timeout=TIMEOUT):
        """the text of css once it holds want (or the last text at the limit)"""
        end = time.monotonic() + timeout
        got = None
        while True:
            try:
                got = self.text(css)
            except WebDriverError:
                got = None
            if got is not None and want in got or time.monotonic() > end:
                return got
            time.sleep(0.2)

    def screenshot(self, path, css=None):
        """the viewport as PNG into path, or only the element css; its size"""
        where = "/element/%s/screenshot" % self.find(css) if css else "/screenshot"
        png = base64.b64decode(self._s(where, method="GET"))
        with open(path, "wb") as f:
            f.write(png)
        return len(png)

    # ---- the end --------------------------------------------------------------------
    def quit(self):
        if self.session:
            try:
                self._call("DELETE", "/session/" + self.session, timeout=30)
            except (OSError, WebDriverError):
                pass
            self.session = None
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.logf not in (None, subprocess.DEVNULL):
            self.logf.close()
            self.logf = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.quit()
        return False


if __name__ == "__main__":
    # a smoke test: python3 webdriver.py URL [SHOT.png]
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as d, Browser(profile=os.path.join(d, "p")) as b:
        b.get(sys.argv[1])
        print(b.title())
        if len(sys.argv) > 2:
            print(b.screenshot(sys.argv[2]), "bytes")
