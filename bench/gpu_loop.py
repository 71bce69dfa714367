#!/usr/bin/env python3
"""PyTorch loops for bench/gpu_overhead.sh (GPU machine).

  gpu_loop.py launch [--iters N]   launch-bound: tiny tensors, two kernels
                                   per iteration, the CPU is the bottleneck
  gpu_loop.py gpu [--iters N]      GPU-bound: 8192^3 bf16 matmuls
  gpu_loop.py gpt2 [--iters N]     a real model's training steps: HuggingFace
                                   GPT-2 (bench/gpt2_train.py's, 6 layers,
                                   batch 8, 256 tokens), AdamW; the count
                                   printed is steps, not kernels
  gpu_loop.py decode [--iters N]   a serving loop: the same GPT-2 model in
                                   eval mode generating N tokens one at a
                                   time with its KV cache (batch 8), greedy;
                                   the count printed is tokens
  --profiler                       run the loop inside
                                   torch.profiler.profile(with_stack=True) and
                                   export stacks, as a user of it would
  --profiler-cuda                  inside torch.profiler with CUDA activity
                                   only, no stacks, nothing exported: the
                                   CUPTI floor any CUPTI-based tool pays

Prints "LOOP <seconds> <kernels> <cpu seconds>" (time inside the loop,
synchronized, and the CPU time the launching thread spent in it: what a
launch costs the thread that makes it, apart from a noisy host's stolen
time) and, with --profiler, "EXPORT <seconds>".
"""
import argparse
import os
import sys
import tempfile
import time

import torch


def launch_bound(iters):
    x = torch.ones(256, device="cuda")
    for _ in range(iters):
        x = x * 1.0001
        x = x + 0.0001
    return 2 * iters


def gpu_bound(iters):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(iters):
        c = a @ b
    del c
    return iters


_gpt2 = {}


def gpt2_steps(iters):
    """GPT-2 training steps; the model and optimizer are made at the first
    call (the warm-up), as bench/gpt2_train.py makes them."""
    if not _gpt2:
        from transformers import GPT2Config, GPT2LMHeadModel
        torch.manual_seed(0)
        cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=256)
        model = GPT2LMHeadModel(cfg).cuda()
        _gpt2["model"] = model
        _gpt2["opt"] = torch.optim.AdamW(model.parameters(), lr=1e-4)
        _gpt2["x"] = torch.randint(0, cfg.vocab_size, (8, 256), device="cuda")
    model, opt, x = _gpt2["model"], _gpt2["opt"], _gpt2["x"]
    for _ in range(iters):
        model(x, labels=x).loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return iters


_dec = {}


def decode_tokens(iters):
    """Greedy decoding, one token per forward with the KV cache: the small
    allocations of a serving loop (the cache grows by a step each token).
    The model is made at the first call (the warm-up)."""
    if not _dec:
        from transformers import GPT2Config, GPT2LMHeadModel
        torch.manual_seed(0)
        cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=1024)
        _dec["model"] = GPT2LMHeadModel(cfg).cuda().eval()
        _dec["x"] = torch.randint(0, cfg.vocab_size, (8, 32), device="cuda")
    model, tok = _dec["model"], _dec["x"]
    with torch.no_grad():
        out = model(tok, use_cache=True)
        past = out.past_key_values
        for _ in range(iters):
            tok = out.logits[:, -1:].argmax(-1)
            out = model(tok, past_key_values=past, use_cache=True)
            past = out.past_key_values
    return iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["launch", "gpu", "gpt2", "decode"])
    ap.add_argument("--iters", type=int, default=0)
    ap.add_argument("--profiler", action="store_true")
    ap.add_argument("--profiler-cuda", action="store_true")
    args = ap.parse_args()
    fn = {"launch": launch_bound, "gpu": gpu_bound, "gpt2": gpt2_steps,
          "decode": decode_tokens}[args.mode]
    # launch: 2 kernels per iteration, 120k launches
    iters = args.iters or {"launch": 60000, "gpu": 600, "gpt2": 40, "decode": 512}[args.mode]

    # warm-up: CUDA context, cuBLAS, caches (GPT-2: the model, 3 steps)
    fn({"gpt2": 3, "decode": 16}.get(args.mode, min(iters, 200)))
    torch.cuda.synchronize()

    prof = None
    if args.profiler_cuda:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    elif args.profiler:
        prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU,
                        torch.profiler.ProfilerActivity.CUDA],
            with_stack=True)
        prof.__enter__()
    t0, c0 = time.perf_counter(), time.thread_time()
    n = fn(iters)
    torch.cuda.synchronize()
    t1, c1 = time.perf_counter(), time.thread_time()
    if prof is not None and args.profiler_cuda:
        prof.__exit__(None, None, None)
    elif prof is not None:
        prof.__exit__(None, None, None)
        e0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            prof.export_stacks(os.path.join(d, "stacks.txt"), "self_cuda_time_total")
        print(f"EXPORT {time.perf_counter() - e0:.3f}")
    print(f"LOOP {t1 - t0:.4f} {n} {c1 - c0:.4f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
