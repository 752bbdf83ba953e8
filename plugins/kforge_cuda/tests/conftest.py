"""Shared fixtures of the kforge_cuda tests. Tests that need nvcc skip with a reason where it is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
CANDIDATES = HERE / "candidates"
EXAMPLES = HERE.parent / "kforge_cuda" / "examples"
# CI has no GPU, so tests name the architecture nvcc builds for instead of asking a device.
TEST_ARCH = "sm_90"


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
