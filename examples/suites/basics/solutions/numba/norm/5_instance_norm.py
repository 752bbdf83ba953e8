"""Instance normalisation (no affine, eps 1e-5): one (sample, channel) row per parallel iteration."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

EPS = np.float32(1e-5)


@njit(parallel=True, fastmath=True)
def instance_norm(x, out):
    batch, channels, length = x.shape
    inverse_n = np.float32(1.0) / np.float32(length)
    for task in prange(batch * channels):
        n, c = task // channels, task % channels
        total = np.float32(0.0)
        for t in range(length):
            total += x[n, c, t]
        mean = total * inverse_n
        squares = np.float32(0.0)
        for t in range(length):
            d = x[n, c, t] - mean
            squares += d * d
        scale = np.float32(1.0) / math.sqrt(squares * inverse_n + EPS)
        for t in range(length):
            out[n, c, t] = (x[n, c, t] - mean) * scale


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        instance_norm(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
