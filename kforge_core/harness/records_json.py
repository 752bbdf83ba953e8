"""The core's records as plain JSON, and back, exactly.

The run store keeps verdicts as JSON and ``kforge eval --json`` prints them, so every record a verdict holds has a
codec here. Floats that JSON cannot hold (NaN, infinities: a candidate's error can be either) are written as the
strings ``"nan"``, ``"inf"`` and ``"-inf"``, so the document stays strict JSON.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..records import (
    CompileResult,
    Failure,
    Flag,
    KernelMetrics,
    ProfileResult,
    TrialError,
    VerifyResult,
)

_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def number_to_json(value: float) -> float | str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def number_from_json(value: float | str | int) -> float:
    if isinstance(value, str):
        return _NON_FINITE[value]
    return float(value)


def failure_to_json(failure: Failure | None) -> str | None:
    return None if failure is None else failure.value


def failure_from_json(value: str | None) -> Failure | None:
    return None if value is None else Failure(value)


def flag_to_json(flag: Flag) -> dict[str, Any]:
    return {"code": flag.code, "message": flag.message, "blocking": flag.blocking}


def flag_from_json(data: dict[str, Any]) -> Flag:
    return Flag(code=data["code"], message=data["message"], blocking=data["blocking"])


def compile_to_json(result: CompileResult) -> dict[str, Any]:
    return {
        "ok": result.ok,
        "log": result.log,
        "seconds": result.seconds,
        "cached": result.cached,
        "failure": failure_to_json(result.failure),
    }


def compile_from_json(data: dict[str, Any]) -> CompileResult:
    return CompileResult(
        ok=data["ok"], log=data["log"], seconds=data["seconds"], cached=data["cached"],
        failure=failure_from_json(data["failure"]),
    )


def trial_to_json(trial: TrialError) -> dict[str, Any]:
    return {
        "seed": trial.seed,
        "passed": trial.passed,
        "max_abs_error": number_to_json(trial.max_abs_error),
        "max_rel_error": number_to_json(trial.max_rel_error),
        "message": trial.message,
    }


def trial_from_json(data: dict[str, Any]) -> TrialError:
    return TrialError(
        seed=data["seed"], passed=data["passed"], max_abs_error=number_from_json(data["max_abs_error"]),
        max_rel_error=number_from_json(data["max_rel_error"]), message=data["message"],
    )


def verify_to_json(result: VerifyResult) -> dict[str, Any]:
    return {
        "correct": result.correct,
        "failure": failure_to_json(result.failure),
        "message": result.message,
        "trials": [trial_to_json(t) for t in result.trials],
        "flags": [flag_to_json(f) for f in result.flags],
        "notes": list(result.notes),
        "precision_bits": result.precision_bits,
    }


def verify_from_json(data: dict[str, Any]) -> VerifyResult:
    return VerifyResult(
        correct=data["correct"],
        trials=tuple(trial_from_json(t) for t in data["trials"]),
        failure=failure_from_json(data["failure"]),
        message=data["message"],
        flags=tuple(flag_from_json(f) for f in data["flags"]),
        notes=tuple(data["notes"]),
        precision_bits=data.get("precision_bits"),  # absent from documents written before it was recorded
    )


def _metric_to_json(value: float | str) -> Any:
    # numbers stay numbers; only a non-finite float needs a wrapper, so that it cannot be read back as a string
    if isinstance(value, float) and not math.isfinite(value):
        return {"number": number_to_json(value)}
    return value


def _metric_from_json(value: Any) -> float | str:
    return number_from_json(value["number"]) if isinstance(value, dict) else value


def kernel_to_json(kernel: KernelMetrics) -> dict[str, Any]:
    return {
        "name": kernel.name,
        "duration_us": None if kernel.duration_us is None else number_to_json(kernel.duration_us),
        "metrics": [[key, _metric_to_json(value)] for key, value in kernel.metrics],
    }


def kernel_from_json(data: dict[str, Any]) -> KernelMetrics:
    duration = data["duration_us"]
    return KernelMetrics(
        name=data["name"],
        duration_us=None if duration is None else number_from_json(duration),
        metrics=tuple((key, _metric_from_json(value)) for key, value in data["metrics"]),
    )


def profile_to_json(profile: ProfileResult) -> dict[str, Any]:
    return {
        "tool": profile.tool,
        "kernels": [kernel_to_json(k) for k in profile.kernels],
        "raw": profile.raw,
        "files": [str(p) for p in profile.files],
        "ops": list(profile.ops),
    }


def profile_from_json(data: dict[str, Any]) -> ProfileResult:
    return ProfileResult(
        tool=data["tool"],
        kernels=tuple(kernel_from_json(k) for k in data["kernels"]),
        raw=data["raw"],
        files=tuple(Path(p) for p in data["files"]),
        ops=tuple(data["ops"]),
    )
