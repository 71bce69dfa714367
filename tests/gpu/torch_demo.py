# SPDX-License-Identifier: MIT
"""Small PyTorch training loop for tests/gpu/run.sh: matmuls, elementwise
ops and a backward pass, from named functions so the profile shows paths.

  python3 torch_demo.py [--steps N] [--profiler] [--nvtx]

--profiler runs the loop inside torch.profiler, which holds CUPTI: under
xpu-record this must give a plain "subscriber conflict" warning, CPU samples,
and an unharmed application (exit 0).

--nvtx adds NVTX ranges (torch.cuda.nvtx): each step in a range "step"
(`with torch.cuda.nvtx.range`), inside it forward_step in "forward" and
backward_step in "backward" (range_push/range_pop, pushed in train()), the
whole loop in a start/end range "train" when torch has range_start, and a
mark "checkpoint" every 10 steps. The last line says what was emitted:
"NVTX push_pop N start_end N marks N", for check.py nvtx."""
import argparse
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


def train(steps, dim=1024, layers=4):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = [(torch.randn(dim, dim, device=dev) / dim ** 0.5).requires_grad_() for _ in range(layers)]
    x = torch.randn(256, dim, device=dev)
    for _ in range(steps):
        loss = forward_step(model, x)
        backward_step(loss, model)
    torch.cuda.synchronize()
    return loss.item()


def train_nvtx(steps, dim=1024, layers=4):
    """train() with NVTX ranges; CUDA is up (cuInit ran) before the first one,
    as xpu-record's library subscribes to CUPTI in cuInit."""
    nvtx = torch.cuda.nvtx
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = [(torch.randn(dim, dim, device=dev) / dim ** 0.5).requires_grad_() for _ in range(layers)]
    x = torch.randn(256, dim, device=dev)
    started = nvtx.range_start("train") if hasattr(nvtx, "range_start") else None
    pushes = marks = 0
    for i in range(steps):
        with nvtx.range("step"):
            nvtx.range_push("forward")
            loss = forward_step(model, x)
            nvtx.range_pop()
            nvtx.range_push("backward")
            backward_step(loss, model)
            nvtx.range_pop()
        pushes += 3
        if i % 10 == 0:
            nvtx.mark("checkpoint")
            marks += 1
    torch.cuda.synchronize()
    if started is not None:
        nvtx.range_end(started)
    print(f"NVTX push_pop {pushes} start_end {0 if started is None else 1} marks {marks}")
    return loss.item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--profiler", action="store_true")
    ap.add_argument("--nvtx", action="store_true")
    args = ap.parse_args()
    t0 = time.monotonic()
    if args.nvtx:
        loss = train_nvtx(args.steps)
    elif args.profiler:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            loss = train(args.steps)
    else:
        loss = train(args.steps)
    print(f"TORCH steps {args.steps} loss {loss:.6f} wall_s {time.monotonic() - t0:.3f}")


if __name__ == "__main__":
    main()
