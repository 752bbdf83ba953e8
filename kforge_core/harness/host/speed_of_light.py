"""The speed of light in a verdict, judged in the KForge process from the problem and the peaks the workers' device
stated as it started (``DeviceFacts.peaks``, sent before any candidate code ran): the ``faster_than_hardware`` flag
for a figure below the problem's physical floor, and the verdict's place against the bound (``speed_of_light.py``
says what both are). Nothing here runs in a candidate's worker."""

from __future__ import annotations

import dataclasses
from ...precision_contract import PrecisionContract
from ...records import Flag, Problem
from ...settings import HarnessSettings
from ...speed_of_light import SolBound, place, problem_bound, sol_bound
from ...work_count import WorkCount
from .. import flags as F
from ..protocol import DeviceFacts
from ..verdict import Verdict, figure_of
from .evaluation import StageOutcomes


class Bounds:
    """Each problem's bound on the workers' device, computed once (the reference is counted on meta tensors)."""

    def __init__(self, contract: PrecisionContract) -> None:
        self._contract = contract
        self._found: dict[str, SolBound] = {}

    def of(self, problem: Problem, facts: DeviceFacts | None) -> SolBound | None:
        """The bound of ``problem`` on the device ``facts`` describe; None before any worker said what it is."""
        if facts is None:
            return None
        if problem.digest not in self._found:
            try:
                bound = problem_bound(problem, facts.peaks, self._contract, flushes_caches=facts.flush_bytes > 0)
            except Exception as exc:  # noqa: BLE001 - a bound that cannot be computed leaves the verdict as it is
                bound = sol_bound(0, 0, 0, WorkCount(reason="not counted"), None, self._contract,
                                  flushes_caches=False)
                bound = dataclasses.replace(bound, reason=f"the bound could not be computed: "
                                                          f"{type(exc).__name__}: {exc}")
            self._found[problem.digest] = bound
        return self._found[problem.digest]


def floor_flags(out: StageOutcomes, bound: SolBound | None, settings: HarnessSettings) -> list[Flag]:
    """``faster_than_hardware`` when the candidate's headline figure is below the problem's physical floor (less its
    slack); nothing for a problem whose output hardly depends on its input (a candidate may skip reading it)."""
    timing = out.timing
    if bound is None or timing is None or not timing.samples_ms or not bound.flag_threshold_ms:
        return []
    if any(flag.code == F.INSENSITIVE_PROBLEM for flag in out.flags):
        return []
    figure = figure_of(timing.samples_ms, timing.method.statistic)
    if figure >= bound.flag_threshold_ms:
        return []
    return [F.raise_flag(F.FASTER_THAN_HARDWARE, (
        f"the {timing.method.headline} figure {figure:.4g} ms is below the physical floor of this problem on the "
        f"{bound.device}: every call must move {bound.floor_bytes:,} bytes (its inputs read, its outputs written, "
        f"less what the cache holds), {bound.floor_ms:.4g} ms at {bound.bandwidth / 1e9:,.0f} GB/s "
        f"({bound.bandwidth_source}); no figure below {bound.flag_threshold_ms:.4g} ms (the floor less "
        f"{bound.floor_slack:.0%} and the timer's resolution) is the call's real time"), settings)]


def with_speed_of_light(verdict: Verdict, bound: SolBound | None) -> Verdict:
    """``verdict`` with its figures (the headline timer's: the candidate's, when correct, and its baselines')
    placed against ``bound``."""
    if bound is None:
        return verdict
    return dataclasses.replace(verdict, speed_of_light=place(bound, verdict.timer, verdict.runtime_ms,
                                                             verdict.baselines_ms))
