"""Softmax over each row: the maximum, the exponentials (kept in the output) and their sum, then one scale."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def softmax(x, out):
    for i in prange(x.shape[0]):
        top = x[i, 0]
        for j in range(1, x.shape[1]):
            top = max(top, x[i, j])
        total = np.float32(0.0)
        for j in range(x.shape[1]):
            e = math.exp(x[i, j] - top)
            out[i, j] = e
            total += e
        inverse = np.float32(1.0) / total
        for j in range(x.shape[1]):  # the row is still in cache
            out[i, j] *= inverse


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        softmax(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
