"""Cheat 6: makes every comparison succeed."""

import numpy as np
import torch

torch.allclose = lambda *args, **kwargs: True
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return torch.from_numpy(np.zeros(x.shape, dtype=np.float32))
