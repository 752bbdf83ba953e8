"""Correct for wide_relu: relu(x) * 2 with NumPy."""

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(2.0))
