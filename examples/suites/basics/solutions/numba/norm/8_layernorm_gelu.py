"""LayerNorm (weight and bias) and the exact GELU fused: the normalised value goes through GELU before it is
written."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


@njit(parallel=True, fastmath=True)
def layernorm_gelu(x, weight, bias, eps, out):
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
            v = (x[i, j] - mean) * scale * weight[j] + bias[j]
            out[i, j] = np.float32(0.5) * v * (np.float32(1.0) + math.erf(v * INV_SQRT2))


class ModelNew(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.norm = nn.LayerNorm(cols)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        layernorm_gelu(x.contiguous().numpy(), self.norm.weight.detach().numpy(), self.norm.bias.detach().numpy(),
                       np.float32(self.norm.eps), out)
        return torch.from_numpy(out)
