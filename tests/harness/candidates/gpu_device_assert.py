"""An index out of range on the GPU: PyTorch's indexing kernel fails a device-side assert."""

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        flat = x.reshape(-1)
        index = torch.full((x.numel(),), 10**9, dtype=torch.long, device=x.device)
        return flat[index].reshape(x.shape)
