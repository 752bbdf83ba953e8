"""Rows divided by their L2 norm, from the sum of squares; plain PyTorch
for any backend (its reference_call flag blocks it unless --policy report)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = (x * x).sum(dim=1, keepdim=True).sqrt_().clamp_min_(self.eps)
        return x / norm
