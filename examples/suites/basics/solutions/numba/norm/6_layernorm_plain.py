"""LayerNorm over the last dimension without weight or bias (eps 1e-5)."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

EPS = np.float32(1e-5)


@njit(parallel=True, fastmath=True)
def layernorm(x, out):
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
        scale = np.float32(1.0) / math.sqrt(squares * inverse_n + EPS)
        for j in range(x.shape[1]):
            out[i, j] = (x[i, j] - mean) * scale


class ModelNew(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.cols = cols

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        layernorm(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
