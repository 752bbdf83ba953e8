"""The worker process: ``python -m kforge_core.harness.worker --fds READ,WRITE,LIFELINE --output OUT,ERR,STACKS``.

It reads requests from the private pipe, serves one candidate at a time in that candidate's scratch directory
(the stage hooks, timing, the check of what the candidate left behind), and answers each request with a
:class:`~kforge_core.harness.protocol.Reply`. Anything a candidate does wrong that Python can catch becomes a
classified reply; what it cannot catch (a crash, ``os._exit``, a hang) the KForge process sees from outside.

Which method serves which request is in two tables after :class:`Worker`: :data:`CANDIDATE_REQUESTS` and the
referee's :data:`REFEREE_REQUESTS`.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import dataclasses
import importlib
import os
import signal
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ...records import Candidate, CompileResult, Failure, Problem, StageContext, VerifyResult
from ...timing.stage_timer import StageTimer
from ...tracebacks import exception_line, exception_text
from ..protocol import (
    BaselineResults, Begin, BuildOnHost, Channel, ChannelClosed, Conclude, Conclusion, DeviceFacts, Expect, Finish,
    FinishReport, JudgeBegin, Judged, JudgedBatch, MeasureBaselines, Prepare, Prepared, Reply, RunStage, Shipped,
    ShippedBatch, Time, TimingOutcome, Wait, WorkerInit,
)
from ..cpu_placement import settle
from .faults import classify_exception, classify_text
from .limit_hits import know_limits, scratch_checked
from .memory import hand_back_idle_cache
from .threads import build_began, build_ended

if TYPE_CHECKING:
    from .judge import Judge


class ChannelTimer(StageTimer):
    """Sends the stage's marks to the KForge process as :class:`Wait` messages of the request being served; the
    threads a build starts are noted as the builds' (``threads.build_began``)."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.request_id: int | None = None
        # waits for the KForge process's answer to a mark, in order with the other answers it reads
        self.acknowledged: Callable[[Wait], None] | None = None

    def enter(self, kind: str, what: str) -> None:
        if kind == "build":
            build_began()
        if kind == "timed" and self.acknowledged is not None and self.request_id is not None:
            self.acknowledged(Wait("call", what, True, acknowledge=True))  # noted there before the clock starts
            return
        self._send(Wait("call" if kind == "timed" else kind, what, True))

    def leave(self, kind: str, what: str) -> None:
        if kind == "build":
            build_ended()
        self._send(Wait("call" if kind == "timed" else kind, what, False))

    def _send(self, wait: Wait) -> None:
        if self.request_id is not None:
            self.channel.send((self.request_id, wait))


def preload_in_background(modules: tuple[str, ...]) -> threading.Thread | None:
    """Import ``modules`` in a thread of their own while the worker prepares its first problem: the baseline
    worker's ``torch.compile`` spent seconds importing Dynamo and Inductor in the first problem's timing. A module
    that fails to import is left to fail where it is used. Any request but a preparation waits for it
    (:meth:`Worker.handle`)."""
    if not modules:
        return None

    def load() -> None:
        for name in modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)

    thread = threading.Thread(target=load, name="kforge-preload", daemon=True)
    thread.start()
    return thread


class Streams:
    """Where the worker's descriptors 1 and 2 point: its own output (as it started), or a candidate's while it
    serves one (``candidate``: two descriptors the KForge process gave it, files with no name that only it reads;
    None: a candidate's output goes where the worker's own goes)."""

    def __init__(self, candidate: tuple[int, int] | None = None) -> None:
        self.own = (os.dup(1), os.dup(2))  # not inherited by what a candidate starts (os.dup's default)
        self.candidate = candidate

    def to_candidate(self) -> None:
        if self.candidate is not None:
            _redirect_output(*self.candidate)

    def to_own(self) -> None:
        if self.candidate is not None:
            _redirect_output(*self.own)


