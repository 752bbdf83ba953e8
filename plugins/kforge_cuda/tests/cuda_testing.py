"""Paths and constants shared by the kforge_cuda tests."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
CANDIDATES = HERE / "candidates"
EXAMPLES = HERE.parent / "kforge_cuda" / "examples"
# Triton's example is the language's, shared with every backend that speaks Triton.
TRITON_EXAMPLE = Path(__import__("kforge_core.languages.triton", fromlist=["x"]).__file__).parent / "example"


def example_path(backend: str, kind: str) -> Path:
    """The single-shot example's ``problem`` or ``solution`` file of ``backend`` (cuda or triton)."""
    return TRITON_EXAMPLE / f"{kind}.py" if backend == "triton" else EXAMPLES / f"cuda_{kind}.py"
# CI has no GPU, so tests name the architecture nvcc builds for instead of asking a device.
TEST_ARCH = "sm_90"
