"""``kforge check PROBLEM``: validate a problem file and describe it."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from ..app import App
from ..problem import load_problem, time_reference_forward
from ..report.tables import Column, fitted_table

_COLUMNS = (Column(""), Column("value", fold=True))


@click.command()
@click.argument("problem_path", metavar="PROBLEM", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the description as JSON.")
@click.pass_obj
def check(app: App, problem_path: Path, as_json: bool) -> None:
    """Validate PROBLEM (a KernelBench-format file) and print its inputs, outputs and reference time."""
    app.settings()  # a broken --config, kforge.toml or KFORGE_* setting is reported here too
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
    table = fitted_table(_COLUMNS, rows, console.width, title=f"{problem.name}  ({problem.path})")
    console.print(table)
    click.echo("problem OK")
