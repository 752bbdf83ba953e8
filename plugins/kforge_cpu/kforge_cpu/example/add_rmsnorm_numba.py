import numpy as np
import torch
import torch.nn as nn
from numba import njit, prange


@njit(parallel=True, fastmath=True)
def add_rmsnorm_kernel(x, residual, weight, eps, out):
    rows, hidden = x.shape
    inv_hidden = np.float32(1.0) / np.float32(hidden)
    for r in prange(rows):  # rows are independent: one chunk of rows per thread
        # pass 1: h = x + residual, stored in out, and the sum of squares (float32, vectorised by fastmath)
        sum_sq = np.float32(0.0)
        for c in range(hidden):
            h = x[r, c] + residual[r, c]
            out[r, c] = h
            sum_sq += h * h
        scale = np.float32(1.0) / np.sqrt(sum_sq * inv_hidden + eps)
        # pass 2: the row is still in L1/L2, so this re-read costs no memory traffic
        for c in range(hidden):
            out[r, c] = out[r, c] * scale * weight[c]


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))  # same name and shape as Model's, so weights carry over

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()  # no-op (no copy) when already contiguous
        residual = residual.contiguous()
        # a fresh output per call, outside the kernel; np.empty asks for huge pages, so the first write to it
        # takes far fewer page faults than torch.empty's 4 KiB pages
        out = np.empty(x.shape, dtype=np.float32)
        add_rmsnorm_kernel(
            x.numpy(), residual.numpy(), self.weight.detach().numpy(),  # views of the tensors' memory: no copies
            np.float32(self.eps),  # a float32 scalar keeps the whole kernel in float32
            out,
        )
        return torch.from_numpy(out)  # shares the array's memory: no copy
