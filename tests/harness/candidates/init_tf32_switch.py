"""Switches TF32 on in its constructor, as CUDA-L1's 3_ solution does (a downgrade under fp32, found once built)."""

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        torch.backends.cuda.matmul.allow_tf32 = True
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
