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
from ..precision_contract import contract_named
from ..problem import load_problem, time_reference_forward
from ..records import Problem
from ..report.tables import Column, fitted_table
from ..speed_of_light import SolBound, problem_bound
from .device_peaks import device_peaks
from .precision_flag import precision_flag
from ..settings import HarnessSettings

_COLUMNS = (Column(""), Column("value", fold=True))


@click.command()
@click.argument("problem_path", metavar="PROBLEM", type=click.Path(path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the description as JSON.")
@click.option("--sandbox", "show_sandbox", is_flag=True,
              help="Say whether candidates run in the worker sandbox here, and why (docs/trust.md).")
@click.option("--device", "device_type", metavar="TYPE",
              help="Also give PROBLEM's speed-of-light bound on a device of this type (cpu, cuda, xpu, mps): its "
                   "bytes, its FLOPs by unit, the device's peaks with their sources, both roofs and which binds. "
                   "The device here is asked (the host CPU is measured once and cached); see --gpu.")
@click.option("--gpu", "device_name", metavar="NAME",
              help="With --device: the published figures of the device called NAME ('H100 SXM', 'H200', 'B200', "
                   "'Apple M2 Max'), for a device that is not here.")
@click.option("--remeasure", is_flag=True,
              help="With --device: measure again the peaks measured on the device here (the host CPU's), and keep "
                   "them in place of the cached ones (a measurement taken while the machine was busy is low).")
@precision_flag
@click.pass_obj
def check(app: App, problem_path: Path | None, as_json: bool, show_sandbox: bool, device_type: str | None,
          device_name: str | None, remeasure: bool, precision: str | None) -> None:
    """Validate PROBLEM (a KernelBench-format file) and print its inputs, outputs and reference time, and with
    --device its speed-of-light bound on that device."""
    settings = app.settings()  # a broken --config, kforge.toml or KFORGE_* setting is reported here too
    if device_name is not None and device_type is None:
        raise KForgeError("--gpu names a device of the type --device gives", hint="add --device cuda (or xpu, mps)")
    if show_sandbox:
        _report_sandbox(settings.harness.sandbox)
        _report_limits(settings.harness)
    if problem_path is None:
        if not show_sandbox:
            raise KForgeError("kforge check needs a PROBLEM file (or --sandbox)")
        return
    problem = load_problem(problem_path)
    bound = _bound(app, problem, device_type, device_name, precision or settings.harness.precision,
                   settings.cache_dir, remeasure) if device_type is not None else None
    seconds = time_reference_forward(problem)
    if as_json:
        bound_json = {"speed_of_light": bound.to_json()} if bound is not None else {}
        click.echo(json.dumps({
            "name": problem.name,
            "path": str(problem.path),
            "inputs": [spec.describe() for spec in problem.inputs],
            "init_inputs": [spec.describe() for spec in problem.init_inputs],
            "outputs": [spec.describe() for spec in problem.outputs],
            "parameter_count": problem.parameter_count,
            "reference_forward_cpu_ms": seconds * 1e3,
            **bound_json,
        }, indent=2, allow_nan=False))
        return
    rows = [*([f"init input {i}", spec.describe()] for i, spec in enumerate(problem.init_inputs)),
            *([f"input {i}", spec.describe()] for i, spec in enumerate(problem.inputs)),
            *([f"output {i}", spec.describe()] for i, spec in enumerate(problem.outputs)),
            ["parameters", f"{problem.parameter_count:,}"], ["reference forward (CPU)", f"{seconds * 1e3:.3f} ms"]]
    console = Console(soft_wrap=True)
    console.print(Text(f"{problem.name}  ({problem.path})"))  # a path stays whole, to be copied
    console.print(fitted_table(_COLUMNS, rows, console.width))
    if bound is not None:
        console.print(Text(f"speed of light on the {bound.device} ({bound.contract} contract):"))
        for line in bound.describe():
            console.print(Text(f"  {line}"))
    click.echo("problem OK")


def _bound(app: App, problem: Problem, device_type: str, device_name: str | None, contract: str,
           cache_dir: Path, remeasure: bool) -> SolBound:
    """PROBLEM's bound on the device ``--device`` and ``--gpu`` name."""
    peaks, flushes = device_peaks(app.registry, device_type, device_name, cache_dir, remeasure)
    return problem_bound(problem, peaks, contract_named(contract), flushes_caches=flushes)


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
