"""One program per row: the row is loaded once, squared and summed in float32 in registers, normalised, cast to the
input's dtype and scaled, in one pass over memory."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    offsets = row.to(tl.int64) * n_cols + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    h = x.to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    normalised = (h * rstd).to(x.dtype).to(tl.float32)  # Llama rounds to the input's dtype before the weight
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offsets, (w * normalised).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out_dtype = torch.promote_types(self.weight.dtype, x.dtype)
        y = torch.empty(x.shape, dtype=out_dtype, device=x.device)
        n_cols = x.shape[-1]
        block = triton.next_power_of_2(n_cols)
        rmsnorm_kernel[(x.numel() // n_cols,)](x, self.weight, y, n_cols, self.eps, BLOCK=block,
                                               num_warps=min(max(block // 256, 1), 16))
        return y
