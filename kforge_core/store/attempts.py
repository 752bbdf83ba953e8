"""What the loop keeps about each attempt: plain records, stored as JSON and rebuilt on resume.

The loop reads a harness ``Verdict`` once, into an :class:`Outcome`, and decides everything from that; the whole
verdict is kept as ``verdict.json`` in the step's directory for people.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..agents.views import CandidateView, Feedback
from ..records import Candidate, Failure, Flag
from ..shapes.words import check_lines
from ..sol_words import sol_summary
from ..timing.findings import launch_overhead_finding


@dataclass(frozen=True)
class Place:
    """Where in the run a step happens: the pass, its round (0 in the functional pass), the attempt and, where a
    round asks for several candidates at once (``--width``), which one (``member``, from 1; 0: the only one). An
    optimization round's analysis of its parent ``member`` (``--keep``) has attempt 0."""

    pass_kind: str  # "setup", "functional" or "optimization"
    round: int = 0
    attempt: int = 0
    member: int = 0

    @property
    def label(self) -> str:
        """``f2``, ``o1.3``, ``o1`` (a round's analysis); with members ``f2-4``, ``o1.3-4``, ``o1-p2``."""
        if self.pass_kind == "functional":
            return f"f{self.attempt}" + (f"-{self.member}" if self.member else "")
        if self.pass_kind == "optimization":
            if not self.attempt:
                return f"o{self.round}" + (f"-p{self.member}" if self.member else "")
            return f"o{self.round}.{self.attempt}" + (f"-{self.member}" if self.member else "")
        return self.pass_kind


@dataclass(frozen=True)
class Outcome:
    """A candidate's verdict as the loop uses it.

    :param failure: the harness's failure class (``compile_error``, ``numerical_mismatch``, ...), None if correct.
    :param best_speedup: against the faster baseline; None unless correct and timed.
    :param precision_bits: bits of agreement with a float64 reference (None: not estimated); the run's precision
        contract says what it had to reach.
    :param tolerances: ``(dtype, atol, rtol)`` its outputs were held to.
    :param timer: the timing method of ``runtime_ms`` and the speedups ("wall", "events", "device").
    :param figures_ms: the candidate's runtime by every timer measured.
    :param statistic: which figure of the timed runs ``runtime_ms`` and the speedups are: "median", or "min" (the
        fastest run, on a device that shares the host's cores).
    :param baseline_sources: where each baseline's figure came from and when it was measured, in words.
    :param sol_ms: the problem's speed of light on the device (None: no bound); ``sol_binds`` which roof it is.
    :param sol_fraction: ``sol_ms / runtime_ms``, at most 1; ``baseline_fractions`` the baselines' own.
    :param sol_score: the SOL score against the faster baseline (None: undefined, ``sol_note`` says why).
    :param sol_summary: the bound and the fractions in a sentence, for people and agents.
    """

    label: str
    candidate_digest: str
    compiled: bool
    correct: bool
    failure: str | None
    message: str
    compile_log: str = ""
    runtime_ms: float | None = None
    best_speedup: float | None = None
    speedups: tuple[tuple[str, float], ...] = ()
    baselines_ms: tuple[tuple[str, float], ...] = ()
    flags: tuple[Flag, ...] = ()
    precision_bits: float | None = None
    tolerances: tuple[tuple[str, float, float], ...] = ()
    timer: str = "wall"
    figures_ms: tuple[tuple[str, float], ...] = ()
    baseline_sources: tuple[str, ...] = ()
    statistic: str = "median"
    sol_ms: float | None = None
    sol_binds: str = ""
    sol_fraction: float | None = None
    baseline_fractions: tuple[tuple[str, float], ...] = ()
    sol_score: float | None = None
    sol_note: str = ""
    sol_summary: str = ""
    shapes: tuple[str, ...] = ()  # the shape variants it was checked at, each with its outcome and why chosen

    @classmethod
    def from_verdict(cls, verdict: Any) -> Outcome:
        """Read the fields of a ``kforge_core.harness.Verdict`` the loop needs."""
        failure = verdict.failure
        light = verdict.speed_of_light
        return cls(
            label=verdict.candidate,
            candidate_digest=verdict.candidate_digest,
            compiled=bool(verdict.compile.ok),
            correct=bool(verdict.correct),
            failure=getattr(failure, "value", failure),
            message=verdict.message or "",
            compile_log=verdict.compile.log or "",
            runtime_ms=verdict.runtime_ms,
            best_speedup=verdict.best_speedup,
            speedups=tuple((name, float(value)) for name, value in verdict.speedups),
            baselines_ms=verdict.baselines_ms,
            flags=tuple(Flag(f.code, f.message, f.blocking) for f in verdict.flags),
            precision_bits=verdict.precision.bits,
            tolerances=verdict.precision.tolerances,
            timer=verdict.timer,
            figures_ms=tuple((timer, stats.figure) for timer, stats in verdict.figures),
            baseline_sources=tuple(source.short() for source in verdict.baseline_sources),
            statistic=verdict.statistic,
            sol_ms=light.sol_ms if light is not None else None,
            sol_binds=light.binds if light is not None else "",
            sol_fraction=light.fraction if light is not None else None,
            baseline_fractions=light.baseline_fractions if light is not None else (),
            sol_score=light.score if light is not None else None,
            sol_note=light.note if light is not None else "",
            sol_summary=sol_summary(light),
            shapes=tuple(check_lines(verdict.verify.shapes)) if verdict.verify and verdict.verify.shapes else (),
        )

    @property
    def rankable(self) -> bool:
        """Correct, timed and not flagged as a cheat: only such a candidate can be the best."""
        return self.correct and self.runtime_ms is not None and not any(f.blocking for f in self.flags)

    @property
    def verdict_text(self) -> str:
        if self.rankable:
            return "correct"
        if self.correct:
            return "correct, not ranked (" + (", ".join(f.code for f in self.flags if f.blocking) or "not timed") + ")"
        return self.failure or "failed"

    def feedback(self, candidate: Candidate) -> Feedback:
        """What the generation agent hears about this outcome next time."""
        if not self.compiled and _is_build_failure(self.failure):
            kind, headline = "compile", f"It did not compile ({self.failure})."
        elif not self.compiled:
            kind, headline = "compile", (f"The compile stage, which imports it and may run it once, ended in "
                                         f"{self.failure} (see the log: it is not a build that failed).")
        elif self.failure == "cheat" or any(f.blocking and f.code != _SHAPE_SPECIFIC for f in self.flags):
            kind, headline = "verify", "It was rejected: " + "; ".join(f"{f.code}: {f.message}" for f in self.flags)
        elif self.correct:
            kind, headline = "verify", "It is correct, but it could not be timed."
        else:
            kind, headline = "verify", f"It compiled but failed verification ({self.failure})."
        log = self.compile_log if not self.compiled else ""
        message = "" if self.message and self.message.strip() in log else self.message
        return Feedback(kind, self.label, headline, message, log, candidate.files, candidate.entry)


