"""Trace detection: computes with PyTorch's own operators, except while the harness's operator trace (a dispatch
mode) is active; then with NumPy, so the trace sees no PyTorch computation."""

import numpy as np
import torch
from torch._C import _len_torch_dispatch_stack
from torch.utils._python_dispatch import _get_current_dispatch_mode


def _traced():
    return _get_current_dispatch_mode() is not None or _len_torch_dispatch_stack() > 0


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        if _traced():
            return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
        return torch.relu(x) * self.scale
