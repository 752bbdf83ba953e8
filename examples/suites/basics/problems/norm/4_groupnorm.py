"""GroupNorm with 8 groups on (batch, channels, length)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


batch, channels, length = 16, 64, 4096


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [8, channels]
