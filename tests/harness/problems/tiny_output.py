"""y = x * 1e-6: every output is far below the float32 tolerance, so a constant (zeros) would pass."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 1e-6


def get_inputs():
    return [torch.randn(256, 256)]


def get_init_inputs():
    return []