class Worker:
    """The worker's state: plugins, device, the problem it is prepared for (its reference), and the candidate
    being served."""

    def __init__(self, init: WorkerInit, timer: StageTimer | None = None, streams: Streams | None = None) -> None:
        for entry in init.sys_path:
            if entry not in sys.path:
                sys.path.append(entry)
        from ...devices import make_device
        from ...devices.cpu import configure_host_allocator
        from ...plugins import build_plugin_manager
        from ...registry import BackendRegistry

        configure_host_allocator()
        know_limits(init.settings.max_processes, init.sandbox.tmpfs_sizes() if init.sandbox is not None else {})

        self.init = init
        self.timer = timer or StageTimer()
        self.streams = streams or Streams()
        # the built-in stages' modules are loaded with the plugins, so the candidate's snapshot (_begin) watches them
        self.plugins = build_plugin_manager(init.selection, in_worker=True)
        registry = BackendRegistry(self.plugins)
        self.backend = registry.get(init.backend).backend
        self.hooks = registry.hooks(init.backend)
        self.device_namespaces = self.hooks.collect("device_namespaces", backend=self.backend)
        self.device = make_device(self.backend, flush_bytes=init.settings.l2_flush_bytes)
        self.device.start()  # the device runtime starts now, not inside a timed run
        self.preloading = preload_in_background(init.preload)
        self.home = Path.cwd()
        self.problem: Problem | None = None  # set by Prepare
        self.candidate: Candidate | None = None
        self.context: StageContext | None = None
        self.snapshot: Any = None
        self.must_exit = False
        self.judge: Any = None  # in the referee only: judges what candidates' workers ship (set by Expect)

    @property
    def facts(self) -> DeviceFacts:
        import torch

        device = self.device
        return DeviceFacts(device.label, device.hardware_name(), int(device.cache_bytes), str(torch.__version__),
                           os.getpid(), flush_bytes=device.flush_bytes,
                           synchronize=device.synchronize_description, timer=device.timer_description,
                           facts=tuple(device.facts().items()), memory_bytes=device.memory().total,
                           peaks=device.peaks(self.init.cache_dir,
                                              memory_limit_bytes=self.init.settings.memory_limit_mb << 20))

    @property
    def problem_is_large(self) -> bool:
        """Whether the problem this worker was told is large for its device (``problem_size``): it then keeps no
        unused cache while it waits (``memory.hand_back_idle_cache``)."""
        from ..problem_size import large_for_device

        return self.problem is not None and large_for_device(self.problem, self.device.memory().total)

    def reference(self, *, timing: bool = True):  # noqa: ANN201
        from .reference import reference_data

        if self.problem is None:
            raise RuntimeError("no problem was prepared in this worker")
        return reference_data(self.problem, self.device, self.init.settings, self.backend, timing=timing)

    # ------------------------------------------------------------------------------------------ requests

    def handle(self, request: Any) -> Reply:
        service = service_for(request)
        if self.preloading is not None and service.may_compile:
            # two threads importing torch's compiler at once can each see the other's half-made modules: a request
            # that may compile waits for the preload (a problem's preparation, which does not, goes beside it)
            self.preloading.join()
            self.preloading = None
        try:
            value = self._dispatch(request)
            if service.idle_after:
                hand_back_idle_cache(self.device, large=self.problem_is_large)
            return Reply(value=value)
        except SystemExit as exc:
            self.must_exit = True
            return Reply(failure=Failure.EXIT, message=(
                f"the candidate called sys.exit({exc.code!r}) (or exit/quit) while it was being evaluated"))
        except BaseException as exc:  # noqa: BLE001 - every fault becomes a reply
            return self._fault_reply(exc)

    def _dispatch(self, request: Any) -> Any:
        return service_for(request).serve(self, request)

    def _refuse_unknown(self, request: Any) -> None:
        raise TypeError(f"unknown request {request!r}")

    # -------------------------------------------------------------- a candidate's worker, the baseline worker

    def _prepare(self, request: Prepare) -> Prepared:
        if self.problem is not None and self.problem.digest != request.problem.digest:
            from .candidate import forget_instances

            forget_instances()  # the previous problem's candidates, and the memory they hold, go
        self.problem = request.problem
        # the timing input sets are made when a candidate first needs them: the referee, prepared like any
        # worker, times nothing, and for a large problem one set is as large as a call's inputs
        reference = self.reference(timing=False)
        return Prepared(f"{len(reference.trials)} trials prepared", 0.0)

    def _begin(self, request: Begin) -> None:
        from .candidate_steps import blocking_switch_flags
        from .rejection import watch
        from ..op_trace import hide_recorders
        from .integrity import ProcessSnapshot

        hide_recorders()

        reference = self.reference()
        workdir = request.workdir
        workdir.mkdir(parents=True, exist_ok=True)
        request.candidate.write_to(workdir)
        os.chdir(workdir)
        self.streams.to_candidate()
        self.candidate = request.candidate
        self.context = StageContext(problem=self.problem, workdir=workdir, options=self.init.options,
                                    cache_dir=self.init.cache_dir, settings=self.init.settings,
                                    device=self.device, timer=self.timer)
        self.snapshot = ProcessSnapshot.take(reference.known_ops, self.device_namespaces,
                                             tuple(c for c in type(self.device).__mro__ if c is not object))
        watch(lambda: blocking_switch_flags(self.snapshot, self.init.settings))  # asked once the model is built

    def _run_stage(self, request: RunStage) -> Any:
        result = self._stage(request.stage)
        return self._with_switches_judged(result) if request.stage in ("compile", "verify") else result

    def _stage(self, stage: str) -> Any:
        from .jit_marks import jit_builds_marked

        with jit_builds_marked(self.timer):  # a JIT inside a call is a build, not the call's time
            result = self.hooks.caller(stage)(backend=self.backend, candidate=self.candidate, context=self.context)
        if result is None:
            raise RuntimeError(f"no plugin answered kforge_{stage} for backend {self.backend.name!r}")
        return result

    def _with_switches_judged(self, result: Any) -> Any:
        """A built or verified candidate's result with the precision switches it turned below the contract, where
        they block: the KForge process rejects it on them and spends nothing more on it (a switch turned at import
        is found once the candidate is built; one turned in its constructor, by verification before its first
        trial, :mod:`.rejection`; one turned in ``forward``, once it is verified)."""
        from .rejection import blocking_now

        built = isinstance(result, CompileResult) and result.ok
        if not (built or isinstance(result, VerifyResult)):
            return result
        blocking = blocking_now()  # what _begin told it to watch
        if not blocking:
            return result
        return dataclasses.replace(result, flags=(*result.flags, *blocking))

    def _time(self, request: Time) -> TimingOutcome:
        from .candidate_steps import time_candidate
        from .jit_marks import jit_builds_marked

        with jit_builds_marked(self.timer):
            return time_candidate(self.backend, self.candidate, self.context, self.reference(), self.device,
                                  request.runs, request.timers)

    def _finish(self, request: Finish) -> FinishReport:
        from .candidate_steps import finish_report

        from .candidate import forget_instances
        from .memory import released

        report = finish_report(self.snapshot, self.init.settings)
        self.streams.to_own()
        os.chdir(self.home)
        self.candidate = self.context = self.snapshot = None
        forget_instances()  # the candidate's model and what it holds on the device
        return scratch_checked(released(report, self.device))

    def _build_on_host(self, request: BuildOnHost) -> Prepared:
        from .baselines import build_on_host

        return Prepared(build_on_host(self.reference(timing=False)), 0.0)

    def _measure_baselines(self, request: MeasureBaselines) -> BaselineResults:
        from .baselines import measure_baselines

        return measure_baselines(request.names, self.reference(), self.device, self.init.settings, request.runs,
                                 timer=self.timer, timers=request.timers, held_ms=request.held_ms)

    # ------------------------------------------------------------------------------------------- the referee
    # It never serves a candidate, so nothing it judges with ran candidate code.

    def _expect(self, request: Expect) -> Prepared:
        self._refuse_while_serving_a_candidate()
        from .expected import expected_for
        from .judge import Judge

        self.problem, self.judge = request.problem, None  # the previous problem's answers go first
        expected = expected_for(request.problem, self.device, self.init.settings, self.backend)
        on_device = not self.device.host_cpu
        keep_on_device = on_device and request.on_device and not self.problem_is_large
        self.judge = Judge(expected, self.init.settings,
                           hand_back=lambda: hand_back_idle_cache(self.device, large=self.problem_is_large),
                           for_device=on_device, keep_on_device=keep_on_device)
        return Prepared(f"expected outputs of {len(expected.data.trials)} trials ({len(expected.kept)} kept)",
                        expected.forward_s)

    def _judge_begin(self, request: JudgeBegin) -> None:
        return self._judge_told_the_problem().begin(request.anchor, request.outputs)

    def _judge_shipped(self, request: Shipped) -> Judged:
        return self._judge_told_the_problem().judge(request)

    def _judge_batch(self, request: ShippedBatch) -> JudgedBatch:
        judge = self._judge_told_the_problem()
        return JudgedBatch(tuple(judge.judge(item) for item in request.items))

    def _conclude(self, request: Conclude) -> Conclusion:
        return self._judge_told_the_problem().conclude(request.kind)

    def _refuse_while_serving_a_candidate(self) -> None:
        if self.candidate is not None:
            raise RuntimeError("a worker that serves a candidate cannot judge")

    def _judge_told_the_problem(self) -> Judge:
        self._refuse_while_serving_a_candidate()
        if self.judge is None:
            raise RuntimeError("the referee was asked to judge before it was told the problem")
        return self.judge

    def _fault_reply(self, exc: BaseException) -> Reply:
        """A reply for an exception that escaped a stage: the candidate's when its code is in the traceback,
        the device's when the text says so (a poisoned GPU context fails in whatever code touches it next),
        else the harness's own."""
        from .faults import candidate_traceback

        detail = traceback.format_exc()
        workdir = self.context.workdir if self.context is not None else None
        if workdir is not None and str(workdir) in detail:
            return Reply(failure=classify_exception(exc, self.device), message=candidate_traceback(exc, workdir),
                         detail=detail)
        failure = classify_text(str(exc), self.device)
        if failure is Failure.DEVICE_FAULT:
            message = f"the device failed after the candidate ran: {exception_text(exc)}"
        elif failure is Failure.OUT_OF_MEMORY:
            message = f"out of memory: {exception_text(exc)}"
        else:
            failure, message = Failure.HARNESS, (f"the harness failed: {exception_text(exc)} (a KForge bug, not "
                                                 "the candidate's doing; `kforge --debug` shows its traceback)")
        return Reply(failure=failure, message=message, detail=detail)


