"""Correct: wide_relu's reference as it is, in PyTorch operators (timed under the report policy)."""

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0
