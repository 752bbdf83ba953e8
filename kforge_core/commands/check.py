"""``kforge check PROBLEM``: validate a problem file and describe it."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from ..app import App
from ..errors import KForgeError
from ..harness.host.limits import describe_limits
from ..harness.host.namespaces import sandbox_status
from ..problem import load_problem, time_reference_forward
from ..report.tables import Column, fitted_table
from ..settings import HarnessSettings

_COLUMNS = (Column(""), Column("value", fold=True))


@click.command()
@click.argument("problem_path", metavar="PROBLEM", type=click.Path(path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the description as JSON.")
@click.option("--sandbox", "show_sandbox", is_flag=True,
              help="Say whether candidates run in the worker sandbox here, and why (docs/trust.md).")
@click.pass_obj
def check(app: App, problem_path: Path | None, as_json: bool, show_sandbox: bool) -> None:
    """Validate PROBLEM (a KernelBench-format file) and print its inputs, outputs and reference time."""
    settings = app.settings()  # a broken --config, kforge.toml or KFORGE_* setting is reported here too
    if show_sandbox:
        _report_sandbox(settings.harness.sandbox)
        _report_limits(settings.harness)
    if problem_path is None:
        if not show_sandbox:
            raise KForgeError("kforge check needs a PROBLEM file (or --sandbox)")
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


def _report_sandbox(mode: str) -> None:
    status = sandbox_status()
    if mode == "off":
        would = "available" if status.available else "unavailable"
        click.echo(f"sandbox: off (harness.sandbox = \"off\"); it would be {would} here: {status.why}")
    elif status.available:
        click.echo(f"sandbox: on (harness.sandbox = \"{mode}\"): {status.why}; a candidate sees no other process, "
                   "no network, neither the runs directory nor the home directory, and writes only to its scratch "
                   "directory and the build caches")
    elif mode == "required":
        raise KForgeError(f"sandbox: required but unavailable: {status.why}")
    else:
        click.echo(f"sandbox: unavailable, workers run without it: {status.why}; candidates get an environment "
                   "without secrets, resource limits and their own process group only (docs/trust.md)")


def _report_limits(settings: HarnessSettings) -> None:
    """What bounds a worker here: one line a limit (docs/trust.md, "Resource limits")."""
    sandboxed = settings.sandbox != "off" and sandbox_status().available
    for line in describe_limits(settings, sandboxed):
        click.echo(f"limit: {line.name}: {line.applies}")
