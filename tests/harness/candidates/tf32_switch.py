"""Switches TF32 on for float32 matmuls (allowed under the tf32 precision contract, a downgrade under fp32)."""

import numpy as np
import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.set_float32_matmul_precision("high")


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
