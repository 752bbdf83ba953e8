"""The reference squares its input in place and returns it: changing the input is part of the problem."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mul_(x)


def get_inputs():
    return [torch.randn(128, 128)]


def get_init_inputs():
    return []
