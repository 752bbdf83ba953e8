"""The workers a Harness owns: started ahead of need when workers are kept warm, reused only while clean.

A worker is started with its plugins and device, and prepared for the harness's current problem (its reference
computed, see ``reference.py``), so the next candidate pays none of that. A worker that served a candidate goes
back to the pool only when the candidate was correct and left the process as it found it; any other worker is
killed and a fresh spare is started. When the harness moves on to another problem, a warm worker takes it: it is
prepared for the new problem before it serves a candidate, without starting a process again. When the next problem
is known (:meth:`WorkerPool.expect`, a bench's next job), spares are prepared for it ahead, while the current one is
evaluated, so that moving on costs no wait. Workers may start before any problem is known: they are told the first
one when it comes (:meth:`WorkerPool.move_to`).
"""

from __future__ import annotations

import contextlib
import itertools
from collections import deque
from pathlib import Path
from typing import Callable, Iterator

from ...errors import KForgeError
from ...records import Failure, Problem
from ...settings import HarnessSettings
from ..protocol import DeviceFacts, Prepare, Prepared, WorkerInit
from ..memory_words import OUT_OF_MEMORY_PATTERNS
from ..problem_size import large_for_device
from .process import WorkerFault, WorkerProcess


class WorkerStartError(KForgeError):
    """A worker could not start or could not run the problem's reference: nothing a candidate did.

    :param failure: the class of what went wrong, when known: ``Failure.OUT_OF_MEMORY`` is the harness's resource
        fault (the device was full), not a fault of the problem.
    """

    def __init__(self, message: str, *, failure: Failure | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.failure = failure


class WorkerPool:
    def __init__(self, make_init: Callable[[], WorkerInit], root: Path, settings: HarnessSettings,
                 problem: Problem | None) -> None:
        self._make_init = make_init
        self._root = root
        self._settings = settings
        self._idle: list[WorkerProcess] = []  # spares first, the most recently released last
        self._prepared: dict[int, str] = {}  # worker pid -> digest of the problem it was last told to prepare
        self._preparing: dict[int, deque[str]] = {}  # worker pid -> digests of the Prepare replies not read yet
        self._references: dict[str, float] = {}  # problem digest -> the reference's forward time, once a worker said
        self.upcoming: Problem | None = None  # the problem after the current one, when known: spares prepare for it
        self._numbers = itertools.count(1)
        self.problem = problem  # the problem workers are prepared for (the harness moves it on); None: none yet
        self.started = 0
        self.facts: DeviceFacts | None = None
        self.alone: set[str] = set()  # problems whose candidates get the device to themselves (Harness)

    @property
    def reference_s(self) -> float | None:
        """The current problem's reference forward time on the device, once a worker said."""
        return self._references.get(self._digest)

    @property
    def _digest(self) -> str | None:
        return self.problem.digest if self.problem is not None else None

    def expect(self, problem: Problem | None) -> None:
        """``problem`` comes after the current one: idle workers the current one does not need (all but the one
        :meth:`acquire` would take) and spares started from now on prepare for it ahead."""
        self.upcoming = problem
        if problem is None or problem.digest == self._digest:
            return
        keep = self._next_idle()
        for worker in self._idle:
            if worker is not keep and self._prepared.get(worker.pid) not in (self._digest, problem.digest):
                self._send_prepare(worker, problem)

    def start_ahead(self) -> None:
        """Start a worker for the current problem (or for the first one, when none is known yet) now, without
        waiting for it, unless an idle one is ready or getting ready for it: the first candidate's worker then
        starts beside the referee, not after it (seconds of a bench's first problem)."""
        if any(w.alive and self._prepared.get(w.pid) == self._digest for w in self._idle):
            return
        self._idle.append(self._spawn(self.problem))

    def start_own(self, make_init: Callable[[], WorkerInit] | None = None) -> WorkerProcess:
        """A new worker for the caller alone (the referee's), told the current problem if there is one; returns
        without waiting for it (:meth:`prepare` does). ``make_init``: what it is told instead of the pool's."""
        return self._spawn(self.problem, make_init)

    def acquire(self, *, fresh: bool = False, make_init: Callable[[], WorkerInit] | None = None) -> WorkerProcess:
        """A worker ready for the current problem: the warmest idle one (unless ``fresh``), preferring one
        prepared for this problem already, else a new one (told ``make_init``'s, when given). Raises
        WorkerStartError."""
        while self._idle and not self._idle[-1].alive:  # an idle worker that died is nobody's fault: drop it
            self._forget(self._idle.pop())
        worker = self._take_idle() if not fresh else None
        worker = worker or self._spawn(self.problem, make_init)
        self.prepare(worker)
        self._top_up()
        return worker

    def acquire_for_candidate(self) -> WorkerProcess:
        """A worker for the next candidate. A worker that cannot start or prepare for lack of memory is the
        harness's resource fault: the idle workers are ended to free their memory and it is tried once more."""
        try:
            return self.acquire()
        except WorkerStartError as error:
            if error.failure is not Failure.OUT_OF_MEMORY:
                raise
            self.close()
        return self.acquire()

    def device_facts(self) -> DeviceFacts:
        """What the workers' device is (a worker is started for it, and kept warm, if none has said yet)."""
        if self.facts is None:
            self.release(self.acquire(), reusable=True)
        assert self.facts is not None
        return self.facts

    def large(self, problem: Problem) -> bool:
        """Whether ``problem`` is large for the workers' device (unknown before a worker has started: no), or its
        candidates were given the device to themselves (:attr:`alone`)."""
        facts = self.facts
        return problem.digest in self.alone or (facts is not None and large_for_device(problem, facts.memory_bytes))

    def prepare(self, worker: WorkerProcess) -> None:
        """Make ``worker`` (idle, or held by the caller) ready for the current problem. Raises WorkerStartError
        (and kills the worker)."""
        if self.problem is None:
            raise RuntimeError("no problem to prepare workers for yet")
        if self._prepared.get(worker.pid) != self.problem.digest:
            try:
                self._send_prepare(worker, self.problem)
            except WorkerFault as fault:
                self._forget(worker)
                raise WorkerStartError(f"a worker could not take problem {self.problem.name} ({fault.message})",
                                       failure=fault.failure, hint=worker.worker_stderr_tail() or None) from None
        try:
            self._ready(worker)
        except WorkerStartError:
            self._forget(worker)
            raise

    def move_to(self, problem: Problem) -> None:
        """Serve ``problem`` from now on. The idle workers are told at once (they drop the previous problem's data
        and its device memory, and prepare this one while nothing waits for them)."""
        self.problem = problem
        for worker in list(self._idle):
            if self._prepared.get(worker.pid) == problem.digest or not worker.alive:
                continue
            try:
                self._send_prepare(worker, problem)
            except WorkerFault:
                self._idle.remove(worker)
                self._forget(worker)

    def release(self, worker: WorkerProcess, *, reusable: bool) -> bool:
        """Keep ``worker`` warm when allowed; otherwise kill it. Returns True when it was killed (replaced)."""
        if reusable and self._settings.warm_workers and worker.alive and not worker.pending:
            self._idle.append(worker)
            return False
        self._forget(worker)
        self._top_up()
        return True

    @contextlib.contextmanager
    def starts_paused(self) -> Iterator[None]:
        """Within the block, spares still starting are stopped (``WorkerProcess.pause``): they do not compete with
        a timed run for the machine, and the timed run does not wait for them; they go on after it."""
        paused = [worker for worker in self._idle if worker.pending and worker.alive]
        for worker in paused:
            worker.pause()
        try:
            yield
        finally:
            for worker in paused:
                worker.resume()

    def close(self) -> None:
        for worker in self._idle:
            worker.close()
        self._idle.clear()
        self._prepared.clear()

    def _take_idle(self) -> WorkerProcess | None:
        """The warmest idle worker prepared for the current problem, else the warmest idle one."""
        worker = self._next_idle()
        if worker is not None:
            self._idle.remove(worker)
        return worker

    def _next_idle(self) -> WorkerProcess | None:
        for worker in reversed(self._idle):
            if self._prepared.get(worker.pid) == self._digest:
                return worker
        return self._idle[-1] if self._idle else None

    def _send_prepare(self, worker: WorkerProcess, problem: Problem) -> None:
        worker.send(Prepare(problem))
        self._prepared[worker.pid] = problem.digest
        self._preparing.setdefault(worker.pid, deque()).append(problem.digest)

    def _forget(self, worker: WorkerProcess) -> None:
        worker.kill()
        self._prepared.pop(worker.pid, None)
        self._preparing.pop(worker.pid, None)

    def _spawn(self, problem: Problem | None, make_init: Callable[[], WorkerInit] | None = None) -> WorkerProcess:
        number = next(self._numbers)
        worker = WorkerProcess((make_init or self._make_init)(), self._root / f"worker-{number}")
        if problem is not None:
            self._send_prepare(worker, problem)
        self.started += 1
        return worker

    def _top_up(self) -> None:
        if not self._settings.warm_workers:
            return
        while len(self._idle) < self._settings.spare_workers:
            self._idle.insert(0, self._spawn(self.upcoming or self.problem))  # a spare serves the next problem

    def _ready(self, worker: WorkerProcess) -> None:
        """Read the replies to the start and to Prepare; any failure there is a WorkerStartError."""
        timeout = self._settings.startup_timeout_s
        replies = []
        try:
            while worker.pending:  # one at a time: a worker that said why it failed and then exited said why
                replies.append(worker.receive(timeout, "starting the worker and preparing the reference"))
        except WorkerFault as fault:
            if not any(reply.failure is not None for reply in replies):
                stderr = worker.worker_stderr_tail()
                raise WorkerStartError(f"a worker could not start ({fault.message})",
                                       failure=_start_fault(fault, stderr), hint=stderr or None) from None
        for reply in replies:
            if reply.failure is not None:
                raise WorkerStartError(f"a worker could not start: {reply.message}", failure=reply.failure,
                                       hint=_last_lines(reply.detail))
            if isinstance(reply.value, DeviceFacts):
                worker.facts = reply.value
                self.facts = reply.value
            elif isinstance(reply.value, Prepared):
                digest = self._preparing[worker.pid].popleft()
                self._references[digest] = reply.value.reference_s


def _start_fault(fault: WorkerFault, stderr: str) -> Failure:
    """A worker that died starting is out of memory when its last words say so (the loader or the runtime
    could not allocate), whatever its exit looked like."""
    lowered = stderr.lower()
    if any(pattern in lowered for pattern in OUT_OF_MEMORY_PATTERNS):
        return Failure.OUT_OF_MEMORY
    return fault.failure


def _last_lines(text: str, count: int = 8) -> str | None:
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-count:]) or None
