"""Writing accepted kernels as a package ``kernels.get_local_kernel`` loads::

    OUT/README.md                                the card: each kernel, its speedup and its contract
    OUT/build/<variant>/metadata.json            what ``kernels`` reads, and a ``kforge`` table of provenance
    OUT/build/<variant>/<python_name>/__init__.py
    OUT/build/<variant>/<python_name>/layers.py  one stateless layer per kernel
    OUT/build/<variant>/<python_name>/_binding.py
    OUT/build/<variant>/<python_name>/impl_<kernel>/   the accepted candidate's files, as verified
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import KForgeError
from ..precision_contract import contract_named
from . import binding
from .accepted import AcceptedKernel
from .card import card_text
from .kinds import kernel_kind, package_variant
from .layer_source import ExportedKernel, impl_init_source, init_source, kernel_names, layers_source
from .model_new import read_model_new

LICENSE = "MIT"  # KForge's own; the exported code was written for the user's run


@dataclass(frozen=True)
class Refusal:
    problem: str
    reason: str


@dataclass(frozen=True)
class ExportResult:
    """:param path: the package's directory; :param variant: its build variant; :param package: its Python name."""

    path: Path
    package: str
    variant: str
    kernels: tuple[ExportedKernel, ...]
    refused: tuple[Refusal, ...]


def prepare(accepted: list[AcceptedKernel], device_of: Callable[[str], str], *,
            allow_any_dependency: bool = False) -> tuple[list[ExportedKernel], list[Refusal]]:
    """Read each accepted candidate and decide its kind; those the format cannot carry are refused (unless
    ``allow_any_dependency``: ``kforge integrate`` swapping from runs, where no package is published)."""
    exported, refused, taken = [], [], set()
    for kernel in accepted:
        entry = next(f for f in kernel.candidate.files if f.name == kernel.candidate.entry)
        shape = read_model_new(entry.text, kernel.problem)
        kind = kernel_kind(shape, entry.text, device_of(kernel.backend))
        if kind.refused and not allow_any_dependency:
            refused.append(Refusal(kernel.problem, f"a {kind.kind} kernel: {kind.refused}"))
            continue
        name, layer = kernel_names(kernel.problem, taken)
        exported.append(ExportedKernel(name, layer, kernel, shape, kind))
    return exported, refused


def describe_refusals(refused: list[Refusal], shown: int = 8) -> str:
    """Each reason once, then the problems refused for it (the first ``shown`` of them, and how many more)."""
    by_reason: dict[str, list[str]] = {}
    for refusal in refused:
        by_reason.setdefault(refusal.reason, []).append(refusal.problem)
    parts = []
    for reason, problems in by_reason.items():
        named = ", ".join(problems[:shown]) + (f" and {len(problems) - shown} more" if len(problems) > shown else "")
        parts.append(f"{reason} ({named})" if len(problems) > 1 else f"{problems[0]}: {reason}")
    return "; ".join(parts)


def write_package(out: Path, package: str, kernels: list[ExportedKernel], refused: list[Refusal],
                  variant: str | None = None) -> ExportResult:
    """Write ``kernels`` as package ``package`` under ``out`` (replacing a package there)."""
    if not kernels:
        raise KForgeError(f"nothing to export: {describe_refusals(refused)}")
    python_name = re.sub(r"[^0-9A-Za-z_]", "_", package)
    if variant is None:
        try:
            variant = package_variant([k.kind.variant for k in kernels])
        except ValueError as exc:
            raise KForgeError(str(exc)) from None
    if (out / "build").exists():
        shutil.rmtree(out / "build")
    root = out / "build" / variant / python_name
    root.mkdir(parents=True)
    for k in kernels:
        _write_candidate(root / k.module, k)
    (root / "_binding.py").write_text(Path(binding.__file__).read_text())
    (root / "layers.py").write_text(layers_source(package, kernels))
    (root / "__init__.py").write_text(init_source(package, kernels))
    metadata = package_metadata(package, python_name, variant, kernels, _digest(root))
    (root.parent / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    (out / "README.md").write_text(card_text(package, variant, kernels, refused))
    return ExportResult(out, python_name, variant, tuple(kernels), tuple(refused))


def _write_candidate(folder: Path, kernel: ExportedKernel) -> None:
    folder.mkdir()
    candidate = kernel.accepted.candidate
    for f in candidate.files:
        target = folder / f.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f.text)
    (folder / "__init__.py").write_text(impl_init_source(candidate.entry))


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:10]


def package_metadata(package: str, python_name: str, variant: str, kernels: list[ExportedKernel],
                     digest: str) -> dict[str, Any]:
    depends = sorted({d for k in kernels for d in k.kind.python_depends})
    devices = {k.kind.variant.removeprefix("torch-") for k in kernels if k.kind.variant.startswith("torch-")}
    backend = "cuda" if "-cu" in variant else next(iter(devices - {"universal"}), "cpu")
    return {
        "id": f"_{python_name}_{digest}",
        "name": package,
        "version": 1,
        "license": LICENSE,
        "python-depends": depends,
        "backend": {"type": backend},
        "kforge": {"variant": variant, "kernels": [kernel_metadata(k) for k in kernels]},
    }


def kernel_metadata(k: ExportedKernel) -> dict[str, Any]:
    a = k.accepted
    contract = contract_named(a.precision)
    return {
        "name": k.name,
        "layer": k.layer,
        "kind": k.kind.kind,
        "backend": a.backend,
        "problem": a.problem,
        "problem_path": a.problem_path,
        "run": a.run_id,
        "bench": a.bench_id,
        "candidate": {"entry": a.candidate.entry, "digest": a.candidate.digest,
                      "files": [f.name for f in a.candidate.files]},
        "forward": f"forward(self{', ' if k.shape.parameters else ''}{k.shape.parameters})",
        "needs": dict(k.shape.needs),
        "precision_contract": {"name": contract.name, "computes_in": contract.computes_in,
                               "tolerances": [list(t) for t in a.tolerances], "bits_reached": a.precision_bits},
        "verdict": {"runtime_ms": a.runtime_ms, "speedups": dict(a.speedups), "baselines_ms": dict(a.baselines_ms),
                    "best_speedup": a.best_speedup, "timing_method": a.timing},
    }
