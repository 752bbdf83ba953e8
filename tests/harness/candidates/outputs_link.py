"""Correct, but makes the folder its worker ships outputs in a link to another directory (its own, here; a directory
of its choosing in general): the referee, which reads and removes what is shipped, must not follow it."""

import os

import numpy as np
import torch

os.makedirs("elsewhere", exist_ok=True)
os.symlink("elsewhere", "outputs")


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
