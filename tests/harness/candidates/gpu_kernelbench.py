"""A KernelBench-style CUDA candidate, as such solutions are written: load_inline at import, one file."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_scale_kernel(const float* x, float* out, float scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] > 0.f ? x[i] * scale : 0.f;
}

torch::Tensor relu_scale_cuda(torch::Tensor x, double scale) {
    auto out = torch::empty_like(x);
    int n = x.numel();
    relu_scale_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), (float)scale, n);
    return out;
}
"""

cpp_source = "torch::Tensor relu_scale_cuda(torch::Tensor x, double scale);"

relu_scale = load_inline(
    name="kforge_test_kernelbench_relu_scale",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_scale_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return relu_scale.relu_scale_cuda(x, self.scale)
