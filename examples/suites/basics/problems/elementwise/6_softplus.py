"""Softplus: log(1 + exp(x)), linear above 20."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(x)


rows, cols = 2048, 2048


def get_inputs():
    return [torch.randn(rows, cols) * 8]


def get_init_inputs():
    return []
