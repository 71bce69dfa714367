"""Headless Chromium driven through the DevTools protocol over a pipe
(--remote-debugging-pipe: commands on fd 3, answers on fd 4, each a JSON
message ending in NUL), so no websocket module is needed. Every read has a
deadline: a page that never answers fails the test instead of hanging it.

    with Browser(chromium, profile_dir, log, width, height) as b:
        b.open(url); b.eval("document.title"); b.hover(x, y); b.click(x, y); b.key("2")
        b.screenshot(path)
"""
import base64
import json
import os
import select
import subprocess
import time


class CdpError(Exception):
    pass


class Browser:
    def __init__(self, chromium, profile_dir, log, width=1200, height=800, timeout=60):
        self.width, self.height = width, height
        self.deadline = time.monotonic() + timeout
        r_cmd, self.w_cmd = os.pipe()  # we write, Chromium reads fd 3
        self.r_ans, w_ans = os.pipe()  # Chromium writes fd 4, we read

        def fds():  # dup first: a pipe end may already be fd 3 or 4
            a, b = os.dup(r_cmd), os.dup(w_ans)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--user-data-dir=" + profile_dir,
             "--remote-debugging-pipe", "--window-size=%d,%d" % (width, height), "about:blank"],
            preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=log, stderr=log)
        os.close(r_cmd)
        os.close(w_ans)
        self.buf, self.nid, self.session = b"", 0, None
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()
        os.close(self.w_cmd)
        os.close(self.r_ans)

    def _read(self):
        while b"\0" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise CdpError("Chromium did not answer in time")
            if not select.select([self.r_ans], [], [], left)[0]:
                continue
            d = os.read(self.r_ans, 1 << 20)
            if not d:
                raise CdpError("Chromium exited (exit status %s)" % self.proc.poll())
            self.buf += d
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None):
        self.nid += 1
        m = {"id": self.nid, "method": method, "params": params or {}}
        if self.session:
            m["sessionId"] = self.session
        os.write(self.w_cmd, json.dumps(m).encode() + b"\0")
        while True:
            a = self._read()
            if a.get("id") == self.nid:
                if "error" in a:
                    raise CdpError("%s: %s" % (method, a["error"]))
                return a["result"]

    def open(self, url):
        self.send("Page.navigate", {"url": url})

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise CdpError("%s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def wait_for(self, expr, what, timeout=20):
        """Polls expr until it is truthy; returns its value."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            v = self.eval(expr)
            if v:
                return v
            time.sleep(0.1)
        raise CdpError("timed out waiting for " + what)

    def hover(self, x, y):
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def click(self, x, y):
        self.hover(x, y)
        for t in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": t, "x": x, "y": y, "button": "left", "clickCount": 1})

    def key(self, k):
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": k, "text": k})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": k})

    def screenshot(self, path):
        png = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(png))
