"""A round's candidates, asked for and evaluated at once: the requests to the model in flight together (each
admitted by the budget before it is sent), each reply's candidate evaluated as soon as a device is free (one timed
candidate per device at a time: timings on a shared device are not valid), the next ones built ahead on the host's
cores meanwhile where the backend can, and every step committed in the loop's thread as it completes.

Work runs in daemon threads (a request in one of its own, a device's evaluations in that device's :class:`Lane`), so
a Ctrl-C never waits for a model's reply: what has completed is committed and the rest is asked again by
``--resume``.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, TimeoutError, wait
from dataclasses import dataclass, field
from typing import Any, Callable

from ..records import Candidate
from ..store import StepRecord
from ..store.attempts import Attempt, Place
from .budget import BudgetExhausted, Reservation
from .evaluator import Evaluator
from .steps import LLMJob, LoopSteps

_POLL_S = 0.25  # the loop's thread wakes this often, so that a signal's handler runs


def in_thread(work: Callable[[], Any], name: str) -> Future:
    """``work()`` in a daemon thread of its own; its result (or what it raised, KeyboardInterrupt too) in the
    future."""
    future: Future = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:  # noqa: BLE001 - raised again in the loop's thread
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


class Lane:
    """One long-lived daemon thread that does, in order, all the work given to it: every call to one device's
    evaluator goes through its lane, so that the state KForge's process keeps per thread for a device's work (the
    thread pools a library starts for the thread that calls it) is made once, not once per candidate; a thread made
    per evaluation disturbed the outside clock's timing of the calls."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._serve, name=name, daemon=True).start()

    def submit(self, work: Callable[[], Any]) -> Future:
        future: Future = Future()
        self._jobs.put((work, future))
        return future

    def close(self) -> None:
        self._jobs.put(None)

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            work, future = job
            try:
                future.set_result(work())
            except BaseException as exc:  # noqa: BLE001 - raised again in the loop's thread
                future.set_exception(exc)


def result_of(future: Future) -> Any:
    """``future``'s result, waking now and then so that a signal's handler runs in the loop's thread."""
    while True:
        try:
            return future.result(timeout=_POLL_S)
        except TimeoutError:
            continue


@dataclass
class _Device:
    """One evaluator, the lane its calls go through, and the candidates waiting for it."""

    evaluator: Evaluator
    index: int
    lane: Lane
    queue: list[tuple[int, Candidate, Place]] = field(default_factory=list)
    running: Future | None = None

    @property
    def load(self) -> int:
        return len(self.queue) + (self.running is not None)


@dataclass
class Activity:
    """What a run's concurrency did, for people and benchmarks: seconds each device spent evaluating, and the
    most requests in flight at once."""

    busy_s: dict[int, float] = field(default_factory=dict)
    evaluations: int = 0


class Population:
    """Runs jobs of one attempt (or one round's analyses) at once. ``on_done(attempt or record, replayed)`` is
    called in the loop's thread as each finishes."""

    def __init__(self, steps: LoopSteps, activity: Activity | None = None) -> None:
        self.steps = steps
        self.devices = [_Device(e, i, Lane(f"kforge-device-{i}")) for i, e in enumerate(steps.evaluators)]
        self.activity = activity or Activity()
        first = self.devices[0].lane
        steps.on_device = lambda work: result_of(first.submit(work))  # baselines and profiles, on the first device

    def close(self) -> None:
        for device in self.devices:
            device.lane.close()

    # ------------------------------------------------------------------------------------------ public

    def analyses(self, jobs: list[LLMJob]) -> list[StepRecord]:
        """The analysts' replies to ``jobs``, in their order."""
        return self._run(jobs, lambda i, record, replayed: None, evaluate=False)

    def attempts(self, jobs: list[LLMJob], on_attempt: Callable[[Attempt, bool], None]) -> list[Attempt]:
        """Ask for ``jobs``' candidates and evaluate each; the attempts in ``jobs``' order."""
        return self._run(jobs, on_attempt, evaluate=True)  # type: ignore[return-value]

    # ------------------------------------------------------------------------------------------ inside

    def _run(self, jobs: list[LLMJob], on_done: Callable[..., None], *, evaluate: bool) -> list[Any]:
        run = _Run(self, jobs, on_done, evaluate)
        try:
            run.until_done()
        except KeyboardInterrupt:
            run.keep_finished_replies()
            raise
        if run.stop is not None:
            raise BudgetExhausted(run.stop)
        return run.results


