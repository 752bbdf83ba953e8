"""One worker process seen from the KForge process: start it, send it requests, wait for replies with a
deadline, and when it dies or hangs, say how, as a :class:`WorkerFault`."""

from __future__ import annotations

import os
import secrets
import signal
import time
import logging
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ...records import Failure
from ..protocol import (
    Acknowledged, Channel, ChannelClosed, ChannelTimeout, CheckAsk, Conclude, DeviceFacts, Reply, Shipped,
    ShippedBatch, Wait, WorkerInit,
)
from .activity import ActivityProbe
from .deadline import StageDeadline, WaitLimits
from .cgroups import LimitCounts, worker_cgroup
from .exits import classify_exit, memory_total_kb, oom_kill_count
from .namespaces import launcher_plan
from .outside_clock import CallLog
from .timed_checks import TimedCallChecks
from .sandbox import worker_environment, worker_limits
from .worker_output import WorkerOutput
from .worker_start import start_worker, WorkerStart

log = logging.getLogger("kforge")

_REAP_S = 10.0


@dataclass
class WorkerFault(Exception):
    """A worker that died, hung or broke the protocol during a request."""

    failure: Failure
    message: str

    def __str__(self) -> str:
        return f"{self.failure.value}: {self.message}"


class WorkerProcess:
    """A started worker. Requests are answered in order; ``pending`` counts replies not yet read.

    ``home`` is the worker's directory (its only writable one in the sandbox; its candidates' scratch directories
    lie in it). What it prints, and what a candidate prints, goes to files with no name (``output``), never to a
    file in ``home``: the KForge process reads nothing there.
    """

    def __init__(self, init: WorkerInit, home: Path, *, environ: dict[str, str] | None = None) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        lifeline_r, self._lifeline = os.pipe()  # never written: the worker sees EOF when this process is gone
        settings = init.settings
        env = worker_environment(os.environ if environ is None else environ, init.cache_dir, init.environment,
                                 compile_threads=settings.compile_threads)
        self.output = output = WorkerOutput()
        weakref.finalize(self, output.close)  # read after the worker is gone (its candidate's output), then closed
        plan = launcher_plan(init.sandbox, env, home) if init.sandbox is not None else None
        # the worker and all it starts, in a cgroup of their own where the machine allows (memory.max, pids.max)
        self.cgroup = worker_cgroup(cgroups=settings.cgroups, memory_limit_mb=settings.memory_limit_mb,
                                    max_processes=settings.max_processes)
        limits = worker_limits(memory_limit_mb=settings.memory_limit_mb,
                               file_size_limit_mb=settings.file_size_limit_mb, host_cpu=init.host_cpu,
                               max_processes=settings.max_processes if init.sandbox is None else 0)  # the launcher's
        fds = {"read": to_child_r, "write": from_child_w, "lifeline": lifeline_r, "own": output.own.fileno(),
               **dict(zip(("stdout", "stderr", "stacks"), output.worker_fds))}
        start = WorkerStart(fds=fds, env=env, home=home, plan=plan, limits=limits,
                            cgroup_procs=self.cgroup.procs_files if self.cgroup is not None else (),
                            bound=tuple(name for name, _ in init.environment))
        try:
            self.process = start_worker(start, settings.worker_start, timeout_s=settings.startup_timeout_s,
                                        joins_cgroup=self.cgroup.join if self.cgroup is not None else None)
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.end()
            raise
        for fd in (to_child_r, from_child_w, lifeline_r):
            os.close(fd)
        self.channel = Channel(from_child_r, to_child_w)
        # random ids: code in the worker cannot predict the id its forged reply would need
        self._ids = iter(lambda: secrets.randbits(62), None)
        self._awaited: deque[int] = deque()  # ids of the requests not answered yet, in order
        self.facts: DeviceFacts | None = None
        self.killed_by_harness = False
        self.oom_kills_at_start = oom_kill_count()
        self._cgroup_at_start = self.limit_counts()
        self.max_rss_kb = 0
        self.used = False  # served a candidate
        self.probe = ActivityProbe(self.process.pid, output)
        self.wait_notes: list[str] = []  # calls allowed past their limit while compiling, and why
        # who answers the outputs this worker ships while it serves a candidate (the referee); None: nobody
        self.referee: Callable[[Any], Any] | None = None
        self.calls = CallLog()  # the calls it marks, by this process's clock (the outside clock)
        self.checks: TimedCallChecks | None = None  # draws the checks of a candidate's timed calls; None: nobody
        self.send(init)

    @property
    def pending(self) -> int:
        return len(self._awaited)

    @property
    def pid(self) -> int:
        return self.process.pid

    def limit_counts(self) -> LimitCounts:
        """The kernel's counts of the limits hit in the worker's cgroup so far (none without a cgroup)."""
        return self.cgroup.counts() if self.cgroup is not None else LimitCounts()

    def limits_hit_since(self, before: LimitCounts) -> tuple[str, str]:
        """Sentences naming the cgroup's process and memory limits if the worker hit them since ``before``."""
        return self.cgroup.hits_since(before) if self.cgroup is not None else ("", "")

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and self.process.poll() is None

    # ------------------------------------------------------------------------------------------ protocol

    def send(self, request: Any) -> None:
        """Send ``request`` with a fresh id; the worker's reply must carry the same id."""
        request_id = next(self._ids)
        try:
            self.channel.send((request_id, request))
        except (BrokenPipeError, OSError):
            raise self._fault_from_exit() from None
        self._awaited.append(request_id)

    def receive(self, timeout_s: float, what: str, waits: WaitLimits | None = None,
                hard_stop: float | None = None) -> Reply:
        """The next reply; a WorkerFault when the worker dies, hangs past its deadline or sends garbage.

        ``timeout_s`` limits the request; with ``waits``, the calls and builds the worker reports while serving it
        get their own limits (see :mod:`kforge_core.harness.host.deadline`); nothing goes on past ``hard_stop``
        (a monotonic time).
        """
        deadline = StageDeadline(what, timeout_s, waits, time.monotonic(), probe=self.probe, hard_stop=hard_stop)
        while True:
            expires, _ = deadline.expires()
            waiting = self.channel.readable()  # a message already waiting arrived before it is read
            try:
                message = self.channel.receive(deadline=expires)
            except ChannelTimeout:
                late = deadline.expired(time.monotonic())
                # looked at, it is compiling or busy building; or what it sent meanwhile (the wait it left) comes
                # first: a limit that ran out while the worker's own message was on its way is not a hang
                if late is None:
                    continue
                if self.channel.readable():
                    deadline.notes.append(f"{late}, but answered while the worker was being looked at: not a hang")
                    continue
                self.kill()
                raise WorkerFault(Failure.TIMEOUT, f"{late}; the worker was killed (an endless loop, a deadlock or "
                                                   "a hung kernel)") from None
            except ChannelClosed:
                raise self._fault_from_exit() from None
            except Exception as exc:  # not a message the worker wrote: something else wrote into the private pipe
                raise self._forged(what, f"it could not be read: {exc}") from None
            expected = self._awaited[0]
            if not (isinstance(message, tuple) and len(message) == 2 and message[0] == expected):
                raise self._forged(what, "it did not answer the request that was sent")
            if isinstance(message[1], Wait):
                wait = message[1]
                if wait.kind == "call":
                    self.calls.mark(wait.what, wait.entering, time.perf_counter(), read_late=waiting)
                if wait.entering:
                    deadline.enter(wait.kind, wait.what, time.monotonic())
                else:
                    deadline.leave(time.monotonic())
                if wait.acknowledge:  # noted: the worker starts its clock only now
                    self._answer(expected, Acknowledged())
                continue
            if isinstance(message[1], CheckAsk):
                if self.checks is None:
                    raise self._forged(what, "it asked for a check of a timed call while none is timed")
                self._answer(expected, self.checks.answer(message[1]))
                continue
            if isinstance(message[1], (Shipped, ShippedBatch, Conclude)):
                if self.referee is None:
                    raise self._forged(what, "it shipped outputs while nobody judges them")
                if self.checks is not None:
                    for shipped in (message[1].items if isinstance(message[1], ShippedBatch) else (message[1],)):
                        if isinstance(shipped, Shipped):
                            self.checks.shipped(shipped)
                judging = time.monotonic()
                self._answer(expected, self.referee(message[1]))
                deadline.start += time.monotonic() - judging  # the referee's time is not the candidate's
                continue
            self._awaited.popleft()
            self.wait_notes.extend(deadline.notes)
            if not isinstance(message[1], Reply):
                raise self._forged(what, "it did not answer the request that was sent")
            if message[1].failure is Failure.HARNESS and message[1].detail:
                log.debug("KForge's own code failed in the worker during %s (a KForge bug, not the candidate's "
                          "doing):\n%s", what, message[1].detail)
            return message[1]

    def _answer(self, request_id: int, answer: Any) -> None:
        """The answer to a message the worker sent in the middle of request ``request_id``."""
        try:
            self.channel.send((request_id, answer))
        except (BrokenPipeError, OSError):
            raise self._fault_from_exit() from None

    def _forged(self, what: str, why: str) -> WorkerFault:
        self.kill()
        return WorkerFault(Failure.CHEAT, f"the reply to {what} was not the worker's ({why}): code in the worker "
                                          "wrote into the harness's private pipe")

    def call(self, request: Any, timeout_s: float, what: str, waits: WaitLimits | None = None,
             hard_stop: float | None = None) -> Reply:
        self.send(request)
        return self.receive(timeout_s, what, waits, hard_stop)

    def drain(self, timeout_s: float, what: str) -> list[Reply]:
        """Read every pending reply."""
        return [self.receive(timeout_s, what) for _ in range(self.pending)]

    def pause(self) -> None:
        """Stop the worker and everything it started (its whole session) until :meth:`resume`: a spare still
        starting takes no time from a timed run, which need not wait for it either."""
        self._signal_session(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal_session(signal.SIGCONT)

    def _signal_session(self, number: int) -> None:
        try:
            os.killpg(self.process.pid, number)
        except (ProcessLookupError, PermissionError):
            pass

    # ------------------------------------------------------------------------------------------ ending

    def kill(self) -> None:
        """Kill the worker and everything it started (its whole session), and reap it. The group is killed even
        when the worker has already exited: a process it started may live on in it."""
        if self.process.returncode is None:
            self.killed_by_harness = True
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._reap(_REAP_S)
        self.channel.close()
        self._close_lifeline()
        if self.cgroup is not None:  # what left the session (setsid) dies with the cgroup; its counts stay
            self.cgroup.end()

    def _close_lifeline(self) -> None:
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None

    def close(self, timeout_s: float = 5.0) -> None:
        """Ask the worker to exit (end of its input), then kill it if it does not."""
        if self.process.returncode is None:
            self.channel.close()
            self._reap(timeout_s)
        self.kill()

    def _reap(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not self.process.reap():
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        self.max_rss_kb = self.process.max_rss_kb

    def _fault_from_exit(self) -> WorkerFault:
        self._reap(_REAP_S)
        if self.process.returncode is None:  # closed its pipe but lives on: end it
            self.kill()
        failure, message = classify_exit(self.process.returncode, killed_by_harness=self.killed_by_harness,
                                         oom_evidence=self._oom_evidence(), stderr_tail=self.worker_stderr_tail())
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # whatever it started dies with it
        except (ProcessLookupError, PermissionError):
            pass
        self.channel.close()
        self._close_lifeline()
        return WorkerFault(failure, message)

    def _oom_evidence(self) -> str:
        _, memory = self.limits_hit_since(self._cgroup_at_start)
        if memory:
            return memory
        count = oom_kill_count()
        if count is not None and self.oom_kills_at_start is not None and count > self.oom_kills_at_start:
            return "the kernel's out-of-memory killer ended a process of this memory cgroup"
        total = memory_total_kb()
        if total and self.max_rss_kb > 0.5 * total:
            return f"it had grown to {self.max_rss_kb / 1024 / 1024:.1f} GiB, most of the machine's memory"
        return ""

    def worker_stderr_tail(self) -> str:
        return self.output.own_tail()

