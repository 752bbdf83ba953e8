"""The weight of each problem of a suite in a model's time, from the ``model.json`` that ``kforge hotspots
--extract`` writes beside the problems it extracts (``problems.NAME.file`` and ``.weight``: the problem's share of
its phase's device time times the phase's share of a request). Read here, without the hotspots package, which
depends on what a bench's results depend on."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import KForgeError

MODEL_FILE = "model.json"


def problem_weights(suite: Path) -> dict[str, float] | None:
    """Each problem's weight, keyed as a bench keys problems (the file's path without ``.py``), when the suite
    holds a ``model.json``; None when it holds none."""
    path = suite / MODEL_FILE
    if not path.is_file():
        return None
    try:
        problems = json.loads(path.read_text())["problems"]
        return {Path(entry["file"]).with_suffix("").as_posix(): float(entry["weight"]) for entry in problems.values()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise KForgeError(f"{path} is not a model.json written by kforge hotspots --extract ({exc})") from None
