"""Each row divided by its L2 norm, the norm at least eps (as torch.nn.functional.normalize)."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def l2_normalize(x, eps, out):
    for i in prange(x.shape[0]):
        squares = np.float32(0.0)
        for j in range(x.shape[1]):
            squares += x[i, j] * x[i, j]
        inverse = np.float32(1.0) / max(math.sqrt(squares), eps)
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] * inverse


class ModelNew(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        l2_normalize(x.contiguous().numpy(), np.float32(self.eps), out)
        return torch.from_numpy(out)
