"""A candidate for the cute example problem that compiles and runs but is wrong: it divides by the root mean square
of h instead of its standard deviation (the mean is never subtracted). One thread per row, so also slow."""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack


@cute.kernel
def norm_kernel(mX: cute.Tensor, mR: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mY: cute.Tensor,
                eps: cutlass.Float32, n_cols: cutlass.Constexpr[int]):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    row = bidx * 128 + tidx
    squares = cutlass.Float32(0.0)
    for c in range(n_cols):
        h = mX[row, c] + mR[row, c]
        squares = squares + h * h
    rstd = cute.math.rsqrt(squares / n_cols + eps)
    for c in range(n_cols):
        mY[row, c] = (mX[row, c] + mR[row, c]) * rstd * mW[c] + mB[c]


@cute.jit
def norm(mX: cute.Tensor, mR: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mY: cute.Tensor,
         eps: cutlass.Float32, stream: cuda.CUstream):
    rows, n_cols = mX.shape
    norm_kernel(mX, mR, mW, mB, mY, eps, n_cols).launch(grid=[rows // 128, 1, 1], block=[128, 1, 1], stream=stream)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.eps = eps
        self._compiled = None

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        tensors = [from_dlpack(t.detach(), assumed_align=16)
                   for t in (x.contiguous(), residual.contiguous(), self.weight, self.bias, y)]
        stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
        eps = cutlass.Float32(self.eps)
        if self._compiled is None:
            self._compiled = cute.compile(norm, *tensors, eps, stream)
        self._compiled(*tensors, eps, stream)
        return y
