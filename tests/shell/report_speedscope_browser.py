"""report_speedscope_browser.sh's checks: speedscope's own app (the npm
package's dist/release) served over HTTP on 127.0.0.1, opened in headless
Chromium on PROFILE (#profileURL=), looked at through the DevTools protocol.

    report_speedscope_browser.py CHROMIUM DIST PROFILE.json OUTDIR

- the toolbar names the profile with the most weight, "NAME (i/N)";
- "Time Order" is the selected view; hovering the flame chart at several x
  positions, row by row, shows the frames of the sample recorded at that
  time (the tooltip is speedscope's, its text the frame under the pointer);
- after a click on its tab, "Left Heavy" is selected and the tooltips show the
  frames of the merged call tree, heaviest child first, with their share;
- a screenshot of each view in OUTDIR (time-order.png, left-heavy.png).
"""
import functools
import http.server
import json
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from cdp import Browser  # noqa: E402

W, H = 1200, 800
ROW = 20  # speedscope's frame height in CSS pixels
chromium, dist, profile_path, outdir = sys.argv[1:5]
doc = json.load(open(profile_path))
frames = [f["name"] for f in doc["shared"]["frames"]]
profiles = doc["profiles"]
totals = [sum(p["weights"]) for p in profiles]
busy = max(range(len(profiles)), key=lambda i: totals[i])
prof, total = profiles[busy], totals[busy]
stacks = [[frames[i] for i in s] for s in prof["samples"]]
weights = prof["weights"]
assert doc.get("activeProfileIndex", 0) == busy, "the file does not open on the busiest profile"


class Handler(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path):
        if path.split("?")[0] == "/profile.json":
            return profile_path
        return super().translate_path(path)

    def log_message(self, *a):
        pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=dist))
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d/index.html#profileURL=profile.json" % srv.server_address[1]


# ---- what speedscope should draw, from the file: the frame names at time t,
# root first, in each view
def time_order_at(t):
    acc = 0
    for s, w in zip(stacks, weights):
        if acc + w > t:
            return s
        acc += w
    return []


def tree():
    root = {"w": 0, "kids": {}}
    for s, w in zip(stacks, weights):
        n = root
        n["w"] += w
        for f in s:
            n = n["kids"].setdefault(f, {"w": 0, "kids": {}})
            n["w"] += w
    return root


ROOT = tree()


def left_heavy_at(t):
    out, n, start = [], ROOT, 0
    while True:
        for name, k in sorted(n["kids"].items(), key=lambda kv: -kv[1]["w"]):
            if start <= t < start + k["w"]:
                out.append((name, k["w"]))
                n = k
                break
            start += k["w"]
        else:
            return out


def candidates(at, x, depth):
    """Names speedscope may show at pixel x (±2 px: edges, ties)."""
    names = set()
    for dx in range(-2, 3):
        t = (x + dx + 0.5) * total / W
        if 0 <= t < total:
            s = at(t)
            if depth < len(s):
                names.add(s[depth] if isinstance(s[depth], str) else s[depth][0])
    return names


TIP = re.compile(r"^([0-9.]+)([a-zµ]+) \(([0-9.]+)%\) (.*)$")


def tooltip(b, base, x, y):
    b.hover(x, y)
    time.sleep(0.03)
    lines = b.eval("document.body.innerText").split("\n")
    extra = [l for l in lines[len(base):] if l.strip()]
    for l in extra:
        m = TIP.match(l)
        if m:
            return m.group(4), float(m.group(3))
    return None


def selected_view(b):
    # the three view tabs; the selected one has a background of its own
    got = b.eval("""(function () {
        var r = {};
        document.querySelectorAll('div, span').forEach(function (e) {
            var m = e.textContent.match(/(Time Order|Left Heavy|Sandwich)$/);
            if (m && e.textContent.length < 16 && !r[m[1]])
                r[m[1]] = getComputedStyle(e).backgroundColor;
        });
        return r; })()""")
    assert len(got) == 3, "view tabs: %r" % got
    cols = list(got.values())
    sel = [k for k, c in got.items() if cols.count(c) == 1]
    return sel[0] if len(sel) == 1 else "unclear: %r" % got


def check_view(b, name, at, base, y0, check_share):
    end = time.monotonic() + 10
    while selected_view(b) != name and time.monotonic() < end:
        time.sleep(0.1)
    assert selected_view(b) == name, "selected view is %s, not %s" % (selected_view(b), name)
    time.sleep(0.2)  # the flame chart redraws
    shown = 0
    for x in (3, W // 4, W // 2, 3 * W // 4, W - 4):
        for depth in range(0, (H - y0) // ROW):
            want = candidates(at, x, depth)
            got = tooltip(b, base, x, y0 + depth * ROW + ROW // 2 - 2)
            if not want and not got:
                break
            assert got and got[0] in want, "%s x=%d depth %d: speedscope shows %r, the file has %r" % (
                name, x, depth, got, want)
            if check_share and len(want) == 1:
                w = dict(at((x + 0.5) * total / W))[got[0]]
                assert abs(100 * w / total - got[1]) <= 1, (name, x, depth, got, w, total)
            shown += 1
    assert shown >= 10, "%s: only %d frames under the pointer" % (name, shown)
    print("%s: %d frames under the pointer as the file has them" % (name, shown))


with open(os.path.join(outdir, "chromium.log"), "w") as log, \
        Browser(chromium, os.path.join(outdir, "chromium-profile"), log, W, H) as b:
    b.open(url)
    want_title = "%s (%d/%d)" % (prof["name"], busy + 1, len(profiles))
    b.wait_for("document.body && document.body.innerText.indexOf(%s) >= 0" % json.dumps(want_title),
               "speedscope to show " + want_title)
    print("speedscope shows " + want_title)
    base = [l for l in b.eval("document.body.innerText").split("\n")]
    # the first row of the flame chart: the first y under the axis with a tooltip
    y0 = None
    for y in range(100, 400, 2):
        if tooltip(b, base, W // 2, y):
            y0 = y
            break
    assert y0 is not None, "no frame under the pointer anywhere in the flame chart"
    check_view(b, "Time Order", time_order_at, base, y0, False)
    b.hover(W - 3, H - 3)  # off the frames and the toolbar
    b.screenshot(os.path.join(outdir, "time-order.png"))
    # a click on the tab, as a user does
    r = b.eval("""(function () {
        var t = null;
        document.querySelectorAll('div').forEach(function (e) {
            if (!t && /Left Heavy$/.test(e.textContent) && e.textContent.length < 16) t = e;
        });
        var r = t.getBoundingClientRect();
        return [r.left + r.width / 2, r.top + r.height / 2]; })()""")
    b.click(r[0], r[1])
    b.hover(W - 3, H - 3)
    check_view(b, "Left Heavy", lambda t: left_heavy_at(t), base, y0, True)
    b.hover(W - 3, H - 3)  # off the frames and the toolbar
    b.screenshot(os.path.join(outdir, "left-heavy.png"))
srv.shutdown()
