#!/usr/bin/env python3
"""py_fake_autograd.py STEPS: a training loop on fake libraries, for the
autograd probes (tests/shell/autograd_fake.sh). Each step's forward pass
makes autograd nodes from Python code (ctypes into the fake libtorch_cpu.so
named by XPU_FAKE_TORCH): two in linear(), one in attention(), and one
whose layout does not check in bad_op() between them; its backward pass runs them newest
first on a native thread of the fake library, each launching one fake
kernel (the fake CUPTI library of CUDA_INJECTION64_PATH) from inside
Engine::evaluate_function. A report that puts backward work under the
forward code shows linear() with twice attention()'s GPU time, and
bad_op()'s under no forward code (not under the node run before it)."""
import ctypes, os, sys, time

cupti = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"], mode=ctypes.RTLD_GLOBAL)
# XPU_FAKE_NO_GPU=1: run without a recorder to connect to (xpu-record -p
# attaches later, CPU samples only)
if not cupti.InitializeInjection() and not os.environ.get("XPU_FAKE_NO_GPU"):
    sys.exit("InitializeInjection failed")
torch = ctypes.CDLL(os.environ["XPU_FAKE_TORCH"])
torch.xpu_fake_torch_op.restype = ctypes.c_void_p
torch.xpu_fake_torch_bad_op.restype = ctypes.c_void_p
LAUNCH = ctypes.cast(cupti.xpu_fake_launch, ctypes.c_void_p)
time.sleep(0.3)  # as a real import is long done before training: the probes are on


def linear(nodes):
    nodes.append(torch.xpu_fake_torch_op())


def attention(nodes):
    nodes.append(torch.xpu_fake_torch_op())


def bad_op(nodes):
    nodes.append(torch.xpu_fake_torch_bad_op())


def forward(nodes):
    linear(nodes)
    bad_op(nodes)
    attention(nodes)
    linear(nodes)


def train(steps):
    for _ in range(steps):
        nodes = []
        forward(nodes)
        arr = (ctypes.c_void_p * len(nodes))(*nodes)
        torch.xpu_fake_torch_backward(arr, len(nodes), LAUNCH)
        time.sleep(0.001)


train(int(sys.argv[1]))
print("py_fake_autograd: done")
