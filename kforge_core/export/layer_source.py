"""The Python text of an exported package: one stateless layer class per kernel, in ``layers.py``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .accepted import AcceptedKernel
from .kinds import KernelKind
from .model_new import ModelNewShape


@dataclass(frozen=True)
class ExportedKernel:
    """An accepted kernel as the package holds it: ``name`` (``rmsnorm``) names its files, ``layer`` (``Rmsnorm``)
    its class in ``layers.py``."""

    name: str
    layer: str
    accepted: AcceptedKernel
    shape: ModelNewShape
    kind: KernelKind

    @property
    def module(self) -> str:
        return f"impl_{self.name}"


def kernel_names(problem: str, taken: set[str]) -> tuple[str, str]:
    """A snake-case kernel name and a CamelCase layer name for ``problem`` (``norm/2_rmsnorm`` -> ``rmsnorm``,
    ``Rmsnorm``), different from those in ``taken``."""
    stem = problem.rsplit("/", 1)[-1]
    words = [w for w in re.split(r"[^0-9A-Za-z]+", re.sub(r"^\d+_", "", stem).lower()) if w] or ["kernel"]
    base = "_".join(words)
    if base[0].isdigit():
        base = f"k_{base}"
    name, number = base, 2
    while name in taken:
        name, number = f"{base}_{number}", number + 1
    taken.add(name)
    return name, "".join(part.capitalize() for part in name.split("_"))


def layers_source(package: str, kernels: list[ExportedKernel]) -> str:
    lines = [
        f'"""The layers of {package}, exported by KForge from accepted kernels. Each layer is stateless: its forward',
        "runs the accepted ModelNew.forward on the module it replaces, whose attributes it reads (see _binding.py).",
        'Swap one in with kernels.kernelize(..., mode=Mode.INFERENCE) or by binding its forward to a module."""',
        "",
        "from torch import nn",
        "",
        "from ._binding import view_of",
        *[f"from . import {k.module}" for k in kernels],
        "",
        f"__all__ = {[k.layer for k in kernels]!r}",
    ]
    for k in kernels:
        needs = dict(k.shape.needs)
        speedup = f"{k.accepted.best_speedup:.2f}x" if k.accepted.best_speedup is not None else "untimed"
        lines += [
            "",
            "",
            f"_{k.name.upper()}_NEEDS = {needs!r}",
            "",
            "",
            f"class {k.layer}(nn.Module):",
            f'    """{k.accepted.problem}: {speedup} against its fastest baseline, {k.accepted.precision} contract,',
            f'    a {k.kind.kind} kernel from {k.accepted.origin}."""',
            "",
            "    has_backward = False  # verified in inference only",
            "    can_torch_compile = False",
            "",
            f"    def forward(self, {k.shape.parameters}):" if k.shape.parameters else "    def forward(self):",
            f"        view = view_of(self, {k.name!r}, _{k.name.upper()}_NEEDS, {k.module}.ModelNew)",
            f"        return {k.module}.ModelNew.forward(view{', ' if k.shape.arguments else ''}{k.shape.arguments})",
        ]
    return "\n".join(lines) + "\n"


def init_source(package: str, kernels: list[ExportedKernel]) -> str:
    table = {k.name: k.layer for k in kernels}
    return "\n".join([
        f'"""{package}: kernels exported by KForge. ``layers`` holds one stateless layer per kernel; ``KERNELS`` maps',
        'each kernel to its layer\'s name."""',
        "",
        "from . import layers",
        "from ._binding import ALIASES",
        "",
        f"KERNELS = {table!r}",
        "",
        '__all__ = ["layers", "ALIASES", "KERNELS"]',
        "",
    ])


def impl_init_source(entry: str) -> str:
    stem = entry[:-3] if entry.endswith(".py") else entry
    return (f'"""The accepted candidate, as it was verified; its entry module is {entry}."""\n\n'
            "import importlib\n\n"
            f"ModelNew = importlib.import_module(f\"{{__name__}}.{stem}\").ModelNew  # its name need not be an "
            "identifier\n\n"
            "__all__ = [\"ModelNew\"]\n")
