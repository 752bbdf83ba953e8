"""Calls and builds whose limits follow what the worker is doing: compiling is told from hanging."""

from __future__ import annotations

import pytest

from kforge_core.harness.host.activity import compiler_frames, group_cpu_seconds
from kforge_core.harness.host.deadline import StageDeadline, WaitLimits
from kforge_core.records import Failure

LIMITS = WaitLimits(call_s=10, build_s=100, idle_s=10)


class FakeProbe:
    """A worker as the deadline sees it: cores busy and what shows it compiling, set by the test."""

    def __init__(self, cores: float = 1.0, compiling: str = "") -> None:
        self.busy_cores, self.shows = cores, compiling
        self.now = 0.0

    def sample(self):
        return self.now, 0.0

    def cores(self, since=None):
        return self.busy_cores

    def compiling(self) -> str:
        return self.shows


def test_a_call_past_its_limit_while_compiling_is_allowed_the_build_limit_and_noted():
    probe = FakeProbe(compiling="compiler code on its stack: torch/_inductor/x.py")
    deadline = StageDeadline("verify", 600, LIMITS, start=0.0, probe=probe)
    deadline.enter("call", "forward (trial seed 42)", now=0)
    assert deadline.expires()[0] == 10
    assert deadline.expired(10) is None  # compiling: allowed on, looked at again
    assert deadline.expires()[0] == 20
    assert deadline.expired(20) is None
    probe.shows = ""  # the compile is over: what runs after it gets one call limit
    assert deadline.expired(30) is None and deadline.expires()[0] == 40
    deadline.leave(now=35)
    assert "forward (trial seed 42) took 35.0 s, past the call limit of 10 s" in deadline.notes[0]
    assert "torch/_inductor" in deadline.notes[0]


@pytest.mark.parametrize("probe", [FakeProbe(cores=1.0), FakeProbe(cores=0.0, compiling="ninja running")])
def test_a_call_past_its_limit_that_is_not_busy_compiling_ends_there(probe):
    deadline = StageDeadline("verify", 600, LIMITS, start=0.0, probe=probe)
    deadline.enter("call", "forward (trial seed 42)", now=0)
    message = deadline.expired(10)
    assert message.startswith("forward (trial seed 42) did not return within 10 s (the call timeout")
    assert not deadline.notes


def test_a_compiling_call_still_ends_at_the_build_limit():
    deadline = StageDeadline("verify", 600, LIMITS, start=0.0, probe=FakeProbe(compiling="nvcc running"))
    deadline.enter("call", "the first forward", now=0)
    at = 10.0
    while (message := deadline.expired(at)) is None:
        at = deadline.expires()[0]
    assert 100 <= at <= 110 and "allowed the build limit (100 s) while compiling (nvcc running)" in message


def test_an_idle_build_is_a_hang_at_its_first_look_and_a_busy_one_keeps_its_budget():
    idle = StageDeadline("verify", 600, LIMITS, start=0.0, probe=FakeProbe(cores=0.0))
    idle.enter("build", "ModelNew(*get_init_inputs())", now=0)
    at, _ = idle.expires()
    assert at == 10 and "made no progress: the worker used no CPU time" in idle.expired(at)
    probe = FakeProbe(cores=1.0)
    busy = StageDeadline("verify", 600, LIMITS, start=0.0, probe=probe)
    busy.enter("build", "ModelNew(*get_init_inputs())", now=0)
    while (at := busy.expires()[0]) < 100:
        probe.now = at
        assert busy.expired(at) is None  # looked at every 10 s, busy each time
    assert busy.expired(100) == ("ModelNew(*get_init_inputs()) did not finish within 100 s (the build timeout, "
                                 "harness.compile_timeout_s)")


def test_the_compile_request_is_watched_like_a_build_outside_its_calls():
    probe = FakeProbe(cores=0.0)
    deadline = StageDeadline("compile", 600, WaitLimits(10, 100, idle_s=10, watch_request=True), 0.0, probe=probe)
    assert deadline.expires()[0] == 10
    assert "compile (importing and building the candidate) made no progress" in deadline.expired(10)
    unwatched = StageDeadline("verify", 600, LIMITS, start=0.0, probe=probe)
    assert unwatched.expires()[0] == 600


def test_the_group_cpu_time_and_compiler_frames_are_read():
    import os

    assert group_cpu_seconds(os.getpgrp()) > 0
    assert group_cpu_seconds(2**22 + 12345) is None
    dump = ('Thread 0x1 (most recent call first):\n  File "/x/site-packages/torch/_dynamo/eval_frame.py", line 3 in f\n'
            '  File "/tmp/w/model_new.py", line 9 in forward\n')
    assert compiler_frames(dump) == ['File "/x/site-packages/torch/_dynamo/eval_frame.py", line 3 in f']
    assert compiler_frames('  File "/tmp/w/model_new.py", line 9 in forward\n') == []


# end to end, in real workers, with a short call limit (the build limit stays at its minutes)
@pytest.fixture(scope="module")
def short_calls(cache_dir):
    from kforge_core.harness import Harness

    from .helpers import SELECTION, TORCH_CPU, problem, settings_for

    settings = settings_for(cache_dir, call_timeout_s=1.0, compile_timeout_s=600, verify_timeout_s=0,
                            timing_timeout_s=0, spare_workers=0, baselines=())
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings, plugins=SELECTION) as harness:
        yield harness


