"""Right on the first call, wrong on the second, raises on the third: the verdict names the second trial's mismatch,
the first failure, though its judgement came back after the third call had run."""

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("the third call fails")
        out = torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
        return out if self.calls == 1 else out + 1.0
