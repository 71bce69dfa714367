# SPDX-License-Identifier: MIT
"""tests/gpu/dataloader.sh: a training loop fed by a torch DataLoader with
fork workers (Linux's default) whose dataset computes in Python from the
worker's first instruction (dl_make_item), as augmentation code does.
Prints "dataloader_demo: worker PID" per worker and "dataloader_demo: done"."""
import os
import sys

import torch
from torch.utils.data import DataLoader, Dataset


def dl_make_item(i):
    acc = 0
    for k in range(20000):
        acc = (acc * 31 + k + i) & 0xFFFFFFFF
    return torch.full((256,), float(acc % 1000) / 1000.0)


def dl_worker_note(_):
    print("dataloader_demo: worker", os.getpid(), flush=True)


class DlDataset(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        return dl_make_item(i)


def dl_train(steps):
    dev = torch.device("cuda")
    model = torch.nn.Linear(256, 256).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(DlDataset(), batch_size=16, num_workers=2, worker_init_fn=dl_worker_note,
                        multiprocessing_context="fork", persistent_workers=False)
    n = 0
    for batch in loader:
        loss = model(batch.to(dev)).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        n += 1
        if n >= steps:
            break
    torch.cuda.synchronize()


if __name__ == "__main__":
    dl_train(int(sys.argv[1]) if len(sys.argv) > 1 else 32)
    print("dataloader_demo: done", flush=True)
