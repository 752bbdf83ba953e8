"""Paths shared by the kforge_nvidia tests."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
# The cuda backend's example problem: the vendor layer's tests run their stages on a backend that stands on it.
CUDA_EXAMPLES = HERE.parents[1] / "kforge_cuda" / "kforge_cuda" / "examples"
