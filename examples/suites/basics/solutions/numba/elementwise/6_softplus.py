"""Softplus as PyTorch computes it: log1p(exp(x)), and x itself above the threshold 20."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def softplus(x, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j]
            out[i, j] = v if v > np.float32(20.0) else math.log1p(math.exp(v))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        softplus(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
