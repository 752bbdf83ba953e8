"""RMSNorm: per row, the mean square, then x / sqrt(mean square + eps) * weight."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def rmsnorm(x, weight, eps, out):
    inverse_n = np.float32(1.0) / np.float32(x.shape[1])
    for i in prange(x.shape[0]):
        squares = np.float32(0.0)
        for j in range(x.shape[1]):
            squares += x[i, j] * x[i, j]
        scale = np.float32(1.0) / math.sqrt(squares * inverse_n + eps)
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] * scale * weight[j]


class ModelNew(nn.Module):
    def __init__(self, cols: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        rmsnorm(x.contiguous().numpy(), self.weight.detach().numpy(), np.float32(self.eps), out)
        return torch.from_numpy(out)
