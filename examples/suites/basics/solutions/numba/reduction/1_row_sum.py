"""The sum of each row: one row per iteration of a parallel loop, the row summed in vector lanes."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def row_sum(x, out):
    for i in prange(x.shape[0]):
        total = np.float32(0.0)
        for j in range(x.shape[1]):
            total += x[i, j]
        out[i] = total


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape[0], dtype=np.float32)
        row_sum(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
