# SPDX-License-Identifier: MIT
"""Small 2-rank DistributedDataParallel training loop for tests/gpu/run.sh,
run under torchrun (which sets RANK, LOCAL_RANK, WORLD_SIZE in each worker,
not in itself):

  torchrun --nproc_per_node=2 ddp_demo.py [--steps N] [--dim D]

Each rank uses the GPU of its LOCAL_RANK (torch.cuda.set_device), so the
ranks' kernels run on devices 0 and 1; DDP all-reduces the gradients with
NCCL every step (ncclDevKernel_AllReduce_* kernels) from the backward pass.
The work is in named functions so the profile shows paths: forward_step,
backward_step (whose autograd hooks launch the all-reduce), optimizer_step.
Each rank prints "DDP rank R local L world W device D pid P" at the start and
"DONE rank R steps N" at the end, for check_ddp.py."""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def make_model(dim, layers):
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(dim, dim), torch.nn.ReLU()]
    return torch.nn.Sequential(*mods)


def forward_step(model, x, y):
    return torch.nn.functional.mse_loss(model(x), y)


def backward_step(loss):
    loss.backward()		# DDP's hooks all-reduce the gradients here


def optimizer_step(opt):
    opt.step()
    opt.zero_grad(set_to_none=True)


def train(steps, dim, layers, rank, device):
    torch.manual_seed(rank)
    model = DDP(make_model(dim, layers).to(device), device_ids=[device.index])
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256, dim, device=device)
    y = torch.randn(256, dim, device=device)
    for _ in range(steps):
        loss = forward_step(model, x, y)
        backward_step(loss)
        optimizer_step(opt)
    torch.cuda.synchronize(device)
    return float(loss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    a = ap.parse_args()

    rank = int(os.environ["RANK"])
    local = int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    try:	# device_id (torch 2.3+) binds the communicator to the device at once
        dist.init_process_group("nccl", device_id=device)
    except TypeError:
        dist.init_process_group("nccl")
    print(f"DDP rank {rank} local {local} world {world} device {device.index} pid {os.getpid()}",
          flush=True)
    t0 = time.time()
    loss = train(a.steps, a.dim, a.layers, rank, device)
    dist.barrier()
    print(f"DONE rank {rank} steps {a.steps} loss {loss:.4f} {time.time() - t0:.2f}s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
