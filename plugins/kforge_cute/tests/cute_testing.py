"""Paths and helpers shared by the kforge_cute tests."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from kforge_core.tracebacks import CandidateLine
from kforge_cute.dsl_errors import ErrorPart

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
CANDIDATES = HERE / "candidates"
SNIPPETS = HERE / "dsl_errors"
EXAMPLES = HERE.parent / "kforge_cute" / "examples"

needs_dsl = pytest.mark.skipif(importlib.util.find_spec("cutlass") is None,
                               reason="the CuTe DSL is not installed (pip install 'kforge-cute[dsl]')")


def _parts(records: list[dict]) -> tuple[ErrorPart, ...]:
    return tuple(ErrorPart(r["kind"], r["message"], tuple(CandidateLine(**f) for f in r["frames"])) for r in records)


def recorded_error(name: str, workdir: Path) -> tuple[tuple[ErrorPart, ...], tuple[ErrorPart, ...]]:
    """A recorded DSL error (fixtures/dsl_NAME.json) as if raised for a candidate in ``workdir``, whose file is
    written there: (the chain, the chain of the retry with MLIR locations on, or ())."""
    fixture = json.loads((FIXTURES / f"dsl_{name}.json").read_text().replace("{workdir}", str(workdir)))
    snippet = fixture["snippet"]
    (workdir / snippet).write_text((SNIPPETS / snippet).read_text())
    return _parts(fixture["chain"]), _parts(fixture["located"])
