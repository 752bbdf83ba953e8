"""Runs out of the device's memory the first time it is evaluated (as a candidate does when KForge's other processes
hold the rest of the device), and fits the second time: it marks its first evaluation with a file in the extension
build cache, the one place a candidate's worker may write that outlives it (named as a build, which the cache's
quota keeps)."""

import os
from pathlib import Path

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        marker = Path(os.environ["TORCH_EXTENSIONS_DIR"]) / "evaluated_once" / "build.ninja"
        self.first = not marker.exists()
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("1")

    def forward(self, x):
        if self.first:
            raise RuntimeError("accelerator memory exhausted: tried to allocate 4.00 GiB")
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
