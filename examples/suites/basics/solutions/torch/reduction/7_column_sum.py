"""The sum of each column as a vector-matrix product; plain PyTorch
for any backend (its reference_call flag blocks it unless --policy report)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mv(x.t(), torch.ones(x.shape[0], dtype=x.dtype, device=x.device))
