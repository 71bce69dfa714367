#!/usr/bin/env python3
"""A HuggingFace GPT-2 training loop (6 layers, random weights: no download),
the real PyTorch program bench/gpu_report_speed.sh records: python3
gpt2_train.py [STEPS] [BATCH] [SEQ]."""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def train(steps, batch, seq):
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=max(seq, 128))
    model = GPT2LMHeadModel(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda")
    loss = None
    for _ in range(steps):
        loss = model(x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    print(f"gpt2: {steps} steps, loss {loss.item():.3f}")


if __name__ == "__main__":
    a = [int(v) for v in sys.argv[1:]]
    train(a[0] if a else 20, a[1] if len(a) > 1 else 8, a[2] if len(a) > 2 else 256)
