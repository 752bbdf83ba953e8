"""``benchmarks/self_speedup.py`` reads every problem again by each statistic of the kept runs: the ones a launch-bound
call's speedup could be taken by, to choose among on a device."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "self_speedup.py"


def _script():
    spec = importlib.util.spec_from_file_location("self_speedup", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_each_statistic_reads_the_same_runs_its_own_way():
    script = _script()
    # one lucky fast run of the candidate, and a host that slowed down halfway through the window on both sides
    candidate = [0.5] + [1.0] * 9 + [2.0] * 10
    eager = [1.0] * 10 + [2.0] * 10
    table = script.by_statistic({"p": {"events": {"candidate": candidate, "eager": eager}}})
    assert table["fastest run"]["p"]["events"] == pytest.approx(2.0)  # the lucky run decides
    assert table["10th percentile"]["p"]["events"] == pytest.approx(1.0)
    assert table["median"]["p"]["events"] == pytest.approx(1.0)
    assert table["paired median"]["p"]["events"] == pytest.approx(1.0)


def test_a_problem_without_runs_on_both_sides_is_left_out():
    table = _script().by_statistic({"p": {"events": {"candidate": [1.0, 2.0], "eager": []}}})
    assert table == {}


def test_a_bench_cut_short_is_read_from_the_verdicts_it_left(tmp_path, capsys):
    script = _script()
    bench = tmp_path / "bench-1"

    def figures(ms: float) -> dict:
        return {"events": {"median": ms, "min": ms, "statistic": "median", "samples": [ms, ms]}}

    def verdict(name: str, correct: bool, candidate_ms: float, eager_ms: float) -> None:
        (bench / "problems" / name).mkdir(parents=True)
        (bench / "problems" / name / "verdict.json").write_text(json.dumps({
            "correct": correct, "speedups_by_timer": {"events": {"eager": eager_ms / candidate_ms}},
            "figures": figures(candidate_ms), "baseline_figures": {"eager": figures(eager_ms)}}))

    verdict("a_problem", True, 2.0, 2.0)
    verdict("b_problem", True, 2.0, 1.8)
    verdict("c_wrong", False, 1.0, 1.0)
    (bench / "problems" / "d_still_running").mkdir()  # no verdict: the time limit came during it
    found = script.bench_from_runs(bench)
    assert [(p["problem"], p["correct"]) for p in found["problems"]] == [
        ("a_problem", True), ("b_problem", True), ("c_wrong", False)]
    script.report(script.speedups(found), found, 0.03, tmp_path / "out.json")
    printed = capsys.readouterr().out
    assert "b_problem" in printed and "not decided correct (1): c_wrong" in printed
    summary = json.loads((tmp_path / "out.json").read_text())["summary"]["events"]
    assert summary["problems"] == 2 and summary["outside_band"] == 1 and summary["worst"] == pytest.approx(0.9)
