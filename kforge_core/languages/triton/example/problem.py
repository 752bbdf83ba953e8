"""Residual add then RMSNorm: y = h / sqrt(mean(h^2) + eps) * weight with h = x + residual. Eager PyTorch runs
an add, a square, a mean, an rsqrt and two multiplies, each a pass over memory."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = x + residual
        rms = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return h * rms * self.weight


tokens, hidden = 8192, 4096


def get_inputs():
    return [torch.randn(tokens, hidden), torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden, 1e-6]
