"""Correct, with ``Model`` a function that returns the module (as some published solutions write it: KernelBench's
eval calls ``ModelNew(*get_init_inputs())`` whatever it is); no ``ModelNew``."""

import numpy as np
import torch
import torch.nn as nn


class _ReluScale(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))


def Model(scale: float):
    return _ReluScale(scale)
