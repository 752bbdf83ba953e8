"""Cheat 3: computes once, then returns the same output for every input of that shape."""

import numpy as np
import torch

_cache = {}


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        key = tuple(x.shape)
        if key not in _cache:
            _cache[key] = torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
        return _cache[key]
