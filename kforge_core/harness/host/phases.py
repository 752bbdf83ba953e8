"""Where an evaluation's seconds go on the host, phase by phase: the record behind a verdict's ``phases``; and, for
whoever shows an evaluation as it happens (``kforge eval``), each phase and step as it begins.

The phases, in the order they can happen: ``prebuild`` (waiting for a build started ahead), ``reference`` (the
referee's reference outputs for the problem, once per problem), ``worker`` (a worker ready for the problem: warm, a
spare, or started and prepared now), ``compile``, ``verify``, ``timing`` (the candidate's timed runs and, beside
them, the baselines': their worker's preparation included where it was not ready; within it ``quiet``, the wait for
what else the harness runs to finish or stop first, and ``baselines_ready``), ``profile``, ``finish`` (the
check of what the candidate left in its process and the worker's release or replacement).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from ..protocol import Judged, Shipped


@dataclass(frozen=True)
class EvaluationStep:
    """A step of an evaluation as it happens: a phase beginning (``number`` 0), or within one, step ``number`` of
    ``of`` (a correctness trial judged, a block of timed runs begun), ``what`` saying which."""

    phase: str
    number: int = 0
    of: int = 0
    what: str = ""


Observer = Callable[[EvaluationStep], None]


class Phases:
    """Seconds per phase, summed where a phase happens twice, in the order the phases began; each phase's first
    beginning, and each step reported with :meth:`step`, is told to ``observer``."""

    def __init__(self, observer: Observer | None = None) -> None:
        self._spent: dict[str, float] = {}
        self._observer = observer
        self._begun: set[str] = set()

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if name not in self._begun:  # a phase that goes on in a second part is told once
            self._begun.add(name)
            self.step(EvaluationStep(name))
        self._spent.setdefault(name, 0.0)  # in the order the phases began, a phase inside another after it
        start = time.perf_counter()
        try:
            yield
        finally:
            self._spent[name] += time.perf_counter() - start

    def step(self, step: EvaluationStep) -> None:
        if self._observer is not None:
            self._observer(step)

    def record(self) -> tuple[tuple[str, float], ...]:
        return tuple(self._spent.items())

    def trials(self, first_seed: int, count: int) -> TrialSteps:
        """What tells this evaluation's observer each correctness trial as the referee judges it (the referee's
        ``on_judged``): trial ``seed - first_seed + 1`` of ``count``."""
        return TrialSteps(self, first_seed, count)


@dataclass(frozen=True)
class TrialSteps:
    """Each judged trial as a ``verify`` step of :class:`Phases`; a timed run's check or the operator trace's extra
    call is no trial."""

    phases: Phases
    first_seed: int
    count: int

    def __call__(self, shipped: Shipped, judged: Judged) -> None:
        if shipped.kind == "trial":
            self.phases.step(EvaluationStep("verify", shipped.seed - self.first_seed + 1, self.count,
                                            "passed" if judged.passed else "failed"))
