"""The largest value of each row."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def row_max(x, out):
    for i in prange(x.shape[0]):
        best = x[i, 0]
        for j in range(1, x.shape[1]):
            best = max(best, x[i, j])
        out[i] = best


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape[0], dtype=np.float32)
        row_max(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
