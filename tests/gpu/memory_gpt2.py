# SPDX-License-Identifier: MIT
"""HuggingFace GPT-2 training with torch's own account of its memory, for
tests/gpu/memory_gpt2.sh and check_memory.py: the parameters are made on
MODEL_LINE, the optimizer's state on STEP_LINE, the activations on
FORWARD_LINE (their lines named below, found by check_memory.py in this
file), and at the end the program prints one JSON line: the peak and
reserved bytes, the parameter bytes (each tensor rounded as the caching
allocator rounds it), every live block of torch.cuda.memory._snapshot()
and the monotonic clock then (the recording's clock). It then sleeps a
little, so that the live set at that moment is apart from the
interpreter's teardown.

  python3 memory_gpt2.py [STEPS]          train STEPS steps (default 6)
  python3 memory_gpt2.py --until FILE     train until FILE exists (an attach's
                                          target): "ready" once 3 steps ran,
                                          with memory_reserved() then
"""
import json
import os
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def rounded(nbytes):
    """The caching allocator's block size for a request of nbytes."""
    return max(512, (nbytes + 511) // 512 * 512)


def build():
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=256)
    model = GPT2LMHeadModel(cfg).cuda()  # MODEL_LINE
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, cfg.vocab_size, (8, 256), device="cuda")
    return model, opt, x


def step(model, opt, x):
    loss = model(x, labels=x).loss  # FORWARD_LINE
    loss.backward()  # BACKWARD_LINE
    opt.step()  # STEP_LINE
    opt.zero_grad(set_to_none=True)
    return loss


def live_blocks():
    snap = torch.cuda.memory._snapshot()
    return [{"address": b["address"], "size": b["size"],
             "requested": b.get("requested_size", b["size"])}
            for seg in snap["segments"] for b in seg["blocks"]
            if b["state"] == "active_allocated"]


def main():
    until = None
    steps = 6
    if len(sys.argv) > 2 and sys.argv[1] == "--until":
        until = sys.argv[2]
    elif len(sys.argv) > 1:
        steps = int(sys.argv[1])
    model, opt, x = build()
    n = 0
    while until is not None or n < steps:
        step(model, opt, x)
        n += 1
        if until is not None and n == 3:
            torch.cuda.synchronize()
            print("ready %d" % torch.cuda.memory_reserved(), flush=True)
        if until is not None and n > 3 and os.path.exists(until):
            break
    torch.cuda.synchronize()
    params = {p.data_ptr(): rounded(p.numel() * p.element_size())
              for p in list(model.parameters()) + list(model.buffers()) if p.is_cuda}
    print(json.dumps({
        "steps": n,
        "param_bytes": sum(params.values()),
        "max_allocated": torch.cuda.max_memory_allocated(),
        "max_reserved": torch.cuda.max_memory_reserved(),
        "allocated_end": torch.cuda.memory_allocated(),
        "live_end": live_blocks(),
        "mono_ns": time.monotonic_ns()}), flush=True)
    time.sleep(0.5)


if __name__ == "__main__":
    main()
