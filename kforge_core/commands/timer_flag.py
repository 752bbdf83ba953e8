"""``--timer wall|events|device``, the timing method of the headline figures, shared by the commands that time
candidates (``kforge eval``, ``kforge run``, ``kforge bench``); it sets ``harness.timer`` over the config file and
the environment (``KFORGE_HARNESS__TIMER``)."""

from __future__ import annotations

from typing import Any, Callable

import click

from ..device import TIMERS

SETTING = "harness.timer"


def timer_flag(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--timer METHOD`` to ``command``; its value arrives as the ``timer`` argument (None when not given)."""
    return click.option(
        "--timer", type=click.Choice(TIMERS),
        help="The figure verdicts, speedups, fast_p and plots are based on: wall (default: the host clock around "
             "one call, launch overhead included), events (device events around the call, as KernelBench and "
             "Triton's do_bench time), device (the device's own busy time on every stream). The others are still "
             "measured and reported where the device has them; a device without the asked timer falls back to "
             "wall with a note. Setting: harness.timer; see docs/timing.md.")(command)
