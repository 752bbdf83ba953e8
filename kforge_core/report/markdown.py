"""``report.md``: each attempt with its verdict and speedup, the analyst's recommendations, the final speedups."""

from __future__ import annotations

import datetime as dt

from ..sol_words import percent
from ..timing.wording import sources_caption, statistic_words, timer_caption
from .run_report import AttemptRow, RunReport
from .shape_speedups import shape_markdown


def ms(value: float | None) -> str:
    """A time in milliseconds for a table cell (``-`` when there is none)."""
    return f"{value:.3f}" if value is not None else "-"


def _speedup(row: AttemptRow, baseline: str) -> str:
    if row.outcome is None:
        return "-"
    return next((f"{v:.2f}x" for name, v in row.outcome.speedups if name == baseline), "-")


def cell(text: str) -> str:
    """``text`` made safe for one cell of a Markdown table."""
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: RunReport, *, plot_file: str | None, best_file: str | None,
                    search_plot_file: str | None = None, shapes_plot_file: str | None = None) -> str:
    run = report.run
    started = dt.datetime.fromtimestamp(run.created_at).strftime("%Y-%m-%d %H:%M:%S")
    lines = [
        f"# KForge run {run.id}", "",
        "| | |", "| --- | --- |",
        f"| problem | {run.problem_name} (`{run.problem_path}`) |",
        f"| backend | {run.backend} |",
        f"| precision contract | {cell(report.precision_terms())} |",
        f"| generation model | `{run.model}` |",
        f"| analysis model | `{run.analyst_model}` |",
        f"| status | {run.display_status}{': ' + cell(run.stop_reason) if run.stop_reason else ''} |",
        f"| started | {started} |", "",
        "## Result", "",
    ]
    lines += _result(report, best_file)
    if plot_file:
        lines += ["", f"![speedup by attempt]({plot_file})"]
    if report.shape_timings:
        lines += ["", "## Speedup per shape", "",
                  "The best candidate timed at the problem's shape variants too (--time-shapes), each against the "
                  "baselines timed at that shape."]
        if shapes_plot_file:
            lines += ["", f"![speedup against the size of the inputs]({shapes_plot_file})"]
        lines += [""] + shape_markdown(report.shapes_timed_for, report.shape_timings)
    if report.references:
        lines += ["", "## Retrieved references", ""] + _references(report)
    if report.wide:
        lines += ["", "## Search tree", ""] + search_tree(report)
        if search_plot_file:
            lines += ["", f"![best speedup by round and by wall time]({search_plot_file})"]
    lines += ["", "## Attempts", ""] + _attempts(report)
    if report.rounds:
        lines += ["", "## Optimization rounds"] + _rounds(report)
    lines += ["", "## LLM usage", ""] + _usage(report)
    return "\n".join(lines) + "\n"


