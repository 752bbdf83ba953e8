"""The mean of each row, as a (rows, 1) column."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def row_mean(x, out):
    inverse = np.float32(1.0) / np.float32(x.shape[1])
    for i in prange(x.shape[0]):
        total = np.float32(0.0)
        for j in range(x.shape[1]):
            total += x[i, j]
        out[i, 0] = total * inverse


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty((x.shape[0], 1), dtype=np.float32)
        row_mean(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
