"""Correct, and replaces the files its output was captured in (``stdout.txt`` and ``stderr.txt`` in its scratch
directory, where a worker once wrote them) with links: to a host-only credentials file (``PATHS_TEST_TARGET``) and to
``/proc/self/environ``, which, read by the KForge process, is the KForge process's own environment. Nothing of either
may reach the verdict, and neither file may be written."""

import os

import numpy as np
import torch

for name, target in (("stdout.txt", os.environ["PATHS_TEST_TARGET"]), ("stderr.txt", "/proc/self/environ")):
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass
    os.symlink(target, name)
print("the candidate's own words")


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
