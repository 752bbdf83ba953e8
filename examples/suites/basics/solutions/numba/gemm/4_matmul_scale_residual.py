"""x @ weight, scaled, plus the residual, in one kernel (the weight is stored (in, out) already)."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange

ROWS = 8  # rows of x per parallel task: each row of the weight is read once for all of them


@njit(parallel=True, fastmath=True)
def matmul_scale_residual(x, wt, scale, residual, out):
    batch, depth = x.shape
    width = wt.shape[1]
    for block in prange((batch + ROWS - 1) // ROWS):
        first = block * ROWS
        count = min(ROWS, batch - first)
        acc = np.zeros((count, width), dtype=np.float32)
        for k in range(depth):
            w_row = wt[k]
            for r in range(count):
                xv = x[first + r, k]
                for j in range(width):  # unit stride: vectorised
                    acc[r, j] += xv * w_row[j]
        for r in range(count):
            for j in range(width):
                out[first + r, j] = acc[r, j] * scale + residual[first + r, j]


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.scale = scale

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        wt = self.weight.detach().numpy()  # (in, out), contiguous: no transpose needed
        out = np.empty((x.shape[0], wt.shape[1]), dtype=np.float32)
        matmul_scale_residual(x.contiguous().numpy(), wt, np.float32(self.scale), residual.contiguous().numpy(), out)
        return torch.from_numpy(out)
