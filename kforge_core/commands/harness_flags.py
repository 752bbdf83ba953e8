"""The harness flags that ``kforge eval`` and ``kforge bench`` share (how candidates are checked and timed), as
one decorator, so both commands take the same options and any flag added here reaches both."""

from __future__ import annotations

from typing import Any, Callable

import click

from .precision_flag import SETTING as PRECISION_SETTING
from .precision_flag import precision_flag
from .shapes_flags import shapes_flag, shapes_settings, time_shapes_flag
from .timer_flag import SETTING as TIMER_SETTING
from .timer_flag import timer_flag

_FLAGS: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
    click.option("--trials", type=click.IntRange(min=1), help="Correctness trials (harness.trials)."),
    click.option("--warmup", type=click.IntRange(min=0), help="Untimed runs before timing (harness.warmup)."),
    click.option("--repetitions", type=click.IntRange(min=1), help="Timed runs (harness.repetitions)."),
    click.option("--policy", type=click.Choice(["strict", "report"]),
                 help="strict: reference calls and input mutation reject the candidate; report: only flag them."),
    shapes_flag,
    time_shapes_flag,
    precision_flag,
    click.option("--precision-policy", type=click.Choice(["strict", "report"]),
                 help="strict: computing below the precision contract rejects the candidate; report: only flags it."),
    click.option("--baselines", help="Comma list of baselines to compare with: eager, compile (default: both)."),
    click.option("--fresh-baselines", is_flag=True, default=None,
                 help="Measure the baselines again instead of reading them from the baseline cache (and keep the "
                      "new ones there)."),
    click.option("--sandbox", type=click.Choice(["auto", "off", "required"]),
                 help="Run candidates in the Linux namespace sandbox: auto (where the machine allows it), off, or "
                      "required (harness.sandbox; docs/trust.md)."),
    timer_flag,
]


def harness_option_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the shared harness flags to ``command``; it receives them as keyword arguments (see
    :func:`harness_settings`)."""
    for flag in reversed(_FLAGS):
        command = flag(command)
    return command


def harness_settings(flags: dict[str, Any]) -> dict[str, Any]:
    """Pop the shared harness flags out of a command's keyword arguments: the settings they set (dotted keys;
    None where a flag was not given)."""
    baselines = flags.pop("baselines")
    return {
        "harness.trials": flags.pop("trials"), "harness.warmup": flags.pop("warmup"),
        "harness.repetitions": flags.pop("repetitions"), "harness.cheat_policy": flags.pop("policy"),
        PRECISION_SETTING: flags.pop("precision"), "harness.precision_policy": flags.pop("precision_policy"),
        "harness.baselines": [b.strip() for b in baselines.split(",") if b.strip()] if baselines else None,
        "harness.baseline_cache": "refresh" if flags.pop("fresh_baselines") else None,
        "harness.sandbox": flags.pop("sandbox"),
        TIMER_SETTING: flags.pop("timer"),
        **shapes_settings(flags.pop("shapes"), flags.pop("time_shapes")),
    }
