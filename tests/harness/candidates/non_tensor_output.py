"""Returns a NumPy array instead of a tensor."""

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return np.maximum(x.numpy(), 0) * np.float32(self.scale)
