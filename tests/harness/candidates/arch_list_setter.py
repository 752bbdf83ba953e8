"""Correct, and sets the CUDA architectures of later builds in its process at import, as a published level-1
solution does before its load_inline (``TORCH_CUDA_ARCH_LIST = '7.0+PTX'``), and one variable of its own."""

import os

import numpy as np
import torch

os.environ["TORCH_CUDA_ARCH_LIST"] = "7.0+PTX"
os.environ["ARCH_LIST_SETTER_WAS_HERE"] = "1"


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
