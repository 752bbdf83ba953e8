"""RMSNorm over the last dimension, as in a transformer block: y = x / rms(x) * weight.

PyTorch eager runs it as four passes over the activations (pow, mean, multiply, multiply), each reading and
writing memory; a fused kernel reads x once and writes y once.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


tokens, hidden = 4096, 4096


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden]
