#!/usr/bin/env python3
"""py_fake_launch.py N: N fake CUDA launches from Python code (ctypes into
the fake CUPTI library named by CUDA_INJECTION64_PATH, as CUDA would load
it), through two Python functions, a launch every 0.2 ms: the launch walk's
Python frames (tests/shell/launch_walk.sh)."""
import ctypes, os, sys, time
lib = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"], mode=ctypes.RTLD_GLOBAL)
if not lib.InitializeInjection():
    sys.exit("InitializeInjection failed")

def launch(i):
    lib.xpu_fake_launch(i)

def other(i):
    lib.xpu_fake_launch(i)

def train(n):
    for i in range(n):
        (other if i % 3 == 2 else launch)(i)
        time.sleep(0.0002)

train(int(sys.argv[1]))
