"""Fixtures for the cpu backend's tests."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

import pytest
from cpu_testing import Job, run_stages

from kforge_core.problem import load_problem
from kforge_core.records import Problem


@pytest.fixture(scope="session")
def peaks_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache directory for the session, so the machine's peaks are measured once."""
    return tmp_path_factory.mktemp("kforge-cache")


@pytest.fixture
def write_problem(tmp_path: Path) -> Callable[[str, str], Problem]:
    def write(name: str, source: str) -> Problem:
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        return load_problem(path)

    return write


@pytest.fixture
def stages(tmp_path: Path, peaks_cache: Path) -> Callable[[list[Job]], list[dict]]:
    """Run stage hooks for candidates in one real child process."""
    return lambda jobs: run_stages(jobs, tmp_path / "work", peaks_cache)
