# SPDX-License-Identifier: MIT
"""Small PyTorch training loop for tests/gpu/run.sh: matmuls, elementwise
ops and a backward pass, from named functions so the profile shows paths.

  python3 torch_demo.py [--steps N] [--profiler]

--profiler runs the loop inside torch.profiler, which holds CUPTI: under
xpu-record this must give a plain "subscriber conflict" warning, CPU samples,
and an unharmed application (exit 0)."""
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--profiler", action="store_true")
    args = ap.parse_args()
    t0 = time.monotonic()
    if args.profiler:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            loss = train(args.steps)
    else:
        loss = train(args.steps)
    print(f"TORCH steps {args.steps} loss {loss:.6f} wall_s {time.monotonic() - t0:.3f}")


if __name__ == "__main__":
    main()
