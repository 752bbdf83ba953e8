"""Fixtures for the loop's tests (helpers live in loop_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_helpers import ScriptedEvaluator


@pytest.fixture
def scripted() -> ScriptedEvaluator:
    return ScriptedEvaluator()


@pytest.fixture
def png(tmp_path) -> Path:
    """A small real PNG image."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1, 1), dpi=20)
    ax.plot([0, 1], [0, 1])
    path = tmp_path / "roofline.png"
    fig.savefig(path)
    plt.close(fig)
    return path
