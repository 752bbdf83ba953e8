"""Correct, but takes 2 GiB of host memory on its first call (and gives it back): more than a worker held to
1 GiB may have."""

import numpy as np
import torch

taken = []


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        if not taken:
            taken.append(True)
            block = np.ones(1 << 29, dtype=np.float32)  # 2 GiB, every page written
            del block
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
