"""Wrong (its worker is replaced), and, in the sandbox, tries to replace the problem copies workers read (a
``problems`` folder above its scratch directory) with links to a host file (``PATHS_TEST_TARGET``): the KForge
process would overwrite that file when it next wrote the copy, and the next candidate's worker would read it.
Reports what it did as ``REPLACED=``."""

import os
from pathlib import Path

import numpy as np
import torch


def replace_copies():
    for parent in Path.cwd().parents:
        problems = parent / "problems"
        if problems.is_dir():
            copies = list(problems.glob("*/*.py"))
            try:
                for copy in copies:
                    copy.unlink()
                    copy.symlink_to(os.environ["PATHS_TEST_TARGET"])
            except OSError as exc:
                return type(exc).__name__
            return "done" if copies else "none"
    return "none"


print("REPLACED=" + replace_copies())


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0))
