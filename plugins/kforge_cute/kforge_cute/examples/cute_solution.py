"""Fused residual add + LayerNorm in the CuTe DSL: one CTA per row holds the row in registers (128-bit loads),
reduces the sum and then the squared deviations across the CTA (warp shuffles, then shared memory) and writes
the normalised row: three passes over memory (x, residual, y) instead of five. Compiled once per shape through
TVM-FFI, so each call takes the PyTorch tensors as they are and launches on PyTorch's current stream."""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

THREADS = 256  # 8 warps per CTA
WARPS = THREADS // 32
VECTOR = 4  # fp32 values per 128-bit access


@cute.jit
def cta_sum(value: cutlass.Float32, partials: cute.Tensor, tidx: cutlass.Int32) -> cutlass.Float32:
    """The sum of ``value`` over the CTA, in every thread: butterfly shuffles within each warp, then the warps'
    partial sums through shared memory."""
    for i in cutlass.range_constexpr(5):
        value = value + cute.arch.shuffle_sync_bfly(value, offset=1 << i)
    if tidx % 32 == 0:
        partials[tidx // 32] = value
    cute.arch.barrier()
    total = partials[0]
    for w in cutlass.range_constexpr(1, WARPS):
        total = total + partials[w]
    cute.arch.barrier()  # every thread has read the partials before they are written again
    return total


@cute.kernel
def add_layernorm_kernel(mX: cute.Tensor, mR: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mY: cute.Tensor,
                         eps: cutlass.Float32, tiled_copy: cute.TiledCopy, n_cols: cutlass.Constexpr[int]):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    thread_copy = tiled_copy.get_slice(tidx)

    # this CTA's row of each matrix, then this thread's share of it: (VECTOR, n_cols // (THREADS * VECTOR))
    tXgX = thread_copy.partition_S(cute.local_tile(mX, tiler=(1, n_cols), coord=(row, 0))[0, None])
    tRgR = thread_copy.partition_S(cute.local_tile(mR, tiler=(1, n_cols), coord=(row, 0))[0, None])
    tYgY = thread_copy.partition_D(cute.local_tile(mY, tiler=(1, n_cols), coord=(row, 0))[0, None])
    tWgW = thread_copy.partition_S(mW)
    tBgB = thread_copy.partition_S(mB)

    # every load is issued before the first use: four 128-bit loads of x and of the residual per thread
    tXrX = cute.make_fragment_like(tXgX)
    tRrR = cute.make_fragment_like(tRgR)
    tWrW = cute.make_fragment_like(tWgW)
    tBrB = cute.make_fragment_like(tBgB)
    cute.copy(tiled_copy, tXgX, tXrX)
    cute.copy(tiled_copy, tRgR, tRrR)
    cute.copy(tiled_copy, tWgW, tWrW)
    cute.copy(tiled_copy, tBgB, tBrB)

    smem = cutlass.utils.SmemAllocator()
    partials = smem.allocate_tensor(cutlass.Float32, cute.make_layout(WARPS), byte_alignment=16)

    h = tXrX.load() + tRrR.load()
    mean = cta_sum(h.reduce(cute.ReductionOp.ADD, 0.0, reduction_profile=0), partials, tidx) / n_cols
    centred = h - mean
    variance = cta_sum((centred * centred).reduce(cute.ReductionOp.ADD, 0.0, reduction_profile=0), partials,
                       tidx) / n_cols
    rstd = cute.math.rsqrt(variance + eps)

    tYrY = cute.make_fragment_like(tYgY)
    tYrY.store(centred * rstd * tWrW.load() + tBrB.load())
    cute.copy(tiled_copy, tYrY, tYgY)


@cute.jit
def add_layernorm(mX: cute.Tensor, mR: cute.Tensor, mW: cute.Tensor, mB: cute.Tensor, mY: cute.Tensor,
                  eps: cutlass.Float32, stream: cuda.CUstream):
    rows, n_cols = mX.shape  # static: compiled for one shape
    if cutlass.const_expr(n_cols % (THREADS * VECTOR) != 0):
        raise ValueError(f"this kernel needs the row length to be a multiple of {THREADS * VECTOR}, got {n_cols}")
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mX.element_type, num_bits_per_copy=128)
    tiled_copy = cute.make_tiled_copy_tv(atom, cute.make_layout(THREADS), cute.make_layout(VECTOR))
    add_layernorm_kernel(mX, mR, mW, mB, mY, eps, tiled_copy, n_cols).launch(
        grid=[rows, 1, 1], block=[THREADS, 1, 1], stream=stream)


def compile_for(rows: int, cols: int):
    """``add_layernorm`` compiled for contiguous fp32 inputs of this shape, called as
    ``compiled(x, residual, weight, bias, y, eps)`` with PyTorch tensors (checked against these shapes)."""
    matrix = make_fake_compact_tensor(cutlass.Float32, (rows, cols), stride_order=(1, 0), assumed_align=16)
    vector = make_fake_compact_tensor(cutlass.Float32, (cols,), assumed_align=16)
    stream = make_fake_stream(use_tvm_ffi_env_stream=True)  # PyTorch's current stream, read at each call
    return cute.compile(add_layernorm, matrix, matrix, vector, vector, matrix, cutlass.Float32(0.0), stream,
                        options="--enable-tvm-ffi")


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.eps = eps
        self._compiled = {}  # one compiled kernel per input shape

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        y = torch.empty_like(x)
        compiled = self._compiled.get(x.shape)
        if compiled is None:
            compiled = self._compiled[x.shape] = compile_for(*x.shape)
        compiled(x, residual, self.weight.detach(), self.bias.detach(), y, self.eps)
        return y
