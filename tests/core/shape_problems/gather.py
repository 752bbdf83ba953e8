"""x[idx] * 2: on meta tensors any size of x runs, but on a real device indices past a halved x do not: the
reference itself cannot run at that variant."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return x[idx] * 2.0


def get_inputs():
    return [torch.randn(64, 32), torch.randint(0, 64, (40,))]


def get_init_inputs():
    return []
