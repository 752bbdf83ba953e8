"""Correct: the reference's parameters under other names, drawn in another order (the gate's weight first);
built under the seed they differ from the reference's, paired by shape they are the same."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, sizes, activation, dtype, extra):
        super().__init__()
        self.w_proj = nn.Parameter(torch.empty(sizes[1], sizes[0], dtype=dtype))
        self.b_proj = nn.Parameter(torch.empty(sizes[1], dtype=dtype))
        self.w_gate = nn.Parameter(torch.empty(sizes[1], sizes[0], dtype=dtype))
        for weight in (self.w_gate, self.w_proj):
            nn.init.kaiming_uniform_(weight, a=5 ** 0.5)
        nn.init.uniform_(self.b_proj, -0.1, 0.1)
        self.activation = getattr(torch, activation)

    def forward(self, x, pair, extras):
        y, (z,) = pair
        h = self.activation(x @ self.w_proj.T + self.b_proj) * torch.sigmoid(y @ self.w_gate.T)
        return h * extras["gain"], [h.sum(dim=1), z * 2]
