"""One accepted kernel in the index: what problem it solves, for which backend, how well, and its files."""

from __future__ import annotations

from dataclasses import dataclass

from ..records import SourceFile
from .sketch import ProblemSketch


@dataclass(frozen=True)
class IndexedKernel:
    """An accepted kernel and what it computes.

    :param key: where it came from, unique in the index: ``run:RUN_ID`` or ``extra:PATH``.
    :param problem: the problem it solves.
    :param backend: the backend it was written for.
    :param precision: the precision contract it was held to (``""`` when unknown, as for a published solution).
    :param verdict: ``correct`` for a kernel a KForge run verified; ``published`` for one from an extra folder.
    :param runtime_ms: its median time when measured.
    :param speedup: against the faster baseline, when measured.
    :param files: its source files; ``entry`` names the one that defines the candidate class.
    """

    key: str
    problem: ProblemSketch
    backend: str
    precision: str
    verdict: str
    files: tuple[SourceFile, ...]
    entry: str
    runtime_ms: float | None = None
    speedup: float | None = None

    def figures(self) -> str:
        """``cuda, 2.31x, 0.412 ms, fp32 contract`` (what is known of it)."""
        parts = [self.backend]
        if self.speedup is not None:
            parts.append(f"{self.speedup:.2f}x vs the faster baseline")
        if self.runtime_ms is not None:
            parts.append(f"{self.runtime_ms:.3f} ms")
        parts.append(f"{self.precision} contract" if self.precision else self.verdict)
        return ", ".join(parts)
