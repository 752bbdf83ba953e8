"""One call takes a candidate from its build ahead to its whole Verdict (``harness/host/candidate_evaluation.py``):
what it asks of the harness's parts, in which order, and what the Verdict is made of. A scripted worker stands in
for a process, and stand-ins for the pool, the referee, the builds ahead and the baselines' window log each step."""

from __future__ import annotations

import contextlib
import itertools
import weakref

from kforge_core.harness import flags as F
from kforge_core.harness.host.candidate_evaluation import EvaluationSetup, evaluate_candidate
from kforge_core.harness.host.cgroups import LimitCounts
from kforge_core.harness.host.baselines_window import Window
from kforge_core.harness.host.speed_of_light import Bounds
from kforge_core.harness.host.outside_clock import CallLog
from kforge_core.harness.host.worker_output import WorkerOutput
from kforge_core.harness.protocol import BaselineResults, Conclusion, DeviceFacts, FinishReport, Reply, TimingOutcome
from kforge_core.harness.verdict import TimingMethod
from kforge_core.records import Candidate, CompileResult, Failure, TrialError, VerifyResult
from kforge_core.settings import HarnessSettings

from .helpers import TORCH_CPU, problem

SETTINGS = HarnessSettings(trials=2, baselines=("eager",))
TIMED = TimingMethod(device="cpu", warmup=1, repetitions=3, l2_flush_bytes=0, synchronize="none", timer="wall",
                     fresh_inputs=True)
FACTS = DeviceFacts(device="cpu", name="the host CPU", l2_bytes=0, torch_version="2", pid=1, synchronize="none",
                    timer="wall")
CALLS_TORCH = Candidate.from_source("import torch\ndef forward(x):\n    return torch.relu(x) * 2\n", label="relu")


class ScriptedWorker:
    """Answers each request (a stage by its name, others by their type's) from a script, and logs it."""

    def __init__(self, log: list, replies: dict[str, object], stderr: str = "", home=None) -> None:  # noqa: ANN001
        self.log, self.replies, self.wait_notes, self.alive, self.referee = log, replies, [], True, None
        self.home = home
        self.calls, self.checks = CallLog(), None  # the outside clock's view: nothing marked, nothing shipped
        self.output = WorkerOutput()  # what a worker's candidate printed: files with no name
        weakref.finalize(self, self.output.close)
        self.stderr = stderr

    def limit_counts(self) -> LimitCounts:  # no cgroup: nothing counted, no limit reached
        return LimitCounts()

    def limits_hit_since(self, before: LimitCounts) -> tuple[str, str]:
        return "", ""

    def call(self, request, timeout_s, what, waits=None, hard_stop=None):  # noqa: ANN001, ANN201
        if type(request).__name__ == "Begin":
            self.output.stderr.write(self.stderr.encode())  # what the candidate prints, once it has begun
        return self._answer(request)

    def _answer(self, request):  # noqa: ANN001, ANN202
        name = getattr(request, "stage", None) or type(request).__name__
        self.log.append(name)
        reply = self.replies[name]
        if isinstance(reply, Reply):
            self.alive = reply.failure is None
            return reply
        return Reply(value=reply)


class AgreeingReferee:
    """A referee that saw every trial pass (the scripted worker ships nothing)."""

    reference_s, on_judged = 0.001, None

    def __init__(self, log: list) -> None:
        self.log = log

    def ready(self) -> None:
        self.log.append("reference")

    def begin(self, workdir=None) -> None:  # noqa: ANN001
        pass

    def answer(self, message):  # noqa: ANN001, ANN201
        raise AssertionError(f"nothing is shipped here: {message!r}")

    def conclude(self, kind: str) -> Conclusion:
        return Conclusion(trials=tuple(TrialError(SETTINGS.seed + t, True, 0.0, 0.0, "") for t in range(2)))


class Pool:
    """Hands out the scripted worker and logs its release; the device is the host CPU's."""

    facts, alone = FACTS, set()

    def __init__(self, log: list, worker: ScriptedWorker) -> None:
        self.log, self.worker = log, worker

    def large(self, problem) -> bool:  # noqa: ANN001
        return False

    def start_ahead(self) -> None:
        pass

    def acquire_for_candidate(self) -> ScriptedWorker:
        self.log.append("worker")
        return self.worker

    def release(self, worker, *, reusable):  # noqa: ANN001, ANN202
        self.log.append(("release", reusable))
        return not reusable


class Prebuilder:
    def __init__(self, log: list) -> None:
        self.log = log

    def wait(self, candidate):  # noqa: ANN001, ANN201
        self.log.append("prebuild")


