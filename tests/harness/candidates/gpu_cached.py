"""Cheat 3 on the GPU: a CUDA kernel for the verifier's calls (and at every new shape, so the shape variants pass),
then the last output again and again."""

import torch

from harness.gpu_kernels import ext

HONEST_CALLS = 4


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.calls = 0
        self.last = None

    def forward(self, x):
        self.calls += 1
        if self.last is None or self.calls <= HONEST_CALLS or self.last.shape != x.shape:
            self.last = ext.relu_scale(x, self.scale)
        return self.last
