"""``kforge eval PROBLEM CANDIDATE... --backend NAME``: compile, verify, time (and profile) candidates."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..app import App
from ..errors import KForgeError
from ..candidate_module import syntax_error
from ..harness import Harness, Verdict
from ..harness.host.verdict_parts import unparsed_verdict
from ..harness.host.shape_timing import time_at_shapes
from ..harness.verdict import weighted_speedup
from ..report.shape_speedups import SHAPE_HEADERS, shape_rows
from ..problem import load_problem
from ..records import Candidate, SourceFile
from ..shapes.words import check_lines
from ..sol_words import bound_words, fractions_words
from ..report.tables import Column, fitted_table
from ..timing.wording import sources_of, statistic_words
from ..tolerances import describe_tolerances
from .backend_flags import backend_option_flags, settings_with_backend_options
from .eval_progress import EvalProgress
from .evaluation_flags import evaluation_flags, evaluation_settings
from .exit_codes import EXIT_INCORRECT
from .harness_flags import harness_option_flags, harness_settings


@click.command(name="eval")
@click.argument("problem_path", metavar="PROBLEM", type=click.Path(path_type=Path))
@click.argument("candidate_paths", metavar="CANDIDATE...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--backend", "backend_name", help="The backend to evaluate on (default: the configured one).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the verdict as one JSON document (several candidates: a JSON array of them).")
@click.option("--profile", is_flag=True, help="Also profile a correct candidate, and summarize the profile.")
@click.option("--no-timing", is_flag=True, help="Check correctness only.")
@harness_option_flags
@click.option("--entry", default="model_new.py", show_default=True,
              help="The file defining ModelNew when CANDIDATE is a directory.")
@click.option("--keep", "keep_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the scratch directories (captured output, profiler files) under this directory.")
@evaluation_flags
@backend_option_flags
@click.pass_obj
def eval_command(app: App, problem_path: Path, candidate_paths: tuple[Path, ...], backend_name: str | None, as_json: bool,
                 profile: bool, no_timing: bool, entry: str, keep_dir: Path | None, backend_options: tuple[str, ...],
                 sanitize: bool, atol: float | None, rtol: float | None, candidate_class: str | None,
                 **flags: Any) -> None:
    """Compile, verify and time each CANDIDATE (a file defining ModelNew, or a directory) against PROBLEM.

    Several candidates are evaluated one after another; where the backend can build ahead, the later ones build
    while the earlier ones are timed. Exit status: 0 when every candidate is correct, 3 when one is not, 1 for a
    mistake you can act on (a bad problem, setting or backend), 2 for a command line click cannot parse.
    """
    settings = settings_with_backend_options(app, {
        "backend": backend_name, **harness_settings(flags), **evaluation_settings(atol, rtol, candidate_class),
    }, backend_options, sanitize)
    backend = app.backend(settings.backend).backend  # a mistyped name is said before the problem loads torch
    candidates = [read_candidate(path, entry) for path in candidate_paths]
    shown = _Shown(Console(soft_wrap=True), as_json, several=len(candidates) > 1)
    unparsed = [syntax_error(candidate) for candidate in candidates]
    if all(unparsed) and problem_path.is_file():  # nothing to run: said before torch loads or a worker starts
        for candidate, error in zip(candidates, unparsed):
            shown.verdict(unparsed_verdict(candidate, error, backend=backend, problem=problem_path.stem,
                                           contract=settings.harness.precision), None)
        shown.end()
    problem = load_problem(problem_path)
    with Harness(backend=backend, problem=problem, settings=settings, plugins=app.plugin_selection,
                 scratch_root=keep_dir) as harness, EvalProgress() as progress:
        verdicts = harness.evaluate_all(candidates, profile=profile, measure=not no_timing,
                                        observer=lambda candidate: progress.observer(candidate.label))
        for candidate, verdict in zip(candidates, verdicts):
            if settings.harness.time_shapes and verdict.runtime is not None and problem.shapes.variants:
                verdict = dataclasses.replace(verdict, shape_timings=time_at_shapes(
                    harness, candidate, verdict, harness.root / "shapes"))
            progress.pause()
            shown.verdict(verdict, harness.summarize(verdict.profile).text if verdict.profile is not None else None)
    shown.end()


class _Shown:
    """The verdicts as they come (rich text, or JSON documents printed together at the end), and the exit status."""

    def __init__(self, console: Console, as_json: bool, *, several: bool) -> None:
        self.console, self.as_json, self.several = console, as_json, several
        self.documents: list[dict[str, Any]] = []
        self.all_correct = True

    def verdict(self, verdict: Verdict, summary: str | None) -> None:
        self.all_correct = self.all_correct and verdict.correct
        if self.as_json:
            document = verdict.to_json()
            if summary is not None:
                document["profile_summary"] = summary
            self.documents.append(document)
            return
        if self.several:
            self.console.rule(escape(verdict.candidate))
        print_verdict(self.console, verdict, summary)

    def end(self) -> None:
        if self.as_json:
            click.echo(json.dumps(self.documents[0] if len(self.documents) == 1 else self.documents, indent=2,
                                  allow_nan=False))
        click.get_current_context().exit(0 if self.all_correct else EXIT_INCORRECT)


def read_candidate(path: Path, entry: str) -> Candidate:
    """A candidate from a file, or from every file of a directory (its ``entry`` defines ModelNew)."""
    if path.is_file():
        return Candidate.from_path(path)
    if not path.is_dir():
        raise KForgeError(f"candidate not found: {path}")
    files = tuple(
        SourceFile(str(p.relative_to(path)), p.read_text())
        for p in sorted(path.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
    )
    if entry not in {f.name for f in files}:
        raise KForgeError(f"{path} has no {entry}", hint="name the file that defines ModelNew with --entry")
    return Candidate(files=files, entry=entry, label=path.name)


# ---------------------------------------------------------------------------------------------- rich output

_FLAG_COLUMNS = (Column("flag"), Column("blocks"), Column("evidence", fold=True, min_width=30))
_TRIAL_COLUMNS = (Column("seed"), Column("passed"), Column("max abs error"), Column("max rel error", optional=True),
                  Column("where they differ", fold=True, min_width=24))
_RUNTIME_COLUMNS = (Column(""), Column("timer"), Column("median"), Column("median's interval", optional=True),
                    Column("fastest"), Column("mean", optional=True),
                    Column("std", optional=True), Column("count", optional=True),
                    Column("speedup of the candidate", fold=True))
_STATISTIC_COLUMN = {"median": "median", "min": "fastest"}  # the column of the figure speedups are taken from


def print_verdict(console: Console, verdict: Verdict, summary: str | None) -> None:
    console.print(f"[bold]{escape(verdict.candidate)}[/] ({verdict.candidate_digest}) for problem "
                  f"[bold]{escape(verdict.problem)}[/] on backend [bold]{escape(verdict.backend)}[/]")
    _print_precision(console, verdict)
    _print_compile(console, verdict)
    if verdict.verify is not None:
        _print_trials(console, verdict)
    if verdict.runtime is not None or verdict.baselines:
        _print_runtimes(console, verdict)
    if verdict.shape_timings:
        _print_shape_timings(console, verdict)
    if verdict.speed_of_light is not None and verdict.method is not None:
        _print_speed_of_light(console, verdict)
    if verdict.flags:
        cells = [[flag.code, "yes" if flag.blocking else "no", flag.message] for flag in verdict.flags]
        console.print(fitted_table(_FLAG_COLUMNS, cells, console.width, title="cheat flags"))
    if verdict.method is not None and verdict.runtime is not None:  # how it was timed; nothing to say if it was not
        m = verdict.method
        console.print(f"[dim]timing: {escape(m.device)}, {m.warmup} warm-up + {m.repetitions} timed runs, L2 flush "
                      f"{m.l2_flush_bytes:,} bytes, fresh inputs per run; sync: {escape(m.synchronize)}; "
                      f"{escape(m.notes)}[/]")
        for timer, description in m.timers:
            headline = " (the headline)" if timer == m.headline else ""
            console.print(f"[dim]timer {timer}{headline}: {escape(description)}[/]")
    if summary:
        console.print("[bold]profile summary[/]")
        console.print(summary, markup=False, highlight=False)
    if verdict.correct:
        best = verdict.best_speedup
        sources = "; ".join(sources_of(verdict))
        speed = (f", {best:.2f}x{_interval(verdict)} against the faster baseline ({verdict.timer} time; "
                 f"baselines: {escape(sources)})" if best is not None else "")
        console.print(f"[bold green]CORRECT[/]{speed} ({escape(verdict.precision.describe())})")
    else:
        console.print(f"[bold red]NOT CORRECT[/]: {verdict.failure.value}")
        if verdict.compile.ok:  # a build's failure was printed with its log above
            console.print(verdict.message, markup=False, highlight=False)


def _interval(verdict: Verdict) -> str:
    """The best speedup's confidence interval, in words ("" where there is none)."""
    faster = min(verdict.speedups, key=lambda item: item[1])[0]
    interval = verdict.speedup_interval(faster)
    if interval is None:
        return ""
    level = verdict.runtime.level * dict(verdict.baselines)[faster].level
    return f" ({interval[0]:.2f}-{interval[1]:.2f} at {level:.0%} confidence or more)"


