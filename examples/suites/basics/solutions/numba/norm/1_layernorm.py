"""LayerNorm over the last dimension: per row, the mean and the variance (two passes, the row in cache), then the
normalised row times the weight plus the bias."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def layernorm(x, weight, bias, eps, out):
    inverse_n = np.float32(1.0) / np.float32(x.shape[1])
    for i in prange(x.shape[0]):
        total = np.float32(0.0)
        for j in range(x.shape[1]):
            total += x[i, j]
        mean = total * inverse_n
        squares = np.float32(0.0)
        for j in range(x.shape[1]):
            d = x[i, j] - mean
            squares += d * d
        scale = np.float32(1.0) / math.sqrt(squares * inverse_n + eps)
        for j in range(x.shape[1]):
            out[i, j] = (x[i, j] - mean) * scale * weight[j] + bias[j]


class ModelNew(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.norm = nn.LayerNorm(cols)  # same names as the reference's, so its weight and bias carry over

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        layernorm(x.contiguous().numpy(), self.norm.weight.detach().numpy(), self.norm.bias.detach().numpy(),
                  np.float32(self.norm.eps), out)
        return torch.from_numpy(out)
