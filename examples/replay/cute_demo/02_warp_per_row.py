import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack

WARP = 32


@cute.jit
def warp_sum(value: cutlass.Float32) -> cutlass.Float32:
    for i in cutlass.range_constexpr(5):
        value = value + cute.arch.shuffle_sync_bfly(value, offset=1 << i)
    return value


@cute.kernel
def add_layernorm_kernel(mX: cute.Tensor, mR: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mY: cute.Tensor,
                         eps: cutlass.Float32, n_cols: cutlass.Constexpr[int]):
    lane, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    # one warp per row: the lanes stride over the columns, three passes (mean, variance, output)
    total = cutlass.Float32(0.0)
    for c in range(lane, n_cols, WARP):
        total = total + mX[row, c] + mR[row, c]
    mean = warp_sum(total) / n_cols
    squares = cutlass.Float32(0.0)
    for c in range(lane, n_cols, WARP):
        d = mX[row, c] + mR[row, c] - mean
        squares = squares + d * d
    rstd = cute.math.rsqrt(warp_sum(squares) / n_cols + eps)
    for c in range(lane, n_cols, WARP):
        mY[row, c] = (mX[row, c] + mR[row, c] - mean) * rstd * mW[c] + mB[c]


@cute.jit
def add_layernorm(mX: cute.Tensor, mR: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mY: cute.Tensor,
                  eps: cutlass.Float32, stream: cuda.CUstream):
    rows, n_cols = mX.shape
    add_layernorm_kernel(mX, mR, mW, mB, mY, eps, n_cols).launch(grid=[rows, 1, 1], block=[WARP, 1, 1],
                                                                 stream=stream)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.eps = eps
        self._compiled = {}

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        y = torch.empty_like(x)
        tensors = [from_dlpack(t.detach(), assumed_align=16) for t in (x, residual, self.weight, self.bias, y)]
        stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
        eps = cutlass.Float32(self.eps)
        if x.shape not in self._compiled:
            self._compiled[x.shape] = cute.compile(add_layernorm, *tensors, eps, stream)
        self._compiled[x.shape](*tensors, eps, stream)
        return y
