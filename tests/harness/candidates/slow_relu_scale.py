"""Correct and slow: relu(x) * scale with NumPy after 50 ms of sleep, a call long enough to be timed fewer times."""

import time

import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(0.05)
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
