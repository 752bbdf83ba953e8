"""Raises a multi-line error with terminal colour codes in it, as Numba's typing errors are."""

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        raise TypeError("\x1b[1mFailed in nopython mode pipeline (step: nopython frontend)\x1b[0m\n"
                        "\x1b[1mNo implementation of function add found for signature:\x1b[0m\n"
                        "\n >>> add(float32, unicode_type)\n")
