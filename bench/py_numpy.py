"""Workload of bench/report_real.sh: Python code driving a large C extension
(numpy), so that stacks mix interpreter frames, Python functions and the
extension's C code (BLAS, ufunc loops, array allocation).

py_numpy.py SECONDS: runs rounds until SECONDS have passed, prints
"py_numpy: N rounds in S s".
"""
import sys
import time

import numpy as np


def matmul_chain(a, b):
    return (a @ b).sum()


def ufuncs(x):
    return np.sqrt(np.abs(np.sin(x) * np.cos(x) + 1.0)).mean()


def small_arrays(n):
    acc = 0.0
    for i in range(n):
        v = np.arange(i % 50 + 10, dtype=np.float64)
        acc += float(np.dot(v, v[::-1]))
    return acc


def sort_unique(x):
    return np.unique(np.sort(x.astype(np.int64) % 1000)).size


def round_(rng):
    a = rng.random((96, 96))
    b = rng.random((96, 96))
    x = rng.standard_normal(20000)
    return matmul_chain(a, b) + ufuncs(x) + small_arrays(300) + sort_unique(x * 1000)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    rng = np.random.default_rng(1)
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < seconds:
        round_(rng)
        n += 1
    print(f"py_numpy: {n} rounds in {time.monotonic() - t0:.2f} s")


if __name__ == "__main__":
    main()
