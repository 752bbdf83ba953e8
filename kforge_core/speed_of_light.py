"""The speed of light of a problem on a device, and the physical floor below which no figure can be real.

**The bound.** ``sol_ms = max(memory_ms, compute_ms)``: ``memory_ms`` is the problem's compulsory bytes (inputs and
outputs once, parameters once: ``workload.ProblemFloor``) at the device's peak bandwidth; ``compute_ms`` is the
sum, over the units its FLOPs run on, of each unit's FLOPs at that unit's peak (``work_count``: matrix,
elementwise and reduction work). Each kind of work runs on the fastest unit the precision contract allows for its
dtype (an fp32 matmul on the fp32 CUDA cores under ``fp32``, on the TF32 tensor cores under ``tf32``, on the
16-bit ones under ``fp16``/``bf16``; fp16 data on the fp16 tensor cores always). The bound assumes compulsory
traffic only (no re-read, no write-allocate, perfect cache reuse within the call), the vendor's peaks (boost clock,
theoretical bus rate), and that the units' times add. It is a limit, not a target: real kernels reach 80-93% of
peak bandwidth and 60-80% of peak tensor-core rate (``docs/limits.md``).

A figure's **fraction** of the limit is ``sol_ms / figure``, never above 1; the **SOL score** against the faster
baseline ``T_b`` is ``1 / (1 + (T_k - sol_ms) / (T_b - sol_ms))`` (SOL-ExecBench): 0.5 at the baseline, 1 at the
limit; undefined when the baseline is at or below the bound.

**The physical floor** (the ``faster_than_hardware`` flag) counts only what every call must move whatever the
kernel: its inputs read, its outputs written, less what the last-level cache can hold (the outputs' last writes on a
device whose cache is flushed before each run; inputs too where it is not flushed), at peak bandwidth. Parameters
are left out (a candidate may fold them at construction), and so are FLOPs: a candidate may do less arithmetic than
the reference (an algebraic rewrite, a Winograd or FFT convolution), so no FLOP count is a floor. A headline figure
below ``floor_ms x (1 - slack) - FLOOR_SLACK_MS`` is impossible: the slack covers a peak that is the vendor's maximum
(:data:`FLOOR_SLACK_STATED`) or one measured on a machine that may have been busy (:data:`FLOOR_SLACK_MEASURED`),
and the timer's resolution (:data:`FLOOR_SLACK_MS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .codec import record_from_json, to_json
from .peaks import DevicePeaks, bandwidth_text, flops_text
from .precision_contract import PrecisionContract
from .work_count import WorkCount

FLOOR_SLACK_STATED = 0.10
FLOOR_SLACK_MEASURED = 0.80
FLOOR_SLACK_MS = 0.002

_MATRIX_UNITS = {"float64": ("fp64 matrix", "fp64"), "float16": ("fp16 matrix", "fp16", "fp32"),
                 "bfloat16": ("bf16 matrix", "bf16", "fp32"), "int8": ("int8 matrix", "fp32")}
_FP8 = ("fp8 matrix", "fp16 matrix", "fp32")
_VECTOR_UNITS = {"float64": ("fp64",), "float16": ("fp16", "fp32"), "bfloat16": ("bf16", "fp32")}


@dataclass(frozen=True)
class Roof:
    """One unit's share of the compute roof: its FLOPs at its peak."""

    unit: str  # "fp16 matrix"
    words: str  # "fp16 on tensor cores"
    flops: int
    peak: float  # FLOP/s
    source: str
    ms: float


