"""What a bench leaves in its directory (``RUNS_DIR/BENCH_ID/``): ``report.md`` with the fast_p curve, the
speedup histogram, the speedups against the fractions of the speed of light and, with ``--time-shapes``, the
speedup per shape, ``summary.json`` (the ``kforge
bench --json`` document) and ``problems/KEY/`` (each problem's verdict and solution). Built from the results kept
in the run store."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..secrets import redact
from ..report.markdown import cell, ms
from ..store import BenchInfo
from ..codec import to_json
from ..harness.verdict import ShapeTiming
from ..report.shape_speedups import SHAPES_PLOT, plot_shape_speedups, shape_markdown
from .plan import BenchPlan
from ..sol_words import percent
from .plots import plot_fast_p, plot_sol, plot_speedup_histogram
from .results import ProblemResult
from .model_weights import problem_weights
from .shape_summary import shape_summary_line, shape_timings_of
from .summary import THRESHOLDS, baselines_of, summarize, threshold_key
from ..plural import counted

REPORT = "report.md"
SUMMARY = "summary.json"
FAST_P_PLOT = "fast_p.png"
HISTOGRAM = "speedups.png"
SOL_PLOT = "sol.png"
PROBLEMS = "problems"
VERDICT = "verdict.json"


@dataclass(frozen=True)
class BenchReport:
    info: BenchInfo
    plan: BenchPlan
    results: list[ProblemResult]  # in the suite's order; problems not finished are left out
    document: dict[str, Any]  # {"bench", "problems", "summary"}: what --json prints
    report_path: Path


def problem_dir(bench_dir: Path, key: str) -> Path:
    return bench_dir / PROBLEMS / key


def document_of(info: BenchInfo, plan: BenchPlan, results: list[ProblemResult],
                run: dict[str, Any]) -> dict[str, Any]:
    """The ``{"bench", "problems", "summary"}`` document; ``run`` holds this invocation's facts (executor,
    devices, wall time, problems evaluated now)."""
    settings = plan.settings.harness
    weights = problem_weights(Path(plan.suite))
    if weights is not None:
        weights = {key: weight for key, weight in weights.items() if key in plan.keys}
    summary = summarize(results, len(plan.keys), weights)
    summary.update({
        "backend": plan.backend, "source": plan.source, "precision": settings.precision,
        "precision_computes_in": settings.contract.computes_in, "precision_policy": settings.precision_policy,
        "cheat_policy": settings.cheat_policy, "shapes": settings.shapes, "baselines": list(settings.baselines),
        **run,
    })
    problems = []
    for r in results:
        entry = to_json(r)
        entry.pop("verdict")
        entry = {"problem": entry.pop("key"), **entry, "best_speedup": r.best_speedup,
                 "baselines_ms": dict(r.baselines_ms), "speedups": dict(r.speedups)}
        verdict = problem_dir(info.bench_dir, r.key) / VERDICT
        entry["verdict_file"] = str(verdict) if verdict.is_file() else None
        problems.append(entry)
    return {"bench": info.id, "problems": problems, "summary": summary}


def write_bench_outputs(info: BenchInfo, plan: BenchPlan, results: list[ProblemResult],
                        run: dict[str, Any]) -> BenchReport:
    directory = info.bench_dir
    directory.mkdir(parents=True, exist_ok=True)
    document = document_of(info, plan, results, run)
    timers = ", ".join(sorted({r.timer for r in results if r.runtime_ms is not None})) or plan.settings.harness.timer
    title = (f"{Path(plan.suite).name} on {plan.backend} ({info.id}), {plan.settings.harness.contract.caption()}, "
             f"{timers} time")
    plot_fast_p(results, len(results) or len(plan.keys), title, directory / FAST_P_PLOT)  # over those finished
    plot_speedup_histogram(results, title, directory / HISTOGRAM)
    plot_sol(results, title, directory / SOL_PLOT)
    plot_shape_speedups(shape_series(results), title, directory / SHAPES_PLOT)
    (directory / SUMMARY).write_text(redact(json.dumps(document, indent=2, allow_nan=False)))
    path = directory / REPORT
    path.write_text(redact(render_bench_markdown(info, plan, results, document["summary"])))
    return BenchReport(info, plan, results, document, path)


def read_bench_outputs(info: BenchInfo, plan: BenchPlan, results: list[ProblemResult]) -> BenchReport:
    """A finished bench's report as the store holds it, with nothing evaluated now and nothing written."""
    run = {"executor": None, "wall_seconds": 0.0, "evaluated_now": 0, "seconds_per_problem": None}
    return BenchReport(info, plan, results, document_of(info, plan, results, run), info.bench_dir / REPORT)


# ------------------------------------------------------------------------------------------------- markdown


