import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        raise ValueError("bad configuration for scale %r" % scale)

    def forward(self, x):
        return x
