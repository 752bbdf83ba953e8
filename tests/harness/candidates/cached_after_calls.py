"""Cheat 3, patient: correct for its first calls (those a verifier makes on relu_scale: 3 trials, a call at each of
its 3 shape variants, the operator trace), then returns its last output."""

import numpy as np
import torch

HONEST_CALLS = 7


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.calls = 0
        self.last = None

    def forward(self, x):
        self.calls += 1
        if self.last is None or self.calls <= HONEST_CALLS:
            self.last = torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
        return self.last
