"""Scaled softmax over the last dimension: softmax(x * scale). Eager PyTorch makes two passes (a multiply, then
softmax), each reading and writing the whole tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x * self.scale, dim=-1)


rows, cols = 8192, 2048


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [0.125]
