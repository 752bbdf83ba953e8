"""LeakyReLU (slope 0.1) clamped to [-1, 1]."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, slope: float):
        super().__init__()
        self.slope = slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(torch.nn.functional.leaky_relu(x, self.slope), -1.0, 1.0)


rows, cols = 2048, 2048


def get_inputs():
    return [torch.randn(rows, cols) * 4]


def get_init_inputs():
    return [0.1]
