"""A wrong candidate for the example problem: one program per output row, dot products by tl.sum, and an
epilogue that forgets the residual (returns sigmoid(z) * scale, not sigmoid(z) * scale + z)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, scale, N, K: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    ks = tl.arange(0, K)
    x = tl.load(x_ptr + row * K + ks).to(tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        w = tl.load(w_ptr + cols[:, None] * K + ks[None, :], mask=cols[:, None] < N, other=0.0)
        z = tl.sum(w.to(tl.float32) * x[None, :], axis=1)
        z += tl.load(b_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * N + cols, tl.sigmoid(z) * scale, mask=cols < N)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = self.linear.weight.shape[0]
        y = torch.empty((x.shape[0], n), device=x.device, dtype=x.dtype)
        row_kernel[(x.shape[0],)](x, self.linear.weight, self.linear.bias, y, self.scale, n, K=x.shape[1], BLOCK_N=32)
        return y
