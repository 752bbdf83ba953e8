"""Rows divided by the sum of their absolute values, through the L1 norm; plain PyTorch
for any backend (its reference_call flag blocks it unless --policy report)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.linalg.vector_norm(x, ord=1, dim=1, keepdim=True)
