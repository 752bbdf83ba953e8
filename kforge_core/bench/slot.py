"""One slot of an executor: a harness bound to one unit of the device, evaluating one problem at a time.

The harness is made before the first problem is described, its processes starting while that goes on, and moved on
to each problem (``Harness.use_problem``), so its workers stay warm across problems under the usual rule (only after
a clean candidate), its baseline worker serves every problem, and baselines come from the baseline cache where they
were measured before.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Iterable

from ..harness import Harness, Verdict
from ..harness.host.deadline import BUDGET_RAN_OUT
from ..harness.host.pool import WorkerStartError
from ..harness.host.shape_timing import time_at_shapes
from ..plugins import PluginSelection
from ..problem import ProblemError, load_problem
from ..records import Backend, Failure, Problem
from ..timing.wording import figures_of, sources_of
from ..settings import Settings
from ..speed_of_light import SpeedOfLight
from .describer import Describer
from .results import BUDGET_EXCEEDED, INVALID_PROBLEM, NO_SOLUTION, ProblemJob, ProblemResult

MESSAGE_LIMIT = 2000  # characters of a failure's message kept in the store (the verdict file has all of it)


class ProblemLoader:
    """Problems loaded once, by any slot: each described by ``load_problem`` (on the meta device where it runs
    there), in the KForge process, or ahead in a child process where a :class:`~.describer.Describer` is given."""

    def __init__(self, describer: Describer | None = None) -> None:
        self._lock = threading.Lock()
        self._loaded: dict[Path, Future[Problem]] = {}
        self._describer = describer
        self._here: set[Path] = set()  # described in this process when asked, not handed to the describer

    def ahead(self, paths: Iterable[Path], *, here: int = 0) -> None:
        """Have the describer describe ``paths``, in order, from now on (nothing without a describer), but for the
        first ``here`` of them: those are described in this process when a slot asks for them. A slot's first
        problem waits for its description with nothing else to do, and the describer's child would first start an
        interpreter and import torch; no candidate is timed yet whose clock this process's work could delay
        (docs/measurements.md, "A bench's first problem")."""
        if self._describer is None:
            return
        with self._lock:
            for index, path in enumerate(paths):
                if index < here:
                    self._here.add(path)
                elif path not in self._loaded and path not in self._here:
                    self._loaded[path] = self._describer.submit(path)

    def ready(self, path: Path) -> bool:
        """Whether ``load(path)`` returns at once: described, or to be described in this process when asked."""
        with self._lock:
            future = self._loaded.get(path)
        return future.done() if future is not None else self._describer is None

    def load(self, path: Path) -> Problem:
        """The problem; raises the ProblemError that loading it raised."""
        self.ahead([path])
        with self._lock:
            future = self._loaded.get(path)
            mine = future is None
            if mine:
                future = self._loaded[path] = Future()
        if mine:
            _settle(future, path)
        try:
            return future.result()
        except BrokenProcessPool:  # the describing process died (killed, out of memory): describe it here
            retry: Future[Problem] = Future()
            _settle(retry, path)
            with self._lock:
                self._loaded[path] = retry
            return retry.result()

    def forget(self, path: Path) -> None:
        with self._lock:
            self._loaded.pop(path, None)

    def close(self) -> None:
        if self._describer is not None:
            self._describer.close()


def _settle(future: Future[Problem], path: Path) -> None:
    try:
        future.set_result(load_problem(path))
    except Exception as exc:  # noqa: BLE001 - whoever waits for it gets the same error
        future.set_exception(exc)


WAIT_SHOWN_S = 0.05  # a wait for the problem's baseline builds this long or longer is a phase of its own


class DeviceSlot:
    """Evaluates problems on one unit of the backend's device (``device_index``; None: what the process sees).

    :param label: how results name where they ran (``cuda:1``).
    :param measure: False checks correctness only (no timing, no baselines).
    :param peers: every slot of the bench, this one among them, as they are made: a later problem's
        ``torch.compile`` build is requested by the slot that took the first problems (its builders build the suite),
        and another slot asks them all whether it is done.
    """

    def __init__(self, *, backend: Backend, settings: Settings, plugins: PluginSelection, options: Any,
                 device_index: int | None, label: str, loader: ProblemLoader | None = None,
                 measure: bool = True, peers: list[DeviceSlot] | None = None) -> None:
        self.backend = backend
        self.settings = settings
        self.plugins = plugins
        self.options = options
        self.device_index = device_index
        self.label = label
        self.loader = loader or ProblemLoader()
        self.measure = measure
        self._harness: Harness | None = None
        self._made = threading.Event()  # set once the harness exists (or the slot closed without one)
        self.upcoming: ProblemJob | None = None  # the job this slot takes after the current one, when known
        self.wait_for_builds = False  # the job in hand was taken with no other's baselines built: it waits for its own
        self._peers = peers if peers is not None else []
        self._peers.append(self)

    def harness(self) -> Harness:
        """The slot's harness, made on first use with its processes started (they start their runtimes and the
        device while the first problem is described). Raises KForgeError for an unusable backend or device."""
        if self._harness is None:
            self._harness = Harness(backend=self.backend, problem=None, settings=self.settings,
                                    plugins=self.plugins, options=self.options, device_index=self.device_index)
            self._harness.start_workers(baselines=self.measure)
            self._made.set()
        return self._harness

    def start(self) -> None:
        """Make the harness and start its processes now, before the slot takes its first problem: every device's
        start-up (the runtime, the device, the baseline worker's imports) overlaps the others' and the first
        problem's description. Raises KForgeError for an unusable backend or device."""
        self.harness()

    def baselines_built(self, job: ProblemJob) -> bool:
        """Whether ``job``'s baselines need no build still under way by any slot's builders
        (``Harness.baselines_built``); a problem not described yet is not known to: it is not waited for either."""
        builders = self._peer_harnesses()
        if not builders or not self.loader.ready(job.path):  # none builds ahead (the host CPU): nothing is loaded
            return True
        try:
            problem = self.loader.load(job.path)
        except ProblemError:
            return True
        return all(harness.baselines_built(problem) for harness in builders)

    def _peer_harnesses(self) -> list[Harness]:
        """The harnesses of every slot whose builders build baselines ahead."""
        return [harness for slot in list(self._peers)
                if (harness := slot._harness) is not None and harness.builds_baselines_ahead]

    def harness_for(self, problem: Problem) -> Harness:
        """The slot's harness, moved on to ``problem``."""
        harness = self.harness()
        harness.use_problem(problem)
        return harness

    def evaluate(self, job: ProblemJob) -> ProblemResult:
        """Compile, verify and time the job's solution; every outcome is a result, never an exception."""
        start = time.perf_counter()
        budget = self.settings.harness.problem_budget_s
        stop_at = time.monotonic() + budget if budget else None
        if job.candidate is None:
            return ProblemResult(job.key, False, NO_SOLUTION, "no solution was found for this problem",
                                 device=self.label)
        self.harness()  # an unusable backend or device raises here: the bench stops
        try:
            problem = self.loader.load(job.path)
            harness = self.harness_for(problem)
            waited = time.perf_counter()
            if self.wait_for_builds:  # nothing else to evaluate meanwhile: its own torch.compile build is waited for
                for builder in self._peer_harnesses():  # whichever slot's builders have it
                    builder.wait_for_baseline_builds(problem, stop_at)
            waited = time.perf_counter() - waited
            self._expect_next(harness)
            verdict = harness.evaluate(job.candidate, measure=self.measure, stop_at=stop_at)
            if self.settings.harness.time_shapes and verdict.runtime is not None and problem.shapes.variants:
                verdict = dataclasses.replace(verdict, shape_timings=time_at_shapes(
                    harness, job.candidate, verdict, harness.root / "shapes"))
        except (ProblemError, WorkerStartError) as exc:  # not loadable, or its reference fails in a worker
            return ProblemResult(job.key, False, _start_failure(exc), str(exc)[:MESSAGE_LIMIT], device=self.label,
                                 seconds=time.perf_counter() - start, candidate_digest=job.candidate.digest)
        finally:
            self.loader.forget(job.path)
        result = result_of(job.key, verdict, self.label, time.perf_counter() - start)
        if waited >= WAIT_SHOWN_S:  # the torch.compile build's own time, apart from the evaluation's phases
            result = dataclasses.replace(result, phases=(("baseline_builds", waited), *result.phases))
        if BUDGET_RAN_OUT in verdict.message:  # the budget ended it, not the candidate: say what was done
            result = dataclasses.replace(result, failure=BUDGET_EXCEEDED, message=(
                f"the problem's budget of {budget:g} s ran out ({_done(verdict)}): {verdict.message}")[:MESSAGE_LIMIT])
        return result

    def _expect_next(self, harness: Harness) -> None:
        """Spare workers prepare for the next job's problem while this one is evaluated."""
        if self.upcoming is None or not self.loader.ready(self.upcoming.path):
            return  # still being described: the next problem is prepared for in its own turn
        try:
            harness.expect_problem(self.loader.load(self.upcoming.path))
        except ProblemError:
            pass  # its own turn reports why

    def prebuild(self, jobs: Iterable[ProblemJob]) -> None:
        """Build what later problems need ahead: their ``torch.compile`` baselines (``Harness.build_baselines_ahead``)
        and, where the backend can, their solutions (``Harness.prebuild``). Handed the later problems with the first
        one, it waits until the harness exists (made for the first problem): a suite's builds then start with its
        first problem, not after it (else the second and third of a suite's `load_inline` solutions built in their
        own verification, a minute or so each)."""
        self._made.wait()
        harness = self._harness
        if harness is None:
            return
        later = []
        for job in jobs:
            try:
                later.append((job, self.loader.load(job.path)))
            except ProblemError:
                continue  # its own turn reports why
        harness.build_baselines_ahead(problem for _, problem in later)
        if not harness.builds_ahead:
            return
        for job, problem in later:
            if job.candidate is not None:
                harness.prebuild([job.candidate], problem)

    def close(self) -> None:
        if self._harness is not None:
            self._harness.close()
            self._harness = None
        self._made.set()  # a prebuild still waiting for a harness finds none and returns


def _done(verdict: Verdict) -> str:
    """What the evaluation had done when its budget ran out."""
    if verdict.verify is not None:
        return "compiled, verified " + ("correct; not timed" if verdict.verify.correct else "incorrect")
    if verdict.compile is not None and verdict.compile.ok:
        return "compiled; not verified"
    return "not compiled"


def result_of(key: str, verdict: Verdict, device: str, seconds: float) -> ProblemResult:
    return ProblemResult(
        key=key, correct=verdict.correct, failure=verdict.failure.value if verdict.failure is not None else None,
        message="" if verdict.correct else verdict.message[:MESSAGE_LIMIT],
        runtime_ms=verdict.runtime_ms,
        baselines_ms=verdict.baselines_ms,
        speedups=tuple(verdict.speedups), flags=tuple(f.code for f in verdict.flags),
        precision_bits=verdict.precision.bits, device=device,
        seconds=seconds, candidate_digest=verdict.candidate_digest, verdict=verdict.to_json(),
        timer=verdict.timer, figures_ms=figures_of(verdict), baseline_sources=sources_of(verdict),
        baseline_errors=tuple(verdict.baseline_errors),
        phases=verdict.phases, **sol_fields(verdict.speed_of_light),
    )


def sol_fields(light: SpeedOfLight | None) -> dict[str, Any]:
    """A verdict's place against the speed of light, as a ProblemResult keeps it."""
    if light is None:
        return {}
    return {"sol_ms": light.sol_ms, "sol_binds": light.binds, "sol_fraction": light.fraction,
            "baseline_fractions": light.baseline_fractions, "sol_score": light.score}


def _start_failure(error: Exception) -> str:
    """A worker that ran out of memory is the harness's resource fault, never a fault of the problem."""
    if isinstance(error, WorkerStartError) and error.failure is Failure.OUT_OF_MEMORY:
        return Failure.OUT_OF_MEMORY.value
    return INVALID_PROBLEM