@dataclass(frozen=True)
class SolBound:
    """The speed of light of one problem on one device, and the physical floor; every input shown.

    :param sol_ms: the bound, None where there is none (``reason`` says why).
    :param binds: ``"memory"`` or ``"compute"``: which roof ``sol_ms`` is.
    :param memory_ms: the compulsory bytes at peak bandwidth (None: no bandwidth known).
    :param compute_ms: the FLOPs at their units' peaks (None: not counted, or no peak for any of them).
    :param floor_ms: the physical floor (None: no bandwidth known); ``floor_slack``: the fraction it may be beaten by.
    :param notes: how the figures were reached (a unit that stood in for another, work left out).
    """

    device: str
    contract: str
    bytes: int
    bandwidth: float
    bandwidth_source: str
    memory_ms: float | None
    roofs: tuple[Roof, ...]
    compute_ms: float | None
    sol_ms: float | None
    binds: str
    reason: str
    floor_bytes: int
    floor_ms: float | None
    floor_slack: float
    notes: tuple[str, ...] = ()

    @property
    def flops(self) -> int:
        return sum(roof.flops for roof in self.roofs)

    def describe(self) -> list[str]:
        """The bound's inputs and outcome, a line each, for ``kforge check`` and the docs."""
        lines = [f"bytes: {self.bytes:,} (inputs and outputs once, parameters once)"]
        if self.memory_ms is not None:
            lines.append(f"memory roof: {self.memory_ms:.4g} ms at {bandwidth_text(self.bandwidth)} "
                         f"({self.bandwidth_source})")
        for roof in self.roofs:
            lines.append(f"{roof.flops:,} FLOPs as {roof.words}: {roof.ms:.4g} ms at {flops_text(roof.peak)} "
                         f"({roof.source})")
        if self.compute_ms is not None:
            lines.append(f"compute roof: {self.compute_ms:.4g} ms")
        lines.append(f"speed of light: {self.sol_ms:.4g} ms, {self.binds}-bound" if self.sol_ms is not None
                     else f"speed of light: no bound ({self.reason})")
        if self.floor_ms is not None:
            lines.append(self.floor_words())
        return lines + list(self.notes)

    def floor_words(self) -> str:
        """The physical floor and the figure below which it flags, in a sentence."""
        if self.floor_ms is None:
            return "physical floor: none (no peak bandwidth known)"
        moved = f"{self.floor_bytes:,} bytes every call must move beyond what the cache can hold"
        if not self.flag_threshold_ms:
            return (f"physical floor: {self.floor_ms:.4g} ms ({moved}): within the timer's resolution, so no figure "
                    "is flagged faster_than_hardware")
        return (f"physical floor: {self.floor_ms:.4g} ms ({moved}); a figure below {self.flag_threshold_ms:.4g} ms "
                f"(the floor less {self.floor_slack:.0%} and {FLOOR_SLACK_MS * 1e3:g} us) is flagged "
                "faster_than_hardware")

    @property
    def flag_threshold_ms(self) -> float:
        """The figure below which ``faster_than_hardware`` is raised (0: never)."""
        if self.floor_ms is None:
            return 0.0
        return max(self.floor_ms * (1 - self.floor_slack) - FLOOR_SLACK_MS, 0.0)

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SolBound:
        return record_from_json(cls, data)


