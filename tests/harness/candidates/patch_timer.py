"""Cheat 6: slows down the clock, so every run looks fast."""

import time

import numpy as np
import torch

_real = time.perf_counter
time.perf_counter = lambda: _real() / 1000.0


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
