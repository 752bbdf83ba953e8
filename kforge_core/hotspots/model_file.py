"""``model.json``, beside the problems ``kforge hotspots --extract`` writes: each problem mapped back to the model's
modules, with its phase, its share of the phase's device time and its weight in the model's time (share x the
phase's weight: the phase's share of one request's time, a prefill and ``decode_tokens`` decode steps).
``groups`` lists every module group profiled, extracted or not, with its share. ``kforge integrate --hotspots``
projects gains from it, and ``kforge bench`` weighs fast_p by it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import KForgeError

MODEL_FILE = "model.json"
FORMAT = 1


def model_document(report: dict[str, Any]) -> dict[str, Any]:
    problems = {}
    for row in report["rows"]:
        if row.get("problem"):
            problems[row["problem"]] = {
                "file": row["file"], "phase": row["phase"], "class": row["group"], "kind": row["kind"],
                "modules": row["modules"], "shapes": row["shapes"], "calls_per_step": row["calls_per_step"],
                "device_ms_per_step": row["device_ms_per_step"], "share": row["share"], "weight": row["model_share"]}
    phases = {phase: {k: figures[k] for k in ("weight", "measured_step_ms", "measured_spread", "profiled_step_ms",
                                              "profiled_spread", "profiled_device_ms", "device_busy", "steps_per_request")}
              for phase, figures in report["phases"].items()}
    groups = [{"phase": row["phase"], "class": row["group"], "kind": row["kind"], "share": row["share"],
               "modules": row["modules"], "shapes": row["shapes"], "problem": row.get("problem")}
              for row in report["rows"] if row["kind"] != "aten"]
    return {"format": FORMAT, "model": report["model"], "backend": report["backend"], "device": report["device"],
            "dtype": report["dtype"], "batch": report["batch"], "prompt_tokens": report["prompt_tokens"],
            "decode_tokens": report["decode_tokens"], "phases": phases, "problems": problems, "groups": groups}


def write_model_file(folder: Path, report: dict[str, Any]) -> Path:
    path = folder / MODEL_FILE
    path.write_text(json.dumps(model_document(report), indent=2))
    return path


def read_model_file(path: Path) -> dict[str, Any]:
    """A ``model.json``; a folder holding one is read too."""
    path = path / MODEL_FILE if path.is_dir() else path
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise KForgeError(f"cannot read {path}: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT or "problems" not in document:
        raise KForgeError(f"{path} is not a model.json written by kforge hotspots --extract")
    return document
