"""A bench whose reader goes away (``kforge bench ... | head``) is neither failed nor interrupted by it: the store
keeps what the bench last committed, and a finished bench resumed is shown without a write."""

from __future__ import annotations

import pytest

from kforge_core.app import App
from kforge_core.bench import ExecutorChoice, plan_bench, resume_bench, start_bench
from kforge_core.redacting_stream import OutputClosed
from kforge_core.store import BenchStore

from harness.helpers import PLUGIN_MODULE


def closes_at_first_result(line: str) -> None:
    if line.startswith("[1/"):  # the first problem's line: the unsolved one, kept before anything runs
        raise OutputClosed("the pipe closed")


def closes(line: str) -> None:
    raise OutputClosed("the pipe closed")


def plan(root, suite, solutions, runs: str):
    app = App(load_plugins=False, plugin_modules=(PLUGIN_MODULE,))
    settings = app.settings(backend="torch-cpu", runs_dir=root / runs)
    return app, plan_bench(settings, suite, filters=("*unsolved*", "*2_invalid*"), solutions=solutions,
                           entry="model_new.py", measure=False)


def test_a_closed_output_is_not_the_benchs_failure(bench_env):
    root, suite, solutions = bench_env
    app, bench = plan(root, suite, solutions, "closed-runs")
    with pytest.raises(OutputClosed):
        start_bench(app, bench, ExecutorChoice(), closes_at_first_result)
    with BenchStore(root / "closed-runs") as benches:
        (info,) = benches.list_benches()
    assert (info.status, info.stop_reason) == ("running", "")  # as a killed bench's: --resume goes on


def test_a_finished_bench_resumed_is_shown_without_a_write(bench_env):
    root, suite, solutions = bench_env
    app, bench = plan(root, suite, solutions, "finished-runs")
    outcome = start_bench(app, bench, ExecutorChoice(), lambda line: None)
    with BenchStore(root / "finished-runs") as benches:
        finished = benches.get_bench(outcome.info.id)
    assert finished.status == "finished" and outcome.document["summary"]["finished"] == 2
    report = outcome.report_path.read_bytes()

    with pytest.raises(OutputClosed):
        resume_bench(app, root / "finished-runs", finished.id, ExecutorChoice(), closes)
    lines: list[str] = []
    again = resume_bench(app, root / "finished-runs", finished.id, ExecutorChoice(), lines.append)
    assert lines == [f"bench {finished.id} is finished (2 problems); nothing is resumed"]
    with BenchStore(root / "finished-runs") as benches:
        assert benches.get_bench(finished.id) == finished  # not claimed, not finished again
    assert again.document["summary"] == {**outcome.document["summary"], "executor": None, "wall_seconds": 0.0,
                                         "evaluated_now": 0, "seconds_per_problem": None}
    assert again.report_path.read_bytes() == report
