"""A problem that declares the shapes it must hold at, with the share of served passes of each."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) + 1.0


def get_inputs():
    return [torch.randn(4, 64)]


def get_input_variants():
    return {"decode": [torch.randn(1, 64)], "long": lambda: [torch.randn(33, 64)]}


INPUT_VARIANT_WEIGHTS = {"get_inputs": 0.25, "decode": 0.75}


def get_init_inputs():
    return []
