"""A candidate for the cute example problem whose kernel does not compile: it copies a whole row into a register
fragment of 16 values. Tracing succeeds; MLIR's verifier rejects the copy."""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack


@cute.kernel
def add_kernel(mX: cute.Tensor, mR: cute.Tensor, mY: cute.Tensor, n_cols: cutlass.Constexpr[int]):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    gX = cute.local_tile(mX, tiler=(1, n_cols), coord=(row, 0))[0, None]
    fragment = cute.make_rmem_tensor((16,), cutlass.Float32)
    cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), gX, fragment)
    mY[row, tidx] = fragment[0]


@cute.jit
def add(mX: cute.Tensor, mR: cute.Tensor, mY: cute.Tensor, stream: cuda.CUstream):
    rows, n_cols = mX.shape
    add_kernel(mX, mR, mY, n_cols).launch(grid=[rows, 1, 1], block=[256, 1, 1], stream=stream)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.bias = nn.Parameter(torch.zeros(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        tensors = [from_dlpack(t, assumed_align=16) for t in (x.contiguous(), residual.contiguous(), y)]
        stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
        cute.compile(add, *tensors, stream)(*tensors, stream)
        return y
