"""``kforge bench SUITE --backend NAME (--solutions DIR | --llm PROVIDER:MODEL)``: a suite of problems, with
KernelBench's fast_p, geomean speedups and a report; ``--resume BENCH_ID`` continues a killed bench."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from ..app import App
from ..bench import ExecutorChoice, plan_bench, resume_bench, start_bench
from ..bench.shape_summary import shape_summary_line
from ..bench.interrupt import GracefulStop
from ..errors import KForgeError
from .devices_flag import parse_devices
from ..sol_words import percent
from .backend_flags import backend_option_flags, settings_with_backend_options
from .evaluation_flags import evaluation_flags, evaluation_settings
from .harness_flags import harness_option_flags, harness_settings
from .run import BUDGET_FLAGS, budget_option_flags
from ..plural import counted


@click.command()
@click.argument("suite", required=False, type=click.Path(path_type=Path))
@click.option("--backend", "backend_name", help="The backend to evaluate on (default: the configured one).")
@click.option("--solutions", type=click.Path(path_type=Path),
              help="Evaluate existing solutions: a directory with one file per problem, named as the problem's file "
                   "(flat, or mirroring the suite's folders), or a JSONL file of {\"problem\": ..., \"code\": ...}.")
@click.option("--llm", "model", metavar="PROVIDER:MODEL",
              help="Run the agent loop on every problem with this model, each a run in the run store.")
@click.option("--analyst-llm", "analyst_model", metavar="PROVIDER:MODEL", help="Model of the analysis agent.")
@click.option("--base-url", help="Server address for openai-like (and a custom endpoint for the others).")
@click.option("--filter", "filters", multiple=True, metavar="GLOB",
              help="Only the problems whose key (level1/19_ReLU), path or file name matches; repeatable.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: one harness per device of --devices in this process; ray: tasks on a Ray cluster.")
@click.option("--devices", metavar="0,1",
              help="Local executor: the device indices, one harness each (default: the device as this process "
                   "sees it). On the host CPU the harnesses share the CPU.")
@click.option("--ray-address", metavar="ADDRESS",
              help="Ray executor: the cluster (HOST:PORT, ray://..., auto); by default a local one.")
@click.option("--json", "as_json", is_flag=True,
              help="Print {\"problems\": [...], \"summary\": {...}} (progress lines go to stderr).")
@click.option("--no-timing", is_flag=True, help="Check correctness only.")
@click.option("--build-jobs", type=click.IntRange(min=0), metavar="N",
              help="Solutions of the whole suite built ahead, N at a time, while earlier problems are evaluated "
                   "(harness.prebuild_jobs; default: the cores less one, at most 16; 0: none).")
@click.option("--problem-budget", type=click.FloatRange(min=0), metavar="SECONDS",
              help="Seconds one problem's evaluation may take in all (harness.problem_budget_s, default 900; 0: no "
                   "budget); past it the problem is budget_exceeded and the bench goes on.")
@harness_option_flags
@click.option("--entry", default="model_new.py", show_default=True,
              help="The file defining ModelNew where a problem's solution is a directory.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where benches and runs are kept.")
@click.option("--resume", "resume_id", metavar="BENCH_ID", help="Continue a stopped or killed bench.")
@budget_option_flags
@evaluation_flags
@backend_option_flags
@click.pass_obj
def bench(app: App, suite: Path | None, backend_name: str | None, solutions: Path | None, model: str | None,
          analyst_model: str | None, base_url: str | None, filters: tuple[str, ...], executor: str,
          devices: str | None, ray_address: str | None, as_json: bool, no_timing: bool, build_jobs: int | None,
          problem_budget: float | None,
          entry: str,
          runs_dir: Path | None, resume_id: str | None, backend_options: tuple[str, ...], sanitize: bool,
          **flags: Any) -> None:
    """Evaluate every problem of SUITE (a directory of KernelBench-format problems, e.g. KernelBench's
    level1/, level2/, ... folders) with existing solutions or the agent loop, and report correctness, fast_p and
    the geomean speedups. Each result is kept in the run store as it comes."""
    choice = ExecutorChoice(executor, _devices(devices, executor), ray_address)
    harness = {**harness_settings(flags),
               **evaluation_settings(flags.pop("atol"), flags.pop("rtol"), flags.pop("candidate_class")),
               "harness.problem_budget_s": problem_budget, "harness.prebuild_jobs": build_jobs}
    budget = {BUDGET_FLAGS[name]: value for name, value in flags.items() if value is not None}
    console = Console(highlight=False, soft_wrap=True, stderr=as_json)

    def report(line: str) -> None:
        console.print(line, markup=False)

    stop = GracefulStop(report)
    if resume_id is not None:
        given = [suite, backend_name, solutions, model, analyst_model, base_url, *filters, *backend_options,
                 sanitize or None, no_timing or None, *budget.values(), *(v for v in harness.values() if v is not None)]
        if any(value is not None for value in given):
            raise KForgeError("--resume continues a bench as it was started; give only BENCH_ID, --runs-dir and "
                              "where it runs (--executor, --devices, --ray-address)")
        with stop:
            outcome = resume_bench(app, app.settings(runs_dir=runs_dir).runs_dir, resume_id, choice, report,
                                   stop.requested)
    else:
        if suite is None:
            raise KForgeError("give a SUITE directory to start a bench, or --resume BENCH_ID to continue one")
        if (solutions is None) == (model is None):
            raise KForgeError("give either --solutions DIR (evaluate existing solutions) or --llm PROVIDER:MODEL "
                              "(run the agent loop on every problem)")
        settings = settings_with_backend_options(app, {
            "backend": backend_name, "runs_dir": runs_dir, "llm.model": model, "llm.analyst_model": analyst_model,
            "llm.base_url": base_url, **harness, **budget,
        }, backend_options, sanitize)
        plan = plan_bench(settings, suite, filters=filters, solutions=solutions, entry=entry, measure=not no_timing)
        with stop:
            outcome = start_bench(app, plan, choice, report, stop.requested)
    if as_json:
        click.echo(json.dumps(outcome.document, indent=2, allow_nan=False))
    else:
        _print_summary(console, outcome.document["summary"])
        console.print(f"  {outcome.report_path}", markup=False)
    if stop.requested.is_set():
        where = f" --runs-dir {shlex.quote(str(runs_dir))}" if runs_dir is not None else ""
        click.echo(f"interrupted; the rest of the bench runs with: kforge bench --resume {outcome.info.id}{where}",
                   err=as_json)  # one line, never wrapped: it is to be copied
        click.get_current_context().exit(130)


def _devices(text: str | None, executor: str) -> tuple[int | None, ...]:
    if text is None:
        return (None,)
    if executor != "local":
        raise KForgeError("--devices is for the local executor; a Ray cluster gives each task its device")
    return parse_devices(text)


def _print_summary(console: Console, summary: dict[str, Any]) -> None:
    failures = ", ".join(f"{name} {count}" for name, count in summary["failures"].items()) or "none"
    fast = ", ".join(f"fast_{p} {v:.3f}" if v is not None else f"fast_{p} -" for p, v in summary["fast_p"].items())
    geomeans = ", ".join(f"{v:.2f}x vs {name}" for name, v in summary["geomean_speedup"].items() if v is not None)
    finished, total = summary["finished"], summary["total"]
    not_run = f"; {total - finished} of the {total} not run yet" if finished < total else ""
    console.print(f"{summary['correct']} of {finished} correct (failures: {failures}{not_run}); {fast} "
                  f"(against the faster baseline; {summary['precision']} precision contract)", markup=False)
    if "weighted_fast_p" in summary:
        weighted = ", ".join(f"fast_{p} {v:.3f}" if v is not None else f"fast_{p} -"
                             for p, v in summary["weighted_fast_p"].items())
        console.print(f"weighted by the model's time (model.json; its problems hold "
                      f"{summary['model_time_weighed']:.1%} of it): {weighted}", markup=False)
    if "across_shapes" in summary:
        console.print(shape_summary_line(summary["across_shapes"]), markup=False)
    if geomeans:
        timers = ", ".join(summary.get("timers") or []) or "wall"
        origins = ", ".join(f"{n} {origin}" for origin, n in (summary.get("baseline_origins") or {}).items())
        missing = "".join(f"; {counted(n, 'solution')} without a {name} figure (see its baseline_errors)"
                          for name, n in (summary.get("baselines_missing") or {}).items())
        console.print(f"geomean speedup ({timers} time; baselines: {origins or 'none measured'}): {geomeans}"
                      f"{missing}", markup=False)
    solutions = (summary.get("sol_fraction") or {}).get("solutions") or {}
    if solutions.get("count"):
        score = summary.get("geomean_sol_score")
        console.print(f"speed of light: geomean SOL score " + (f"{score:.3f}" if score is not None else "-")
                      + f"; the solutions at a median {percent(solutions['median'])} of the limit "
                        f"({solutions['count']} problems with a bound)", markup=False)
    if summary.get("evaluated_now"):
        console.print(f"{counted(summary['evaluated_now'], 'problem')} in {summary['wall_seconds']:.1f} s: "
                      f"{summary['seconds_per_problem']:.2f} s per problem", markup=False)
