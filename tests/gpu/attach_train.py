# SPDX-License-Identifier: MIT
"""The training loop tests/gpu/attach.sh attaches xpu-record -p to: the
layers of torch_demo.py (matmuls, elementwise ops, a backward pass from
named Python functions), seeded, for a fixed number of steps, started
without xpu-record. Each step ends with a synchronize and is logged with
its wall-clock end, its time and the main thread's CPU time up to the
synchronize (what launching the step cost it), so the check can tell the steps before,
inside and after an attach window apart.

  python3 attach_train.py (--steps N | --seconds S) --log FILE [--dim D]

--seconds: as many steps as S seconds take (the reference run: the
attached run then does exactly that many, --steps).

stdout: "attach_train: ready PID" after 20 warm-up steps, then at the end
"attach_train: done steps N loss X" (X printed exactly: the same seed
without any attach must give the same loss).

--cupti-bare LIB --bare-steps A B: the control run of attach.sh: LIB
(tests/gpu/cupti_bare.c) loaded with ctypes, its bare CUPTI client started
before step A and stopped (finalized) before step B; prints
"attach_train: bare records N finalized F" at the end.

--torch-profiler-steps A B: torch.profiler with CUDA activity only (no
stacks, nothing exported: the CUPTI floor any CUPTI-based tool pays) from
step A to step B, for the window's step time against it."""
import argparse
import ctypes
import os
import time

import torch


def forward_step(model, x):
    h = x
    for w in model:
        h = torch.relu(h @ w) * 0.5 + 0.1
    return h.square().mean()


def backward_step(loss, model, lr=1e-3):
    loss.backward()
    with torch.no_grad():
        for w in model:
            w -= lr * w.grad
            w.grad = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--dim", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--log", required=True)
    ap.add_argument("--cupti-bare")
    ap.add_argument("--bare-steps", type=int, nargs=2, default=(-1, -1))
    ap.add_argument("--torch-profiler-steps", type=int, nargs=2, default=(-1, -1))
    a = ap.parse_args()
    bare = ctypes.CDLL(a.cupti_bare) if a.cupti_bare else None
    if bare:
        bare.bare_records.restype = ctypes.c_ulong
    torch.manual_seed(0)
    torch.backends.cudnn.deterministic = True
    dev = torch.device("cuda")
    model = [(torch.randn(a.dim, a.dim, device=dev) / a.dim ** 0.5).requires_grad_()
             for _ in range(a.layers)]
    x = torch.randn(512, a.dim, device=dev)
    loss = None
    end = time.perf_counter() + a.seconds if a.seconds else None
    i = 0
    with open(a.log, "w") as log:
        while (i < a.steps) if end is None else (time.perf_counter() < end or i < 30):
            if bare and i == a.bare_steps[0] and bare.bare_start() != 0:
                raise SystemExit("attach_train: bare_start failed")
            if bare and i == a.bare_steps[1]:
                bare.bare_stop()
            if i == a.torch_profiler_steps[0]:	# CUDA activity only: the CUPTI floor
                prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
                prof.__enter__()
            if i == a.torch_profiler_steps[1]:
                prof.__exit__(None, None, None)
                print(f"attach_train: torch.profiler events {len(prof.events())}", flush=True)
            t0 = time.perf_counter()
            c0 = time.thread_time()
            loss = forward_step(model, x)
            backward_step(loss, model)
            c1 = time.thread_time()	# the launch path's CPU, before the sync's wait
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            log.write(f"{i} {time.time():.6f} {(t1 - t0) * 1e3:.4f} {(c1 - c0) * 1e3:.4f}\n")
            if i == 19:
                log.flush()
                print(f"attach_train: ready {os.getpid()}", flush=True)
            i += 1
    if bare:
        print(f"attach_train: bare records {bare.bare_records()} finalized {bare.bare_finalized()}",
              flush=True)
    print(f"attach_train: done steps {i} loss {loss.item()!r}", flush=True)


if __name__ == "__main__":
    main()
