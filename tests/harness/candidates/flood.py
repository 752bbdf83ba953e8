"""Correct, but prints megabytes to stdout and stderr."""

import sys

import numpy as np
import torch

sys.stderr.write("import-time noise\n" * 200_000)


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        print("FLOOD-START " + "x" * 1000)
        for _ in range(2000):
            print("y" * 1000)
        print("FLOOD-END")
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
