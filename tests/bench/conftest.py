"""Fixtures for the bench's tests: a small suite of the harness tests' problems, with solutions, and ``kforge
bench`` run in this process on the torch-cpu test backend (its workers load the same test plugin)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli

from harness.helpers import CANDIDATES, PLUGIN_MODULE, PROBLEMS

QUICK = ["--backend", "torch-cpu", "--trials", "2", "--warmup", "1", "--repetitions", "3", "--baselines", "eager"]
INVALID_PROBLEM = "import torch\n\n\ndef get_inputs():\n    return []\n"  # no Model


def make_suite(root: Path) -> tuple[Path, Path]:
    """A suite of five problems (KernelBench's layout) and solutions for four of them, one of them wrong."""
    suite, solutions = root / "suite", root / "solutions"
    for folder in (suite / "level1", suite / "level2", solutions / "level1"):
        folder.mkdir(parents=True)
    shutil.copy(PROBLEMS / "relu_scale.py", suite / "level1" / "1_relu_scale.py")
    shutil.copy(PROBLEMS / "relu_scale.py", suite / "level1" / "2_relu_wrong.py")
    shutil.copy(PROBLEMS / "relu_scale.py", suite / "level1" / "3_relu_unsolved.py")
    shutil.copy(PROBLEMS / "linear_relu.py", suite / "level2" / "1_linear_relu.py")
    (suite / "level2" / "2_invalid.py").write_text(INVALID_PROBLEM)
    shutil.copy(CANDIDATES / "relu_scale_numpy.py", solutions / "level1" / "1_relu_scale.py")  # mirrored
    shutil.copy(CANDIDATES / "mismatch.py", solutions / "level1" / "2_relu_wrong.py")
    shutil.copy(CANDIDATES / "linear_relu_numpy.py", solutions / "1_linear_relu.py")  # flat
    shutil.copy(CANDIDATES / "relu_scale_numpy.py", solutions / "2_invalid.py")
    return suite, solutions


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory, host_peaks) -> Path:
    """One cache for the session (baselines, torch's), as a user's ~/.cache/kforge would be after KForge's first
    run there: the host CPU's peaks in it (measured once for the session, ``host_peaks``)."""
    cache = tmp_path_factory.mktemp("kforge-cache")
    shutil.copytree(host_peaks, cache / "peaks")
    return cache


@pytest.fixture(scope="module")
def bench_env(tmp_path_factory, cache_dir):
    """A working directory with the suite, and the environment a bench in this process runs with."""
    root = tmp_path_factory.mktemp("bench")
    suite, solutions = make_suite(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)  # no kforge.toml around
        patch.setenv("KFORGE_CACHE_DIR", str(cache_dir))
        patch.setenv("KFORGE_HARNESS__SPARE_WORKERS", "0")
        yield root, suite, solutions


def kforge(*args: str):
    """``kforge ARGS`` in this process with the torch-cpu test backend; the result and, with --json, its document."""
    app = App(load_plugins=False, plugin_modules=(PLUGIN_MODULE,))
    result = CliRunner().invoke(cli, list(args), obj=app, catch_exceptions=False)
    document = json.loads(result.stdout) if "--json" in args and result.exit_code == 0 else None
    return result, document
