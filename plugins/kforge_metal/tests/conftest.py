"""Fixtures of the kforge_metal tests. None of our machines is a Mac: tests that need the GPU are marked ``mps``
(deselected by default; ``make mac-test`` runs them) and skip with the reason when run elsewhere."""

from __future__ import annotations

import textwrap

import pytest


def pytest_collection_modifyitems(config, items):
    from kforge_metal.availability import this_platform, unavailable_reason

    reason = unavailable_reason(this_platform())
    if reason is None:
        return
    for item in items:
        if item.get_closest_marker("mps") is not None:
            item.add_marker(pytest.mark.skip(reason=f"needs the metal backend, unavailable here: {reason}"))


@pytest.fixture
def small_problem(tmp_path):
    """A small RMSNorm problem (the example's, 64 rows of 256)."""
    from kforge_core.problem import load_problem

    path = tmp_path / "rmsnorm_small.py"
    path.write_text(textwrap.dedent('''
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def __init__(self, hidden: int, eps: float = 1e-6):
                super().__init__()
                self.eps = eps
                self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))

            def forward(self, x):
                return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


        def get_inputs():
            return [torch.randn(64, 256)]


        def get_init_inputs():
            return [256]
    '''))
    return load_problem(path)


@pytest.fixture
def small_png(tmp_path):
    """A small real PNG, standing for a screenshot the user took ("capture.png")."""
    import matplotlib.image
    import numpy

    path = tmp_path / "capture.png"
    matplotlib.image.imsave(path, numpy.eye(16))
    return path
