"""Correct, and prints the unit of the device its process was bound to (torch-cpu-units' variable)."""

import os

import numpy as np
import torch

print("UNIT=" + os.environ.get("TORCH_TEST_UNITS", "none"))


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
