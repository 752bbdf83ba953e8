"""The flags every command that evaluates candidates shares: the tolerance (``--atol``, ``--rtol``) and the
candidate's class (``--candidate-class``). They land in ``[harness]`` on top of the config file and the
environment; :func:`evaluation_settings` turns them into the dotted keys ``App.settings`` takes."""

from __future__ import annotations

from typing import Any, Callable

import click


def evaluation_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--atol``, ``--rtol`` and ``--candidate-class`` to ``command``."""
    for option in reversed((
        click.option("--atol", type=click.FloatRange(min=0), metavar="X",
                     help="Absolute tolerance for every output dtype, over [harness.tolerances] and the backend's "
                          "defaults."),
        click.option("--rtol", type=click.FloatRange(min=0), metavar="X",
                     help="Relative tolerance for every output dtype (as --atol)."),
        click.option("--candidate-class", metavar="NAME",
                     help="The class a candidate defines (default ModelNew; a candidate without one that defines "
                          "Model is evaluated as its Model)."),
    )):
        command = option(command)
    return command


def evaluation_settings(atol: float | None, rtol: float | None, candidate_class: str | None) -> dict[str, Any]:
    """The settings these flags set, as dotted keys (None: not given)."""
    return {"harness.atol": atol, "harness.rtol": rtol, "harness.candidate_class": candidate_class}
