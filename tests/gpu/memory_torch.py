# SPDX-License-Identifier: MIT
"""PyTorch memory with known holders, for tests/gpu/memory.sh: named
functions keep tensors of known sizes, one frees a temporary at the peak,
one leaks, and the program prints what torch itself says as one JSON line
(the ground truth check_memory.py compares xpu-report --gpu-memory with),
with the monotonic clock (the recording's) at its snapshot of the live
blocks; it sleeps 0.5 s after it, so that the live set at the end of the
work is apart from the interpreter's teardown (which frees everything).

  python3 memory_torch.py            # the holders, then the JSON line
  python3 memory_torch.py --oom      # grow until out of memory, exit 3

Sizes are whole MiB multiples of 2 MiB, so that the caching allocator's
rounding (512 B, 2 MiB for large blocks) adds nothing. The peak is inside
make_temporary(): every holder plus the temporary are live then.

--oom: allocates 1 GiB tensors in grow() until the allocator raises
torch.OutOfMemoryError, prints "oom after N GiB" and exits 3 (the status
check_memory.py expects unchanged under xpu-record --trigger oom)."""
import argparse
import json
import sys
import time

import torch

MiB = 1 << 20
SIZES = {"keep_params": 64 * MiB, "keep_activations": 32 * MiB,
         "leak_cache": 16 * MiB, "make_temporary": 128 * MiB}
kept = []
leaked = []


def tensor(nbytes):
    return torch.empty(nbytes // 4, dtype=torch.float32, device="cuda")


def keep_params():
    kept.append(tensor(SIZES["keep_params"]))


def keep_activations():
    kept.append(tensor(SIZES["keep_activations"]))


def leak_cache():
    leaked.append(tensor(SIZES["leak_cache"]))


def make_temporary():
    t = tensor(SIZES["make_temporary"])
    t.fill_(1.0)
    torch.cuda.synchronize()
    peak = torch.cuda.memory_allocated()
    del t
    return peak


def holders():
    torch.cuda.init()
    torch.zeros(1, device="cuda")          # CUDA context and allocator up
    base = torch.cuda.memory_allocated()
    keep_params()
    keep_activations()
    leak_cache()
    at_peak = make_temporary()
    kept.pop()                             # keep_activations' tensor freed
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    blocks = [{"address": b["address"], "size": b["size"],
              "requested": b.get("requested_size", b["size"])}
              for seg in snap["segments"] for b in seg["blocks"]
              if b["state"] == "active_allocated"]
    print(json.dumps({
        "sizes": SIZES, "base": base, "at_peak": at_peak,
        "max_allocated": torch.cuda.max_memory_allocated(),
        "max_reserved": torch.cuda.max_memory_reserved(),
        "reserved": torch.cuda.memory_reserved(),
        "allocated_end": torch.cuda.memory_allocated(),
        "live_end": blocks, "mono_ns": time.monotonic_ns()}), flush=True)
    time.sleep(0.5)                        # the end of the work, apart from the teardown


held = []


def grow():
    while True:
        held.append(tensor(1 << 30))


def oom():
    torch.zeros(1, device="cuda")
    try:
        grow()
    except torch.OutOfMemoryError:
        print("oom after %d GiB" % len(held), flush=True)
        sys.exit(3)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--oom", action="store_true")
    a = ap.parse_args()
    oom() if a.oom else holders()