class Baselines:
    """The baselines' window: gets ready, then gives ``window`` when the candidate is timed beside it."""

    def __init__(self, log: list, window: Window | None) -> None:
        self.log, self.window = log, window

    def build_on_host(self, problem) -> None:  # noqa: ANN001
        self.log.append("baseline model on the host")

    def get_ready(self, problem) -> None:  # noqa: ANN001
        self.log.append("baselines ready")

    def beside(self, problem, timeouts, phases, *, ready_first=False, calls=None):  # noqa: ANN001, ANN202
        return Beside(self.log, self.window)


class Beside:
    def __init__(self, log: list, window: Window | None) -> None:
        self.log, self.window = log, window

    def time(self, call):  # noqa: ANN001, ANN202
        self.log.append("window")
        return Reply(value=self.window.candidate)

    def held_calls(self, held_ms: float) -> list:
        self.log.append("held calls")
        return []


def _setup(log: list, worker: ScriptedWorker, window: Window | None = None) -> EvaluationSetup:
    relu = problem("relu_scale")
    return EvaluationSetup(
        backend=TORCH_CPU, problem=relu, seen=relu, settings=SETTINGS, source_checks=(),
        prebuilder=Prebuilder(log), referee=AgreeingReferee(log), workers=Pool(log, worker),
        baselines=Baselines(log, window), quiet=contextlib.nullcontext, bounds=Bounds(SETTINGS.contract),
        statistic="median", numbers=itertools.count(1),
    )


def test_a_correct_candidate_is_timed_beside_the_baselines_and_its_worker_kept(tmp_path):
    log: list = []
    window = Window(candidate=TimingOutcome(samples_ms=(2.0, 2.0, 2.0), method=TIMED),
                    baselines=BaselineResults(samples_ms=(("eager", (6.0, 6.0, 6.0)),), errors=(), method=TIMED,
                                              notes=(("eager", "measured now"),)))
    worker = ScriptedWorker(log, {"Begin": None, "compile": CompileResult(ok=True),
                                  "verify": VerifyResult(correct=True), "Finish": FinishReport()}, home=tmp_path)
    verdict = evaluate_candidate(_setup(log, worker, window), CALLS_TORCH, profile=False, measure=True)
    # the baselines' model is built on the host first, beside the reference's outputs
    assert log == ["baseline model on the host", "prebuild", "reference", "worker", "baselines ready", "Begin",
                   "compile", "verify", "window", "Finish", ("release", True)]
    assert verdict.failure is None and not verdict.worker_replaced
    assert (verdict.candidate, verdict.backend, verdict.problem) == ("relu", TORCH_CPU.name, "relu_scale")
    assert verdict.runtime.median == 2.0 and verdict.method == TIMED
    assert [name for name, _ in verdict.baselines] == ["eager"] and verdict.speedups == (("eager", 3.0),)
    assert verdict.baseline_notes == (("eager", "measured now"),)
    assert [f.code for f in verdict.flags] == [F.REFERENCE_CALL]  # the static check's, merged in


def test_a_crashed_candidate_replaces_its_worker_and_the_agent_reads_its_stderr(tmp_path):
    log: list = []
    worker = ScriptedWorker(log, {"Begin": None, "compile": CompileResult(ok=True),
                                  "verify": Reply(failure=Failure.CRASH, message="the worker died")},
                            stderr="Fatal Python error: Segmentation fault\n\nCurrent thread:\n  forward\n",
                            home=tmp_path)
    verdict = evaluate_candidate(_setup(log, worker), CALLS_TORCH, profile=False, measure=True)
    assert log == ["baseline model on the host", "prebuild", "reference", "worker", "baselines ready", "Begin",
                   "compile", "verify", ("release", False)]
    assert verdict.failure is Failure.CRASH and verdict.worker_replaced
    assert verdict.runtime is None and verdict.baselines == () and verdict.method.notes.startswith("not timed")
    assert "the worker died" in verdict.message and "Python's fault handler" in verdict.message


def test_an_unmeasured_candidate_leaves_the_baselines_alone(tmp_path):
    log: list = []
    worker = ScriptedWorker(log, {"Begin": None, "compile": CompileResult(ok=True),
                                  "verify": VerifyResult(correct=True), "Finish": FinishReport(clean=False)},
                            home=tmp_path)
    verdict = evaluate_candidate(_setup(log, worker), CALLS_TORCH, profile=False, measure=False)
    assert log == ["prebuild", "reference", "worker", "Begin", "compile", "verify", "Finish",
                   ("release", False)]  # a candidate that left a mess
    assert verdict.failure is None and verdict.method is None and verdict.runtime is None
