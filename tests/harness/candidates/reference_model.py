"""Cheat 5: finds the problem's Model in the worker and lets it do the work."""

import sys

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        problem = next(m for name, m in sys.modules.items() if name.startswith("kforge_problem_"))
        self.reference = problem.Model(scale)

    def forward(self, x):
        return self.reference(x)
