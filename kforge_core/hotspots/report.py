"""The hotspots report as people read it: per phase, what was measured and what the profiler saw, then the ranked
table of groups and rest operators with their shares and Amdahl ceilings, and what the extracted problems cover."""

from __future__ import annotations

from typing import Any

from ..report.markdown import cell

TOP = 15  # rows shown per phase; the rest are summed in one line


def coverage(report: dict[str, Any], phase: str) -> float:
    """The share of ``phase``'s device time in groups written as problems."""
    return sum(row["share"] for row in report["rows"] if row["phase"] == phase and row.get("problem"))


def header_lines(report: dict[str, Any]) -> list[str]:
    shape = (f", batch {report['batch']}, prompt {report['prompt_tokens']} tokens, {report['decode_tokens']} "
             "decode steps a request" if report["causal_lm"] else "")
    return [f"Model: {report['model']} on {report['device']} ({report['backend']} backend, {report['dtype']}"
            f"{shape})", f"Profiler: {report['profiler']}; device time is attributed to the outermost module of a "
            "kind a kernel replaces, else to the ATen operator that launched it"]


def phase_line(report: dict[str, Any], phase: str) -> str:
    figures = report["phases"][phase]
    ratio, busy = figures["profiler_vs_measured"], figures["device_busy"]
    line = (f"{phase}: {figures['measured_step_ms']:.4g} ms a step measured (spread {figures['measured_spread']:.0%}),"
            f" {figures['profiled_step_ms']:.4g} ms profiled" + (f" ({ratio:.0%} of it{_per_operation(figures)})"
                                                                 if ratio is not None else "")
            + f"; device time {figures['profiled_device_ms']:.4g} ms"
            + (f" (the device busy {busy:.0%} of the measured step)" if busy is not None else "")
            + f"; {figures['weight']:.0%} of a request's time")
    if report.get("extracted"):
        line += f"; extracted problems cover {coverage(report, phase):.1%} of its device time"
    return line


def _per_operation(figures: dict[str, Any]) -> str:
    """What the profiler added to a step, per device operation it recorded (its own cost is per launch), beside its
    own cost an operation measured apart, and the profiled step without that cost."""
    operations, more = figures.get("operations_per_step"), figures["profiled_step_ms"] - figures["measured_step_ms"]
    if not operations or more <= 0:
        return ""
    text = f", {more * 1e3 / operations:.2g} us more for each of its {operations:.0f} operations"
    own, less = figures.get("profiler_us_per_operation"), figures.get("profiled_less_own_cost_ms")
    if own and less is not None:
        text += (f"; the profiler's own cost, measured apart, {own:.2g} us an operation: {less:.4g} ms without it, "
                 f"{less / figures['measured_step_ms']:.0%}")
    return text


def table_lines(report: dict[str, Any], top: int = TOP) -> list[str]:
    lines = header_lines(report)
    for phase in report["phases"]:
        rows = [row for row in report["rows"] if row["phase"] == phase]
        lines += ["", phase_line(report, phase),
                  f"  {'#':>3}  {'module or operator':<28} {'kind':<10} {'calls/step':>10} {'ms/step':>9} "
                  f"{'share':>7} {'ceiling':>8}  shapes as served / problem"]
        for row in rows[:top]:
            lines.append(f"  {row['rank']:>3}  {row['group'][:28]:<28} {row['kind']:<10} "
                         f"{row['calls_per_step']:>10.3g} {row['device_ms_per_step']:>9.4f} {row['share']:>7.1%} "
                         f"{_ceiling(row['ceiling']):>8}  {row['shapes'][:90]}")
            lines.append(f"  {'':>3}  {'':<28} {'':<10} {'':>10} {'':>9} {'':>7} {'':>8}  -> {_outcome(row)}")
        hidden = rows[top:]
        if hidden:
            lines.append(f"  ... {len(hidden)} more rows, {sum(r['share'] for r in hidden):.1%} of the phase "
                         "(--json lists them)")
    return lines


def _ceiling(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "-"


def _outcome(row: dict[str, Any]) -> str:
    if row.get("problem"):
        return f"problem {row['problem']}"
    return f"not extracted: {row['why_not']}" if row.get("why_not") else "not extracted (no --extract)"


def markdown(report: dict[str, Any], plot_name: str) -> str:
    lines = ["# KForge hotspots", "", *header_lines(report), ""]
    for phase in report["phases"]:
        lines += [f"## {phase}", "", phase_line(report, phase), "",
                  "| # | module or operator | kind | shapes as served | calls/step | ms/step | share | ceiling | "
                  "problem |", "|" + " --- |" * 9]
        for row in (r for r in report["rows"] if r["phase"] == phase):
            lines.append(f"| {row['rank']} | {cell(row['group'])} | {row['kind']} | {cell(row['shapes'])} | "
                         f"{row['calls_per_step']:.3g} | {row['device_ms_per_step']:.4f} | {row['share']:.1%} | "
                         f"{_ceiling(row['ceiling'])} | {cell(_outcome(row))} |")
        lines.append("")
    lines += [f"![shares of device time]({plot_name})", "",
              "The ceiling is the whole phase's gain if that row took no device time at all: 1 / (1 - share). Where "
              "the device is busy for less than the whole step (it waits for the host to launch work), the step "
              "gains less than that: no kernel removes the waiting."]
    return "\n".join(lines) + "\n"
