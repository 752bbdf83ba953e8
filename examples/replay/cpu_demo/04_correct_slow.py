import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit


@njit
def gelu_scale_shift(x, scale, shift, out):
    rows, cols = x.shape
    for c in range(cols):  # column by column
        for r in range(rows):
            v = x[r, c]
            out[r, c] = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) * scale + shift


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        gelu_scale_shift(x.numpy(), self.scale, self.shift, out.numpy())
        return out
