"""Printing a run on the terminal (``kforge show``, and the summary at the end of ``kforge run``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..codec import to_json
from ..secrets import redact
from ..sol_words import percent
from .outputs import BEST, PLOT, REPORT
from .run_report import RunReport
from .tables import Column, fitted_table
from ..timing.wording import sources_caption, timer_caption
from ..plural import counted

# at 80 columns the step folders go first, then the precision bits, then the figures by timer
_ATTEMPT_COLUMNS = (Column("#"), Column("attempt"), Column("verdict", fold=True, min_width=14),
                    Column("runtime ms"), Column("by timer (ms)", fold=True, optional=True),
                    Column("speedups", fold=True), Column("of SOL", optional=True), Column("bits", optional=True),
                    Column("files", fold=True, optional=True))


def print_summary(report: RunReport, console: Console) -> None:
    """The result in a few lines: best candidate, speedups, usage, where the files are."""
    run, best = report.run, report.best
    if best is None or best.outcome is None:
        console.print(f"[red]No correct candidate[/] in run {run.id} ({escape(run.stop_reason or run.display_status)}).")
    else:
        outcome = best.outcome
        speedups = ", ".join(f"{v:.2f}x vs {n}" for n, v in outcome.speedups)
        console.print(f"[green]Best: {escape(best.label)}[/] — {outcome.runtime_ms:.3f} ms "
                      f"({escape(timer_caption(outcome.timer, outcome.figures_ms, outcome.statistic))}), {speedups} "
                      f"({escape(report.contract.caption(outcome.precision_bits))})")
        console.print(f"  {escape(sources_caption(outcome.baseline_sources))}")
        if outcome.sol_summary:
            console.print(f"  {escape(outcome.sol_summary)}")
    calls = sum(u.calls for u in report.usage)
    tokens = sum(u.input_tokens + u.output_tokens for u in report.usage)
    costs = [u.cost_usd for u in report.usage]
    priced = [c for c in costs if c is not None]
    if not priced:
        cost = "cost unknown (no [llm] prices for these models)" if costs else "no cost"
    else:
        cost = f"${sum(priced):.4f}" + ("" if len(priced) == len(costs) else " (some models have no price)")
    console.print(f"LLM: {counted(calls, 'call')}, {tokens:,} tokens, {cost}", markup=False)
    for name in (BEST, REPORT, PLOT):
        if (report.run_dir / name).exists():
            console.print(f"  {report.run_dir / name}", markup=False)


def print_run(report: RunReport, console: Console) -> None:
    """The whole run: what was asked, every attempt, each round's recommendations, usage."""
    run = report.run
    started = dt.datetime.fromtimestamp(run.created_at).strftime("%Y-%m-%d %H:%M:%S")
    console.print(f"[bold]{escape(run.id)}[/]  {escape(run.problem_name)} on {escape(run.backend)}, started {started}")
    console.print(f"status: {run.display_status}" + (f" ({run.stop_reason})" if run.stop_reason else ""), markup=False)
    console.print(f"models: generation {run.model}, analysis {run.analyst_model}", markup=False)
    console.print(f"precision contract: {report.precision_terms()}", markup=False)
    console.print("baselines before the first candidate: "
                  + (", ".join(f"{n} {ms:.3f} ms" for n, ms in report.baselines) or "not measured")
                  + " (each candidate's speedups use baselines measured beside it)", markup=False)
    for ref in report.references:
        kind = "warm start" if ref.warm_start else "reference"
        console.print(f"{kind}: {ref.problem} on {ref.backend} ({ref.figures}), score {ref.score:.2f}", markup=False)
    best, cells = report.best, []
    for row in report.attempts:
        outcome = row.outcome
        runtime = f"{outcome.runtime_ms:.3f}" if outcome is not None and outcome.runtime_ms is not None else "-"
        speedups = ", ".join(f"{v:.2f}x {n}" for n, v in outcome.speedups) if outcome is not None else ""
        bits = f"{outcome.precision_bits:.1f}" if outcome is not None and outcome.precision_bits is not None else "-"
        timers = ", ".join(f"{t} {ms:.4g}" for t, ms in outcome.figures_ms) if outcome is not None else ""
        if outcome is not None and outcome.runtime_ms is not None:
            runtime += f" ({outcome.timer})"
        verdict = Text.assemble(row.verdict, (" (best)", "green") if row is best else "")
        sol = percent(outcome.sol_fraction) if outcome is not None else "-"
        cells.append([str(row.number), row.label, verdict, runtime, timers, speedups, sol, bits, row.step_dir])
    console.print(fitted_table(_ATTEMPT_COLUMNS, cells, console.width))
    if report.wide:
        _print_tree(report, console)
    for r in report.rounds:
        console.print(f"[bold]round {r.round}[/] (profile of {escape(r.profiled or 'the best')}):")
        console.print(redact(r.recommendations.strip()), markup=False)
    print_summary(report, console)


