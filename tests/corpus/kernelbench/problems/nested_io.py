"""A gated projection whose inputs and outputs nest: a tensor, a tuple holding a tensor and a list of one, and a
dict; it returns a tensor and a list of two tensors. Two of its parameters have the same shape."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, sizes, activation, dtype, extra):
        super().__init__()
        assert extra is None
        self.proj = nn.Linear(sizes[0], sizes[1], dtype=dtype)
        self.gate = nn.Linear(sizes[0], sizes[1], bias=False, dtype=dtype)
        self.activation = getattr(torch, activation)

    def forward(self, x, pair, extras):
        y, (z,) = pair
        h = self.activation(self.proj(x)) * torch.sigmoid(self.gate(y))
        return h * extras["gain"], [h.sum(dim=1), z * 2]


batch_size = 64
sizes = (32, 16)


def get_inputs():
    x = torch.randn(batch_size, sizes[0])
    y = torch.randn(batch_size, sizes[0])
    z = torch.randn(batch_size, 4)
    return [x, (y, [z]), {"gain": torch.rand(sizes[1]) + 0.5}]


def get_init_inputs():
    return [sizes, "tanh", torch.float32, None]
