"""Interpreter walk against perf-map trampolines on the same program
(tests/gpu/run.sh, issue 11): WALK and PERFMAP are `xpu-report --folded
--gpu-only --no-py-lines` of torch_demo.py recorded with the default
--python-frames=walk and with --python-frames=perf-map. Checks that in the
walk trace every kernel of the Python thread sits under a Python frame, and
that the share of GPU time under each innermost Python function agrees with
the perf-map trace within 5 points (both name frames py::qualname:file).

usage: check_pyframes.py WALK PERFMAP
"""
import sys
from collections import Counter


def innermost(path):
    shares = Counter()
    total = nopy = 0
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if frames[0].startswith("pt_autograd"):	# the autograd engine's thread: no Python
            continue
        w = float(n)
        total += w
        py = [f for f in frames if f.startswith("py::")]
        if py:
            shares[py[-1]] += w
        else:
            nopy += w
    return shares, total, nopy


walk, wtot, wnopy = innermost(sys.argv[1])
pm, ptot, _ = innermost(sys.argv[2])
fail = 0


def check(ok, what):
    global fail
    print(("ok    " if ok else "FAIL  ") + what)
    fail |= not ok


check(wtot > 0 and wnopy / wtot <= 0.01,
      f"walk: Python-thread GPU time without a Python frame: {100 * wnopy / max(wtot, 1):.2f}% (<= 1%)")
for fn in sorted(set(walk) | set(pm), key=lambda f: -walk[f]):
    a, b = 100 * walk[fn] / max(wtot, 1), 100 * pm[fn] / max(ptot, 1)
    if a < 1 and b < 1:
        continue
    check(abs(a - b) <= 5, f"{fn}: {a:.1f}% of GPU time (walk) vs {b:.1f}% (perf-map)")
sys.exit(fail)
