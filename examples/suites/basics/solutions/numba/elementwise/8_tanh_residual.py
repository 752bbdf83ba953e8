"""x + tanh(y) per element, with tanh written in plain float32 arithmetic so that the loop vectorises."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(inline="always", fastmath=True)
def tanh(x):
    # Eigen's rational approximation, within a few ulp of float32 on [-9, 9]; beyond, tanh is +-1 in float32.
    # math.tanh would be a call into libm per element, which Numba vectorises only with Intel's SVML.
    x = min(max(x, np.float32(-9.0)), np.float32(9.0))
    x2 = x * x
    p = np.float32(-2.76076847742355e-16)
    p = p * x2 + np.float32(2.00018790482477e-13)
    p = p * x2 + np.float32(-8.60467152213735e-11)
    p = p * x2 + np.float32(5.12229709037114e-08)
    p = p * x2 + np.float32(1.48572235717979e-05)
    p = p * x2 + np.float32(6.37261928875436e-04)
    p = p * x2 + np.float32(4.89352455891786e-03)
    q = np.float32(1.19825839466702e-06)
    q = q * x2 + np.float32(1.18534705686654e-04)
    q = q * x2 + np.float32(2.26843463243900e-03)
    q = q * x2 + np.float32(4.89352518554385e-03)
    return x * p / q


@njit(parallel=True, fastmath=True)
def tanh_residual(x, y, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] + tanh(y[i, j])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        tanh_residual(x.contiguous().numpy(), y.contiguous().numpy(), out)
        return torch.from_numpy(out)
