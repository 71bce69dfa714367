"""Python workload of the interpreter-walk tests (tests/shell/e2e_python.sh).

Distinctive function names at known lines, recursion, a second thread and a
Python callback run by C code (sorted(key=...)), so the test can check the
exact Python chain, the line numbers and the C frames between Python frames.
Runs for the seconds given (default 2) of CPU time, then prints its CPU time.
"""
import sys
import threading
import time


def pyd_hot_leaf(n):
    total = 0
    for i in range(n):                       # PYD_LEAF_LINE
        total += i * i
    return total


def pyd_recurse(depth, n):
    if depth == 0:
        return pyd_hot_leaf(n)               # PYD_RECURSE_BASE_LINE
    return pyd_recurse(depth - 1, n)         # PYD_RECURSE_LINE


def pyd_key_callback(x):
    total = 0
    for i in range(300):                     # PYD_KEY_LINE
        total += i ^ x
    return total


def pyd_sort_with_c(items):
    return sorted(items, key=pyd_key_callback)   # PYD_SORT_LINE


def pyd_worker_loop(stop):
    while not stop.is_set():
        pyd_recurse(2, 2000)                 # PYD_WORKER_LINE


def pyd_main(seconds):
    stop = threading.Event()
    t = threading.Thread(target=pyd_worker_loop, args=(stop,), name="pyd-worker")
    t.start()
    end = time.process_time() + seconds
    while time.process_time() < end:
        pyd_recurse(5, 20000)                # PYD_MAIN_RECURSE_LINE
        pyd_sort_with_c(list(range(200)))    # PYD_MAIN_SORT_LINE
    stop.set()
    t.join()


if __name__ == "__main__":
    pyd_main(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
    print("py_demo: cpu %.3f s" % time.process_time())
