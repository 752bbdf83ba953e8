"""Correct, with its class named ReluKernel (evaluated with harness.candidate_class = "ReluKernel")."""

import numpy as np
import torch
import torch.nn as nn


class ReluKernel(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
