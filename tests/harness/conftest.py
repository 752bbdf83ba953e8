"""Fixtures for the harness's tests. Tests about verdicts share one Harness (its workers stay warm); tests about
isolation make their own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kforge_core.harness import Harness

from .helpers import SELECTION, TORCH_CPU, problem, settings_for


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory, host_peaks) -> Path:
    """One build cache for the session (torch extensions, inductor), as a user's ~/.cache/kforge would be after
    KForge's first run there: the host CPU's peaks in it (measured once for the session, ``host_peaks``)."""
    cache = tmp_path_factory.mktemp("kforge-cache")
    shutil.copytree(host_peaks, cache / "peaks")
    return cache


@pytest.fixture
def make_harness(cache_dir):
    """Build Harnesses on the torch-cpu test backend; each is closed when the test ends."""
    made: list[Harness] = []

    def make(problem_name: str = "relu_scale", backend=TORCH_CPU, **harness_changes) -> Harness:
        # a Harness made for one test evaluates few candidates: no spare worker, no baseline unless asked
        changes = {"spare_workers": 0, "baselines": (), **harness_changes}
        harness = Harness(backend=backend, problem=problem(problem_name),
                          settings=settings_for(cache_dir, **changes), plugins=SELECTION)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.fixture(scope="session")
def relu_harness(cache_dir):
    """A shared Harness for relu_scale.py, reused by the tests of every module that asks for it (a candidate that
    faults has its worker replaced, one that passes leaves it warm, as in a bench)."""
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings_for(cache_dir),
                 plugins=SELECTION) as harness:
        yield harness
