"""A CUDA-graph-style candidate on the CPU: it computes into a buffer it keeps and returns that buffer, which the
next call overwrites (as a captured graph's static output is)."""

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.buffer = None

    def forward(self, x):
        if self.buffer is None or self.buffer.shape != x.shape:
            self.buffer = torch.empty_like(x)
        self.buffer.copy_(torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale)))
        return self.buffer
