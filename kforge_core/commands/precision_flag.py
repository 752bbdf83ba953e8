"""``--precision fp32|tf32|fp16|bf16``, the precision contract, shared by the commands that evaluate candidates
(``kforge eval``, ``kforge run``, ``kforge bench``); it sets ``harness.precision`` over the config file and the
environment."""

from __future__ import annotations

from typing import Any, Callable

import click

from ..precision_contract import NAMES

SETTING = "harness.precision"


def precision_flag(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--precision CONTRACT`` to ``command``; its value arrives as the ``precision`` argument (None when
    not given), for ``{SETTING: precision}`` among the command's settings flags."""
    return click.option(
        "--precision", type=click.Choice(NAMES),
        help="The precision contract: what candidates may compute in, and the tolerances they are held to. "
             "fp32 (default): float32 only; tf32: also TF32 matmuls; fp16: also float16; bf16: also bfloat16. "
             "Setting: harness.precision.")(command)
