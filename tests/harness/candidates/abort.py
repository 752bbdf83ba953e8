"""A failed assertion in native code: SIGABRT."""

import os

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        os.abort()
