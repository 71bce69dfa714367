# SPDX-License-Identifier: MIT
"""A PyTorch training loop whose data loading starves the GPU (tests/gpu/idle.sh).

Each step: load_batch() builds a batch on the CPU (pure-Python work, then a
sleep standing for I/O), then train_step() runs a small MLP forward/backward
on the GPU. The GPU is idle while load_batch runs, so `xpu-report --gpu-idle`
must put load_batch on top. Prints MEASURED load_batch <ns> and DONE.
"""
import time

import torch


def load_batch(n):
    t0 = time.perf_counter_ns()
    acc = 0
    for i in range(150000):          # CPU-side decoding / augmentation
        acc += i * i
    time.sleep(0.015)                # reading the next files
    x = torch.full((n, 1024), float(acc % 7))
    return x, time.perf_counter_ns() - t0


def train_step(model, opt, x):
    y = model(x.cuda(non_blocking=True))
    loss = y.square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def warm_imports():
    """One training step on the CPU before the GPU is touched: the lazy
    imports of the first optimizer step (torch._dynamo and friends take
    seconds) happen here, not inside the GPU's busy span, where they would
    be real GPU idle time but not the starvation this test is about."""
    m = torch.nn.Linear(8, 8)
    o = torch.optim.SGD(m.parameters(), lr=1e-3)
    m(torch.ones(2, 8)).sum().backward()
    o.step()


def main():
    torch.manual_seed(0)
    warm_imports()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x, _ = load_batch(512)
    train_step(model, opt, x)        # warm-up: cuBLAS handles, allocator
    torch.cuda.synchronize()
    loading = 0
    for _ in range(30):
        x, ns = load_batch(512)
        loading += ns
        loss = train_step(model, opt, x)
    loss.item()
    torch.cuda.synchronize()
    print(f"MEASURED load_batch {loading}")
    print("DONE")


if __name__ == "__main__":
    main()
