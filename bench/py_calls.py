"""Python-call-heavy benchmark for bench/python_overhead.sh: recursive calls
and many small functions, the case where per-call costs (the perf-map mode's
trampoline on every call) show most.

py_calls.py SECONDS|-n ITERATIONS [MARKER_LIB N]: runs the call loop, prints
"py_calls: N iterations in S s". With MARKER_LIB (an injection library that
exports xpu_cupti_marker, e.g. tests' libmarker_test.so), it instead calls the
marker N times from 20 Python frames deep, through ctypes, and prints
"py_calls: marker ns/call X": the CUDA-launch path of a PyTorch program.
"""
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def small_chain(i):
    return add(mul(i, 3), add(i, 1)) & 0xffff


def work():
    s = fib(18)
    for i in range(2000):
        s += small_chain(i)
    return s


def marker_calls(lib, n):
    import ctypes
    m = ctypes.CDLL(lib).xpu_cupti_marker
    m.argtypes = [ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32]

    def deep(d):
        if d:
            return deep(d - 1)
        t0 = time.perf_counter()
        for i in range(n):
            m(i, 211, 1)
        return time.perf_counter() - t0
    return deep(20)


if __name__ == "__main__":
    if len(sys.argv) > 3:
        n = int(sys.argv[3])
        print("py_calls: marker ns/call %.1f" % (marker_calls(sys.argv[2], n) * 1e9 / n))
        sys.exit(0)
    t0 = time.perf_counter()
    if sys.argv[1] == "-n":
        iters = int(sys.argv[2])
        for _ in range(iters):
            work()
    else:
        end = t0 + float(sys.argv[1])
        iters = 0
        while time.perf_counter() < end:
            work()
            iters += 1
    print("py_calls: %d iterations in %.3f s" % (iters, time.perf_counter() - t0))