def search_tree(report: RunReport) -> list[str]:
    """Each candidate of a wide search with its round, its parent and what it followed, and how it fared."""
    lines = [f"{len(report.attempts)} candidates; each optimization round's parents are the best candidates so far, "
             "each profiled and analysed; a failed candidate is repaired in its round's next attempt.", "",
             "| round | candidate | parent | follows | verdict | speedup | at (s) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    best = report.best
    for row in report.attempts:
        where = "functional" if row.pass_kind == "functional" else str(row.round)
        verdict = row.verdict + (" (best)" if row is best else "")
        speedup = f"{row.speedup:.2f}x" if row.speedup is not None else "-"
        lines.append(f"| {where} | {row.label} | {row.parent or '-'} | {cell(row.follows) or '-'} | "
                     f"{cell(verdict)} | {speedup} | {row.elapsed_s:.1f} |")
    return lines


def _references(report: RunReport) -> list[str]:
    """The kernels of the index the generation prompts showed."""
    lines = ["| kernel | used as | figures | score | why |", "| --- | --- | --- | --- | --- |"]
    for ref in report.references:
        kind = "warm start" if ref.warm_start else "reference"
        lines.append(f"| {cell(ref.problem)} on {ref.backend} (`{cell(ref.key)}`) | {kind} | {cell(ref.figures)} | "
                     f"{ref.score:.2f} | {cell(ref.why)} |")
    return lines


def _result(report: RunReport, best_file: str | None) -> list[str]:
    baselines = ", ".join(f"PyTorch {name} {ms:.3f} ms" for name, ms in report.baselines) or "not measured"
    best = report.best
    if best is None or best.outcome is None:
        return ["No correct candidate was found.", "", f"Baselines: {baselines}."]
    outcome = best.outcome
    speedups = ", ".join(f"**{v:.2f}x** against {name}" for name, v in outcome.speedups)
    where = f" — [{best_file}]({best_file})" if best_file else ""
    lines = [
        f"Best candidate: **{best.label}** ({best.pass_kind}), {statistic_words(outcome.statistic)} "
        f"{outcome.runtime_ms:.3f} ms "
        f"({timer_caption(outcome.timer, outcome.figures_ms)}): {speedups}{where}.", "",
        f"Its baselines, timed with the same timers: {_runtimes(outcome.baselines_ms)}; "
        f"{sources_caption(outcome.baseline_sources)}.", "",
        *([f"Against the speed of light: {outcome.sol_summary}.", ""] if outcome.sol_summary else []),
        f"Precision: {_reached(report, best)}.", "", f"Baselines measured before the first candidate: {baselines}.",
        *(["", "```text", *outcome.shapes, "```"] if outcome.shapes else []),
    ]
    if report.contract.mixed:
        lines += ["", f"The baselines run the reference as written; under the {report.contract.name} contract the "
                      "speedups include what the narrower arithmetic gains, so compare them only with figures "
                      f"measured under {report.contract.name}."]
    return lines


def _runtimes(figures: tuple[tuple[str, float], ...]) -> str:
    return ", ".join(f"{name} {ms:.3f} ms" for name, ms in figures) or "none"


def _reached(report: RunReport, row: AttemptRow) -> str:
    bits = row.outcome.precision_bits if row.outcome is not None else None
    reached = f"agrees with a float64 reference to {bits:.1f} bits" if bits is not None else "precision not estimated"
    return f"{reached}, under the {report.contract.name} precision contract"


def _attempts(report: RunReport) -> list[str]:
    names = [name for name, _ in report.baselines] or ["eager", "compile"]
    head = ("| # | pass | attempt | verdict | runtime (ms) | " + " | ".join(f"vs {n}" for n in names)
            + " | of SOL | bits | flags | files |")
    lines = [head, "|" + " --- |" * (9 + len(names))]
    best = report.best
    for row in report.attempts:
        verdict = row.verdict + (" (best)" if row is best else "")
        flags = ", ".join(f.code for f in row.outcome.flags) if row.outcome is not None else ""
        runtime = row.outcome.runtime_ms if row.outcome is not None else None
        where = "functional" if row.pass_kind == "functional" else f"optimization {row.round}"
        speedups = " | ".join(_speedup(row, n) for n in names)
        bits = row.outcome.precision_bits if row.outcome is not None else None
        sol = percent(row.outcome.sol_fraction) if row.outcome is not None else "-"
        lines.append(f"| {row.number} | {where} | {row.label} | {cell(verdict)} | {ms(runtime)} | {speedups} | "
                     f"{sol} | {f'{bits:.1f}' if bits is not None else '-'} | {flags} | "
                     f"[{row.step_dir}]({row.step_dir}) |")
    for row in report.attempts:
        if row.outcome is not None and not row.outcome.correct and row.outcome.message:
            text = "\n".join(_without_prefix(row.outcome.message, row.outcome.failure).splitlines()[:20])
            lines += ["", f"**{row.label}** ({row.outcome.failure}):", "", "```text", text, "```"]
        elif row.candidate is None:
            lines += ["", f"**{row.label}**: {row.no_code}"]
    return lines


def _without_prefix(message: str, failure: str | None) -> str:
    """The harness's message, without the failure class it may start with (it is shown next to it)."""
    return message[len(failure) + 1:].lstrip() if failure and message.startswith(f"{failure}:") else message


def _rounds(report: RunReport) -> list[str]:
    lines: list[str] = []
    for r in report.rounds:
        lines += ["", f"### Round {r.round} (profile of {r.profiled or 'the best candidate'})", ""]
        if r.summary:
            lines += ["Profile summary:", "", "```text", r.summary.rstrip(), "```", ""]
        lines += [f"![profile image]({image})" for image in r.images]
        lines += ["Recommendations:", "", r.recommendations.rstrip()]
    return lines


def _usage(report: RunReport) -> list[str]:
    lines = ["| agent | model | calls | requests | input tokens | output tokens | cost (USD) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for u in report.usage:
        cost = f"{u.cost_usd:.4f}" if u.cost_usd is not None else "no price in [llm] prices"
        lines.append(f"| {u.agent} | `{u.model}` | {u.calls} | {u.requests} | {u.input_tokens:,} | "
                     f"{u.output_tokens:,} | {cost} |")
    total_in = sum(u.input_tokens for u in report.usage)
    total_out = sum(u.output_tokens for u in report.usage)
    costs = [u.cost_usd for u in report.usage]
    total_cost = f"{sum(c for c in costs if c is not None):.4f}" + ("" if all(c is not None for c in costs) else "+")
    lines.append(f"| **total** | | {sum(u.calls for u in report.usage)} | {sum(u.requests for u in report.usage)} "
                 f"| {total_in:,} | {total_out:,} | {total_cost} |")
    return lines