@dataclass(frozen=True)
class Service:
    """How the worker serves one kind of request.

    :param serve: the method that answers it.
    :param may_compile: it waits for the modules preloaded in the background (:func:`preload_in_background`).
    :param idle_after: the worker then waits while another process uses the device, so a large unused cache is
        handed back (``hand_back_idle_cache``).
    """

    serve: Callable[[Worker, Any], Any]
    may_compile: bool = True
    idle_after: bool = False


# The requests of a candidate's worker and of the baseline worker, and what serves each. A candidate's worker is
# prepared for a problem, then begins, runs the stages of, times and finishes one candidate at a time; the baseline
# worker is prepared, then measures the baselines. Both wait after each block of timed runs: they take turns on the
# device.
CANDIDATE_REQUESTS: dict[type, Service] = {
    Prepare: Service(Worker._prepare, may_compile=False),  # the referee is prepared like any worker too
    Begin: Service(Worker._begin),
    RunStage: Service(Worker._run_stage),
    Time: Service(Worker._time, idle_after=True),
    Finish: Service(Worker._finish),
    MeasureBaselines: Service(Worker._measure_baselines, idle_after=True),
    BuildOnHost: Service(Worker._build_on_host, may_compile=False),
}
# The referee's: it computes a problem's expected outputs, then judges what candidates' workers ship. It waits after
# both, while a candidate's worker uses the device.
REFEREE_REQUESTS: dict[type, Service] = {
    Expect: Service(Worker._expect, idle_after=True),
    JudgeBegin: Service(Worker._judge_begin),
    Shipped: Service(Worker._judge_shipped, idle_after=True),
    ShippedBatch: Service(Worker._judge_batch, idle_after=True),
    Conclude: Service(Worker._conclude),
}
_UNKNOWN = Service(Worker._refuse_unknown)


