"""A KernelBench-style candidate, as such solutions are written: a C++ extension built with
torch.utils.cpp_extension.load_inline when the module is imported (here for the CPU)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_scale_source = r"""
#include <torch/extension.h>

torch::Tensor relu_scale(torch::Tensor x, double scale) {
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const float* in = input.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const float s = static_cast<float>(scale);
    for (int64_t i = 0; i < input.numel(); ++i) {
        o[i] = in[i] > 0.f ? in[i] * s : 0.f;
    }
    return out;
}
"""

relu_scale = load_inline(
    name="kforge_test_relu_scale_cpp",
    cpp_sources=relu_scale_source,
    functions=["relu_scale"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return relu_scale.relu_scale(x, self.scale)
