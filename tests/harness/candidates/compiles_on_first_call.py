"""Correct: its first forward compiles with torch.compile (Dynamo) before computing with NumPy, taking longer than
a short call limit."""

import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale
        self.compiled = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.compiled is None:
            self.compiled = torch.compile(lambda t: t.sin() + t.cos(), backend="eager", dynamic=False)
            self.compiled(torch.ones(4))
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
