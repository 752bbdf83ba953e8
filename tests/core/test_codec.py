"""The one codec between records and JSON: strict JSON out, the same rules for NaN and unknown keys everywhere."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kforge_core.codec import from_json, record_from_json, to_json
from kforge_core.records import (
    CompileResult, Failure, Flag, KernelMetrics, ProfileResult, TrialError, VerifyResult,
)


def _roundtrip(record):
    text = json.dumps(to_json(record), allow_nan=False)  # strict JSON, or this raises
    return record_from_json(type(record), json.loads(text))


def test_records_survive_strict_json_with_non_finite_numbers():
    verify = VerifyResult(correct=False, failure=Failure.NAN_INF, message="nan",
                          trials=(TrialError(42, False, math.inf, math.nan, "x"),),
                          flags=(Flag("cached_output", "again"),), notes=("n",))
    back = _roundtrip(verify)
    assert back.failure is Failure.NAN_INF and back.flags == verify.flags and back.notes == ("n",)
    assert math.isinf(back.trials[0].max_abs_error) and math.isnan(back.trials[0].max_rel_error)
    assert to_json(verify.trials[0])["max_abs_error"] == "inf"


def test_a_float_that_may_be_text_keeps_its_kind():
    kernel = KernelMetrics("k", math.nan, (("bound", "memory"), ("ratio", -math.inf), ("calls", 3.0)))
    profile = ProfileResult(tool="t", kernels=(kernel,), files=(Path("/tmp/a.json"),))
    written = to_json(profile)
    assert written["kernels"][0]["metrics"][1] == ["ratio", {"number": "-inf"}]
    back = _roundtrip(profile)
    metrics = dict(back.kernels[0].metrics)
    assert metrics["bound"] == "memory" and metrics["ratio"] == -math.inf and metrics["calls"] == 3.0
    assert math.isnan(back.kernels[0].duration_us) and back.files == (Path("/tmp/a.json"),)


def test_unknown_keys_are_ignored_and_missing_ones_take_defaults_or_are_named():
    data = {"ok": True, "log": "built", "from_a_newer_writer": 1}
    assert record_from_json(CompileResult, data) == CompileResult(ok=True, log="built")
    with pytest.raises(ValueError, match="CompileResult: the JSON object has no ok"):
        record_from_json(CompileResult, {"log": "x"})
    assert from_json(tuple[Flag, ...], [{"code": "tampering", "message": "m"}]) == (Flag("tampering", "m"),)
