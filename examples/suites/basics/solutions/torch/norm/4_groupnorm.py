"""GroupNorm through the functional form; plain PyTorch
for any backend (its reference_call flag blocks it unless --policy report)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.group_norm(x, self.norm.num_groups, self.norm.weight, self.norm.bias, self.norm.eps)
