"""Correct, and tries to plant an entry in the baseline cache's directory (``PATHS_TEST_STATE``): a cached figure
would be a prior for the baselines its speedup is measured against. Reports ``STATE_WRITE=``."""

import os
from pathlib import Path

import numpy as np
import torch


def plant():
    try:
        folder = Path(os.environ["PATHS_TEST_STATE"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "planted.json").write_text('{"baselines": {}}')
    except OSError as exc:
        return type(exc).__name__
    return "done"


print("STATE_WRITE=" + plant())


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
