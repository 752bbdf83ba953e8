"""A faulting candidate for the scaled-softmax example problem: the thread of the last element writes far past
the end of the output (an illegal memory access, which poisons the CUDA context)."""

import torch
import torch.nn as nn

from kforge_cuda.runtime import load_cuda

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <stdint.h>
__global__ void broken_softmax_kernel(const float* x, float* y, int64_t n, int64_t stride) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i == n - 1 ? i * stride : i] = x[i];
}
extern "C" cudaError_t broken_softmax(const float* x, float* y, int64_t n, int64_t stride, cudaStream_t stream) {
    broken_softmax_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x, y, n, stride);
    return cudaGetLastError();
}
"""

_lib = load_cuda(CUDA_SOURCE, name="broken_softmax")
STRIDE = 1 << 20  # the last element lands terabytes past the output's start: outside any allocation


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        _lib.broken_softmax(x, y, x.numel(), STRIDE)
        return y
