"""Cheat 7: a float32 problem computed in float16 (passes only a loose tolerance)."""

import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w = self.linear.weight.detach().numpy().astype(np.float16)
        b = self.linear.bias.detach().numpy().astype(np.float16)
        y = np.maximum(x.numpy().astype(np.float16) @ w.T + b, 0)
        return torch.from_numpy(y.astype(np.float32))
