# SPDX-License-Identifier: MIT
"""tests/shell/e2e_python_start.sh: Python frames from a process's first
milliseconds. The interpreter starts and computes at once (pyf_main), forks
three children that compute from their first instruction (pyf_child, as
multiprocessing's fork workers and PyTorch's DataLoader workers do), then
forks a child that execs a native program (argv[1], cpu_demo): that one
must get no Python frames once it is the new program. The times are CPU
time (the native program's too: cpu_demo --cpu), so each part gets its
samples however busy the machine is.
Usage: py_fork.py NATIVE_PROGRAM [SECONDS]"""
import os
import sys
import time


def pyf_spin(seconds):
    """on the CPU for SECONDS of this process's CPU time (the clock is a
    system call: read every 10000 rounds)"""
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        for _ in range(10000):
            n += 1
    return n


def pyf_child():
    pyf_spin(0.2)       # the CPU time each got of 0.3 s on 2 idle cores


def pyf_main(native, seconds):
    print("py_fork: pid", os.getpid(), flush=True)
    pyf_spin(0.2)
    kids = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            pyf_child()
            os._exit(0)
        kids.append(pid)
    print("py_fork: children", ",".join(map(str, kids)), flush=True)
    for pid in kids:
        os.waitpid(pid, 0)
    pid = os.fork()
    if pid == 0:
        os.execv(native, [native, "--no-child", "--no-thread", "--cpu", str(seconds)])
    os.waitpid(pid, 0)
    print("py_fork: done")


if __name__ == "__main__":
    pyf_main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.5)
