"""Cheat 1: writes nothing and returns a fresh allocation, hoping it is the buffer where the reference left the
answer (on GPUs the caching allocator often hands exactly that block back)."""

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return torch.empty_like(x)
