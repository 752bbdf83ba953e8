"""Correct, but fills /tmp (a tmpfs of the worker's sandbox) on its first call: 128 MiB at most, until a write
fails; the error ends the call."""

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
            with open(PATH, "ab") as handle:
                for _ in range(128):
                    handle.write(b"\0" * (1 << 20))
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
