import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))
# the retrieved kernel's erf (Abramowitz & Stegun 7.1.26): it vectorises where math.erf does not
P = np.float32(0.3275911)
A1, A2, A3 = np.float32(0.254829592), np.float32(-0.284496736), np.float32(1.421413741)
A4, A5 = np.float32(-1.453152027), np.float32(1.061405429)


@njit(parallel=True, fastmath=True)
def bias_gelu(x, bias, out):
    rows, cols = x.shape
    for r in prange(rows):  # one chunk of rows per thread
        for c in range(cols):  # unit stride: vectorised
            v = x[r, c] + bias[c]
            z = abs(v) * INV_SQRT2
            t = np.float32(1.0) / (np.float32(1.0) + P * z)
            q = t * (A1 + t * (A2 + t * (A3 + t * (A4 + t * A5)))) * math.exp(-z * z)  # q = 1 - erf(z)
            one_plus_erf = np.float32(2.0) - q if v >= 0 else q
            out[r, c] = np.float32(0.5) * v * one_plus_erf


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)  # as Model makes it: the same values, seeded alike

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = np.empty(x.shape, dtype=np.float32)
        bias_gelu(x.numpy(), self.bias.detach().numpy(), out)
        return torch.from_numpy(out)
