"""``kforge hotspots MODEL --backend NAME``: the model's phases profiled on the backend's device, device time
ranked by the modules a kernel replaces, and with ``--extract DIR`` the hot ones written as problems."""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
from pathlib import Path

import click

from ..app import App
from ..errors import KForgeError
from ..hotspots.model_file import write_model_file
from ..hotspots.plot import plot_shares
from ..hotspots.report import markdown, table_lines
from ..hotspots.request import HotspotsRequest
from ..integrate.host import run_worker

_DTYPES = ("float32", "float16", "bfloat16")
REPORT, DOCUMENT, PLOT = "hotspots.md", "hotspots.json", "hotspots.png"


@click.command("hotspots")
@click.argument("model")
@click.option("--backend", required=True, help="The backend whose device runs the model (cpu, cuda, triton, ...).")
@click.option("--dtype", type=click.Choice(_DTYPES), default="float32", show_default=True,
              help="The dtype the model runs in.")
@click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True,
              help="Sequences in a causal LM's batch.")
@click.option("--prompt-tokens", type=click.IntRange(min=1), default=128, show_default=True,
              help="Prompt length of a causal LM's prefill.")
@click.option("--decode-tokens", type=click.IntRange(min=1), default=32, show_default=True,
              help="Decode steps of one request (the decode phase's weight, and the steps timed).")
@click.option("--profile-steps", type=click.IntRange(min=1), default=4, show_default=True,
              help="Prefill or forward steps in each session of the profiler (a decode session has --decode-tokens).")
@click.option("--warmup", type=click.IntRange(min=0), default=2, show_default=True, help="Untimed steps first.")
@click.option("--repetitions", type=click.IntRange(min=1), default=10, show_default=True,
              help="Timed steps of each phase, each followed by a profiled session (the medians are the figures).")
@click.option("--extract", "extract_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write each hot group as a KernelBench problem here, with model.json.")
@click.option("--save-inputs", is_flag=True,
              help="With --extract: also save each problem's inputs as captured from the model, the module's "
                   "weights and its outputs (DIR/captured/NAME.pt).")
@click.option("--min-share", type=click.FloatRange(min=0, max=1), default=0.01, show_default=True,
              help="The share of its phase's device time a group needs to be extracted.")
@click.option("--group", "extra_classes", multiple=True, metavar="CLASS",
              help="Treat modules of class CLASS as a group too (beside norms, MLPs, attention, MoE blocks, ...); "
                   "repeatable.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where the report, its JSON and the chart go (default: the --extract folder, else "
                   "RUNS_DIR/hotspots-TIME).")
@click.option("--top", type=click.IntRange(min=1), default=15, show_default=True, help="Rows shown per phase.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=1), default=1800, show_default=True,
              help="Seconds the worker process may take.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), help="Where runs are kept.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def hotspots(app: App, model: str, backend: str, dtype: str, batch: int, prompt_tokens: int, decode_tokens: int,
             profile_steps: int, warmup: int, repetitions: int, extract_dir: Path | None, save_inputs: bool,
             min_share: float, extra_classes: tuple[str, ...], out_dir: Path | None, top: int, timeout_s: float,
             runs_dir: Path | None, as_json: bool) -> None:
    """Profile MODEL (package.module:build_model, returning the module and its example inputs; or a transformers
    config or checkpoint directory, built with random weights) on the backend's device, phase by phase (a causal
    LM's prefill and decode; any other model's forward), and rank where the device time goes by the modules a
    kernel replaces: calls a step, share, and the Amdahl ceiling. The model runs in a worker process."""
    settings = app.settings(runs_dir=runs_dir)
    registered = app.backend(backend)
    availability = app.registry.availability(backend)
    if not availability.available:
        raise KForgeError(f"backend {backend} cannot run the model here: {availability.reason}")
    if save_inputs and extract_dir is None:
        raise KForgeError("--save-inputs saves what --extract writes", hint="add --extract DIR")
    spec = registered.backend
    device_class = spec.device_class
    request = HotspotsRequest(
        model=model, backend=backend, programming_model=spec.programming_model, device=spec.device,
        device_class=f"{device_class.__module__}:{device_class.__qualname__}" if device_class else "",
        dtype=dtype, batch=batch, prompt_tokens=prompt_tokens, decode_tokens=decode_tokens,
        profile_steps=profile_steps, warmup=warmup, repetitions=repetitions,
        extract_dir=str(extract_dir.resolve()) if extract_dir else "", save_inputs=save_inputs, min_share=min_share,
        extra_classes=extra_classes, workdir=os.getcwd())
    with tempfile.TemporaryDirectory(prefix="kforge-hotspots-") as tmp:
        report = run_worker(request, Path(tmp) / "worker", timeout_s, "kforge_core.hotspots.worker", "hotspots")
    report["extracted"] = bool(extract_dir)
    out = out_dir or extract_dir or settings.runs_dir / f"hotspots-{time.strftime('%Y%m%d-%H%M%S')}-" \
                                                       f"{secrets.token_hex(2)}"
    written = _write_outputs(out, report, extract_dir)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    for line in table_lines(report, top):
        click.echo(line)
    click.echo("")
    for path in written:
        click.echo(f"  {path}")


def _write_outputs(out: Path, report: dict, extract_dir: Path | None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out / DOCUMENT).write_text(json.dumps(report, indent=2))
    (out / REPORT).write_text(markdown(report, PLOT))
    plot_shares(report, report["model"], out / PLOT)
    written = [out / REPORT, out / PLOT]
    if extract_dir is not None:
        written.append(write_model_file(extract_dir, report))
    return written
