#!/usr/bin/env python3
# Reads xpu-report's SVG flame graphs and what headless Chromium made of
# them, for tests/shell/report_svg_*.sh and report_diff.sh. Standard library
# only (a PNG decoder of its own, so no Pillow is needed):
#   flamegraph.py shape SVG            the structure, for a golden file
#   flamegraph.py png PNG              size, colours, pixels per colour family
#   flamegraph.py search SVG REGEX [i] what a search must mark: ids, "Matched: P%"
#                                      (i: ignoring case, the ic button)
#   flamegraph.py dom DOM              the frames after the script ran: id, classes, box
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

NS = {"s": "http://www.w3.org/2000/svg"}
TITLE = re.compile(r"^(.*) \(([0-9.]+) samples, [0-9.]+ [mu]?s, ([0-9.]+)%(?:; ([-+][0-9.]+)%)?\)$", re.S)


def hue_family(r, g, b):
    """The colour family of a pixel or a fill, by hue (output/svg.c's families)."""
    mx, mn = max(r, g, b), min(r, g, b)
    if mx - mn < 30:
        return "grey"
    if mx == r:
        h = (60 * (g - b) / (mx - mn)) % 360
    elif mx == g:
        h = 60 * (b - r) / (mx - mn) + 120
    else:
        h = 60 * (r - g) / (mx - mn) + 240
    for name, lo, hi in (("cpu", 0, 50), ("gpu", 90, 140), ("python", 160, 200),
                         ("kernel", 200, 235), ("cuda-api", 255, 300), ("search", 300, 310)):
        if lo <= h < hi:
            return name
    return "other"


def fill_family(fill):
    r, g, b = map(int, re.match(r"rgb\((\d+),(\d+),(\d+)\)", fill).groups())
    if r == 255 and g == b:	# a differential graph's: white to red
        return "grew" if g < 255 else "same"
    if b == 255 and r == g:	# white to blue
        return "shrank"
    return hue_family(r, g, b)


def frames(root):
    """The frame boxes in document order: dicts of id, parent, name, weight, ..."""
    out = []
    for g in root.find("s:g[@id='frames']", NS).findall("s:g", NS):
        t = g.find("s:title", NS).text
        m = TITLE.match(t)
        assert m, "bad title: " + t
        r = g.find("s:rect", NS)
        out.append({"id": g.get("id"), "p": g.get("data-p"), "name": m.group(1),
                    "weight": float(m.group(2)), "pct": float(m.group(3)),
                    "delta": m.group(4), "x": float(r.get("x")), "w": float(r.get("width")),
                    "y": int(r.get("y")), "fill": r.get("fill"),
                    "cls": (g.get("class") or "").split(), "text": g.find("s:text", NS).text or ""})
    return out


def shape(path):
    root = ET.parse(path).getroot()
    counts = {}
    for e in root.iter():
        tag = e.tag.split("}")[1]
        counts[tag] = counts.get(tag, 0) + 1
    print("elements: " + " ".join("%s=%d" % kv for kv in sorted(counts.items())))
    for i in ("title", "subtitle", "unzoom", "search", "ic", "details", "matched"):
        e = root.find(".//*[@id='%s']" % i)
        if e is None:
            print("#%s: missing" % i)
            continue
        text = "".join(e.itertext()) if i != "ic" else (e[-1].tail if len(e) else e.text) or ""
        print("#%s: class=%s text=%r" % (i, e.get("class"), text.strip()))
    print("script: %d lines" % len(root.find("s:script", NS).text.splitlines()))
    fr = frames(root)
    depth = {}
    print("frames: %d" % len(fr))
    for f in fr:
        depth[f["id"]] = depth["f" + f["p"]] + 1 if f["p"] is not None else 0
        print("%-5s p=%-5s d=%-2d %-8s %8.0f %6.2f%%%s  %s" % (
            f["id"], "f" + f["p"] if f["p"] else "-", depth[f["id"]], fill_family(f["fill"]),
            f["weight"], f["pct"], " " + f["delta"] + "%" if f["delta"] else "", f["name"]))


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB/RGBA non-interlaced PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    assert depth == 8 and ctype in (2, 6) and not interlace, "unsupported PNG %r" % (hdr,)
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, rows, off = zlib.decompress(idat), w * bpp, bytearray(w * bpp), [], 0
    for _ in range(h):
        ft, line = raw[off], bytearray(raw[off + 1:off + 1 + stride])
        off += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def png(path):
    w, h, rows = png_pixels(path)
    fam, colours = {}, set()
    for row in rows:
        for px in row:
            colours.add(px)
            f = hue_family(*px)
            fam[f] = fam.get(f, 0) + 1
    print("size %dx%d" % (w, h))
    print("colours %d" % len(colours))
    for f in sorted(fam):
        print("family %s %d" % (f, fam[f]))


def search(path, regex, flags=""):
    fr = frames(ET.parse(path).getroot())
    rx = re.compile(regex, re.I if "i" in flags else 0)
    hit, total, sum_ = {}, fr[0]["weight"], 0.0
    for f in fr:
        m = bool(rx.search(f["name"]))
        under = f["p"] is not None and hit["f" + f["p"]]
        hit[f["id"]] = m or under
        if m:
            print("match " + f["id"])
        if m and not under:
            sum_ += f["weight"]
    print("Matched: %.2f%%" % (100 * sum_ / total if total else 0))


def dom(path):
    text = open(path, encoding="utf-8").read()
    root = ET.fromstring(text[text.index("<svg"):text.rindex("</svg>") + 6])
    m = root.find(".//*[@id='matched']")
    print("matched %s" % (m.text or "").strip())
    print("unzoom %s" % root.find(".//*[@id='unzoom']").get("class"))
    print("ic %s" % root.find(".//*[@id='ic']").get("class"))
    for f in frames(root):
        print("%s %s x=%.2f w=%.2f fill=%s text=%s" % (f["id"], ",".join(f["cls"]), f["x"],
                                                      f["w"], f["fill"], f["text"]))


if __name__ == "__main__":
    {"shape": shape, "png": png, "search": search, "dom": dom}[sys.argv[1]](*sys.argv[2:])
