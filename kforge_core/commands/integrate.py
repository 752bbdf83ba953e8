"""``kforge integrate MODEL --kernels DIR_OR_RUNS --backend NAME``: accepted kernels swapped into a model, its
outputs checked against the untouched model under the precision contract, both timed end to end."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import click
from click.core import ParameterSource

from ..app import App
from ..errors import KForgeError
from ..hotspots.model_file import read_model_file
from ..hotspots.projection import project, projection_lines
from ..integrate.host import kernel_packages, run_worker
from ..integrate.report import report_lines
from ..integrate.request import IntegrateRequest, parse_mapping
from ..tolerances import tolerance_in_effect
from .precision_flag import precision_flag

_DTYPES = ("float32", "float16", "bfloat16")


@click.command("integrate")
@click.argument("model")
@click.option("--kernels", "sources", required=True, multiple=True, metavar="DIR_OR_RUNS",
              help="An exported package's directory, or runs or benches (ids or directories, comma-separated) "
                   "whose accepted kernels are swapped in as they are; repeatable.")
@click.option("--map", "mappings", multiple=True, metavar="Layer=kernel[:attr=path,...]",
              help="Swap kernel into every module of class Layer (reading ModelNew's attr at path on it); "
                   "repeatable. Without --map, kernels go where they compute what a layer computes.")
@click.option("--backend", required=True, help="The backend whose device runs the model (cpu, cuda, ...).")
@precision_flag
@click.option("--dtype", type=click.Choice(_DTYPES), default="float32", show_default=True,
              help="The dtype the model runs in.")
@click.option("--warmup", type=click.IntRange(min=0), help="Untimed runs before timing (harness.warmup).")
@click.option("--repetitions", type=click.IntRange(min=1), help="Timed runs (harness.repetitions).")
@click.option("--prompt-tokens", type=click.IntRange(min=1), default=128, show_default=True,
              help="Prompt length of a causal LM's prefill.")
@click.option("--decode-tokens", type=click.IntRange(min=1), default=32, show_default=True,
              help="Tokens a causal LM decodes, one at a time.")
@click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True,
              help="Sequences in a causal LM's batch.")
@click.option("--hotspots", "hotspots_path", type=click.Path(exists=True, path_type=Path), metavar="MODEL_JSON",
              help="kforge hotspots' model.json (or its folder): also project each kernel's gain from the phases' "
                   "shares and print it beside the measured one (its batch and lengths are taken unless given).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=1), default=1800, show_default=True,
              help="Seconds the worker process may take.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), help="Where runs are kept.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def integrate(app: App, model: str, sources: tuple[str, ...], mappings: tuple[str, ...], backend: str,
              precision: str | None, dtype: str, warmup: int | None, repetitions: int | None, prompt_tokens: int,
              decode_tokens: int, batch: int, hotspots_path: Path | None, timeout_s: float, runs_dir: Path | None,
              as_json: bool) -> None:
    """Swap accepted kernels into MODEL (package.module:build_model, returning the module and its example inputs;
    or a Hugging Face model id or path, built from its config with random weights) and report which layers
    changed, the per-layer and end-to-end speedups (prefill and decode tokens/s for a causal LM), whether the
    whole model's outputs stay within the precision contract, and what did not match and why. The model runs in a
    worker process."""
    settings = app.settings(**{"runs_dir": runs_dir, "harness.precision": precision, "harness.warmup": warmup,
                               "harness.repetitions": repetitions})
    registered = app.backend(backend)
    availability = app.registry.availability(backend)
    if not availability.available:
        raise KForgeError(f"backend {backend} is not available here: {availability.reason}")
    try:
        parsed = tuple(parse_mapping(text) for text in mappings)
    except ValueError as exc:
        raise KForgeError(str(exc)) from None
    spec = registered.backend
    device_class = spec.device_class
    harness = settings.harness
    tolerances = tuple((dtype_name, *tolerance_in_effect(dtype_name, harness, spec.default_tolerance, backend).pair)
                       for dtype_name in ("float64", *_DTYPES))
    document = read_model_file(hotspots_path) if hotspots_path is not None else None
    if document is not None:
        given = click.get_current_context().get_parameter_source
        lengths = {"prompt_tokens": prompt_tokens, "decode_tokens": decode_tokens, "batch": batch}
        for name in lengths:
            if given(name) is not ParameterSource.COMMANDLINE and document.get(name):
                lengths[name] = document[name]
        prompt_tokens, decode_tokens, batch = lengths["prompt_tokens"], lengths["decode_tokens"], lengths["batch"]
    with tempfile.TemporaryDirectory(prefix="kforge-integrate-") as tmp:
        home = Path(tmp)
        packages = kernel_packages([s for text in sources for s in text.split(",") if s], settings.runs_dir, home,
                                   lambda name: app.backend(name).backend.device)
        request = IntegrateRequest(
            model=model, packages=packages, mappings=parsed, backend=backend,
            programming_model=spec.programming_model, device=spec.device,
            device_class=f"{device_class.__module__}:{device_class.__qualname__}" if device_class else "",
            precision=harness.precision, tolerances=tolerances, warmup=harness.warmup,
            repetitions=harness.repetitions, dtype=dtype, prompt_tokens=prompt_tokens, decode_tokens=decode_tokens,
            batch=batch, workdir=os.getcwd(), hotspots=document)
        report = run_worker(request, home / "worker", timeout_s)
    if document is not None:
        report["projection"] = project(document, report)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    for line in report_lines(report) + (projection_lines(report["projection"]) if document is not None else []):
        click.echo(line)
