# SPDX-License-Identifier: MIT
"""tests/shell/e2e_python_offcpu.sh: a Python function that blocks (nap,
time.sleep) beside one that computes (crunch), called from main."""
import time


def nap(n):
    for _ in range(n):
        time.sleep(0.02)


def crunch(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def main():
    crunch(2000000)
    nap(25)


main()
