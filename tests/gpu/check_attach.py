# SPDX-License-Identifier: MIT
"""Checks of tests/gpu/attach.sh (xpu-record -p on a running PyTorch loop).

usage: check_attach.py --windows-only HEADER FOLDED
       check_attach.py [--ref REFLOG] [--twin TWINLOG] [--floor FLOORLOG]
                       [--bare BARELOG [--bare-info TEXT]]
                       STEPLOG WINDOWS HEADER FOLDED [HEADER2 FOLDED2]

STEPLOG: attach_train.py's log ("step wall_end ms" per line); WINDOWS: one
line per attach, "start end" (wall clock, seconds); HEADER/FOLDED:
xpu-report --header and --folded --gpu-only of the first attach (2: of the
second). Checks:
  - >= 99% of the window's kernels matched by correlation ID (--header);
  - >= 99% of the GPU time launched from the Python thread under Python
    frames (py::), the autograd engine's thread (pt_autograd...) counted
    apart;
  - the median step time after the detach (from 1 s after the last window
    to the end; with one window, to the end too) within ATTACH_STEP_TOL
    percent (default 3) of the median before the first window, or of it
    plus the change the reference run (REFLOG: no profiler, same seed)
    shows over the same step indices (a slowdown beyond both fails); the
    window's own median printed, and the control run's (BARELOG: CUPTI
    alone enabled and finalized at the same steps) before/after, which
    tells CUPTI's own residue from ours. With TWINLOG (the same loop run
    at the same time, never attached, on CPUs of its own) the change is
    taken against the twin's over the same wall-clock seconds instead and
    must be within ATTACH_STEP_TOL itself: the host's drift measured, not
    guessed. With FLOORLOG (torch.profiler,
    CUDA activity only, over the window's steps) the window's step time
    against that floor.
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


def steplog_read(path):
    """(step, wall-clock end, ms) per step."""
    return [tuple(map(float, l.split()[:3])) for l in open(path) if l.strip()]


def steplog_cpu(path):
    """step -> the launching thread's CPU ms in it (the 4th column), or {}."""
    out = {}
    for l in open(path):
        f = l.split()
        if len(f) >= 4:
            out[int(float(f[0]))] = float(f[3])
    return out


