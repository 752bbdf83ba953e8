"""Fixtures of the kforge_cuda tests. Tests that need nvcc skip with a reason where it is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cuda_testing import EXAMPLES


@pytest.fixture
def nvcc() -> str:
    found = shutil.which("nvcc") or next(
        (str(p) for p in (Path("/usr/local/cuda/bin/nvcc"),) if p.is_file()), None
    )
    if found is None:
        pytest.skip("nvcc not found: the build tests need the CUDA toolkit's compiler")
    return found


@pytest.fixture
def cuda_problem():
    from kforge_core.problem import load_problem

    return load_problem(EXAMPLES / "cuda_problem.py")
