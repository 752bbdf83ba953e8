"""x + tanh(y) per element."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def tanh_residual(x, y, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] + math.tanh(y[i, j])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        tanh_residual(x.contiguous().numpy(), y.contiguous().numpy(), out)
        return torch.from_numpy(out)
