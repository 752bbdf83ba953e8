"""x * sigmoid(x) + bias[column] in one pass, with exp written in plain float32 arithmetic so that the loop
vectorises."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

LOG2E = np.float32(1.4426950408889634)


@njit(inline="always", fastmath=True)
def exp(x):
    # exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln(2) / 2: Cephes' polynomial for exp(r), within 2 ulp of
    # float32, and 2^n made from its bits. math.exp would be a call into libm per element, which Numba vectorises
    # only with Intel's SVML.
    x = min(max(x, np.float32(-87.0)), np.float32(88.0))
    n = np.floor(x * LOG2E + np.float32(0.5))
    r = x - n * np.float32(0.693359375) + n * np.float32(2.12194440e-4)
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    two_n = np.int32((np.int32(n) + np.int32(127)) << np.int32(23)).view(np.float32)
    return (p * r * r + r + np.float32(1.0)) * two_n


@njit(parallel=True, fastmath=True)
def swish_bias(x, bias, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j]
            out[i, j] = v / (np.float32(1.0) + exp(-v)) + bias[j]


class ModelNew(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols) * 0.1)  # the reference's values are copied in

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        swish_bias(x.contiguous().numpy(), self.bias.detach().numpy(), out)
        return torch.from_numpy(out)
