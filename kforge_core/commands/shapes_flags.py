"""``--shapes strict|report|off``, shared by the commands that evaluate candidates (``kforge eval``, ``kforge run``,
``kforge bench``): what a candidate wrong at one of the problem's shape variants is; and ``--time-shapes``
(``kforge eval``, ``kforge bench``, ``kforge run`` for its best): whether a correct candidate is timed at the
variants too. They set
``harness.shapes`` and ``harness.time_shapes`` over the config file and the environment."""

from __future__ import annotations

from typing import Any, Callable

import click

SHAPES = "harness.shapes"
TIME_SHAPES = "harness.time_shapes"


def shapes_flag(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--shapes``; its value arrives as the ``shapes`` argument (None when not given)."""
    return click.option(
        "--shapes", type=click.Choice(["strict", "report", "off"]),
        help="strict (default): a candidate wrong at one of the problem's shape variants is not correct "
             "(shape_specific); report: it stays correct with the flag; off: no variant is run "
             "(harness.shapes).")(command)


def time_shapes_flag(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--time-shapes``; its value arrives as the ``time_shapes`` argument (None when not given)."""
    return click.option(
        "--time-shapes", is_flag=True, default=None,
        help="Also time a correct candidate at each of the problem's shape variants, and report its speedup per "
             "shape (harness.time_shapes; docs/verification.md, \"Shapes\").")(command)


def shapes_settings(shapes: str | None, time_shapes: bool | None = None) -> dict[str, Any]:
    """The settings these flags set, as dotted keys (None: not given)."""
    return {SHAPES: shapes, TIME_SHAPES: time_shapes}
