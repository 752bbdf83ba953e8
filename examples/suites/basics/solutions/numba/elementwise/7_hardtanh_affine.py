"""hardtanh(x * a + b) per element."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def hardtanh_affine(x, a, b, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j] * a + b
            out[i, j] = min(max(v, np.float32(-1.0)), np.float32(1.0))


class ModelNew(nn.Module):
    def __init__(self, a: float, b: float):
        super().__init__()
        self.a = a
        self.b = b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        hardtanh_affine(x.contiguous().numpy(), np.float32(self.a), np.float32(self.b), out)
        return torch.from_numpy(out)
