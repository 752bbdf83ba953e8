"""``--shapes strict|report|off`` and ``--time-shapes``, shared by the commands that evaluate candidates
(``kforge eval``, ``kforge run``, ``kforge bench``): what a candidate wrong at one of the problem's shape variants
is, and whether the variants are timed too. They set ``harness.shapes`` and ``harness.time_shapes`` over the
config file and the environment."""

from __future__ import annotations

from typing import Any, Callable

import click

SHAPES = "harness.shapes"
TIME_SHAPES = "harness.time_shapes"


def shapes_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--shapes`` and ``--time-shapes``; their values arrive as the ``shapes`` and ``time_shapes``
    arguments (None when not given)."""
    command = click.option(
        "--time-shapes", is_flag=True, default=None,
        help="Also time a correct candidate at each of the problem's shape variants, and report its speedup per "
             "shape (harness.time_shapes; docs/verification.md, \"Shapes\").")(command)
    return click.option(
        "--shapes", type=click.Choice(["strict", "report", "off"]),
        help="strict (default): a candidate wrong at one of the problem's shape variants is not correct "
             "(shape_specific); report: it stays correct with the flag; off: no variant is run "
             "(harness.shapes).")(command)


def shapes_settings(shapes: str | None, time_shapes: bool | None) -> dict[str, Any]:
    """The settings these flags set, as dotted keys (None: not given)."""
    return {SHAPES: shapes, TIME_SHAPES: time_shapes}
