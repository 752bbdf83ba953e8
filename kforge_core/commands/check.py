"""``kforge check PROBLEM``: validate a problem file and describe it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from ..app import App
from ..byte_words import byte_words
from ..codec import to_json
from ..errors import KForgeError
from ..harness.host.limits import describe_limits
from ..harness.host.namespaces import sandbox_status
from ..harness.host.worker_start import forks
from ..harness.problem_size import call_bytes, call_peak_bytes, footprint_bytes
from ..precision_contract import contract_named
from ..problem import load_problem, time_reference_forward
from ..records import Problem
from ..report.tables import Column, fitted_table
from ..settings import HarnessSettings
from ..shapes.words import plan_lines
from ..speed_of_light import SolBound, problem_bound
from .device_peaks import device_peaks
from .precision_flag import precision_flag

_COLUMNS = (Column(""), Column("value", fold=True))


@click.command()
@click.argument("problem_path", metavar="[PROBLEM]", type=click.Path(path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the description (and the sandbox's status) as JSON.")
@click.option("--sandbox", "show_sandbox", is_flag=True,
              help="Say whether candidates run in the worker sandbox here, and why, and which limits bound a "
                   "worker (docs/trust.md); PROBLEM may then be left out.")
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
    """Validate PROBLEM (a KernelBench-format file) and print its inputs, outputs and reference time, with --device
    its speed-of-light bound on that device; with --sandbox, also (or only) whether candidates run in the worker
    sandbox here and what limits them."""
    settings = app.settings()  # a broken --config, kforge.toml or KFORGE_* setting is reported here too
    if problem_path is None and not show_sandbox:
        raise KForgeError("kforge check needs a PROBLEM file (or --sandbox)")
    if device_name is not None and device_type is None:
        raise KForgeError("--gpu names a device of the type --device gives", hint="add --device cuda (or xpu, mps)")
    document: dict[str, Any] = {}
    if show_sandbox:
        sandbox = _sandbox(settings.harness.sandbox)
        limits = _limits(settings.harness)
        start = _worker_start(settings.harness.worker_start)
        if as_json:
            document["sandbox"] = {**sandbox, "limits": limits}
            document["worker_start"] = start
        else:
            click.echo(sandbox["summary"])
            click.echo(start["summary"])
            for line in limits:
                click.echo(f"limit: {line['name']}: {line['applies']}")
    if problem_path is None:
        if as_json:
            click.echo(json.dumps(document, indent=2))
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
            "weight_bytes": problem.weight_bytes,
            "footprint_bytes": footprint_bytes(problem),
            "forward_peak_bytes": problem.forward_peak_bytes,
            "call_peak_bytes": call_peak_bytes(problem),
            "reference_forward_cpu_ms": seconds * 1e3,
            "shapes": to_json(problem.shapes),
            **bound_json,
            **document,
        }, indent=2, allow_nan=False))
        return
    rows = [*([f"init input {i}", spec.describe()] for i, spec in enumerate(problem.init_inputs)),
            *([f"input {i}", spec.describe()] for i, spec in enumerate(problem.inputs)),
            *([f"output {i}", spec.describe()] for i, spec in enumerate(problem.outputs)),
            ["parameters", f"{problem.parameter_count:,}"],
            ["footprint", f"{byte_words(footprint_bytes(problem))}: one call's inputs and outputs "
                          f"{byte_words(call_bytes(problem))}, parameters and buffers "
                          f"{byte_words(problem.weight_bytes)}"],
            ["call at its peak", f"{byte_words(call_peak_bytes(problem))}: inputs, parameters and buffers, and "
                                 + (f"the forward's own tensors at most, {byte_words(problem.forward_peak_bytes)}"
                                    if problem.forward_peak_bytes else "the outputs (what the forward made on "
                                    "the way is not known)")],
            ["reference forward (CPU)", f"{seconds * 1e3:.3f} ms"]]
    console = Console(soft_wrap=True)
    console.print(Text(f"{problem.name}  ({problem.path})"))  # a path stays whole, to be copied
    console.print(fitted_table(_COLUMNS, rows, console.width))
    for line in plan_lines(problem.shapes):
        console.print(Text(line))
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
                   "no network, neither the runs directory nor the home directory, and writes only to its own "
                   "worker's directory and the build caches")
    elif mode == "required":
        raise KForgeError(f"sandbox: required but unavailable: {status.why}")
    else:
        summary = (f"sandbox: unavailable, workers run without it: {status.why}; candidates get an environment "
                   "without secrets, resource limits and their own process group only (docs/trust.md)")
    return {"mode": mode, "on": on, "available": status.available, "why": status.why, "summary": summary}


def _worker_start(mode: str) -> dict[str, Any]:
    """How a worker starts here under ``harness.worker_start = mode``: ``mode``, ``forked`` and the ``summary``."""
    forked = forks(mode)
    how = ("forked from a template process that imported torch once (if the template cannot start, that is said "
           "and workers are executed instead)" if forked else "executed, each a new interpreter")
    return {"mode": mode, "forked": forked, "summary": f"workers: {how} (harness.worker_start = \"{mode}\")"}


def _limits(settings: HarnessSettings) -> list[dict[str, str]]:
    """What bounds a worker here, one record a limit (docs/trust.md, "Resource limits")."""
    sandboxed = settings.sandbox != "off" and sandbox_status().available
    return [{"name": line.name, "applies": line.applies} for line in describe_limits(settings, sandboxed)]