def main():
    args = sys.argv[1:]
    if args and args[0] == "--windows-only":	# HEADER FOLDED: the window checks only
        return 1 if check_window("attach 1", args[1], args[2], 0) else 0
    ref = bare = floor = twin = twin_path = None
    bare_info = ""
    cpu_paths = {}
    while args and args[0].startswith("--"):
        opt, val = args[0], args[1]
        args = args[2:]
        if opt == "--ref":
            ref = steplog_read(val)
            cpu_paths["reference"] = val
        elif opt == "--bare":
            bare = steplog_read(val)
            cpu_paths["bare CUPTI"] = val
        elif opt == "--twin":
            twin = steplog_read(val)
            twin_path = val
        elif opt == "--floor":
            floor = steplog_read(val)
        elif opt == "--bare-info":
            bare_info = val
    sys.argv[1:] = args
    steplog, windows, header, folded = sys.argv[1:5]
    tol = float(os.environ.get("ATTACH_STEP_TOL", "3"))
    steps = steplog_read(steplog)
    cpu_paths["attached"] = steplog
    wins = [tuple(map(float, l.split())) for l in open(windows) if l.strip()]
    bad = check_window("attach 1", header, folded, 0)
    if len(sys.argv) > 6:
        bad = check_window("attach 2", sys.argv[5], sys.argv[6], bad)
    w0, w1 = wins[0]
    nxt = wins[1][0] if len(wins) > 1 else float("inf")
    # the same step indices for every run: before the first window (after
    # 20 warm-up steps), from 1 s after its end to the second window
    first = lambda cond: next((int(i) for i, t, _ in steps if cond(t)), len(steps))
    a, b, c, e = 20, first(lambda t: t >= w0), first(lambda t: t >= w1 + 1.0), first(lambda t: t >= nxt)
    # the long tail: from 1 s after the last window to the end (the steps
    # between the windows are a few seconds: too few against this loop's
    # own +-10% swings over 500-step stretches, seen on 2x H100)
    if len(wins) > 1:
        c, e = first(lambda t: t >= wins[-1][1] + 1.0), len(steps)
    inside = [ms for _, t, ms in steps if w0 <= t <= w1]
    runs = {"attached": steps}
    if ref:
        runs["reference"] = ref
    if bare:
        runs["bare CUPTI"] = bare
    med = {}
    for name, log in runs.items():
        before = [ms for i, _, ms in log if a <= i < b]
        after = [ms for i, _, ms in log if c <= i < e]
        if len(before) < 10 or len(after) < 10:
            print(f"FAIL  {name}: too few steps to compare: {len(before)} before, {len(after)} after")
            return 1
        med[name] = (statistics.median(before), statistics.median(after))
    mb, ma = med["attached"]
    mi = statistics.median(inside) if inside else 0.0
    d_raw = 100.0 * (ma - mb) / mb
    drift = 0.0
    if "reference" in med:
        rb, ra = med["reference"]
        drift = 100.0 * (ra - rb) / rb
        print(f"note  the reference run (no profiler) at the same steps: before {rb:.3f} ms, "
              f"after {ra:.3f} ms ({drift:+.1f}%: the loop's own drift)")
    if "reference" in med:
        print(f"note  after the detach against the reference's same steps: {ma:.3f} vs "
              f"{med['reference'][1]:.3f} ms ({100.0 * (ma - med['reference'][1]) / med['reference'][1]:+.1f}%); "
              f"before: {mb:.3f} vs {med['reference'][0]:.3f} ms "
              f"({100.0 * (mb - med['reference'][0]) / med['reference'][0]:+.1f}%)")
    if "bare CUPTI" in med:
        bb, ba = med["bare CUPTI"]
        db = 100.0 * (ba - bb) / bb
        print(f"note  the control run, CUPTI alone enabled and finalized at the same steps "
              f"(tests/gpu/cupti_bare.c{', ' + bare_info if bare_info else ''}): before {bb:.3f} ms, "
              f"after {ba:.3f} ms ({db:+.1f}%, {db - drift:+.1f}% beyond the reference's drift)")
    if floor:	# the window's steps under torch.profiler's CUDA-only floor
        w_end = first(lambda t: t > w1)
        fl = [ms for i, _, ms in floor if b <= i < w_end]
        if fl:
            mf = statistics.median(fl)
            print(f"note  inside the window (steps {b}-{w_end - 1}): {mi:.3f} ms attached, "
                  f"{mf:.3f} ms under torch.profiler's CUDA-only floor at the same steps "
                  f"({mi / mf:.3f}x of it)")
    # the launching thread's CPU per step (forward and backward up to the
    # synchronize): a residue in the launch path shows here without the
    # GPU's and the host's noise in the wall time
    for name, path in cpu_paths.items():
        cpu = steplog_cpu(path)
        cb = [v for i, v in cpu.items() if a <= i < b]
        ca = [v for i, v in cpu.items() if c <= i < e]
        if len(cb) >= 10 and len(ca) >= 10:
            mb_, ma_ = statistics.median(cb), statistics.median(ca)
            print(f"note  {name}: the launching thread's CPU per step before {mb_:.3f} ms, "
                  f"after {ma_:.3f} ms ({100.0 * (ma_ - mb_) / mb_:+.1f}%)")
    d = d_raw - drift
    twin_d = None
    if twin:	# the twin's steps over the same wall-clock seconds
        t_a = next(t for i, t, _ in steps if i >= a)
        t_b, t_c = w0, (wins[-1][1] + 1.0 if len(wins) > 1 else w1 + 1.0)
        t_e = steps[-1][1] if len(wins) > 1 or nxt == float("inf") else nxt
        tb = [ms for _, t, ms in twin if t_a <= t < t_b]
        ta = [ms for _, t, ms in twin if t_c <= t <= t_e]
        if len(tb) >= 10 and len(ta) >= 10:
            tb_, ta_ = statistics.median(tb), statistics.median(ta)
            twin_drift = 100.0 * (ta_ - tb_) / tb_
            twin_d = d_raw - twin_drift
            print(f"note  the twin (same loop, same seconds, never attached): before {tb_:.3f} ms, "
                  f"after {ta_:.3f} ms ({twin_drift:+.1f}%: the host's drift over these seconds)")
            cpu_a, cpu_t = steplog_cpu(steplog), steplog_cpu(twin_path)
            ca = lambda log, cpu, lo, hi: [cpu[int(i)] for i, t, _ in log if lo <= t <= hi and int(i) in cpu]
            xb, xa = ca(steps, cpu_a, t_a, t_b), ca(steps, cpu_a, t_c, t_e)
            yb, ya = ca(twin, cpu_t, t_a, t_b), ca(twin, cpu_t, t_c, t_e)
            if min(len(xb), len(xa), len(yb), len(ya)) >= 10:
                dx = 100.0 * (statistics.median(xa) - statistics.median(xb)) / statistics.median(xb)
                dy = 100.0 * (statistics.median(ya) - statistics.median(yb)) / statistics.median(yb)
                print(f"note  the launching thread's CPU per step after the detach: {dx:+.1f}% "
                      f"(the twin's {dy:+.1f}% over the same seconds: {dx - dy:+.1f}% ours)")
        else:
            print(f"note  the twin has too few steps in the same seconds ({len(tb)}, {len(ta)}): not used")
    if twin_d is not None:
        ok = twin_d <= tol
        against = f"{twin_d:+.1f}% beyond the twin's change over the same seconds; within {tol:g}% wanted"
    else:
        # charged to the attach only when slower than before by more than tol
        # AND by more than the unprofiled loop itself changed over the same
        # steps plus tol: that reference moved -2.5% to +9.2% between the same
        # stretches in runs on 2x H100 and 2x H200, more than the 3% wanted
        ok = d_raw <= tol or d <= tol
        against = (f"{d:+.1f}% beyond the reference's drift; no slowdown over {tol:g}% and over "
                   f"the reference's own change + {tol:g}% wanted")
    print(f"{'ok  ' if ok else 'FAIL'}  step time: before {mb:.3f} ms (steps {a}-{b - 1}), "
          f"attached {mi:.3f} ms ({len(inside)} steps, {100.0 * (mi - mb) / mb:+.1f}%), after the detach "
          f"{ma:.3f} ms (steps {c}-{e - 1}, {d_raw:+.1f}%; {against})")
    return 1 if bad or not ok else 0


if __name__ == "__main__":
    sys.exit(main())
