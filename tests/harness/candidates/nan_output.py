"""Wrong: divides by zero where the input is negative."""

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        a = x.numpy()
        with np.errstate(all="ignore"):
            y = np.where(a > 0, a * np.float32(self.scale), np.float32(0) / np.float32(0))
        return torch.from_numpy(y.astype(np.float32))
