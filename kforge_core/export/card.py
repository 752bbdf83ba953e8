"""The card (``README.md``) of an exported package: what each kernel is, how fast it was found to be, under which
precision contract and timing method, and how to load it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..precision_contract import contract_named
from ..tolerances import describe_tolerances

if TYPE_CHECKING:
    from .layer_source import ExportedKernel
    from .package import Refusal


def card_text(package: str, variant: str, kernels: list[ExportedKernel], refused: list[Refusal]) -> str:
    lines = [
        f"# {package}",
        "",
        f"Kernels exported by KForge from accepted candidates, as a `kernels` package (build variant `{variant}`).",
        "Each layer is stateless: its `forward` runs the accepted `ModelNew.forward` on the module it replaces and",
        "reads that module's parameters (`_binding.py` says how attribute names are matched).",
        "",
        "| kernel | layer | problem | kind | speedup | runtime | contract | origin |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for k in kernels:
        a = k.accepted
        speedups = ", ".join(f"{value:.2f}x vs {name}" for name, value in a.speedups) or "untimed"
        runtime = f"{a.runtime_ms:.4g} ms" if a.runtime_ms is not None else "-"
        contract = contract_named(a.precision)
        terms = f"{contract.name} ({contract.computes_in}); {describe_tolerances(a.tolerances) or 'dtype defaults'}"
        if a.precision_bits is not None:
            terms += f"; {a.precision_bits:.1f} bits reached"
        lines.append(f"| `{k.name}` | `{k.layer}` | {a.problem} | {k.kind.kind} | {speedups} | {runtime} | {terms} "
                     f"| {a.origin}, {a.backend} backend |")
    lines += ["", "## Timing", ""]
    for k in kernels:
        method = k.accepted.timing
        lines.append(f"- `{k.name}`: " + (_method_text(method) if method else "timing method not recorded"))
    if refused:
        lines += ["", "## Not exported", ""]
        lines += [f"- {r.problem}: {r.reason}" for r in refused]
    lines += [
        "",
        "## Use",
        "",
        "```python",
        "from pathlib import Path",
        "import kernels",
        "",
        "package = kernels.get_local_kernel(Path('.'))",
        f"layer = package.layers.{kernels[0].layer}",
        "# swap it into a module whose forward computes the same function:",
        "module.forward = layer.forward.__get__(module)",
        "```",
        "",
        "or map a layer name to `kernels.LocalLayerRepository(repo_path=Path('.'), "
        f"layer_name='{kernels[0].layer}')` and call "
        "`kernels.kernelize(model, mode=kernels.Mode.INFERENCE, device=...)`.",
        "",
    ]
    return "\n".join(lines)


def _method_text(method: dict) -> str:
    parts = [f"on {method.get('device', '?')}", f"{method.get('warmup', '?')} warm-up and "
             f"{method.get('repetitions', '?')} timed runs (median)", f"L2 flush {method.get('l2_flush_bytes', 0)} B",
             str(method.get("timer", ""))]
    return "; ".join(p for p in parts if p)
