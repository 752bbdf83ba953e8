"""What the loop needs from the harness, and the harness that serves it in production."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterator, Mapping, Protocol

from ..records import Candidate, Problem, ProfileResult, ProfileSummary

if TYPE_CHECKING:
    from ..plugins import PluginSelection
    from ..registry import RegisteredBackend
    from ..settings import Settings


class Evaluator(Protocol):
    """Compiles, verifies, times and profiles candidates in isolation (``kforge_core.harness.Harness``).

    ``evaluate`` returns a ``kforge_core.harness.Verdict`` and never raises for anything a candidate does. One
    evaluator serves one device and evaluates one candidate at a time; where it ``builds_ahead`` (a Harness whose
    backend builds ahead), ``prebuild([candidate])`` may be called beside an evaluation, from another thread.
    """

    def evaluate(self, candidate: Candidate, *, profile: bool = False) -> Any: ...

    def baselines(self) -> Mapping[str, Any]: ...  # name -> RuntimeStats (milliseconds)

    def summarize(self, profile: ProfileResult) -> ProfileSummary: ...


# (backend, problem, settings, options, plugins, scratch root, device index) -> a context manager yielding an
# Evaluator bound to that unit of the device (None: the device as the process sees it)
EvaluatorFactory = Callable[
    ["RegisteredBackend", Problem, "Settings", Any, "PluginSelection", "Path | None", "int | None"],
    ContextManager[Evaluator],
]


@contextmanager
def open_harness(
    backend: RegisteredBackend, problem: Problem, settings: Settings, options: Any, plugins: PluginSelection,
    scratch_root: Path | None, device_index: int | None = None,
) -> Iterator[Evaluator]:
    """The production evaluator: one :class:`kforge_core.harness.Harness` (warm workers) per device for the whole
    run, its processes (a candidate's worker, the referee, the baseline worker) started at once, so that they load
    their runtimes and the device while the first request to the model is in flight."""
    from ..harness import Harness

    with Harness(
        backend=backend.backend, problem=problem, settings=settings, plugins=plugins, options=options,
        scratch_root=scratch_root, device_index=device_index,
    ) as harness:
        harness.start_workers()
        yield harness
