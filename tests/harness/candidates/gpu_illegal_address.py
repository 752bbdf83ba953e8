"""A kernel that writes far outside its tensor: an illegal memory access poisons the CUDA context."""

import torch

from harness.gpu_kernels import ext


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        out = torch.empty_like(x)
        ext.oob_write(out)
        return out
