"""Raises SystemExit from forward."""

import sys

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        sys.exit("giving up")