def test_a_first_call_that_compiles_past_the_call_limit_passes_and_says_why(short_calls):
    from .helpers import candidate

    verdict = short_calls.evaluate(candidate("compiles_on_first_call"), measure=False)
    assert verdict.correct, verdict.message
    # the compile is seen on the worker's stack; or, when it ends while the worker is being looked at, the call's
    # own answer is taken (a limit that ran out while the answer was on its way is no hang)
    note = next(n for n in verdict.verify.notes if "past the call limit of 1 s" in n or "did not return within 1 s" in n)
    assert "because the worker was compiling" in note or "answered while the worker was being looked at" in note


@pytest.mark.parametrize("name, what", [
    ("hang_at_import", "compile (importing and building the candidate) made no progress"),
    ("idle_hang_in_init", "ModelNew(*get_init_inputs()) made no progress"),
    ("idle_hang", "did not return within 1 s (the call timeout"),
])
def test_an_idle_hang_at_import_in_init_or_in_forward_is_classified_at_the_call_limit_not_the_build_limit(
        short_calls, name, what):
    from .helpers import candidate

    verdict = short_calls.evaluate(candidate(name), measure=False)
    assert verdict.failure is Failure.TIMEOUT, verdict.message
    assert what in verdict.message


def test_nothing_goes_on_past_the_problems_budget_not_even_a_compiling_call():
    probe = FakeProbe(compiling="nvcc running")
    deadline = StageDeadline("verify", 600, LIMITS, start=0.0, probe=probe, hard_stop=25.0)
    deadline.enter("call", "the first forward", now=0)
    assert deadline.expired(10) is None and deadline.expired(20) is None  # compiling: allowed on ...
    assert deadline.expires() == (25.0, "verify: the problem's time budget ran out (harness.problem_budget_s)")
    assert deadline.expired(25.0).startswith("verify: the problem's time budget ran out")  # ... but not past it


def test_dynamo_compilations_in_any_stage_are_marked_as_builds():
    import torch
    import torch._dynamo  # noqa: F401 - loaded, as by a candidate that compiled before

    from kforge_core.harness.worker.jit_marks import jit_builds_marked
    from kforge_core.timing.stage_timer import StageTimer

    class Recording(StageTimer):
        def __init__(self):
            self.marks = []

        def enter(self, kind, what):
            self.marks.append(("enter", kind, what))

        def leave(self, kind, what):
            self.marks.append(("leave", kind, what))

    timer = Recording()
    with jit_builds_marked(timer):
        torch.compile(lambda t: t.sin() * 2, backend="eager")(torch.ones(3))
    assert ("enter", "build", "Dynamo compiling (torch.compile)") in timer.marks
    assert timer.marks[-1] == ("leave", "build", "Dynamo compiling (torch.compile)")
    torch.compile(lambda t: t.cos() * 3, backend="eager")(torch.ones(3))  # outside the block: nothing marked
    assert len(timer.marks) == 2


class ScriptedWorker:
    """Answers each request with the next scripted value, and records what was asked."""

    def __init__(self, replies: dict[type, object]) -> None:
        import weakref

        from kforge_core.harness.host.worker_output import WorkerOutput

        self.replies, self.asked, self.wait_notes, self.alive = replies, [], [], True
        self.output = WorkerOutput()
        weakref.finalize(self, self.output.close)

    def call(self, request, timeout_s, what, waits=None, hard_stop=None):
        from kforge_core.harness.protocol import Reply

        self.asked.append((type(request).__name__, getattr(request, "stage", "")))
        stage = getattr(request, "stage", None)
        return Reply(value=self.replies[stage] if stage else self.replies.get(type(request)))


class AgreeingReferee:
    """A referee that saw every trial pass (the scripted worker ships nothing)."""

    def __init__(self, seeds) -> None:  # noqa: ANN001
        self.seeds = list(seeds)

    def begin(self, workdir=None) -> None:  # noqa: ANN001
        pass

    def answer(self, message):  # noqa: ANN001, ANN201
        raise AssertionError(f"nothing is shipped here: {message!r}")

    def conclude(self, kind: str):  # noqa: ANN201
        from kforge_core.harness.protocol import Conclusion
        from kforge_core.records import TrialError

        return Conclusion(trials=tuple(TrialError(seed, True, 0.0, 0.0, "") for seed in self.seeds))


@pytest.mark.parametrize("blocking", [True, False])
def test_a_candidate_with_a_blocking_flag_from_verify_is_not_timed(tmp_path, blocking):
    import contextlib

    from kforge_core.harness.host.deadline import StageTimeouts
    from kforge_core.harness.host.evaluation import run_stages
    from kforge_core.harness.protocol import Finish, FinishReport, Time
    from kforge_core.records import Candidate, CompileResult, Flag, VerifyResult
    from kforge_core.settings import HarnessSettings

    flag = Flag("reference_call", "torch.relu ran", blocking=blocking)
    worker = ScriptedWorker({"compile": CompileResult(ok=True), "verify": VerifyResult(correct=True, flags=(flag,)),
                             Time: None, Finish: FinishReport()})
    settings = HarnessSettings()
    run_stages(worker, Candidate.from_source("x = 1"), tmp_path, settings, StageTimeouts.derive(settings, 0.001),
               measure=True, profile=False, timing_guard=contextlib.nullcontext, referee=AgreeingReferee(settings.seed + t for t in range(settings.trials)))
    assert (("Time", "") in worker.asked) is not blocking
