"""What a bench hands around: the job of one problem, and its result (plain data: it travels back from a Ray
task and is stored as JSON in the run store)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records import Candidate

NO_SOLUTION = "no_solution"  # the failure class of a problem nobody solved (no file, no code in any reply)
BUDGET_EXCEEDED = "budget_exceeded"  # the problem's evaluation ran past harness.problem_budget_s (--problem-budget)
INVALID_PROBLEM = "invalid_problem"  # KForge could not load the problem, or its reference failed in a worker


@dataclass(frozen=True)
class ProblemJob:
    """One problem to evaluate: its place in the suite and, with ``--solutions``, its candidate (None: no solution
    was found). ``resume_run`` names an agent loop's run that a killed bench left unfinished."""

    key: str
    path: Path
    candidate: Candidate | None = None
    resume_run: str | None = None


@dataclass(frozen=True)
class Usage:
    """What the agent loop spent on one problem."""

    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None when a model had no price in [llm] prices

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class ProblemResult:
    """How one problem of the suite went.

    :param failure: the failure class (the harness's, or ``no_solution``, ``invalid_problem``); None when correct.
    :param runtime_ms: the solution's median; None unless correct and timed.
    :param speedups: baseline median / solution median, per baseline.
    :param flags: the cheat flags raised (codes), blocking or not.
    :param precision_bits: bits of the output that agree with the reference computed in float64 (the precision
        reached under the bench's contract); None where it was not estimated.
    :param device: where it ran (``cpu``, ``cuda:1``, ``ray node 10.0.0.2 gpu 3``).
    :param seconds: wall time spent on it, start to verdict.
    :param run_id: the agent loop's run (``--llm``).
    :param verdict: the whole verdict document (``kforge eval --json``), for ``--solutions``.
    :param sol_ms: the problem's speed of light on the device (None: no bound); ``sol_binds`` which roof it is.
    :param sol_fraction: the solution's fraction of it (at most 1); ``baseline_fractions`` the baselines' own.
    :param sol_score: the SOL score against the faster baseline (None: undefined).
    """

    key: str
    correct: bool
    failure: str | None
    message: str = ""
    runtime_ms: float | None = None
    baselines_ms: tuple[tuple[str, float], ...] = ()
    speedups: tuple[tuple[str, float], ...] = ()
    flags: tuple[str, ...] = ()
    precision_bits: float | None = None
    device: str = ""
    seconds: float = 0.0
    candidate_digest: str = ""
    run_id: str | None = None
    usage: Usage | None = None
    verdict: dict[str, Any] | None = None
    timer: str = "wall"  # the timing method of runtime_ms and the speedups
    figures_ms: tuple[tuple[str, float], ...] = ()  # the solution's median by every timer measured
    baseline_sources: tuple[str, ...] = ()  # where each baseline's figure came from and when, in words
    baseline_errors: tuple[tuple[str, str], ...] = ()  # baseline -> why it has no figure (a build under way, ...)
    phases: tuple[tuple[str, float], ...] = ()  # where its seconds went on the host, phase by phase (the verdict's)
    sol_ms: float | None = None
    sol_binds: str = ""
    sol_fraction: float | None = None
    baseline_fractions: tuple[tuple[str, float], ...] = ()
    sol_score: float | None = None

    @property
    def best_speedup(self) -> float | None:
        """Against the faster baseline (the smallest of the speedups)."""
        return min(value for _, value in self.speedups) if self.speedups else None

    def speedup(self, baseline: str) -> float | None:
        return dict(self.speedups).get(baseline)

    def missing_words(self) -> str:
        """``", no compile figure (its build was still running (31 s in) when the candidate was timed)"``: each
        baseline without a figure, and its reason's first clause ("" when every baseline has one)."""
        return "".join(f", no {name} figure ({reason.split(': ', 1)[-1].split(';')[0]})"
                       for name, reason in self.baseline_errors)
