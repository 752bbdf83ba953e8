"""y = dropout(x) * scale on a 128x128 input, the dropout active (the model in training mode, as KernelBench's
``66_Matmul_Dropout_Softmax`` is): each call draws its mask from the random generator's state at the call."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, p: float, scale: float):
        super().__init__()
        self.dropout = nn.Dropout(p)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(x) * self.scale


def get_inputs():
    return [torch.rand(128, 128)]


def get_init_inputs():
    return [0.5, 2.0]
