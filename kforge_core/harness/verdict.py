"""What the harness says about one candidate: the ``Verdict``, its timing records, and its JSON document.

``Verdict.to_json()`` is the document ``kforge eval --json`` prints and the run store keeps; docs/eval.md
("The verdict") documents its fields. ``Verdict.from_json`` reads it back exactly.
"""

from __future__ import annotations

import datetime as dt
import statistics
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from ..timing.confidence import median_interval, speedup_interval
from ..codec import from_json, record_from_json, to_json
from ..precision_contract import DEFAULT as DEFAULT_PRECISION
from ..precision_contract import PrecisionContract, contract_named
from ..records import CompileResult, Failure, Flag, ProfileResult, TrialError, VerifyResult
from ..speed_of_light import SpeedOfLight

SCHEMA = "kforge.verdict/1"


@dataclass(frozen=True)
class RuntimeStats:
    """Runtime statistics of one callable over the timed runs, in milliseconds."""

    median: float
    mean: float
    std: float
    min: float
    count: int
    statistic: str = "median"  # which of them is the runtime (``TimingMethod.statistic``): "median" or "min"
    # the median's confidence interval and the level it reaches (``timing/confidence.py``; 0: not known)
    low: float = 0.0
    high: float = 0.0
    level: float = 0.0
    # every timed run's figure, in the order run (empty where only the summary was kept): what another statistic,
    # or a comparison of two verdicts run by run, is computed from
    samples: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError("RuntimeStats: count must be >= 1")
        if self.statistic not in ("median", "min"):
            raise ValueError(f"RuntimeStats: unknown statistic {self.statistic!r}")

    @classmethod
    def from_samples(cls, samples_ms: Iterable[float], statistic: str = "median") -> RuntimeStats:
        samples = list(samples_ms)
        std = statistics.stdev(samples) if len(samples) > 1 else 0.0
        low, high, level = median_interval(samples)
        return cls(statistics.median(samples), statistics.fmean(samples), std, min(samples), len(samples),
                   statistic, low, high, level, tuple(samples))

    @property
    def figure(self) -> float:
        """The runtime these stats stand for: the median, or the fastest run (``statistic``)."""
        return self.min if self.statistic == "min" else self.median

    @property
    def cv(self) -> float:
        """Coefficient of variation (std / mean)."""
        return self.std / self.mean if self.mean > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RuntimeStats:
        return record_from_json(cls, data)


def figure_of(samples_ms: Iterable[float], statistic: str) -> float:
    """The runtime ``samples_ms`` stand for under ``statistic`` (:attr:`RuntimeStats.figure`)."""
    return RuntimeStats.from_samples(samples_ms, statistic).figure


@dataclass(frozen=True)
class TimingMethod:
    """How runtimes were measured; recorded with every result so that numbers can be compared honestly.

    :param device: the torch device the runs happened on ("cpu", "cuda:0").
    :param warmup: untimed runs before the timed ones.
    :param repetitions: timed runs; each one's time is a sample.
    :param l2_flush_bytes: bytes written between timed runs to evict the L2 cache (0: no flush, on the CPU).
    :param synchronize: how the end of a run is awaited (device-wide, so work on side streams counts).
    :param timer: the clock and what it brackets.
    :param fresh_inputs: True when every run gets inputs of its own (no cache keyed on inputs can help).
    :param notes: further facts (input pool size, which timed runs were checked again).
    :param headline: the timer whose figure is the headline ("wall", "events" or "device"; ``docs/timing.md``).
    :param timers: every timer measured, with what it measures on this device.
    :param statistic: which figure of the runs is the runtime, and so the speedups: "median", or "min" on a device
        that shares its cores with everything else on the host (``Device.headline_statistic``: another process can
        only slow a run down, so the fastest run is the code's own speed; on a busy 2-core machine a parallel CPU
        kernel's median swung 2-4x from one evaluation to the next while its fastest run held).
    """

    device: str
    warmup: int
    repetitions: int
    l2_flush_bytes: int
    synchronize: str
    timer: str
    fresh_inputs: bool
    notes: str = ""
    headline: str = "wall"
    timers: tuple[tuple[str, str], ...] = ()
    statistic: str = "median"

    def noted(self, *notes: str) -> TimingMethod:
        """This method with ``notes`` (those not empty) after its own."""
        return replace(self, notes="; ".join(note for note in (self.notes, *notes) if note))

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TimingMethod:
        return record_from_json(cls, data)