def render_bench_markdown(info: BenchInfo, plan: BenchPlan, results: list[ProblemResult],
                          summary: dict[str, Any]) -> str:
    harness = plan.settings.harness
    started = dt.datetime.fromtimestamp(info.created_at).strftime("%Y-%m-%d %H:%M:%S")
    lines = [
        f"# KForge bench {info.id}", "",
        "| | |", "| --- | --- |",
        f"| suite | `{plan.suite}`" + (f" (filter {cell(', '.join(plan.filters))})" if plan.filters else "") + " |",
        f"| backend | {plan.backend} |",
        f"| precision contract | {harness.contract.name}: may compute in {harness.contract.computes_in} |",
        f"| evaluated | {cell(plan.source)} |",
        f"| where | {cell(summary.get('executor', ''))} |",
        f"| status | {info.status}{': ' + cell(info.stop_reason) if info.stop_reason else ''} |",
        f"| started | {started} |",
        f"| harness | {counted(harness.trials, 'trial')}; {harness.warmup} warm-up + {counted(harness.repetitions, 'timed run')}; "
        f"baselines {', '.join(harness.baselines) or 'none'}, measured beside each solution; cheat policy "
        f"{harness.cheat_policy}, precision policy {harness.precision_policy}, shapes {harness.shapes} |",
        f"| timer | {cell(', '.join(summary.get('timers') or [harness.timer]))} (the headline figures; "
        "docs/timing.md) |",
        f"| baselines from | {cell(_origins(summary.get('baseline_origins') or {}))} |", "",
        "## Summary", "",
    ] + _summary(summary) + [
        "", f"![fast_p curve]({FAST_P_PLOT})", "", f"![speedup histogram]({HISTOGRAM})", "",
        f"![speedup against the fraction of the speed of light]({SOL_PLOT})", "",
        "## Problems", "",
    ] + _problems(results, info.bench_dir) + _shapes(results, summary) + _failures(results)
    return "\n".join(lines) + "\n"


def _shapes_held(r: ProblemResult) -> str:
    """How the solution did at its problem's shape variants: ``3/3 held``, ``failed at half, prime`` ("-": none)."""
    checked = (r.verdict or {}).get("shapes") or {}
    outcomes = checked.get("outcomes") or []
    if not outcomes:
        return "-"
    failed = [o["variant"] for o in outcomes if o["status"] == "failed"]
    if failed:
        return f"failed at {', '.join(failed)}"
    judged = [o for o in outcomes if o["status"] != "dropped"]
    return f"{sum(o['status'] == 'held' for o in judged)}/{len(judged)} held"


def shape_series(results: list[ProblemResult]) -> list[tuple[str, tuple[ShapeTiming, ...]]]:
    """Each problem timed at its shapes (``--time-shapes``), from its verdict."""
    return [(r.key, timings) for r in results if (timings := shape_timings_of(r))]


def _shapes(results: list[ProblemResult], summary: dict[str, Any]) -> list[str]:
    """The speedup per shape of every problem timed at its shapes, and the plot of them all."""
    series = shape_series(results)
    if not series:
        return []
    lines = ["", "## Speedup per shape", "",
             "Each solution timed at its problem's shape variants too (--time-shapes), each against the baselines "
             "timed at that shape.", "", f"![speedup against the size of the inputs]({SHAPES_PLOT})"]
    across = summary.get("across_shapes")
    if across is not None:
        lines += ["", shape_summary_line(across)]
    for key, timings in series:
        lines += [""] + shape_markdown(key, timings)
    return lines


def _origins(origins: dict[str, int]) -> str:
    return ", ".join(f"{count} {origin}" for origin, count in origins.items()) or "no baselines measured"


