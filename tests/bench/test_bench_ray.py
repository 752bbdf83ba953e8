"""``kforge bench --executor ray`` on a local Ray cluster started here (the cpu test backend: one actor per
node), its results gathered into the same store as the local executor's."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from .conftest import QUICK, kforge

pytestmark = pytest.mark.slow  # a local Ray cluster and a bench

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'kforge-core[ray]')")
TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ray_cluster():
    """One local cluster for the module: Ray takes seconds to start. Its workers find the test plugin through
    PYTHONPATH, as workers on a real cluster find installed plugins."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            yield
        finally:
            ray.shutdown()


def test_problems_run_as_ray_tasks_and_come_back_to_the_store(ray_cluster, bench_env):
    root, suite, solutions = bench_env
    runs = root / "ray-runs"
    result, document = kforge("bench", str(suite), "--solutions", str(solutions), "--executor", "ray", "--json",
                              "--runs-dir", str(runs), *QUICK)
    assert result.exit_code == 0, result.output
    outcome = {p["problem"]: p["failure"] or "correct" for p in document["problems"]}
    assert outcome == {"level1/1_relu_scale": "correct", "level1/2_relu_wrong": "numerical_mismatch",
                       "level1/3_relu_unsolved": "no_solution", "level2/1_linear_relu": "correct",
                       "level2/2_invalid": "invalid_problem"}
    evaluated = [p for p in document["problems"] if p["failure"] != "no_solution"]
    assert all(p["device"].startswith("ray ") for p in evaluated)
    with sqlite3.connect(runs / "kforge.db") as db:
        done = db.execute("SELECT COUNT(*) FROM bench_problems WHERE status = 'done'").fetchone()[0]
    assert done == 5 and document["summary"]["executor"] == "ray at a local cluster"
