"""Instance normalisation of (batch, channels, length), no affine."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.instance_norm(x)


batch, channels, length = 16, 64, 4096


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
