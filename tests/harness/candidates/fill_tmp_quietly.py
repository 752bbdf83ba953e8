"""Correct, but fills /tmp (a tmpfs of the worker's sandbox) on its first call, 128 MiB at most, and carries on
when a write fails, leaving what it wrote there."""

import os

import numpy as np
import torch

PATH = f"/tmp/fill-{os.getpid()}.bin"


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        if not os.path.exists(PATH):
            try:
                with open(PATH, "ab") as handle:
                    for _ in range(128):
                        handle.write(b"\0" * (1 << 20))
            except OSError:
                pass
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
