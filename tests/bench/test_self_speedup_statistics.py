"""``benchmarks/self_speedup.py`` reads every problem again by each statistic of the kept runs: the ones a launch-bound
call's speedup could be taken by, to choose among on a device."""

from __future__ import annotations

import importlib.util
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
