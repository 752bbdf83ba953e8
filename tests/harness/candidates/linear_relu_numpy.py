"""Correct: keeps the reference's nn.Linear for its weights (the harness copies them in) and computes in NumPy."""

import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.linear.weight.detach().numpy()
        b = self.linear.bias.detach().numpy()
        return torch.from_numpy(np.maximum(x.numpy() @ w.T + b, 0).astype(np.float32))
