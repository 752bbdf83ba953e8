"""examples/problems/elementwise_gelu_scale.py at a size that keeps the end-to-end tests quick: y = gelu(x)*scale+shift."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x) * self.scale + self.shift


rows, cols = 512, 2048


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [1.7, -0.25]