def _print_tree(report: RunReport, console: Console) -> None:
    """A wide search as a tree: each round's candidates under the parent they improve."""
    console.print("[bold]search tree[/] (round, candidate, what it follows, verdict, speedup, at s):")
    children: dict[str, list[Any]] = {}
    for row in report.attempts:
        children.setdefault(row.parent, []).append(row)

    def show(row: Any, depth: int, seen: set[str]) -> None:
        speedup = f"{row.speedup:.2f}x" if row.speedup is not None else "-"
        where = "f" if row.pass_kind == "functional" else f"r{row.round}"
        console.print(f"{'  ' * depth}{where} {row.label}: {row.follows or '-'}; {row.verdict}, {speedup}, "
                      f"{row.elapsed_s:.1f} s", markup=False)
        if row.label in seen:
            return
        seen.add(row.label)
        for child in children.get(row.label, []):
            show(child, depth + 1, seen)

    seen: set[str] = set()
    for root in children.get("", []):
        show(root, 0, seen)


def report_json(report: RunReport) -> dict[str, Any]:
    """``kforge show --json``."""
    run, best = report.run, report.best
    return {
        "id": run.id, "status": run.display_status, "stop_reason": run.stop_reason, "problem": run.problem_path,
        "backend": run.backend, "model": run.model, "analyst_model": run.analyst_model,
        "precision": {"contract": run.precision, "computes_in": report.contract.computes_in,
                      "tolerances": to_json(report.tolerances)},
        "run_dir": str(run.run_dir), "baselines_ms": dict(report.baselines),
        "best": None if best is None or best.outcome is None else {
            "label": best.label, "runtime_ms": best.outcome.runtime_ms, "speedups": dict(best.outcome.speedups),
            "precision_bits": best.outcome.precision_bits, "timer": best.outcome.timer,
            "figures_ms": dict(best.outcome.figures_ms), "baselines_ms": dict(best.outcome.baselines_ms),
            "baseline_sources": list(best.outcome.baseline_sources), **_sol_json(best.outcome),
        },
        "attempts": [
            {"number": a.number, "pass": a.pass_kind, "round": a.round, "attempt": a.attempt, "label": a.label,
             "verdict": a.verdict, "failure": a.outcome.failure if a.outcome else None,
             "runtime_ms": a.outcome.runtime_ms if a.outcome else None,
             "speedups": dict(a.outcome.speedups) if a.outcome else {},
             "timer": a.outcome.timer if a.outcome else None,
             "figures_ms": dict(a.outcome.figures_ms) if a.outcome else {},
             "baseline_sources": list(a.outcome.baseline_sources) if a.outcome else [],
             "precision_bits": a.outcome.precision_bits if a.outcome else None, "files": a.step_dir,
             "member": a.member, "parent": a.parent or None, "follows": a.follows, "elapsed_s": a.elapsed_s,
             **(_sol_json(a.outcome) if a.outcome else {})}
            for a in report.attempts
        ],
        "rounds": [{"round": r.round, "profiled": r.profiled, "recommendations": r.recommendations}
                   for r in report.rounds],
        "usage": [u.__dict__ for u in report.usage],
        "references": [r.__dict__ for r in report.references],
    }


def _sol_json(outcome: Any) -> dict[str, Any]:
    """An outcome's place against the speed of light, for ``--json``."""
    return {"sol_ms": outcome.sol_ms, "sol_binds": outcome.sol_binds, "sol_fraction": outcome.sol_fraction,
            "baseline_sol_fractions": dict(outcome.baseline_fractions), "sol_score": outcome.sol_score}