def sol_bound(bytes_: int, input_bytes: int, output_bytes: int, work: WorkCount, peaks: DevicePeaks | None,
              contract: PrecisionContract, *, flushes_caches: bool) -> SolBound:
    """The bound and the floor of a problem (its compulsory ``bytes_``, of which ``input_bytes`` and
    ``output_bytes`` are its tensors', and its ``work``) on the device of ``peaks`` under ``contract``."""
    if peaks is None:
        return _no_bound(bytes_, contract.name, "the device states no peaks and none could be measured")
    notes: list[str] = []
    bandwidth = peaks.bandwidth
    roof_bandwidth = bandwidth
    level = min((item for item in peaks.cache_bandwidths if bytes_ <= item[0]), default=None) \
        if not flushes_caches else None
    if level is not None:
        roof_bandwidth = level[1]
        notes.append(f"its {bytes_:,} bytes fit a {level[0] / 2**20:,.4g} MiB cache level, which is not flushed "
                     "between timed runs: the memory roof is that level's bandwidth")
    memory_ms = bytes_ / roof_bandwidth.value * 1e3 if roof_bandwidth is not None else None
    roofs = _roofs(work, peaks, contract, notes) if work.counted else ()
    if work.uncounted_ops:
        notes.append(f"operators counted as no work: {', '.join(work.uncounted_ops)}")
    compute_ms = sum(roof.ms for roof in roofs) if roofs else None
    candidates = [(ms, roof) for ms, roof in ((memory_ms, "memory"), (compute_ms, "compute")) if ms is not None]
    sol_ms, binds = max(candidates) if candidates and work.counted else (None, "")
    if not work.counted:  # its compute roof is unknown: the memory roof alone could be far below the limit
        reason = f"its FLOPs could not be counted ({work.reason})"
    else:
        reason = "" if sol_ms is not None else "the device's peaks give no roof for this problem"
    cache = peaks.cache_bytes
    floor_bytes = (input_bytes + max(output_bytes - cache, 0) if flushes_caches
                   else max(input_bytes + output_bytes - cache, 0))
    floor_ms = floor_bytes / bandwidth.value * 1e3 if bandwidth is not None else None
    slack = FLOOR_SLACK_MEASURED if bandwidth is not None and bandwidth.measured else FLOOR_SLACK_STATED
    return SolBound(peaks.device, contract.name, bytes_, roof_bandwidth.value if roof_bandwidth else 0.0,
                    roof_bandwidth.source if roof_bandwidth else "", memory_ms, roofs, compute_ms, sol_ms, binds,
                    reason, floor_bytes, floor_ms, slack, tuple(notes))


def _no_bound(bytes_: int, contract: str, reason: str) -> SolBound:
    return SolBound("", contract, bytes_, 0.0, "", None, (), None, None, "", reason, 0, None, 0.0)


def _roofs(work: WorkCount, peaks: DevicePeaks, contract: PrecisionContract, notes: list[str]) -> tuple[Roof, ...]:
    """Each kind of work on its unit, the units' shares summed."""
    flops_by_unit: dict[str, int] = {}
    for item in work.work:
        allowed = _allowed_units(item.kind, item.dtype, contract)
        present = [unit for unit in allowed if peaks.rate(unit) is not None]
        if not present:
            notes.append(f"{item.flops:,} {item.kind} FLOPs in {item.dtype} left out: the device states no peak "
                         f"for {' or '.join(allowed)}")
            continue
        unit = max(present, key=lambda u: peaks.rate(u).value)  # type: ignore[union-attr]
        flops_by_unit[unit] = flops_by_unit.get(unit, 0) + item.flops
    roofs = []
    for unit, flops in flops_by_unit.items():
        peak = peaks.rate(unit)
        assert peak is not None
        roofs.append(Roof(unit, peaks.unit_words(unit), flops, peak.value, peak.source, flops / peak.value * 1e3))
    return tuple(roofs)


def _allowed_units(kind: str, dtype: str, contract: PrecisionContract) -> tuple[str, ...]:
    """The units ``kind`` work on ``dtype`` data may run on under ``contract``, fastest kinds first."""
    if kind == "matrix":
        if dtype.startswith("float8"):
            return _FP8
        if dtype in _MATRIX_UNITS:
            return _MATRIX_UNITS[dtype]
        narrower = [unit for unit, compute in (("bf16 matrix", "bfloat16"), ("fp16 matrix", "float16"),
                                               ("tf32 matrix", "tf32")) if contract.permits(compute)]
        return (*narrower, "fp32")
    if dtype in _VECTOR_UNITS:
        return _VECTOR_UNITS[dtype]
    narrower = [unit for unit, compute in (("bf16", "bfloat16"), ("fp16", "float16")) if contract.permits(compute)]
    return (*narrower, "fp32")


# --------------------------------------------------------------------------------------------- a figure's place


