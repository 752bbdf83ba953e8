"""Honest numerics gone slightly wrong: correct for its first calls (those a verifier makes on relu_scale, as
cached_after_calls counts them), then off on one element in 500 of each output: a near miss (an algorithm chosen
anew per call), not a cache: every output is computed from its own inputs."""

import numpy as np
import torch

HONEST_CALLS = 7
EVERY = 500  # one element in this many is off, by far more than any tolerance


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        out = torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
        if self.calls > HONEST_CALLS:
            out.view(-1)[::EVERY] += 1.0
        return out
