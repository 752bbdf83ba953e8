"""The sum of squares of each row, scaled, without materialising x * x."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def sum_of_squares(x, scale, out):
    for i in prange(x.shape[0]):
        total = np.float32(0.0)
        for j in range(x.shape[1]):
            total += x[i, j] * x[i, j]
        out[i] = total * scale


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape[0], dtype=np.float32)
        sum_of_squares(x.contiguous().numpy(), np.float32(self.scale), out)
        return torch.from_numpy(out)
