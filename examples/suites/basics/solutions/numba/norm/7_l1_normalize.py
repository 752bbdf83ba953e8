"""Each row divided by the sum of its absolute values."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def l1_normalize(x, out):
    for i in prange(x.shape[0]):
        total = np.float32(0.0)
        for j in range(x.shape[1]):
            total += abs(x[i, j])
        inverse = np.float32(1.0) / total
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] * inverse


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        l1_normalize(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
