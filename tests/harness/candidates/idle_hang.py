"""Its forward hangs, idle (a wait that never ends)."""

import time

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()

    def forward(self, x):
        while True:
            time.sleep(1)
