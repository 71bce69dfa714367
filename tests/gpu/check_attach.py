# SPDX-License-Identifier: MIT
"""Checks of tests/gpu/attach.sh (xpu-record -p on a running PyTorch loop).

usage: check_attach.py STEPLOG WINDOWS HEADER FOLDED [HEADER2 FOLDED2]

STEPLOG: attach_train.py's log ("step wall_end ms" per line); WINDOWS: one
line per attach, "start end" (wall clock, seconds); HEADER/FOLDED:
xpu-report --header and --folded --gpu-only of the first attach (2: of the
second). Checks:
  - >= 99% of the window's kernels matched by correlation ID (--header);
  - >= 99% of the GPU time launched from the Python thread under Python
    frames (py::), the autograd engine's thread (pt_autograd...) counted
    apart;
  - the median step time after the detach (from 1 s after the first window
    to the second) within ATTACH_STEP_TOL percent (default 3) of the
    median before the first window; the window's own median printed.
Exit 1 when a check fails."""
import os
import re
import statistics
import sys


def kernels(header):
    for line in open(header):
        m = re.match(r"#\s+kernels\s+(\d+): by id (\d+) \(([\d.]+)%\)", line)
        if m:
            return int(m.group(1)), int(m.group(2)), float(m.group(3))
    return 0, 0, 0.0


def python_share(folded):
    main = py = engine = 0.0
    for line in open(folded):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        w = float(n)
        frames = stack.split(";")
        if frames[0].startswith("pt_autograd"):
            engine += w
            if any(f.startswith("py::") for f in frames):
                py += w
                main += w
            continue
        main += w
        if any(f.startswith("py::") for f in frames):
            py += w
    return main, py, engine


def check_window(name, header, folded, bad):
    n, byid, pct = kernels(header)
    ok = n > 0 and pct >= 99.0
    print(f"{'ok  ' if ok else 'FAIL'}  {name}: {n} kernels, {byid} matched by correlation ID ({pct:.1f}%)")
    bad += not ok
    main, py, engine = python_share(folded)
    share = 100.0 * py / main if main else 0.0
    ok = main > 0 and share >= 99.0
    print(f"{'ok  ' if ok else 'FAIL'}  {name}: {share:.1f}% of the GPU weight under Python frames "
          f"({py:.0f} of {main:.0f}; the autograd engine thread's {engine:.0f} counted with "
          f"the Python line that made its work where the autograd probes put it)")
    return bad + (not ok)


def main():
    steplog, windows, header, folded = sys.argv[1:5]
    tol = float(os.environ.get("ATTACH_STEP_TOL", "3"))
    steps = [tuple(map(float, l.split())) for l in open(steplog) if l.strip()]
    wins = [tuple(map(float, l.split())) for l in open(windows) if l.strip()]
    bad = check_window("attach 1", header, folded, 0)
    if len(sys.argv) > 6:
        bad = check_window("attach 2", sys.argv[5], sys.argv[6], bad)
    w0, w1 = wins[0]
    nxt = wins[1][0] if len(wins) > 1 else float("inf")
    before = [ms for _, t, ms in steps[20:] if t < w0]
    inside = [ms for _, t, ms in steps if w0 <= t <= w1]
    after = [ms for _, t, ms in steps if w1 + 1.0 <= t < nxt]
    if len(before) < 10 or len(after) < 10:
        print(f"FAIL  too few steps to compare: {len(before)} before, {len(after)} after")
        return 1
    mb, mi, ma = (statistics.median(v) if v else 0.0 for v in (before, inside, after))
    d = 100.0 * (ma - mb) / mb
    ok = abs(d) <= tol
    print(f"{'ok  ' if ok else 'FAIL'}  step time: before {mb:.3f} ms ({len(before)} steps), "
          f"attached {mi:.3f} ms ({len(inside)}, {100.0 * (mi - mb) / mb:+.1f}%), after the detach "
          f"{ma:.3f} ms ({len(after)}, {d:+.1f}%; within {tol:g}% wanted)")
    return 1 if bad or not ok else 0


if __name__ == "__main__":
    sys.exit(main())
