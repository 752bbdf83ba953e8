import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


@njit(parallel=True, fastmath=True)
def gelu_scale_shift(x, scale, shift, out):
    for r in prange(x.shape[0]):
        row = x[r]
        # a whole row at once: math.erf takes a scalar, not an array
        out[r] = np.float32(0.5) * row * (np.float32(1.0) + math.erf(row * INV_SQRT2)) * scale + shift


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = np.empty(x.shape, dtype=np.float32)
        gelu_scale_shift(x.numpy(), np.float32(self.scale), np.float32(self.shift), out)
        return torch.from_numpy(out)
