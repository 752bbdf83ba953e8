"""A residual add and RMSNorm fused: the sum is kept in the output and normalised in place."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def add_rmsnorm(x, residual, weight, eps, out):
    inverse_n = np.float32(1.0) / np.float32(x.shape[1])
    for i in prange(x.shape[0]):
        squares = np.float32(0.0)
        for j in range(x.shape[1]):
            h = x[i, j] + residual[i, j]
            out[i, j] = h
            squares += h * h
        scale = np.float32(1.0) / math.sqrt(squares * inverse_n + eps)
        for j in range(x.shape[1]):
            out[i, j] = out[i, j] * scale * weight[j]


class ModelNew(nn.Module):
    def __init__(self, cols: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(cols))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        add_rmsnorm(x.contiguous().numpy(), residual.contiguous().numpy(), self.weight.detach().numpy(),
                    np.float32(self.eps), out)
        return torch.from_numpy(out)
