"""A small CUDA extension for the GPU tests' candidates (built once, cached in TORCH_EXTENSIONS_DIR).

Its kernels launch on PyTorch's current stream, so a candidate can move them to a side stream with
``torch.cuda.stream``. ``oob_write`` writes far outside its tensor: an illegal memory access.
"""

from __future__ import annotations

from torch.utils.cpp_extension import load_inline

_CPP = """
torch::Tensor relu_scale(torch::Tensor x, double scale);
void relu_scale_into(torch::Tensor x, torch::Tensor out, double scale);
void oob_write(torch::Tensor x);
"""

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_scale_kernel(const float* x, float* out, float scale, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        float v = x[i];
        out[i] = v > 0.f ? v * scale : 0.f;
    }
}

__global__ void oob_kernel(float* out, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        out[i + (static_cast<int64_t>(1) << 40)] = 1.f;
    }
}

void relu_scale_into(torch::Tensor x, torch::Tensor out, double scale) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && out.is_contiguous() && x.numel() == out.numel());
    const int64_t n = x.numel();
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    relu_scale_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), static_cast<float>(scale), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

torch::Tensor relu_scale(torch::Tensor x, double scale) {
    auto out = torch::empty_like(x);
    relu_scale_into(x, out, scale);
    return out;
}

void oob_write(torch::Tensor x) {
    oob_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), 32);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

ext = load_inline(
    name="kforge_test_gpu_kernels",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["relu_scale", "relu_scale_into", "oob_write"],
    verbose=False,
)
