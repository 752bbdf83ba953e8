"""A problem small enough for the compile-stage tests: they never run a kernel."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
