"""A linear layer with an epilogue: z = x @ W^T + b, then y = sigmoid(z) * scale + z. Eager PyTorch runs the GEMM,
then a sigmoid, a multiply and an add, each a pass over the (batch, out_features) result."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.linear(x)
        return torch.sigmoid(z) * self.scale + z


batch, in_features, out_features = 2048, 2048, 2048


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, 2.0]
