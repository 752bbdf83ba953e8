"""GroupNorm on (batch, channels, length): one (sample, group) per parallel iteration; its channels' values are
contiguous, so the statistics are one pass over a contiguous span."""

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def groupnorm(x, groups, weight, bias, eps, out):
    batch, channels, length = x.shape
    per_group = channels // groups
    inverse_n = np.float32(1.0) / np.float32(per_group * length)
    for task in prange(batch * groups):
        n, g = task // groups, task % groups
        first = g * per_group
        total = np.float32(0.0)
        for c in range(first, first + per_group):
            for t in range(length):
                total += x[n, c, t]
        mean = total * inverse_n
        squares = np.float32(0.0)
        for c in range(first, first + per_group):
            for t in range(length):
                d = x[n, c, t] - mean
                squares += d * d
        inverse_std = np.float32(1.0) / math.sqrt(squares * inverse_n + eps)
        for c in range(first, first + per_group):
            scale = inverse_std * weight[c]
            shift = bias[c] - mean * scale
            for t in range(length):
                out[n, c, t] = x[n, c, t] * scale + shift


class ModelNew(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = np.empty(x.shape, dtype=np.float32)
        groupnorm(x.contiguous().numpy(), self.norm.num_groups, self.norm.weight.detach().numpy(),
                  self.norm.bias.detach().numpy(), np.float32(self.norm.eps), out)
        return torch.from_numpy(out)
