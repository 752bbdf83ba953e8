"""Fused residual add + RMSNorm: one program per row loads x and residual once, reduces in registers and writes
the normalised row: three passes over memory instead of about ten."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    offsets = row.to(tl.int64) * n_cols + cols  # int64: rows * cols may pass 2**31
    h = tl.load(x_ptr + offsets, mask=mask, other=0.0) + tl.load(r_ptr + offsets, mask=mask, other=0.0)
    mean_square = tl.sum(h * h, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(mean_square + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, h * rstd * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        y = torch.empty_like(x)
        n_cols = x.shape[-1]
        block = triton.next_power_of_2(n_cols)
        add_rmsnorm_kernel[(x.numel() // n_cols,)](
            x, residual, self.weight, y, n_cols, self.eps, BLOCK=block, num_warps=min(max(block // 256, 1), 16)
        )
        return y
