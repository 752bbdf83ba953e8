"""(a + b) * c, reading each input once and writing the output once."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def add_mul(a, b, c, out):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = (a[i, j] + b[i, j]) * c[i, j]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        out = np.empty(a.shape, dtype=np.float32)
        add_mul(a.contiguous().numpy(), b.contiguous().numpy(), c.contiguous().numpy(), out)
        return torch.from_numpy(out)