@dataclass(frozen=True)
class BaselineSource:
    """Where a baseline's figure came from, and when it was measured.

    :param baseline: "eager" or "compile".
    :param origin: "measured" (now, interleaved with the candidate's runs), "confirmed" (a prior figure that a fresh
        short measurement in the same window confirmed within ``band``), or "remeasured" (a prior that the fresh
        measurement did not confirm: measured again in full, interleaved).
    :param measured_at: when the figure used was measured (seconds since the epoch).
    :param prior: where the prior came from, in words ("the baseline cache", "the timing of an earlier candidate
        in this command"); empty when there was none.
    :param detail: the fresh and prior figures, for "confirmed" and "remeasured".
    :param band: the relative band a fresh measurement must fall within to confirm a prior.
    :param checked_at: when the fresh measurement that confirmed or refuted the prior was taken (0: none was).
    """

    baseline: str
    origin: str
    measured_at: float
    prior: str = ""
    detail: str = ""
    band: float = 0.0
    checked_at: float = 0.0

    def __post_init__(self) -> None:
        if self.origin not in ("measured", "confirmed", "remeasured"):
            raise ValueError(f"BaselineSource: unknown origin {self.origin!r}")

    @property
    def when(self) -> str:
        return dt.datetime.fromtimestamp(self.measured_at).strftime("%Y-%m-%d %H:%M:%S")

    @property
    def age(self) -> str:
        """How long before the check the figure used was measured: ", 31 min earlier"; empty when not known."""
        if self.checked_at <= 0 or self.checked_at < self.measured_at:
            return ""
        seconds = self.checked_at - self.measured_at
        for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
            if seconds >= size:
                count = round(seconds / size)
                return f", {count} {unit}{'s' if unit == 'day' and count > 1 else ''} earlier"
        return f", {seconds:.0f} s earlier"

    def short(self) -> str:
        """``"eager measured now (2026-11-25 14:16)"``, ``"compile from the baseline cache (2026-11-25 14:02, 14
        min earlier), confirmed now"``, ``"eager re-measured now (2026-11-25 14:16; the baseline cache
        disagreed)"``."""
        when = self.when[:-3]
        if self.origin == "measured":
            return f"{self.baseline} measured now ({when})"
        if self.origin == "confirmed":
            return f"{self.baseline} from {self.prior} ({when}{self.age}), confirmed now"
        return f"{self.baseline} re-measured now ({when}; {self.prior} disagreed)"

    def describe(self) -> str:
        if self.origin == "measured":
            return (f"{self.baseline}: measured {self.when}, beside the candidate (timed runs interleaved, the same "
                    "seeded input sets)")
        if self.origin == "confirmed":
            return (f"{self.baseline}: from {self.prior}, measured {self.when}{self.age}; confirmed now by a short "
                    f"measurement beside the candidate within ±{self.band:.0%} ({self.detail})")
        return (f"{self.baseline}: {self.prior} did not hold ({self.detail}, outside ±{self.band:.0%}): measured "
                f"again in full {self.when}, beside the candidate")


@dataclass(frozen=True)
class OutsideFigure:
    """One timer's figure by the candidate's worker beside the KForge process's own clock
    (``harness/host/outside_clock.py``).

    :param worker_ms: the worker's figure (its statistic over the timed runs).
    :param outside_ms: for ``wall``, the median of the KForge process's intervals around the calls less
        ``overhead_ms``: the least the calls can have taken (the worker's figure is then its median); for the device's
        timers, the statistic of the intervals themselves: an upper bound.
    :param overhead_ms: the most the KForge process's clock added to any baseline call of the window (flush,
        synchronize, the copy of the outputs, the marks, the host's delays); 0 where nothing is subtracted.
    :param slack_ms: how much shorter than ``outside_ms`` the worker's figure may be.
    :param calls: the timed calls the KForge process saw.
    :param contradiction: what does not add up ("" when the figures agree): a blocking ``timing_mismatch``.
    :param note: what was not checked, and why.
    :param held_ms: for ``wall``, where the figure looked contradicted by the window's own baseline calls, which
        can be far shorter than the candidate's: how long baseline calls were then held, as long as its calls;
        ``overhead_ms`` is the most added to any baseline call, held or not (0: none was held).
    """

    timer: str
    worker_ms: float
    outside_ms: float
    overhead_ms: float
    slack_ms: float
    calls: int
    contradiction: str = ""
    note: str = ""
    held_ms: float = 0.0

    def describe(self) -> str:
        """``"wall: worker 1.203 ms, outside 1.187 ms (less 0.41 ms of the harness's own), 20 calls"``."""
        if self.contradiction:
            return f"{self.timer}: {self.contradiction}"
        held = f", baseline calls held {self.held_ms:.3g} ms among them" if self.held_ms else ""
        less = f" (less {self.overhead_ms:.3g} ms of the harness's own per call{held})" if self.overhead_ms else ""
        kind = "" if self.timer == "wall" and self.overhead_ms else " (an upper bound)"
        text = f"{self.timer}: worker {self.worker_ms:.4g} ms, outside {self.outside_ms:.4g} ms{kind}{less}, " \
               f"{self.calls} calls"
        return f"{text}; {self.note}" if self.note else text


