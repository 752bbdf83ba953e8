"""Cheat 6: returns a tensor subclass that computes only when someone looks at it (after the timer stopped)."""

import numpy as np
import torch


class LazyResult(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        args = tuple(a.materialize() if isinstance(a, LazyResult) else a for a in args)
        return func(*args, **(kwargs or {}))

    def materialize(self):
        source, scale = self._pending
        return torch.from_numpy(np.maximum(source.numpy(), 0) * np.float32(scale))


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        out = torch.Tensor._make_subclass(LazyResult, torch.empty_like(x))
        out._pending = (x, self.scale)
        return out
