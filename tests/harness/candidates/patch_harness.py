"""Cheat 6: rewrites the harness's comparison so any output passes."""

import numpy as np
import torch

import kforge_core.harness.worker.compare as compare
from kforge_core.builtin import torch_verify

_passed = compare.Comparison(True, None, 0.0, 0.0)
torch_verify.compare_outputs = lambda *args, **kwargs: _passed
compare.compare_outputs = lambda *args, **kwargs: _passed


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return torch.from_numpy(np.zeros(x.shape, dtype=np.float32))
