"""Correct for tiny_output.py."""

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.from_numpy(x.numpy() * np.float32(1e-6))
