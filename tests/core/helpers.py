"""Small builders shared by the core's tests."""

from __future__ import annotations

from pathlib import Path

GOOD_PROBLEM = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.linear = nn.Linear(8, 4)

    def forward(self, x):
        return self.linear(x) * self.scale


def get_inputs():
    return [torch.randn(2, 8)]


def get_init_inputs():
    return [2.0]
'''


def write_problem(directory: Path, source: str = GOOD_PROBLEM, name: str = "tiny_linear.py") -> Path:
    path = directory / name
    path.write_text(source)
    return path
