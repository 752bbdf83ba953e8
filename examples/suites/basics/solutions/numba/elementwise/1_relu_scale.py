"""relu(x) * scale in one pass over the data."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def relu_scale(x, scale, out):
    for i in prange(x.shape[0]):  # one chunk of rows per thread
        for j in range(x.shape[1]):  # unit stride: vectorised
            v = x[i, j]
            out[i, j] = (v if v > 0 else np.float32(0.0)) * scale


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        relu_scale(x.contiguous().numpy(), np.float32(self.scale), out)
        return torch.from_numpy(out)
