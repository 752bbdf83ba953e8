"""Hangs in its constructor, idle (a wait that never ends)."""

import time

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        while True:
            time.sleep(1)

    def forward(self, x):
        return x