# wrong at a shape variant is a verification failure like any other (its message names the variant), not a
# rejection: the flag code, as kforge_core.harness.flags names it
_SHAPE_SPECIFIC = "shape_specific"


@dataclass(frozen=True)
class Attempt:
    """One attempt: the reply's candidate (or why there was none) and, if it was evaluated, its outcome."""

    place: Place
    candidate: Candidate | None
    no_code: str = ""
    outcome: Outcome | None = None

    @property
    def rankable(self) -> bool:
        return self.outcome is not None and self.outcome.rankable

    def feedback(self) -> Feedback | None:
        if self.candidate is None:
            return Feedback("no_code", self.place.label, "Your reply contained no usable code.", self.no_code)
        if self.outcome is not None and not self.outcome.rankable:
            return self.outcome.feedback(self.candidate)
        return None

    def view(self) -> CandidateView:
        """How prompts show this attempt when it is the best."""
        assert self.candidate is not None and self.outcome is not None and self.outcome.runtime_ms is not None
        finding = launch_overhead_finding(self.outcome.figures_ms)
        return CandidateView(
            self.candidate.label, self.candidate.files, self.candidate.entry, self.outcome.runtime_ms,
            self.outcome.speedups, self.outcome.precision_bits, self.outcome.timer, (finding,) if finding else (),
            self.outcome.statistic, self.outcome.sol_ms, self.outcome.sol_binds, self.outcome.sol_fraction,
            self.outcome.baseline_fractions,
        )


def _is_build_failure(failure: str | None) -> bool:
    try:
        return failure is None or Failure(failure).builds
    except ValueError:  # a failure class this version does not know
        return True