@dataclass(frozen=True)
class PrecisionReached:
    """The precision contract a candidate was held to, and the precision it reached.

    :param contract: the contract's name ("fp32", "tf32", "fp16", "bf16").
    :param bits: the fewest bits of agreement of any output with the reference computed in float64; None when
        not estimated (a candidate that failed first, a reference that does not run in float64).
    :param switches: precision switches the candidate changed within the contract ("...allow_tf32: False -> True").
    :param tolerances: ``(dtype, atol, rtol)`` its outputs were held to, one per output dtype.
    """

    contract: str = DEFAULT_PRECISION
    bits: float | None = None
    switches: tuple[str, ...] = ()
    tolerances: tuple[tuple[str, float, float], ...] = ()

    @property
    def terms(self) -> PrecisionContract:
        return contract_named(self.contract)

    def describe(self) -> str:
        """``"bf16 contract, 8.7 bits of agreement with float64"``."""
        reached = f", {self.bits:.1f} bits of agreement with float64" if self.bits is not None else ""
        return f"{self.contract} contract{reached}"


@dataclass(frozen=True)
class ShapeTiming:
    """A candidate timed at one shape (``--time-shapes``): the problem's own, or one of its shape variants, each
    evaluated as a problem of its own (verified there, timed against the baselines there).

    :param shape: ``own`` or the variant's name.
    :param inputs: the inputs at that shape, described.
    :param elements: the elements of the inputs' tensors (the size plots put on their axis).
    :param runtime_ms: the candidate's headline figure there (None: not correct there, or not timed).
    :param baselines_ms: each baseline's figure there.
    :param speedup: against the faster baseline there (None: no figure).
    :param weight: the shape's share of the passes a model serves (0: not stated).
    :param message: why there is no figure (the verdict's failure there).
    """

    shape: str
    inputs: str
    elements: int
    runtime_ms: float | None = None
    baselines_ms: tuple[tuple[str, float], ...] = ()
    speedup: float | None = None
    weight: float = 0.0
    message: str = ""


def weighted_speedup(timings: Iterable[ShapeTiming]) -> float | None:
    """The speedup over the shapes' stated weights (a model's served passes): total weighted time before over
    after, ``sum(w) / sum(w / speedup)``; None where no shape has both a weight and a speedup."""
    weighed = [(t.weight, t.speedup) for t in timings if t.weight > 0 and t.speedup]
    if not weighed:
        return None
    return sum(w for w, _ in weighed) / sum(w / s for w, s in weighed)


