"""Below bfloat16: relu(x @ W.T + b) on inputs rounded to 3 mantissa bits (fp8 e4m3's precision) with float32
accumulation, emulated in NumPy."""

import numpy as np
import torch
import torch.nn as nn


def to_e4m3_precision(a: np.ndarray) -> np.ndarray:
    """Round float32 values to 3 mantissa bits (ties away from zero), kept in float32."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(1 << 19)) & np.uint32(0xFFF00000)
    return rounded.view(np.float32)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = to_e4m3_precision(self.linear.weight.detach().numpy())
        b = to_e4m3_precision(self.linear.bias.detach().numpy())
        y = np.maximum(to_e4m3_precision(x.numpy()) @ w.T + b, 0)
        return torch.from_numpy(y.astype(np.float32))
