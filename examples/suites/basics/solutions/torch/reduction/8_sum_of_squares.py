"""The scaled sum of squares of each row as row-wise dot products; plain PyTorch
for any backend (its reference_call flag blocks it unless --policy report)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("ij,ij->i", x, x).mul_(self.scale)
