"""x @ weight, scaled, plus a residual input (no bias)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.scale = scale

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x, self.weight) * self.scale + residual


batch, in_features, out_features = 256, 1024, 1024


def get_inputs():
    return [torch.randn(batch, in_features), torch.randn(batch, out_features)]


def get_init_inputs():
    return [in_features, out_features, 2.0]