@dataclass(frozen=True)
class Verdict:
    """Everything the harness found out about one candidate. ``failure`` is None exactly when it is correct.

    ``runtime`` and ``speedups`` are set only for a correct candidate: a candidate with a blocking flag has
    ``failure == Failure.CHEAT``, so a cheat never counts as a speedup.
    """

    candidate: str
    candidate_digest: str
    backend: str
    problem: str
    compile: CompileResult
    verify: VerifyResult | None
    runtime: RuntimeStats | None
    baselines: tuple[tuple[str, RuntimeStats], ...]
    speedups: tuple[tuple[str, float], ...]
    flags: tuple[Flag, ...]
    failure: Failure | None
    message: str
    method: TimingMethod | None
    profile: ProfileResult | None
    stdout: str
    stderr: str
    worker_replaced: bool
    baseline_errors: tuple[tuple[str, str], ...] = ()  # baseline name -> why it could not be measured
    baseline_notes: tuple[tuple[str, str], ...] = ()  # baseline name -> where it came from, when not measured now
    precision: PrecisionReached = field(default_factory=PrecisionReached)  # the contract, and the bits reached
    figures: tuple[tuple[str, RuntimeStats], ...] = ()  # the candidate by every timer measured: (timer, stats)
    baseline_figures: tuple[tuple[str, tuple[tuple[str, RuntimeStats], ...]], ...] = ()  # baseline -> by timer
    baseline_sources: tuple[BaselineSource, ...] = ()  # where each baseline's figures came from, and when
    device_streams: int = 0  # the streams the candidate's runs involved, the caller's among them (0: not known)
    phases: tuple[tuple[str, float], ...] = ()  # where the evaluation's seconds went on the host (host/phases.py)
    built_ahead: str = ""  # what building ahead did for this candidate ("": nothing was built ahead)
    # why it was evaluated a second time with the device to itself ("": it was not): out of memory beside KForge's
    # other processes, a verdict KForge lost, not the candidate's failure
    device_alone: str = ""
    outside_clock: tuple[OutsideFigure, ...] = ()  # each timer's figure beside the KForge process's own clock
    speed_of_light: SpeedOfLight | None = None  # the figures against the problem's bound on the device (None: none)
    shape_timings: tuple[ShapeTiming, ...] = ()  # timed at each shape too (--time-shapes; empty: not)

    @property
    def correct(self) -> bool:
        return self.failure is None

    def speedup(self, baseline: str) -> float | None:
        """Baseline runtime / candidate runtime (each ``RuntimeStats.figure``), or None when either is missing."""
        return dict(self.speedups).get(baseline)

    def speedup_interval(self, baseline: str) -> tuple[float, float] | None:
        """The speedup's confidence interval from the two medians' (``timing/confidence.py``); None where the
        speedup is not a ratio of medians (the fastest runs' on the host CPU) or a figure has no interval (a baseline
        from before intervals were kept)."""
        base = dict(self.baselines).get(baseline)
        if self.runtime is None or base is None or not (self.runtime.level and base.level):
            return None
        if self.runtime.statistic != "median":
            return None
        return speedup_interval((base.low, base.high), (self.runtime.low, self.runtime.high))

    @property
    def best_speedup(self) -> float | None:
        """The speedup against the faster of the measured baselines (the harder one to beat)."""
        if not self.speedups:
            return None
        return min(value for _, value in self.speedups)

    @property
    def timer(self) -> str:
        """The timer of the headline figures ("wall" when not timed)."""
        return self.method.headline if self.method is not None else "wall"

    @property
    def statistic(self) -> str:
        """Which figure of the timed runs is the runtime ("median" when not timed)."""
        return self.method.statistic if self.method is not None else "median"

    @property
    def runtime_ms(self) -> float | None:
        """The headline runtime (``runtime.figure``), or None when not timed."""
        return self.runtime.figure if self.runtime is not None else None

    @property
    def baselines_ms(self) -> tuple[tuple[str, float], ...]:
        """Each baseline's headline runtime."""
        return tuple((name, stats.figure) for name, stats in self.baselines)

    @property
    def speedups_by_timer(self) -> dict[str, dict[str, float]]:
        """Every timer's speedups: timer -> baseline -> baseline runtime / candidate runtime (each
        ``RuntimeStats.figure``)."""
        found: dict[str, dict[str, float]] = {}
        baselines = {name: dict(by_timer) for name, by_timer in self.baseline_figures}
        for timer, stats in self.figures:
            ratios = {name: by_timer[timer].figure / stats.figure
                      for name, by_timer in baselines.items() if timer in by_timer and stats.figure > 0}
            if ratios:
                found[timer] = ratios
        return found

    @property
    def blocking_flags(self) -> tuple[Flag, ...]:
        return tuple(flag for flag in self.flags if flag.blocking)

    def to_json(self) -> dict[str, Any]:
        """The documented ``kforge eval --json`` document (strict JSON: no NaN)."""
        return {
            "schema": SCHEMA,
            "candidate": self.candidate,
            "candidate_digest": self.candidate_digest,
            "backend": self.backend,
            "problem": self.problem,
            "correct": self.correct,
            "failure": to_json(self.failure),
            "message": self.message,
            "flags": to_json(self.flags),
            "trials": to_json(self.verify.trials, tuple[TrialError, ...]) if self.verify else [],
            "runtime": self.runtime.to_json() if self.runtime else None,
            "baselines": {name: stats.to_json() for name, stats in self.baselines},
            "baseline_errors": dict(self.baseline_errors),
            "baseline_notes": dict(self.baseline_notes),
            "speedups": dict(self.speedups),
            "best_speedup": self.best_speedup,
            "method": self.method.to_json() if self.method else None,
            "compile": to_json(self.compile),
            "verify": to_json(self.verify),
            "profile": to_json(self.profile),
            "stdout": self.stdout,
            "stderr": self.stderr,
            "worker_replaced": self.worker_replaced,
            "precision": to_json(self.precision),
            "timer": self.timer,
            "figures": {timer: stats.to_json() for timer, stats in self.figures},
            "baseline_figures": {name: {timer: stats.to_json() for timer, stats in by_timer}
                                 for name, by_timer in self.baseline_figures},
            "speedups_by_timer": self.speedups_by_timer,
            "baseline_sources": to_json(self.baseline_sources),
            "device_streams": self.device_streams,
            "phases": dict(self.phases),
            "built_ahead": self.built_ahead,
            "device_alone": self.device_alone,
            "outside_clock": to_json(self.outside_clock),
            "sol_ms": self.speed_of_light.sol_ms if self.speed_of_light else None,
            "sol_fraction": self.speed_of_light.fraction if self.speed_of_light else None,
            "sol_score": self.speed_of_light.score if self.speed_of_light else None,
            "speed_of_light": self.speed_of_light.to_json() if self.speed_of_light else None,
            "shapes": to_json(self.verify.shapes) if self.verify is not None else None,
            "shape_timings": to_json(self.shape_timings),
            "weighted_speedup": weighted_speedup(self.shape_timings),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        """Read back a document written by :meth:`to_json` (derived fields such as ``correct`` are ignored)."""
        if data.get("schema") != SCHEMA:
            raise ValueError(f"not a verdict document of schema {SCHEMA!r}: {data.get('schema')!r}")
        return cls(
            candidate=data["candidate"],
            candidate_digest=data["candidate_digest"],
            backend=data["backend"],
            problem=data["problem"],
            compile=record_from_json(CompileResult, data["compile"]),
            verify=from_json(VerifyResult, data["verify"]),
            runtime=RuntimeStats.from_json(data["runtime"]) if data["runtime"] is not None else None,
            baselines=tuple((name, RuntimeStats.from_json(s)) for name, s in data["baselines"].items()),
            speedups=tuple((name, float(value)) for name, value in data["speedups"].items()),
            flags=from_json(tuple[Flag, ...], data["flags"]),
            failure=from_json(Failure, data["failure"]),
            message=data["message"],
            method=TimingMethod.from_json(data["method"]) if data["method"] is not None else None,
            profile=from_json(ProfileResult, data["profile"]),
            stdout=data["stdout"],
            stderr=data["stderr"],
            worker_replaced=data["worker_replaced"],
            baseline_errors=tuple(data.get("baseline_errors", {}).items()),
            baseline_notes=tuple(data.get("baseline_notes", {}).items()),
            # documents written before contracts were recorded were judged under the default, fp32
            precision=record_from_json(PrecisionReached, data.get("precision", {})),
            figures=tuple((timer, RuntimeStats.from_json(s)) for timer, s in data.get("figures", {}).items()),
            baseline_figures=tuple((name, tuple((timer, RuntimeStats.from_json(s)) for timer, s in by.items()))
                                   for name, by in data.get("baseline_figures", {}).items()),
            baseline_sources=from_json(tuple[BaselineSource, ...], data.get("baseline_sources", [])),
            device_streams=int(data.get("device_streams", 0)),
            phases=tuple((name, float(seconds)) for name, seconds in data.get("phases", {}).items()),
            built_ahead=data.get("built_ahead", ""),
            device_alone=data.get("device_alone", ""),
            outside_clock=from_json(tuple[OutsideFigure, ...], data.get("outside_clock", [])),
            speed_of_light=SpeedOfLight.from_json(data["speed_of_light"]) if data.get("speed_of_light") else None,
            shape_timings=from_json(tuple[ShapeTiming, ...], data.get("shape_timings", [])),
        )
