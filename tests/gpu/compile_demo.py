# SPDX-License-Identifier: MIT
"""torch.compile(mode="reduce-overhead") training-free loop (CUDA graphs):
the recording whose GPU_SYNC records came out 86% unmatched before the
event/stream queries were marked (issue 9). Run by hand or by the GPU
session: xpu-record -- python3 compile_demo.py; xpu-report --header shows
the sync line of "# gpu:" and the "# sync waits" section. Prints DONE."""
import torch


def main():
    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, 512)).cuda()
    step = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(64, 512, device="cuda")
    with torch.no_grad():
        for _ in range(200):
            y = step(x)
            x = y.detach().tanh()
    torch.cuda.synchronize()
    print("DONE", float(x.sum()))


if __name__ == "__main__":
    main()
