"""Fixtures of the kforge_nvidia tests."""

from __future__ import annotations

import pytest

from nvidia_testing import CUDA_EXAMPLES


@pytest.fixture
def cuda_problem():
    from kforge_core.problem import load_problem

    return load_problem(CUDA_EXAMPLES / "cuda_problem.py")