def service_for(request: Any) -> Service:
    """What serves ``request``: one of the two tables' services, or one that refuses it."""
    kind = type(request)
    return CANDIDATE_REQUESTS.get(kind) or REFEREE_REQUESTS.get(kind) or _UNKNOWN


def _redirect_output(stdout_fd: int, stderr_fd: int) -> None:
    """Point file descriptors 1 and 2 (Python's and C's output alike) where these two point."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    try:
        ctypes.CDLL(None).fflush(None)  # C stdio buffers of extensions
    except Exception:
        pass
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)


def _exit_at_once() -> None:
    """End the process now, its output flushed, running nothing left to run at exit (whatever a candidate, or a
    library it loaded, registered there)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _watch_lifeline(fd: int) -> None:
    """End this worker and everything it started when the KForge process is gone (killed, crashed): a candidate
    stuck in a loop would otherwise keep running, and keep its device, with nobody left to stop it."""

    def watch() -> None:
        while os.read(fd, 1):
            pass
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="kforge-lifeline", daemon=True).start()


def _dump_stacks_on_request(stacks_fd: int) -> None:
    """Write every thread's stack to the stack file (``stacks_fd``) when the KForge process asks (it tells compiling
    from hanging when a call runs past its limit: ``harness.host.activity``)."""
    import faulthandler

    from ..protocol import STACK_SIGNAL

    faulthandler.register(STACK_SIGNAL, file=stacks_fd, all_threads=True)