def _print_precision(console: Console, verdict: Verdict) -> None:
    """The contract the verdict was reached under, and what it allowed."""
    reached, terms = verdict.precision, verdict.precision.terms
    within = f"; {describe_tolerances(reached.tolerances)}" if reached.tolerances else ""
    console.print(f"precision contract: [bold]{reached.contract}[/] (may compute in {terms.computes_in}{within})",
                  highlight=False)
    for switch in reached.switches:
        console.print(f"[dim]precision switch within the contract: {escape(switch)}[/]")


def _print_compile(console: Console, verdict: Verdict) -> None:
    result = verdict.compile
    if result.ok:
        console.print(f"compiled in {result.seconds:.2f} s{' (cached)' if result.cached else ''}")
        if result.log.strip():
            console.print(result.log, markup=False, highlight=False)
    else:
        failure = result.failure
        if failure is None or failure.builds:
            console.print(f"[red]did not compile[/] ({failure.value if failure else '?'}):")
        else:  # not a build that failed: the stage imports the candidate and may run it once (a forward that hung)
            console.print(f"[red]the compile stage ended[/] ({failure.value}):")
        console.print(result.log, markup=False, highlight=False)


def _print_trials(console: Console, verdict: Verdict) -> None:
    cells = [[str(trial.seed), Text("yes", "green") if trial.passed else Text("no", "red"),
              f"{trial.max_abs_error:.3g}", f"{trial.max_rel_error:.3g}", trial.message]
             for trial in verdict.verify.trials]
    console.print(fitted_table(_TRIAL_COLUMNS, cells, console.width, title="correctness trials"))
    if verdict.verify.shapes is not None:
        for line in check_lines(verdict.verify.shapes):
            console.print(line, markup=False, highlight=False)
    for note in verdict.verify.notes:
        console.print(f"[dim]{escape(note)}[/]")


