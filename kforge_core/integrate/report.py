"""The integrate report as people read it."""

from __future__ import annotations

from typing import Any


def report_lines(report: dict[str, Any]) -> list[str]:
    lines = [f"Model: {report['model']} on {report['device']} ({report['backend']} backend, {report['dtype']})"]
    for name, kernel in report["kernels"].items():
        accepted = kernel["accepted_speedup"]
        alone = f", {accepted:.2f}x alone when accepted" if accepted is not None else ""
        lines.append(f"Kernel {name}: {kernel['kind'] or 'kernel'} from {kernel['problem'] or '?'}"
                     f" ({kernel['loaded_with']}{alone})")
    lines.append("")
    if report["layers"]:
        lines.append("Layers changed:")
        for layer in report["layers"]:
            modules = layer["modules"]
            shown = ", ".join(modules[:4]) + (f" and {len(modules) - 4} more" if len(modules) > 4 else "")
            lines.append(f"  {layer['layer_class']} <- {layer['kernel']}: {len(modules)} module(s) ({shown}); "
                         f"{layer['original_ms']:.4g} ms -> {layer['kernel_ms']:.4g} ms, {layer['speedup']:.2f}x")
    else:
        lines.append("Layers changed: none")
    if report["not_matched"]:
        lines.append("Not matched:")
        for miss in report["not_matched"]:
            where = f" on {miss['layer']}" if miss["layer"] else ""
            lines.append(f"  {miss['kernel']}{where}: {miss['why']}")
    outputs = report["outputs"]
    verdict = "within" if outputs["within_contract"] else "NOT within"
    lines += ["", f"Whole model outputs: {verdict} the {report['precision']} contract ({outputs['message']})"]
    lines += reference_lines(outputs)
    e2e = report["end_to_end"]
    before, after, speedups = e2e["untouched"], e2e["with_kernels"], e2e["speedups"]
    lines.append(f"End to end forward: {before['forward_ms']:.4g} ms -> {after['forward_ms']:.4g} ms, "
                 f"{speedups['forward']:.2f}x")
    for phase in ("prefill", "decode"):
        key = f"{phase}_tokens_per_s"
        if key in before:
            lines.append(f"End to end {phase}: {before[key]:,.0f} -> {after[key]:,.0f} tokens/s, "
                         f"{speedups[phase]:.2f}x")
    method = report["timing_method"]
    lines.append(f"Timing: median of {method['repetitions']} runs after {method['warmup']} warm-up on "
                 f"{method['device']}; {method['timer']}")
    return lines


def reference_lines(outputs: dict[str, Any]) -> list[str]:
    """Each floating output's distance from the higher-precision run, untouched and with the kernels."""
    if not outputs.get("reference"):
        return []
    lines = [f"  decided by: {outputs['rule']}; distance from the {outputs['reference']}, untouched -> with "
             f"kernels (the fidelity rule allows {outputs['fidelity_factor']:g}x):"]
    for untouched, swapped in zip(outputs["untouched_error"], outputs["swapped_error"]):
        lines.append(f"    output {untouched['output']}: relative RMS error {_figure(untouched['relative_rms'])} -> "
                     f"{_figure(swapped['relative_rms'])}, max abs error {_figure(untouched['max_abs'])} -> "
                     f"{_figure(swapped['max_abs'])}")
    return lines


def _figure(value: float | None) -> str:
    return "non-finite" if value is None else f"{value:.3g}"