def _start_failure(exc: BaseException) -> Reply:
    """Why the worker could not start. Out of memory, what the failed start held goes first (its frames, through
    the traceback) and the answer is a line that needs no traceback formatted: formatting one under the same
    memory limit ran out of memory again, and the worker ended with a bare exit status."""
    if classify_exception(exc) is Failure.OUT_OF_MEMORY:
        exc.__traceback__ = None
        return Reply(failure=Failure.OUT_OF_MEMORY,
                     message=f"the worker could not start: {type(exc).__name__}: {str(exc)[:300]}")
    return Reply(failure=Failure.HARNESS, message=f"the worker could not start: {exception_line(exc)}",
                 detail=traceback.format_exc())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kforge_core.harness.worker")
    parser.add_argument("--fds", required=True,
                        help="READ,WRITE,LIFELINE: the private pipe's ends and the end that closes with KForge")
    parser.add_argument("--output", required=True,
                        help="OUT,ERR,STACKS: a candidate's stdout and stderr, and where stacks are dumped")
    args = parser.parse_args(argv)
    read_fd, write_fd, lifeline_fd = (int(part) for part in args.fds.split(","))
    out_fd, err_fd, stacks_fd = (int(part) for part in args.output.split(","))
    for fd in (out_fd, err_fd, stacks_fd):
        os.set_inheritable(fd, False)  # what a candidate starts gets its output through 1 and 2, as they point then
    _watch_lifeline(lifeline_fd)
    _dump_stacks_on_request(stacks_fd)
    channel = Channel(read_fd, write_fd)
    init_id, init = channel.receive(trusted=True)
    settle(init.placement)  # before the runtime is loaded: what it allocates lies on the placement's node
    timer = ChannelTimer(channel)
    try:
        worker = Worker(init, timer, Streams((out_fd, err_fd)))
    except BaseException as exc:  # noqa: BLE001 - the KForge process needs to know why we could not start
        channel.send((init_id, _start_failure(exc)))
        return 1
    channel.send((init_id, Reply(value=worker.facts)))
    from .shipping import ChannelReferee, use_referee

    referee = ChannelReferee(channel, lambda: timer.request_id)
    use_referee(referee)
    timer.acknowledged = referee.acknowledged
    while True:
        try:
            request_id, request = channel.receive(trusted=True)
        except ChannelClosed:  # the KForge process is done with this worker: it ends now, without the
            _exit_at_once()  # interpreter's clean-up at exit (a compiler's pool waiting for its processes, 5 s)
        timer.request_id = request_id
        reply = worker.handle(request)
        timer.request_id = None
        channel.send((request_id, reply))
        if worker.must_exit:
            os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
