"""Residual add then LayerNorm: y = (h - mean(h)) / sqrt(var(h) + eps) * weight + bias with h = x + residual.
Eager PyTorch writes h to memory and reads it back in a second kernel."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.bias = nn.Parameter(0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = x + residual
        return torch.nn.functional.layer_norm(h, h.shape[-1:], self.weight, self.bias, self.eps)


tokens, hidden = 8192, 4096


def get_inputs():
    return [torch.randn(tokens, hidden), torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden, 1e-5]
