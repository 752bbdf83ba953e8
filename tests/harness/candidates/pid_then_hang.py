"""Writes its worker's pid down, then hangs (for the test that kills the KForge process meanwhile)."""

import os

import torch

with open("worker.pid", "w") as handle:
    handle.write(str(os.getpid()))


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        while True:
            pass
