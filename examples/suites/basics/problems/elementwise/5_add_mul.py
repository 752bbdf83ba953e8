"""(a + b) * c on three inputs."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return (a + b) * c


rows, cols = 2048, 2048


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return []
