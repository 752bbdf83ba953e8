"""``kforge check PROBLEM``: validate a problem file and describe it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from ..app import App
from ..errors import KForgeError
from ..harness.host.namespaces import sandbox_status
from ..problem import load_problem, time_reference_forward
from ..report.tables import Column, fitted_table

_COLUMNS = (Column(""), Column("value", fold=True))


@click.command()
@click.argument("problem_path", metavar="[PROBLEM]", type=click.Path(path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the description (and the sandbox's status) as JSON.")
@click.option("--sandbox", "show_sandbox", is_flag=True,
              help="Say whether candidates run in the worker sandbox here, and why (docs/trust.md); PROBLEM may "
                   "then be left out.")
@click.pass_obj
def check(app: App, problem_path: Path | None, as_json: bool, show_sandbox: bool) -> None:
    """Validate PROBLEM (a KernelBench-format file) and print its inputs, outputs and reference time; with
    --sandbox, also (or only) whether candidates run in the worker sandbox here."""
    settings = app.settings()  # a broken --config, kforge.toml or KFORGE_* setting is reported here too
    if problem_path is None and not show_sandbox:
        raise KForgeError("kforge check needs a PROBLEM file (or --sandbox)")
    document: dict[str, Any] = {}
    if show_sandbox:
        sandbox = _sandbox(settings.harness.sandbox)
        if as_json:
            document["sandbox"] = sandbox
        else:
            click.echo(sandbox["summary"])
    if problem_path is None:
        if as_json:
            click.echo(json.dumps(document, indent=2))
        return
    problem = load_problem(problem_path)
    seconds = time_reference_forward(problem)
    if as_json:
        click.echo(json.dumps({
            "name": problem.name,
            "path": str(problem.path),
            "inputs": [spec.describe() for spec in problem.inputs],
            "init_inputs": [spec.describe() for spec in problem.init_inputs],
            "outputs": [spec.describe() for spec in problem.outputs],
            "parameter_count": problem.parameter_count,
            "reference_forward_cpu_ms": seconds * 1e3,
            **document,
        }, indent=2))
        return
    rows = [*([f"init input {i}", spec.describe()] for i, spec in enumerate(problem.init_inputs)),
            *([f"input {i}", spec.describe()] for i, spec in enumerate(problem.inputs)),
            *([f"output {i}", spec.describe()] for i, spec in enumerate(problem.outputs)),
            ["parameters", f"{problem.parameter_count:,}"], ["reference forward (CPU)", f"{seconds * 1e3:.3f} ms"]]
    console = Console(soft_wrap=True)
    console.print(Text(f"{problem.name}  ({problem.path})"))  # a path stays whole, to be copied
    console.print(fitted_table(_COLUMNS, rows, console.width))
    click.echo("problem OK")


def _sandbox(mode: str) -> dict[str, Any]:
    """Whether candidates run in the sandbox here under ``harness.sandbox = mode``: ``mode``, ``on``,
    ``available`` (whether this machine allows it), ``why`` and the one-line ``summary``. Raises when it is
    required but unavailable."""
    status = sandbox_status()
    on = status.available and mode != "off"
    if mode == "off":
        would = "available" if status.available else "unavailable"
        summary = f"sandbox: off (harness.sandbox = \"off\"); it would be {would} here: {status.why}"
    elif status.available:
        summary = (f"sandbox: on (harness.sandbox = \"{mode}\"): {status.why}; a candidate sees no other process, "
                   "no network, neither the runs directory nor the home directory, and writes only to its scratch "
                   "directory and the build caches")
    elif mode == "required":
        raise KForgeError(f"sandbox: required but unavailable: {status.why}")
    else:
        summary = (f"sandbox: unavailable, workers run without it: {status.why}; candidates get an environment "
                   "without secrets, resource limits and their own process group only (docs/trust.md)")
    return {"mode": mode, "on": on, "available": status.available, "why": status.why, "summary": summary}
