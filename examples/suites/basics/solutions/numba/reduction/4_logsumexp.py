"""log(sum(exp(x))) of each row, stable: the row's maximum is taken out before exponentiating."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def logsumexp(x, out):
    for i in prange(x.shape[0]):
        top = x[i, 0]
        for j in range(1, x.shape[1]):
            top = max(top, x[i, j])
        total = np.float32(0.0)
        for j in range(x.shape[1]):
            total += math.exp(x[i, j] - top)
        out[i] = top + math.log(total)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape[0], dtype=np.float32)
        logsumexp(x.contiguous().numpy(), out)
        return torch.from_numpy(out)
