"""Paths and constants shared by the kforge_cuda tests."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
CANDIDATES = HERE / "candidates"
EXAMPLES = HERE.parent / "kforge_cuda" / "examples"
# CI has no GPU, so tests name the architecture nvcc builds for instead of asking a device.
TEST_ARCH = "sm_90"
