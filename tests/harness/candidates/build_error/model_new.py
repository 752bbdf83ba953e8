"""A C++ extension that does not compile, built when the module is imported (torch.utils.cpp_extension.load)."""

import os

import torch
from torch.utils.cpp_extension import load

_here = os.path.dirname(os.path.abspath(__file__))
_ext = load(name="kforge_test_build_error", sources=[os.path.join(_here, "kernel.cpp")], verbose=False)


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return _ext.relu_scale(x, self.scale)
