"""Builders shared by the harness's tests: the test backends, problems, candidates, quick settings."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kforge_core.plugins import PluginSelection
from kforge_core.problem import load_problem
from kforge_core.records import Candidate
from kforge_core.settings import HarnessSettings, Settings

from .torch_backend_plugin import TORCH_CPU, TORCH_CUDA  # noqa: F401

HERE = Path(__file__).resolve().parent
PROBLEMS = HERE / "problems"
CANDIDATES = HERE / "candidates"
PLUGIN_MODULE = "harness.torch_backend_plugin"
SELECTION = PluginSelection(entry_points=False, modules=(PLUGIN_MODULE,))

# few trials and runs, and no spare worker started beside each harness (the spares have tests of their own): the
# tests are about what is caught, not about timing precision
QUICK = HarnessSettings(
    trials=3, warmup=1, repetitions=4, baselines=("eager",), spare_workers=0,
    compile_timeout_s=180, verify_timeout_s=60, timing_timeout_s=60, profile_timeout_s=120, startup_timeout_s=180,
)


def candidate(name: str, label: str | None = None) -> Candidate:
    return Candidate.from_path(CANDIDATES / f"{name}.py", label=label)


def problem(name: str):
    return load_problem(PROBLEMS / f"{name}.py")


def settings_for(cache_dir: Path, **harness_changes) -> Settings:
    return Settings(harness=dataclasses.replace(QUICK, **harness_changes), cache_dir=cache_dir)
