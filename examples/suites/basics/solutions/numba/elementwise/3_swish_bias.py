"""x * sigmoid(x) + bias[column] in one pass."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def swish_bias(x, bias, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j]
            out[i, j] = v / (np.float32(1.0) + math.exp(-v)) + bias[j]


class ModelNew(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols) * 0.1)  # the reference's values are copied in

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        swish_bias(x.contiguous().numpy(), self.bias.detach().numpy(), out)
        return torch.from_numpy(out)
