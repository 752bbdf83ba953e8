"""Correct (relu(x) * scale with NumPy), and leaves a handler that sleeps for a minute when its process exits: the
way a library's clean-up at exit (a compiler's worker pool waiting for its processes) holds a worker up."""

import atexit
import time

import numpy as np
import torch
import torch.nn as nn

atexit.register(time.sleep, 60)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
