"""What the agents are told about candidates: the best one so far, and what happened to the last attempt."""

from __future__ import annotations

from dataclasses import dataclass

from ..precision_contract import PrecisionContract
from ..records import SourceFile


@dataclass(frozen=True)
class PrecisionTerms:
    """The run's precision contract as the prompts state it: what the kernel may compute in, and the tolerances
    ``(dtype, atol, rtol)`` its outputs are held to, one per output dtype."""

    contract: PrecisionContract
    tolerances: tuple[tuple[str, float, float], ...]


@dataclass(frozen=True)
class CandidateView:
    """A correct candidate as the prompts show it: its files and how fast it is."""

    label: str
    files: tuple[SourceFile, ...]
    entry: str
    runtime_ms: float
    speedups: tuple[tuple[str, float], ...] = ()
    precision_bits: float | None = None  # bits of agreement with a float64 reference
    timer: str = "wall"  # the timing method of runtime_ms and the speedups
    findings: tuple[str, ...] = ()  # what its timers say beside each other (host launch overhead)
    statistic: str = "median"  # which figure of the timed runs runtime_ms is: "median", or "min" (the fastest run)
    sol_ms: float | None = None  # the problem's speed of light on the device (None: no bound)
    sol_binds: str = ""  # which roof the bound is: "memory" or "compute"
    sol_fraction: float | None = None  # sol_ms / runtime_ms, at most 1
    baseline_fractions: tuple[tuple[str, float], ...] = ()  # each baseline's fraction of the bound

    @property
    def headroom(self) -> str:
        """``"at 62% of the speed of light (0.01398 ms, memory-bound): at most 1.61x faster is possible"``."""
        if self.sol_ms is None or self.sol_fraction is None:
            return ""
        where = f"the speed of light ({self.sol_ms:.4g} ms, {self.sol_binds}-bound)"
        if self.sol_fraction >= 1:
            return f"at {where}: no faster is possible on this device"
        return f"at {self.sol_fraction:.0%} of {where}: at most {1 / self.sol_fraction:.2f}x faster is possible"


@dataclass(frozen=True)
class Feedback:
    """What went wrong with the last attempt, for the next generation prompt.

    :param kind: "no_code" (the reply held no usable code), "compile" (it did not build) or "verify" (it built
        but was wrong, crashed, timed out or was rejected).
    :param headline: one sentence saying what happened.
    :param message: the harness's explanation, or why the reply held no code.
    :param log: the compiler's log, trimmed by the backend.
    :param files: the candidate that failed (empty for "no_code").
    """

    kind: str
    label: str
    headline: str
    message: str = ""
    log: str = ""
    files: tuple[SourceFile, ...] = ()
    entry: str = ""
