"""Correct, but leaves 64 MiB that no tool wrote in the build cache when it is imported, beside a small library
where torch's extensions keep theirs."""

import os
from pathlib import Path

import numpy as np
import torch

root = Path(os.environ["TORCH_EXTENSIONS_DIR"])
root.mkdir(parents=True, exist_ok=True)
with open(root / "junk-left-by-a-candidate.bin", "wb") as handle:
    for _ in range(64):
        handle.write(os.urandom(1 << 20))
(root / "kforge_limits_test_ext").mkdir(exist_ok=True)
(root / "kforge_limits_test_ext" / "kforge_limits_test_ext.so").write_bytes(b"\0" * 4096)


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
