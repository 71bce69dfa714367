# SPDX-License-Identifier: MIT
"""Checks of tests/gpu/idle.sh: GPU-idle, sync-wait and off-CPU weights of
idle_demo.cu against the times it measured, and load_batch on top of the
GPU-idle flame graph of starve.py.

usage: check_idle.py demo|starve PREFIX FREQ
PREFIX.out holds the program's MEASURED lines; PREFIX.{gpu-idle,sync-wait,
off-cpu}.folded the report's views."""
import re
import sys

failed = False


def check(ok, msg):
    global failed
    print(("ok    " if ok else "FAIL  ") + msg)
    failed |= not ok


def folded(path):
    stacks = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, n = line.rpartition(" ")
        stacks.append((stack.split(";"), float(n)))
    return stacks


def measured(path):
    m = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "MEASURED":
            m[parts[1]] = int(parts[2])
    return m


def weight(stacks, pred):
    return sum(n for frames, n in stacks if pred(frames))


def within(got, want, tol):
    return want > 0 and abs(got - want) <= tol * want


def has(frames, name):
    return any(f == name or f.startswith(name + "(") or ("::" + name) in f or
               f.startswith("py::" + name) for f in frames)


def demo(prefix, freq):
    m = measured(prefix + ".out")
    idle = folded(prefix + ".gpu-idle.folded")
    total = weight(idle, lambda f: True)
    check(all(any(f.startswith("[GPU idle") for f in fr) for fr, _ in idle),
          "every --gpu-idle stack has its [GPU idle devN] frame")
    for fn in ("cpu_work", "sleep_work"):
        want = m[fn] * freq / 1e9
        got = weight(idle, lambda f, fn=fn: has(f, fn))
        check(within(got, want, 0.05),
              f"GPU idle under {fn}: {got:.0f} samples, measured {want:.0f} (+-5%)")
    got = weight(idle, lambda f: has(f, "sleep_work") and any(x.startswith("[off-cpu]") for x in f))
    check(got > 0, f"idle under sleep_work is off-CPU time ({got:.0f} samples under [off-cpu])")
    print(f"note  GPU idle total {total:.0f} samples, "
          f"{100 * (weight(idle, lambda f: has(f, 'cpu_work') or has(f, 'sleep_work')) / total if total else 0):.1f}% "
          "under cpu_work + sleep_work")

    sync = folded(prefix + ".sync-wait.folded")
    want = m["wait_for_gpu"] * freq / 1e9
    got = weight(sync, lambda f: has(f, "wait_for_gpu") and
                 any("cudaStreamSynchronize" in x for x in f) and
                 any(x.startswith("[waits on]") and "long_kernel" in x for x in f))
    check(within(got, want, 0.05),
          f"sync wait in wait_for_gpu charged to long_kernel: {got:.0f} samples, measured {want:.0f} (+-5%)")

    off = folded(prefix + ".off-cpu.folded")
    want = m["sleep_work"] * freq / 1e9
    got = weight(off, lambda f: has(f, "sleep_work"))
    check(within(got, want, 0.05), f"off-CPU under sleep_work: {got:.0f} samples, measured {want:.0f}")


def starve(prefix, freq):
    m = measured(prefix + ".out")
    idle = folded(prefix + ".gpu-idle.folded")
    total = weight(idle, lambda f: True)
    per_fn = {}
    for frames, n in idle:
        for f in set(frames):
            if f.startswith("py::"):
                per_fn[f] = per_fn.get(f, 0) + n
    # the deepest Python function that holds most of the idle time
    inner = {f: n for f, n in per_fn.items() if not re.search(r"py::(main|<module>)", f)}
    top = max(inner, key=inner.get) if inner else None
    check(top is not None and "load_batch" in top,
          f"top Python function in --gpu-idle: {top} ({inner.get(top, 0):.0f} of {total:.0f} samples)")
    got = weight(idle, lambda f: any("load_batch" in x for x in f))
    # The rest is mostly the warm-up step inside the GPU's span (CUDA
    # module loading, cuBLAS set-up: 63% / 37% on an H200).
    check(total > 0 and got / total >= 0.5,
          f"load_batch holds {100 * got / total if total else 0:.1f}% of the GPU idle time (>= 50%)")
    want = m["load_batch"] * freq / 1e9
    check(within(got, want, 0.10),
          f"GPU idle under load_batch {got:.0f} samples, load_batch measured {want:.0f} (+-10%)")


def main():
    mode, prefix, freq = sys.argv[1], sys.argv[2], float(sys.argv[3])
    {"demo": demo, "starve": starve}[mode](prefix, freq)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
