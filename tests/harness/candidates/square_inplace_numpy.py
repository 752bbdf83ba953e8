"""Correct for square_inplace.py: squares the input in place, as the reference does."""

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        a = x.numpy()
        np.multiply(a, a, out=a)
        return x
