"""Correct, but starts a child (in the worker's process group) that keeps appending to grow.txt in the scratch
directory: the child must end with the worker that evaluated the candidate."""

import os
import time

import numpy as np
import torch

if os.fork() == 0:
    with open("grow.txt", "a") as handle:
        while True:
            handle.write("x")
            handle.flush()
            time.sleep(0.01)


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