def _print_runtimes(console: Console, verdict: Verdict) -> None:
    by_timer = verdict.speedups_by_timer
    rows = [("candidate", timer, stats) for timer, stats in verdict.figures]
    rows += [(name, timer, stats) for name, figures in verdict.baseline_figures for timer, stats in figures]
    if not rows:  # a verdict read from an older document: the headline figures only
        rows = ([("candidate", verdict.timer, verdict.runtime)] if verdict.runtime else [])
        rows += [(name, verdict.timer, stats) for name, stats in verdict.baselines]
    cells = []
    for name, timer, stats in rows:
        speedup = by_timer.get(timer, {}).get(name) if by_timer else verdict.speedup(name)
        interval = f"{stats.low:.4f}-{stats.high:.4f} ({stats.level:.0%})" if stats.level else ""
        cells.append([name, timer + (" *" if timer == verdict.timer else ""), f"{stats.median:.4f}", interval,
                      f"{stats.min:.4f}", f"{stats.mean:.4f}", f"{stats.std:.4f}", str(stats.count),
                      f"{speedup:.2f}x" if speedup is not None else ""])
    marked = _STATISTIC_COLUMN[verdict.statistic]
    columns = [Column(f"{c.header} *", c.fold, c.optional, c.min_width) if c.header == marked else c
               for c in _RUNTIME_COLUMNS]
    console.print(fitted_table(columns, cells, console.width,
                               title=f"runtime (ms); the speedups are ratios of the {verdict.timer} timer's "
                                     f"{statistic_words(verdict.statistic)} (marked *)"))
    for name, error in verdict.baseline_errors:
        console.print(f"[yellow]{escape(name)}[/]: {escape(error)}")
    for source in verdict.baseline_sources:
        console.print(f"[dim]baseline {escape(source.describe())}[/]")
    for figure in verdict.outside_clock:  # the worker's figures beside the KForge process's own clock
        console.print(f"[dim]outside clock, {escape(figure.describe())}[/]")
    if verdict.device_alone:
        console.print(f"[yellow]{escape(verdict.device_alone)}[/]")


def _print_shape_timings(console: Console, verdict: Verdict) -> None:
    """The candidate's speedup at each shape (--time-shapes), and over the shapes' weights where they have some."""
    columns = [Column(header, fold=header in ("inputs", "speedup"), optional=header in ("elements", "weight"))
               for header in SHAPE_HEADERS]
    console.print(fitted_table(columns, shape_rows(verdict.shape_timings), console.width,
                               title=f"speedup per shape ({verdict.timer} time, against the faster baseline there)"))
    weighted = weighted_speedup(verdict.shape_timings)
    if weighted is not None:
        console.print(f"weighted by the passes served at each shape: {weighted:.2f}x")


def _print_speed_of_light(console: Console, verdict: Verdict) -> None:
    """The problem's bound on the device, which roof binds, and how much of it each figure reaches."""
    light = verdict.speed_of_light
    assert light is not None
    console.print(escape(bound_words(light)))
    fractions = fractions_words(light)
    if fractions:
        console.print(escape(fractions[0].upper() + fractions[1:]))
    if light.note:
        console.print(f"[dim]{escape(light.note)}[/]")
