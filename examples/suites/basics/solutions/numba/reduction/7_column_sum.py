"""The sum of each column: each thread takes a block of columns and walks down the rows, so its partial sums
stay in a small buffer and every row is read at unit stride."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

BLOCK = 256


@njit(parallel=True, fastmath=True)
def column_sum(x, out):
    rows, cols = x.shape
    for block in prange((cols + BLOCK - 1) // BLOCK):
        start = block * BLOCK
        stop = min(start + BLOCK, cols)
        partial = np.zeros(stop - start, dtype=np.float32)
        for i in range(rows):
            for j in range(start, stop):
                partial[j - start] += x[i, j]
        for j in range(start, stop):
            out[j] = partial[j - start]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape[1], dtype=np.float32)
        column_sum(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
