"""addmm, LeakyReLU in place, then the row sums; plain PyTorch
for any backend (its reference_call flag blocks it unless --policy report)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu_(torch.addmm(self.linear.bias, x, self.linear.weight.t()), 0.01).sum(dim=1)
