"""fast_p weighed by a model's time: a suite of extracted problems with its model.json counts each problem by its
share of the model's time, beside the unweighted fast_p."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kforge_core.bench.report import _summary
from kforge_core.bench.results import ProblemResult
from kforge_core.bench.summary import summarize
from kforge_core.bench.model_weights import problem_weights


def test_weighted_beside_unweighted(tmp_path: Path) -> None:
    (tmp_path / "model.json").write_text(json.dumps({"format": 1, "phases": {}, "problems": {
        "decode_mlp": {"file": "decode_mlp.py", "weight": 0.6},
        "decode_norm": {"file": "decode_norm.py", "weight": 0.1},
        "prefill_mlp": {"file": "prefill_mlp.py", "weight": 0.2}}}))
    weights = problem_weights(tmp_path)
    assert weights == {"decode_mlp": 0.6, "decode_norm": 0.1, "prefill_mlp": 0.2}
    assert problem_weights(tmp_path / "elsewhere") is None
    results = [ProblemResult("decode_mlp", True, None, runtime_ms=1.0, speedups=(("eager", 1.2),)),
               ProblemResult("decode_norm", True, None, runtime_ms=1.0, speedups=(("eager", 0.8),)),
               ProblemResult("prefill_mlp", False, "numerical_mismatch")]
    summary = summarize(results, 3, weights)
    assert summary["fast_p"]["1"] == pytest.approx(1 / 3)
    assert summary["weighted_fast_p"]["0"] == pytest.approx(0.7 / 0.9)
    assert summary["weighted_fast_p"]["1"] == pytest.approx(0.6 / 0.9)
    assert summary["weighted_fast_p"]["1.5"] == 0.0
    assert summary["model_time_weighed"] == pytest.approx(0.9)
    assert "weighted_fast_p" not in summarize(results, 3)
    table = "\n".join(_summary({**summary, "timed": 2, "wall_seconds": 0, "evaluated_now": 0}))
    assert "each problem weighed by its share of the model's time (model.json) | 0.778 | 0.667 | 0.000 | 0.000 " \
           "| 90.0% of the model's time in these problems |" in table
