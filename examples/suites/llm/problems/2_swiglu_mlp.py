"""Llama's MLP: down(silu(gate(x)) * up(x)), three projections without bias."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


tokens, hidden, intermediate = 512, 2048, 5632  # TinyLlama-1.1B's widths


def get_inputs():
    return [torch.randn(1, tokens, hidden)]


def get_init_inputs():
    return [hidden, intermediate]