class _Run:
    """The state of one :meth:`Population._run`."""

    def __init__(self, population: Population, jobs: list[LLMJob], on_done: Callable[..., None],
                 evaluate: bool) -> None:
        self.population, self.steps, self.jobs = population, population.steps, jobs
        self.on_done, self.evaluate = on_done, evaluate
        self.results: list[Any] = [None] * len(jobs)
        self.waiting = list(range(len(jobs)))  # not asked yet
        self.asking: dict[Future, tuple[int, str, Reservation]] = {}
        self.evaluating: dict[Future, tuple[_Device, int, Candidate, Place, str, float]] = {}
        self.stop: str | None = None

    def until_done(self) -> None:
        while True:
            self._ask_what_the_budget_admits()
            self._start_evaluations()
            running = [*self.asking, *self.evaluating]
            if not running:
                return
            done, _ = wait(running, timeout=_POLL_S, return_when=FIRST_COMPLETED)
            for future in done:
                if future in self.asking:
                    self._replied(future)
                else:
                    self._evaluated(future)

    def keep_finished_replies(self) -> None:
        """On an interrupt: commit the replies that came, so a resumed run does not ask for them again."""
        for future in [f for f in self.asking if f.done() and f.exception() is None]:
            self._replied(future, then_evaluate=False)

    # ------------------------------------------------------------------------------------------ asking

    def _ask_what_the_budget_admits(self) -> None:
        steps, budget = self.steps, self.steps.budget
        while self.waiting and self.stop is None:
            i = self.waiting[0]
            job = self.jobs[i]
            record = steps.journal.replayed(job.kind, job.key, job.place, job.label)
            if record is not None:
                self.waiting.pop(0)
                budget.charge(record.llm_call)  # type: ignore[arg-type]
                self._handle_reply(i, record, replayed=True)
                continue
            admitted = budget.admit(steps.bound(job))
            if isinstance(admitted, str):
                if budget.in_flight == 0:
                    self.stop = admitted
                return  # the requests in flight must end first
            self.waiting.pop(0)
            steps.stage("generating" if job.kind == "generation" else "analysing", job.place)
            artifact_dir = steps.journal.start(job.kind, job.place, job.label)
            future = in_thread(lambda job=job, d=artifact_dir, r=admitted: steps.ask(job, d, r),
                               name=f"kforge-ask-{job.label}")
            self.asking[future] = (i, artifact_dir, admitted)

    def _replied(self, future: Future, *, then_evaluate: bool = True) -> None:
        i, artifact_dir, reservation = self.asking.pop(future)
        job = self.jobs[i]
        try:
            data, call = future.result()
        except BaseException:
            self.steps.budget.release(reservation)
            raise
        self.steps.budget.charge(call, reservation)
        record = self.steps.journal.commit(job.kind, job.key, job.place, job.label, artifact_dir, data, call)
        if then_evaluate:
            self._handle_reply(i, record, replayed=False)

    def _handle_reply(self, i: int, record: StepRecord, *, replayed: bool) -> None:
        job = self.jobs[i]
        if not self.evaluate:
            self.results[i] = record
            self.on_done(i, record, replayed)
            return
        candidate, no_code = self.steps.candidate_of(record)
        if candidate is None:
            self._done(i, Attempt(job.place, None, no_code=no_code), replayed)
            return
        evaluation = self.steps.journal.replayed("evaluation", candidate.digest, job.place, job.label)
        if evaluation is not None:
            self._done(i, self.steps.attempt_of(job.place, candidate, evaluation), True)
            return
        device = min(self.population.devices, key=lambda d: (d.load, d.index))
        if device.running is not None and getattr(device.evaluator, "builds_ahead", False):
            device.evaluator.prebuild([candidate])  # type: ignore[attr-defined]  # on the host's cores meanwhile
        device.queue.append((i, candidate, job.place))

    # ------------------------------------------------------------------------------------------ evaluating

    def _start_evaluations(self) -> None:
        for device in self.population.devices:
            if device.running is not None or not device.queue:
                continue
            i, candidate, place = device.queue.pop(0)
            self.steps.stage("evaluating", place)
            artifact_dir = self.steps.journal.start("evaluation", place, place.label)
            future = device.lane.submit(
                lambda d=device, c=candidate, a=artifact_dir: self.steps.evaluate(d.evaluator, c, a))
            device.running = future
            self.evaluating[future] = (device, i, candidate, place, artifact_dir, time.monotonic())

    def _evaluated(self, future: Future) -> None:
        device, i, candidate, place, artifact_dir, started = self.evaluating.pop(future)
        device.running = None
        activity = self.population.activity
        activity.busy_s[device.index] = activity.busy_s.get(device.index, 0.0) + time.monotonic() - started
        activity.evaluations += 1
        data = future.result()
        record = self.steps.journal.commit("evaluation", candidate.digest, place, place.label, artifact_dir, data,
                                           None)
        self._done(i, self.steps.attempt_of(place, candidate, record), False)

    def _done(self, i: int, attempt: Attempt, replayed: bool) -> None:
        self.results[i] = attempt
        self.on_done(attempt, replayed)
