"""Fused RMSNorm in Metal: one threadgroup of 256 threads (8 SIMD-groups) per row. Each thread sums the squares of
its float4 slices of the row, simd_sum reduces within a SIMD-group, threadgroup memory across the 8 of them, and
the same threads write the scaled row: one read of x and one write of y."""

import torch
import torch.nn as nn

SOURCE = """
#include <metal_stdlib>
using namespace metal;

constant constexpr uint THREADS = 256;
constant constexpr uint SIMD_GROUPS = THREADS / 32;

kernel void rmsnorm(device const float4* x      [[buffer(0)]],
                    device const float4* weight [[buffer(1)]],
                    device float4*       y      [[buffer(2)]],
                    constant long&       cols   [[buffer(3)]],  // a Python int arrives as 64 bits
                    constant float&      eps    [[buffer(4)]],
                    uint row  [[threadgroup_position_in_grid]],
                    uint tid  [[thread_position_in_threadgroup]],
                    uint lane [[thread_index_in_simdgroup]],
                    uint simd [[simdgroup_index_in_threadgroup]]) {
    threadgroup float partial[SIMD_GROUPS];
    const uint cols4 = uint(cols / 4);
    device const float4* xr = x + ulong(row) * cols4;
    float sum = 0.0f;
    for (uint i = tid; i < cols4; i += THREADS) {
        float4 v = xr[i];
        sum += dot(v, v);
    }
    sum = simd_sum(sum);
    if (lane == 0) {
        partial[simd] = sum;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float total = lane < SIMD_GROUPS ? partial[lane] : 0.0f;
    total = simd_sum(total);  // every SIMD-group reduces the 8 partial sums itself: no second barrier
    float scale = precise::rsqrt(total / float(cols) + eps);
    device float4* yr = y + ulong(row) * cols4;
    for (uint i = tid; i < cols4; i += THREADS) {
        yr[i] = xr[i] * scale * weight[i];
    }
}
"""

THREADS = 256
_library = None


def library():
    """Compile once per process, on first use (the compile stage calls ModelNew once, so it happens there)."""
    global _library
    if _library is None:
        _library = torch.mps.compile_shader(SOURCE)
    return _library


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        if hidden % 4:
            raise ValueError("this kernel reads float4: hidden must be a multiple of 4")
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        cols = x.shape[-1]
        rows = x.numel() // cols
        # threads is the whole grid: rows threadgroups of THREADS threads each
        library().rmsnorm(x, self.weight.contiguous(), y, cols, self.eps, threads=rows * THREADS, group_size=THREADS)
        return y
