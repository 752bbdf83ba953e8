"""Correct: the reference's layers under the same names, but it draws a random number before them, so built under
the seed its weights differ from the reference's; copied by name they are the same."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, sizes, activation, dtype, extra):
        super().__init__()
        self.register_buffer("jitter", torch.rand(1))
        self.proj = nn.Linear(sizes[0], sizes[1], dtype=dtype)
        self.gate = nn.Linear(sizes[0], sizes[1], bias=False, dtype=dtype)
        self.activation = getattr(torch, activation)

    def forward(self, x, pair, extras):
        y, (z,) = pair
        h = self.activation(self.proj(x)) * torch.sigmoid(self.gate(y))
        return h * extras["gain"], [h.sum(dim=1), z * 2]
