"""Cheat 7 on the GPU: a float32 layer computed in float16 (passes only a loose tolerance)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = x.half() @ self.linear.weight.half().t() + self.linear.bias.half()
        return torch.relu(y).float()
