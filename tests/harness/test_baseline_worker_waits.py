"""What the baseline worker waits for before another's timed runs (``BaselineWorker.wait_prepared``): its start and
the problem's preparation, not the baselines' builds sent after them, which ``wait_ready`` reads later; a failure
in either wait leaves the worker discarded, and says why."""

from __future__ import annotations

from collections import deque
from pathlib import Path

from kforge_core.harness.host.baseline_worker import BaselineWorker
from kforge_core.harness.protocol import MeasureBaselines, Prepare, Reply
from kforge_core.records import Failure, Problem, ValueSpec


class ScriptedProcess:
    """A worker process whose replies come in the order it was sent requests, each one ready at once; it records
    what it was sent, how many replies were read and whether it was stopped or killed."""

    def __init__(self, failing: type | None = None) -> None:
        self.sent: list[object] = ["start"]
        self.unread: deque[object] = deque(["start"])
        self.read: list[object] = []
        self.failing, self.alive, self.stopped = failing, True, False

    @property
    def pending(self) -> int:
        return len(self.unread)

    def send(self, request: object) -> None:
        self.sent.append(request)
        self.unread.append(request)

    def receive(self, timeout_s: float, what: str) -> Reply:
        request = self.unread.popleft()  # a wait past what was sent would hang: IndexError instead
        self.read.append(request)
        if self.failing is not None and isinstance(request, self.failing):
            return Reply(failure=Failure.HARNESS, message="ModuleNotFoundError: no module named 'problem'")
        return Reply(value=None)

    def drain(self, timeout_s: float, what: str) -> list[Reply]:
        return [self.receive(timeout_s, what) for _ in range(self.pending)]

    def pause(self) -> None:
        self.stopped = True

    def resume(self) -> None:
        self.stopped = False

    def kill(self) -> None:
        self.alive = False


def _worker(process: ScriptedProcess, tmp_path: Path) -> BaselineWorker:
    return BaselineWorker(lambda: None, tmp_path, start=lambda init, home: process)


def _problem() -> Problem:
    tensor = ValueSpec("tensor", (8,), "float32")
    return Problem(name="p", path=Path("/problems/p.py"), source="# p\n", inputs=(tensor,), init_inputs=(),
                   outputs=(tensor,), parameter_count=0)


def test_the_wait_before_timed_runs_reads_the_start_and_the_preparation_and_leaves_the_builds(tmp_path):
    process = ScriptedProcess()
    worker = _worker(process, tmp_path)
    worker.get_ready(_problem(), ("eager", "compile"))
    worker.wait_prepared(60)
    assert [type(r).__name__ if not isinstance(r, str) else r for r in process.read] == ["start", "Prepare"]
    assert process.pending == 1 and isinstance(process.unread[0], MeasureBaselines)
    worker.wait_prepared(60)  # nothing more to wait for: the build is not read
    assert process.pending == 1
    with worker.paused():
        assert process.stopped
    assert not process.stopped
    worker.wait_ready(60)  # the build, read now
    assert process.pending == 0 and worker.failed == "" and worker.prepared_for == _problem().digest


def test_a_preparation_that_failed_before_timed_runs_discards_the_worker_and_says_why(tmp_path):
    process = ScriptedProcess(failing=Prepare)
    worker = _worker(process, tmp_path)
    worker.get_ready(_problem(), ("eager",))
    worker.wait_prepared(60)
    assert not process.alive and worker.prepared_for == ""
    assert worker.failed == "the baseline worker could not get ready: ModuleNotFoundError: no module named 'problem'"
    reply = worker.time_block("eager", (0, 5), 60)
    assert reply.failure is Failure.HARNESS and reply.message == worker.failed


def test_a_build_that_failed_is_said_once_its_reply_is_read(tmp_path):
    process = ScriptedProcess(failing=MeasureBaselines)
    worker = _worker(process, tmp_path)
    worker.get_ready(_problem(), ("compile",))
    worker.wait_prepared(60)
    assert process.alive and worker.failed == ""  # the build's reply is not read before the timed runs
    worker.wait_ready(60)
    assert not process.alive and worker.failed.startswith("the baseline worker could not get ready")
