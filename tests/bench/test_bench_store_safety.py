"""The store under attack: a candidate that zeroes or deletes kforge.db during a bench is never a success; in the
sandbox it cannot reach the store at all, and earlier benches and their reports are kept. A second resume of a
running bench is refused."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from harness.helpers import CANDIDATES, PROBLEMS
from kforge_core.harness.host.namespaces import sandbox_status
from kforge_core.store.locks import held

from .conftest import QUICK, kforge

pytestmark = pytest.mark.slow  # a bench in each test, two in most


def _suite(root: Path, solution: str) -> tuple[Path, Path]:
    suite, solutions = root / "suite", root / f"solutions-{solution}"
    (suite / "level1").mkdir(parents=True, exist_ok=True)
    shutil.copy(PROBLEMS / "relu_scale.py", suite / "level1" / "1_relu_scale.py")
    solutions.mkdir(exist_ok=True)
    shutil.copy(CANDIDATES / f"{solution}.py", solutions / "1_relu_scale.py")
    return suite, solutions


def _bench(root: Path, runs: Path, solution: str, *flags: str):
    suite, solutions = _suite(root, solution)
    return kforge("bench", str(suite), "--solutions", str(solutions), "--runs-dir", str(runs), *QUICK, *flags)[0]


def _whole(database: Path) -> bool:
    with sqlite3.connect(database) as conn:
        return conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


@pytest.fixture(scope="module")
def honest_runs(bench_env, tmp_path_factory) -> Path:
    """A runs directory with one honest, finished bench in it, made once for the module."""
    root = tmp_path_factory.mktemp("honest")
    honest = _bench(root, root / "runs", "relu_scale_numpy")
    assert honest.exit_code == 0, honest.output
    return root / "runs"


@pytest.fixture
def runs_with_a_bench(honest_runs, tmp_path) -> Path:
    """This test's own copy of the honest bench's runs directory (a bench's directory is RUNS_DIR/ID, its store
    names no path)."""
    runs = tmp_path / "runs"
    shutil.copytree(honest_runs, runs)
    return runs


@pytest.fixture
def store_attack(runs_with_a_bench, tmp_path, monkeypatch):
    """A runs directory with one honest bench in it; the attacking candidate is pointed at its store."""
    monkeypatch.setenv("STORE_ATTACK_DB", str(runs_with_a_bench / "kforge.db"))
    return tmp_path, runs_with_a_bench


@pytest.mark.skipif(not sandbox_status().available, reason="no namespace sandbox on this machine")
def test_in_the_sandbox_a_candidate_cannot_touch_the_store(store_attack):
    root, runs = store_attack
    (report,) = runs.glob("*/report.md")
    before = report.read_text()
    attacked = _bench(root, runs, "store_wrecker", "--sandbox", "required")
    assert attacked.exit_code == 0, attacked.output
    assert _whole(runs / "kforge.db") and report.read_text() == before
    with sqlite3.connect(runs / "kforge.db") as conn:
        assert conn.execute("SELECT status FROM benches").fetchall() == [("finished",), ("finished",)]


@pytest.mark.parametrize("attack", ["zero", "delete"])
def test_without_the_sandbox_a_wrecked_store_is_an_error_never_a_success(store_attack, monkeypatch, attack):
    root, runs = store_attack
    monkeypatch.setenv("STORE_ATTACK", attack)
    attacked = _bench(root, runs, "store_wrecker", "--sandbox", "off")
    assert attacked.exit_code != 0, attacked.output
    assert "Error: the run store" in attacked.output and str(runs / "kforge.db") in attacked.output
    assert "Traceback" not in attacked.output
    listed, _ = kforge("runs", "--runs-dir", str(runs))  # a clean error too, or (deleted) a new, empty store
    assert "Traceback" not in listed.output


def test_a_second_resume_of_a_running_bench_is_refused(runs_with_a_bench):
    runs = runs_with_a_bench
    (bench_id,) = [path.name for path in runs.iterdir() if path.is_dir() and path.name.startswith("bench")]
    with held(runs, "bench", bench_id):  # as the first `kforge bench --resume` holds it while it runs
        second, _ = kforge("bench", "--resume", bench_id, "--runs-dir", str(runs))
    assert second.exit_code != 0
    assert f"bench {bench_id} is being run by process" in second.output
