"""The sum of each column: the rows are split into bands, each thread sums its bands' rows into a partial row (read
and written at unit stride, whole rows streamed in order), then the partial rows are added up."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

BANDS = 16  # partial rows: enough for the threads to share out evenly, few enough to add up at once


@njit(parallel=True, fastmath=True)
def column_sum(x, partial, out):
    rows, cols = x.shape
    for band in prange(BANDS):
        acc = partial[band]
        for j in range(cols):
            acc[j] = np.float32(0.0)
        for i in range(band * rows // BANDS, (band + 1) * rows // BANDS):
            for j in range(cols):
                acc[j] += x[i, j]
    for j in prange(cols):
        total = np.float32(0.0)
        for band in range(BANDS):
            total += partial[band, j]
        out[j] = total


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        partial = np.empty((BANDS, x.shape[1]), dtype=np.float32)
        out = np.empty(x.shape[1], dtype=np.float32)
        column_sum(x.contiguous().numpy(), partial, out)
        return torch.from_numpy(out)