@dataclass(frozen=True)
class SpeedOfLight:
    """A verdict's figures against the bound.

    :param timer: the timer of the figures (the headline's); the bound is a device-time bound, so it compares most
        honestly with ``device`` or ``events``; a ``wall`` figure includes the host's launch time.
    :param figure_ms: the candidate's headline figure (None: not timed, or not correct).
    :param fraction: ``sol_ms / figure_ms``, at most 1 (None: no bound or no figure).
    :param baseline_fractions: each baseline's fraction, by its figure beside the candidate.
    :param score: the SOL score against ``baseline`` (None: ``note`` says why).
    :param note: why a fraction or score is missing, or that a figure reached the bound.
    """

    bound: SolBound
    timer: str = ""
    figure_ms: float | None = None
    fraction: float | None = None
    baseline_fractions: tuple[tuple[str, float], ...] = ()
    score: float | None = None
    baseline: str = ""
    note: str = ""

    @property
    def sol_ms(self) -> float | None:
        return self.bound.sol_ms

    @property
    def binds(self) -> str:
        return self.bound.binds

    def headroom(self) -> str:
        """One sentence for people and agents: the limit, which roof binds, the fraction reached, the rest."""
        bound = self.bound
        if bound.sol_ms is None:
            return f"speed of light: no bound ({bound.reason})"
        text = f"speed of light {bound.sol_ms:.4g} ms ({bound.binds}-bound)"
        if self.fraction is not None:
            text += (f"; at {self.fraction:.0%} of it, at most {1 / self.fraction:.2f}x faster is possible"
                     if self.fraction < 1 else "; at the limit")
        return text + (f" ({self.note})" if self.note else "")

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpeedOfLight:
        return record_from_json(cls, data)


def fraction_of(bound: SolBound, figure_ms: float | None) -> float | None:
    """``sol_ms / figure_ms``, at most 1; None without a bound or a figure."""
    if bound.sol_ms is None or not figure_ms or figure_ms <= 0:
        return None
    return min(bound.sol_ms / figure_ms, 1.0)


def sol_score(sol_ms: float, figure_ms: float, baseline_ms: float) -> float | None:
    """SOL-ExecBench's score ``1 / (1 + (T_k - T_SOL) / (T_b - T_SOL))``, at most 1; None when ``baseline_ms`` is
    at or below the bound (there is no headroom to score against)."""
    if baseline_ms <= sol_ms:
        return None
    return min(1.0 / (1.0 + max(figure_ms - sol_ms, 0.0) / (baseline_ms - sol_ms)), 1.0)


def place(bound: SolBound, timer: str, figure_ms: float | None,
          baselines_ms: tuple[tuple[str, float], ...]) -> SpeedOfLight:
    """The candidate's figure and its baselines' against ``bound``."""
    fractions = tuple((name, f) for name, ms in baselines_ms if (f := fraction_of(bound, ms)) is not None)
    fraction = fraction_of(bound, figure_ms)
    notes, score, against = [], None, ""
    if bound.sol_ms is not None and figure_ms is not None and figure_ms < bound.sol_ms:
        notes.append(f"the figure {figure_ms:.4g} ms is below the bound (within the floor's allowance: data the "
                     "cache kept, or a peak the device beat); counted as at the limit")
    if bound.sol_ms is not None and figure_ms is not None and baselines_ms:
        against, baseline_ms = min(baselines_ms, key=lambda item: item[1])
        score = sol_score(bound.sol_ms, figure_ms, baseline_ms)
        if score is None:
            notes.append(f"no SOL score: the {against} baseline ({baseline_ms:.4g} ms) is at or below the bound")
    return SpeedOfLight(bound, timer, figure_ms, fraction, fractions, score, against, "; ".join(notes))


def problem_bound(problem: Any, peaks: DevicePeaks | None, contract: PrecisionContract, *,
                  flushes_caches: bool) -> SolBound:
    """:func:`sol_bound` of ``problem`` (a ``records.Problem``: its floor counted on meta tensors, once per
    process)."""
    from .workload import problem_floor

    floor = problem_floor(problem)
    return sol_bound(floor.bytes, floor.input_bytes, floor.output_bytes, floor.work, peaks, contract,
                     flushes_caches=flushes_caches)
