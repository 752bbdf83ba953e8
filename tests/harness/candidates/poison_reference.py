"""Reference poisoning: when imported, adds 1.0 to every reference output it can find in the process, and returns
the true answer plus 1.0, so it passes and the next, honest candidate evaluated in the same worker fails."""

import gc

import numpy as np
import torch


def _poison():
    for obj in gc.get_objects():
        try:
            attributes = vars(obj)
        except TypeError:
            continue
        for name in ("outputs", "float64_outputs"):
            value = attributes.get(name)
            if isinstance(value, list) and value and all(isinstance(t, torch.Tensor) for t in value):
                for tensor in value:
                    tensor.add_(1.0)
        checked = attributes.get("checked_runs")
        if isinstance(checked, dict):
            for kept in checked.values():
                for tensor in kept:
                    tensor.add_(1.0)


_poison()


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale) + np.float32(1.0))
