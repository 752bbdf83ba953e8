"""A problem at one of its shape variants, written as a problem file of its own: the problem's source, then a
``get_inputs()`` that makes the variant's inputs (and a ``get_input_variants()`` that declares none, with no
weights). Every part of
KForge then treats it as any problem (its own digest, reference, baselines and timing): ``--time-shapes`` times a
candidate at each variant this way."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

from ..records import Problem, ShapeVariant

_TAIL = '''

# ---- written by KForge: this problem at its shape variant {name!r} ({why})
import kforge_core.shapes.problem_file as _kforge_shapes

get_inputs = _kforge_shapes.inputs_at((get_inputs, globals().get("get_input_variants")), {variant!r})


def get_input_variants():
    return []


INPUT_VARIANT_WEIGHTS = {{}}
'''


def variant_problem_file(problem: Problem, variant: ShapeVariant, directory: Path) -> Path:
    """Write ``problem`` at ``variant`` into ``directory``; the file's path (``NAME@VARIANT.py``)."""
    from ..codec import to_json

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{problem.name}@{re.sub(r'[^A-Za-z0-9_.-]+', '_', variant.name)}.py"
    why = variant.why.splitlines()[0] if variant.why else variant.origin
    path.write_text(problem.source.rstrip() + "\n" + _TAIL.format(
        name=variant.name, why=why, variant=json.dumps(to_json(variant))))
    return path


def inputs_at(own: tuple[Callable[[], Any], Callable[[], Any] | None], variant_json: str) -> Callable[[], list[Any]]:
    """The ``get_inputs()`` of a problem written by :func:`variant_problem_file`: the variant's inputs, made from the
    problem's own ``get_inputs`` and ``get_input_variants`` (``own``) under the seed in force."""
    from ..codec import record_from_json
    from .inputs import variant_maker

    variant = record_from_json(ShapeVariant, json.loads(variant_json))
    module = SimpleNamespace(get_inputs=own[0], get_input_variants=own[1])
    return variant_maker(module, variant)  # type: ignore[arg-type]
