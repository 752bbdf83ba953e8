"""Correct: x[idx] * 2 with NumPy; like the reference, it cannot index past x's rows."""

import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(x.numpy()[idx.numpy()] * np.float32(2.0))
