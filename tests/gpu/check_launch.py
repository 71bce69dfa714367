"""The launch walk (the default, --launch-stacks=walk) against the marker
(--launch-stacks=marker) on the same program (tests/gpu/run.sh, issue 13):
WALK and MARKER are `xpu-report --folded --gpu-only` of torch_demo.py
recorded both ways, WALK_HEADER the walk trace's --header. Checks that the
walk took the launches (META launch_stacks walk; most walks complete, by the
library's own counts in META cupti.launch_walk), that the GPU time under
Python frames is the same share, and that every call path holding 0.5% of
the GPU time or more holds the same share in both, within 1 point plus one
sample's share (folded counts are whole samples: torch_demo's 81 ms of GPU
time are 81 samples at 999 Hz, and two runs of the same recording mode
differ by a sample on a path; the programs are the same, their timings not
quite).

usage: check_launch.py WALK MARKER WALK_HEADER
"""
import re
import sys
from collections import Counter


def paths(path):
    shares, total, py = Counter(), 0.0, 0.0
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        w = float(n)
        total += w
        shares[stack] += w
        if ";py::" in stack:
            py += w
    return shares, total, py


walk, wtot, wpy = paths(sys.argv[1])
marker, mtot, mpy = paths(sys.argv[2])
header = open(sys.argv[3]).read()
fail = 0


def check(ok, what):
    global fail
    print(("ok    " if ok else "FAIL  ") + what)
    fail |= not ok


check(re.search(r"^#\s+launch_stacks: walk$", header, re.M) is not None,
      "the walk trace says launch_stacks: walk")
m = re.search(r"cupti\.launch_walk: (?:pid \d+: )?(\d+) walks, (\d+) to their end", header)
walks, ends = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
check(walks > 0 and ends >= 0.9 * walks,
      f"walks complete: {ends} of {walks} (>= 90%; the rest took the marker)")
check(wtot > 0 and mtot > 0, f"GPU time in both: {wtot:.0f} and {mtot:.0f} samples")
tol = 1 + 100 / max(min(wtot, mtot), 1)
a, b = 100 * wpy / max(wtot, 1), 100 * mpy / max(mtot, 1)
check(abs(a - b) <= tol, f"GPU time under Python frames: {a:.1f}% (walk) vs {b:.1f}% (marker), "
      f"within {tol:.1f} points")
for p in sorted(set(walk) | set(marker), key=lambda p: -walk[p]):
    a, b = 100 * walk[p] / max(wtot, 1), 100 * marker[p] / max(mtot, 1)
    if a < 0.5 and b < 0.5:
        continue
    leaf = ";".join(p.split(";")[-3:])
    check(abs(a - b) <= tol, f"...{leaf[:120]}: {a:.1f}% (walk) vs {b:.1f}% (marker)")
sys.exit(fail)
