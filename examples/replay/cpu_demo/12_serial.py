import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit

INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


@njit(inline="always", fastmath=True)
def erf(x):
    # x P(x^2) / Q(x^2) on [-4, 4] (Eigen's float32 rational approximation, within a few ulp; erf is +-1 beyond):
    # multiplications, additions and one division, which all vectorise, where math.erf is a scalar library call
    # on machines without SVML
    x = min(max(x, np.float32(-4.0)), np.float32(4.0))
    x2 = x * x
    p = np.float32(-2.72614225801306e-10)
    p = p * x2 + np.float32(2.77068142495902e-08)
    p = p * x2 + np.float32(-2.10102402082508e-06)
    p = p * x2 + np.float32(-5.69250639462346e-05)
    p = p * x2 + np.float32(-7.34990630326855e-04)
    p = p * x2 + np.float32(-2.95459980854025e-03)
    p = p * x2 + np.float32(-1.60960333262415e-02)
    q = np.float32(-1.45660718464996e-05)
    q = q * x2 + np.float32(-2.13374055278905e-04)
    q = q * x2 + np.float32(-1.68282697438203e-03)
    q = q * x2 + np.float32(-7.37332916720468e-03)
    q = q * x2 + np.float32(-1.42647390514189e-02)
    return x * p / q


@njit(fastmath=True)
def gelu_scale_shift(x, scale, shift, out):
    rows, cols = x.shape
    half_scale = np.float32(0.5) * scale
    for r in range(rows):  # one thread: no parallel start-up
        for c in range(cols):  # unit stride: vectorised
            v = x[r, c]
            out[r, c] = half_scale * v * (np.float32(1.0) + erf(v * INV_SQRT2)) + shift


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = np.empty(x.shape, dtype=np.float32)  # huge pages: fewer faults on first touch
        gelu_scale_shift(x.numpy(), np.float32(self.scale), np.float32(self.shift), out)
        return torch.from_numpy(out)
