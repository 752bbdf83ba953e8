"""hardtanh(x * a + b) as a multiply-add and a clamp in place; plain PyTorch
for any backend (its reference_call flag blocks it unless --policy report)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, a: float, b: float):
        super().__init__()
        self.a = a
        self.b = b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.add(torch.full_like(x, self.b), x, alpha=self.a).clamp_(-1.0, 1.0)
