"""LeakyReLU, then a clamp to [-1, 1], per element."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def leaky_relu_clamp(x, slope, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j]
            v = v if v > 0 else v * slope
            out[i, j] = min(max(v, np.float32(-1.0)), np.float32(1.0))


class ModelNew(nn.Module):
    def __init__(self, slope: float):
        super().__init__()
        self.slope = slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        leaky_relu_clamp(x.contiguous().numpy(), np.float32(self.slope), out)
        return torch.from_numpy(out)
