"""The exact GELU, 0.5 x (1 + erf(x / sqrt(2))), per element."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


@njit(parallel=True, fastmath=True)
def gelu(x, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j]
            out[i, j] = np.float32(0.5) * v * (np.float32(1.0) + math.erf(v * INV_SQRT2))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        gelu(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
