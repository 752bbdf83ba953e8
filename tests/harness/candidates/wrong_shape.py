import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        y = np.maximum(x.numpy(), 0) * np.float32(self.scale)
        return torch.from_numpy(y[:, :128].copy())
