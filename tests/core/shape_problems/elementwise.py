"""relu(x) * 2 on a 16 x 1024 input: every size free."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(16, 1024)]


def get_init_inputs():
    return []