def _fraction(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "-"


def _times(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "-"


def _summary(summary: dict[str, Any]) -> list[str]:
    total, finished = summary["total"], summary["finished"]
    failures = ", ".join(f"{name} {count}" for name, count in summary["failures"].items()) or "none"
    which = "all problems" if finished == total else f"the {finished} problems finished"
    lines = [
        f"**{summary['correct']} of {finished} problems correct**"
        + (f" ({total - finished} of the {total} not run yet)" if finished < total else "")
        + f"; failures: {failures}; {summary['flagged']} correct with non-blocking flags.", "",
        f"fast_p, the fraction of {which} correct and faster than p x the baseline (KernelBench's "
        "definition):", "",
        "| against | " + " | ".join(f"p = {threshold_key(p)}" for p in THRESHOLDS) + " | geomean speedup |",
        "| --- |" + " --- |" * (len(THRESHOLDS) + 1),
        "| the faster baseline | " + " | ".join(_fraction(summary["fast_p"][threshold_key(p)]) for p in THRESHOLDS)
        + f" | {_times(summary['geomean_best_speedup'])} |",
    ]
    for name, row in summary["fast_p_by_baseline"].items():
        lines.append(f"| {name} | " + " | ".join(_fraction(row[threshold_key(p)]) for p in THRESHOLDS)
                     + f" | {_times(summary['geomean_speedup'].get(name))} |")
    if "weighted_fast_p" in summary:
        lines.append("| the faster baseline, each problem weighed by its share of the model's time (model.json) | "
                     + " | ".join(_fraction(summary["weighted_fast_p"][threshold_key(p)]) for p in THRESHOLDS)
                     + f" | {summary['model_time_weighed']:.1%} of the model's time in these problems |")
    lines += ["", f"Geomean speedups are over the {summary['timed']} correct, timed problems. "
              f"{summary['seconds']:.1f} s were spent on the problems in all"
              + (f"; this invocation took {summary['wall_seconds']:.1f} s of wall time for "
                 f"{counted(summary['evaluated_now'], 'problem')} ({summary['seconds_per_problem']:.2f} s per problem)."
                 if summary.get("evaluated_now") else ".")]
    lines += _sol_summary(summary)
    llm = summary.get("llm")
    if llm:
        cost = f"${llm['cost_usd']:.4f}" if llm["cost_usd"] is not None else "cost unknown"
        if llm["cost_usd"] is not None and not llm["cost_complete"]:
            cost += " (some models have no price)"
        lines += ["", f"LLM: {counted(llm['calls'], 'call')}, {llm['input_tokens'] + llm['output_tokens']:,} tokens, {cost}."]
    return lines


def _sol_summary(summary: dict[str, Any]) -> list[str]:
    """The solutions against the speed of light: the geomean SOL score, and how close to the limit they and the
    baselines came."""
    fractions = summary.get("sol_fraction") or {}
    solutions = fractions.get("solutions") or {}
    if not solutions.get("count"):
        return ["", "Speed of light: no correct, timed problem has a bound on this device."]
    score = summary.get("geomean_sol_score")
    lines = ["", "Against the speed of light (each problem's compulsory bytes at peak bandwidth and its FLOPs at peak "
                 "rate on this device; docs/limits.md): geomean SOL score "
             + (f"**{score:.3f}** over {summary['sol_scored']} problems" if score is not None else "undefined")
             + " (0.5: as fast as the faster baseline, 1: at the limit).", "",
             "| fraction of the limit | problems | median | p25 | p75 | min | max |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, row in fractions.items():
        who = "the solutions" if name == "solutions" else f"PyTorch {name}"
        lines.append(f"| {who} | {row['count']} | " + " | ".join(percent(row[k]) for k in
                                                                  ("median", "p25", "p75", "min", "max")) + " |")
    return lines


def _problems(results: list[ProblemResult], bench_dir: Path) -> list[str]:
    names = baselines_of(results) or ["eager", "compile"]
    llm = any(r.usage is not None for r in results)
    head = ["#", "problem", "verdict", "runtime (ms)", "by timer (ms)"] + [f"vs {n}" for n in names]
    head += ["of SOL", "baselines' SOL", "SOL score", "baselines from", "bits", "shapes", "flags", "device", "s"]
    head += ["tokens", "cost (USD)", "run"] if llm else []
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for number, r in enumerate(results, start=1):
        verdict = "correct" if r.correct else (r.failure or "failed")
        link = f"[{r.key}]({PROBLEMS}/{r.key}/{VERDICT})" if (problem_dir(bench_dir, r.key) / VERDICT).is_file() \
            else r.key
        timed = ms(r.runtime_ms) + (f" ({r.timer})" if r.runtime_ms is not None else "")
        by_timer = ", ".join(f"{t} {v:.4g}" for t, v in r.figures_ms) or "-"
        row = [str(number), link, cell(verdict), timed, by_timer] + [_times(r.speedup(n)) for n in names]
        row += [percent(r.sol_fraction) + (f" ({r.sol_binds})" if r.sol_fraction is not None else ""),
                ", ".join(f"{name} {percent(f)}" for name, f in r.baseline_fractions) or "-",
                f"{r.sol_score:.2f}" if r.sol_score is not None else "-"]
        bits = f"{r.precision_bits:.1f}" if r.precision_bits is not None else "-"
        row += [cell("; ".join(r.baseline_sources)) or "-", bits, cell(_shapes_held(r)), ", ".join(r.flags), r.device,
                f"{r.seconds:.1f}"]
        if llm:
            u = r.usage
            row += [f"{u.tokens:,}" if u else "-",
                    (f"{u.cost_usd:.4f}" if u.cost_usd is not None else "no price") if u else "-", r.run_id or "-"]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _failures(results: list[ProblemResult]) -> list[str]:
    failed = [r for r in results if not r.correct and r.message]
    if not failed:
        return []
    lines = ["", "## Failures"]
    for r in failed:
        text = "\n".join(r.message.strip().splitlines()[:12])
        lines += ["", f"**{r.key}** ({r.failure}):", "", "```text", text, "```"]
    return lines
