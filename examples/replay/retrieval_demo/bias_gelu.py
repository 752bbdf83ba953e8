"""Elementwise with a parameter: y = gelu(x + bias), the bias broadcast over rows. Related to
elementwise_gelu_scale (both a GELU and elementwise arithmetic), with other shapes."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x + self.bias)


rows, features = 4096, 1024


def get_inputs():
    return [torch.randn(rows, features)]


def get_init_inputs():
    return [features]
