"""Correct: tanh(x) + 1 with NumPy, at any shape."""

import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.tanh(x.numpy()) + np.float32(1.0))
