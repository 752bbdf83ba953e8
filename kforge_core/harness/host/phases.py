"""Where an evaluation's seconds go on the host, phase by phase: the record behind a verdict's ``phases``.

The phases, in the order they can happen: ``prebuild`` (waiting for a build started ahead), ``reference`` (the
referee's reference outputs for the problem, once per problem), ``worker`` (a worker ready for the problem: warm, a
spare, or started and prepared now), ``compile``, ``verify``, ``timing`` (the candidate's timed runs and, beside
them, the baselines': their worker's preparation included where it was not ready), ``profile``, ``finish`` (the
check of what the candidate left in its process and the worker's release or replacement).
"""

from __future__ import annotations

import contextlib
import time
from typing import Iterator


class Phases:
    """Seconds per phase, summed where a phase happens twice, in the order the phases began."""

    def __init__(self) -> None:
        self._spent: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self._spent[name] = self._spent.get(name, 0.0) + time.perf_counter() - start

    def record(self) -> tuple[tuple[str, float], ...]:
        return tuple(self._spent.items())
