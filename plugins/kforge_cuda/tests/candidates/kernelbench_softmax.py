"""A candidate written the KernelBench way: load_inline with PyTorch's headers, for the scaled-softmax example
problem (it computes the softmax with a naive kernel per row)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void row_softmax_kernel(const float* x, float* y, int cols, float scale) {
    const float* row = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    __shared__ float shared[256];
    float m = -INFINITY;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, row[i] * scale);
    shared[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    m = shared[0];
    __syncthreads();
    float sum = 0.f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) sum += expf(row[i] * scale - m);
    shared[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    sum = shared[0];
    for (int i = threadIdx.x; i < cols; i += blockDim.x) out[i] = expf(row[i] * scale - m) / sum;
}

torch::Tensor row_softmax_cuda(torch::Tensor x, double scale) {
    auto y = torch::empty_like(x);
    int cols = x.size(-1);
    int rows = x.numel() / cols;
    row_softmax_kernel<<<rows, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), cols, (float)scale);
    return y;
}
"""

cpp_source = "torch::Tensor row_softmax_cuda(torch::Tensor x, double scale);"

row_softmax = load_inline(
    name="row_softmax",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["row_softmax_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return row_softmax.row_softmax_cuda(x.contiguous(), self.scale)
