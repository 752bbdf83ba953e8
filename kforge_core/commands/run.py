"""``kforge run PROBLEM --backend NAME --llm PROVIDER:MODEL``: the agent loop, from reference to best kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click
from rich.console import Console

from ..app import App
from ..errors import KForgeError
from ..loop.progress import RichProgress
from ..loop.session import plan_run, resume_run, start_run
from ..report.console import print_summary
from ..retrieval import REFERENCE_MODES
from ..store import RunStore
from .backend_flags import backend_option_flags, settings_with_backend_options
from .evaluation_flags import evaluation_flags, evaluation_settings
from .devices_flag import parse_devices
from .exit_codes import EXIT_INCORRECT
from .precision_flag import SETTING as PRECISION_SETTING
from .precision_flag import precision_flag
from .shapes_flags import shapes_flag, shapes_settings, time_shapes_flag
from .timer_flag import SETTING as TIMER_SETTING
from .timer_flag import timer_flag

BUDGET_FLAGS = {
    "functional_attempts": "budget.functional_attempts",
    "optimization_rounds": "budget.optimization_rounds",
    "max_llm_calls": "budget.max_llm_calls",
    "max_tokens": "budget.max_tokens",
    "max_cost": "budget.max_cost_usd",
    "max_wall": "budget.max_wall_s",
}


def budget_option_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """The budget flags of a run (``kforge run``, and each problem's run in ``kforge bench --llm``)."""
    for flag in reversed([
        click.option("--functional-attempts", type=int, help="Attempts to reach a correct candidate."),
        click.option("--optimization-rounds", type=int, help="Rounds of profile -> analysis -> new candidate."),
        click.option("--max-llm-calls", type=int, help="Most LLM requests in the run, retries included."),
        click.option("--max-tokens", type=int, help="Most tokens (input plus output) in the run."),
        click.option("--max-cost", type=float, help="Most USD in the run (needs [llm] prices)."),
        click.option("--max-wall", type=float, help="Most seconds of wall time in the run."),
    ]):
        command = flag(command)
    return command


@click.command()
@click.argument("problem_path", metavar="PROBLEM", required=False, type=click.Path(path_type=Path))
@click.option("--backend", help="Backend to write the kernel for (see `kforge backends`).")
@click.option("--llm", "model", metavar="PROVIDER:MODEL",
              help="Model of the generation agent (and of the analyst unless --analyst-llm): openai:gpt-4.1, "
                   "anthropic:MODEL, ollama:MODEL, openai-like:MODEL, replay:FILE.jsonl, corpus:DIR (a stand-in "
                   "answering with kernels from DIR).")
@click.option("--analyst-llm", "analyst_model", metavar="PROVIDER:MODEL", help="Model of the analysis agent.")
@click.option("--base-url", help="Server address for openai-like (and a custom endpoint for openai/anthropic/ollama).")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), help="Where runs are kept.")
@click.option("--prompts-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Directory of prompt templates that replace the shipped ones, file by file.")
@click.option("--reference", "reference_file", type=click.Path(dir_okay=False, path_type=Path),
              help="A working kernel for this problem (e.g. for another backend) to show the generation agent.")
@click.option("--reference-run", metavar="RUN_ID", help="Show the generation agent the best kernel of an earlier run.")
@click.option("--references", "references", type=click.Choice(REFERENCE_MODES),
              help="auto (the default): show the generation agent the related kernels the kernel index holds "
                   "(`kforge index`, `kforge search`); none: show none ([retrieval] references).")
@click.option("--profile-image", "profile_images", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", help="A screenshot of a GUI profiler (PNG, JPEG) shown to the analysis agent with "
                                   "every prompt; repeatable ([analysis] images).")
@click.option("--resume", "resume_id", metavar="RUN_ID", help="Continue a stopped or killed run.")
@click.option("--width", type=int, help="Candidates asked for at once in each functional attempt and optimization "
                                        "round (default 1: one at a time; [loop] width).")
@click.option("--keep", type=int, help="The best K candidates kept as the parents of the next round, each profiled "
                                       "and analysed (default 1; [loop] keep).")
@click.option("--devices", metavar="0,1", help="Evaluate a round's candidates on these units of the device, one at a "
                                                "time on each ([loop] devices).")
@budget_option_flags
@evaluation_flags
@shapes_flag
@time_shapes_flag
@precision_flag
@timer_flag
@backend_option_flags
@click.pass_context
def run(ctx: click.Context, problem_path: Path | None, backend: str | None, model: str | None,
        analyst_model: str | None, base_url: str | None, runs_dir: Path | None, prompts_dir: Path | None,
        reference_file: Path | None, reference_run: str | None, references: str | None,
        profile_images: tuple[Path, ...],
        resume_id: str | None, precision: str | None, timer: str | None, shapes: str | None,
        time_shapes: bool | None,
        backend_options: tuple[str, ...], sanitize: bool, atol: float | None, rtol: float | None,
        candidate_class: str | None, width: int | None, keep: int | None, devices: str | None,
        **budget_flags: object) -> None:
    """Turn PROBLEM (a PyTorch reference, KernelBench format) into the fastest correct kernel KForge can find.

    Exit status: 0 when the run found a correct candidate, 3 when it found none, 1 for a mistake you can act on,
    2 for a command line click cannot parse.
    """
    app: App = ctx.obj
    budget = {BUDGET_FLAGS[k]: v for k, v in budget_flags.items() if v is not None}
    evaluation = {**evaluation_settings(atol, rtol, candidate_class), **shapes_settings(shapes, time_shapes)}
    if resume_id is not None:
        if (problem_path is not None or backend or model or analyst_model or reference_file or reference_run
                or references or backend_options or sanitize or profile_images or timer or width or keep
                or devices or any(v is not None for v in evaluation.values())):
            raise KForgeError("--resume continues a run as it was started; give only RUN_ID, --runs-dir and budgets")
        settings = app.settings(runs_dir=runs_dir)
    elif problem_path is None:
        raise KForgeError("give a PROBLEM file to start a run, or --resume RUN_ID to continue one")
    else:
        settings = settings_with_backend_options(app, {
            "backend": backend, "runs_dir": runs_dir, "prompts_dir": prompts_dir, "llm.model": model,
            "llm.analyst_model": analyst_model, "llm.base_url": base_url,
            "analysis.images": tuple(profile_images) or None, PRECISION_SETTING: precision, TIMER_SETTING: timer,
            **budget, **evaluation, "retrieval.references": references, "loop.width": width, "loop.keep": keep,
            "loop.devices": parse_devices(devices) if devices else None,
        }, backend_options, sanitize)
    console = Console(highlight=False, soft_wrap=True)
    with RunStore(settings.runs_dir) as store, RichProgress(console) as progress:
        if resume_id is not None:
            overrides = {key.split(".", 1)[1]: value for key, value in budget.items()}
            result = resume_run(app, store, resume_id, progress, budget=overrides, precision=precision)
        else:
            plan = plan_run(settings, problem_path, store=store, reference_file=reference_file,
                            reference_run=reference_run)
            result = start_run(app, plan, store, progress)
    print_summary(result.outputs.report, console)
    console.print(f"details: kforge show {result.run_id}" + (f" --runs-dir {runs_dir}" if runs_dir else ""))
    if not result.found_correct:
        ctx.exit(EXIT_INCORRECT)
