"""Cheat 1 on the GPU: writes nothing; the caching allocator often hands back the block where the reference
just left the answer."""

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return torch.empty_like(x)
