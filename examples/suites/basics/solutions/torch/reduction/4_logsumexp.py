"""logsumexp written out, the row maximum taken out first; plain PyTorch
for any backend (its reference_call flag blocks it unless --policy report)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top = x.amax(dim=1, keepdim=True)
        return (x - top).exp_().sum(dim=1).log_().add_(top.squeeze(1))
