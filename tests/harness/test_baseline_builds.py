"""The torch.compile baselines of coming problems, built side by side by builders (``baseline_builds.py``), and a
candidate's timing that goes on without a baseline whose build is still under way (``BaselinesWindow``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from kforge_core.harness.host.baseline_builds import BaselineBuilds
from kforge_core.harness.host.baselines_window import BaselinesWindow
from kforge_core.harness.host.phases import Phases
from kforge_core.records import Problem, ValueSpec
from kforge_core.settings import HarnessSettings


def _problem(name: str) -> Problem:
    tensor = ValueSpec("tensor", (8,), "float32")
    return Problem(name=name, path=Path(f"/problems/{name}.py"), source=f"# {name}\n", inputs=(tensor,),
                   init_inputs=(), outputs=(tensor,), parameter_count=0)


def _digest(name: str) -> str:
    return _problem(name).digest


class FakeBuilder:
    """A baseline worker whose builds end when the test releases them (``gate``), recording what it was told."""

    def __init__(self, log: list, gate: dict[str, threading.Event], fail: str = "") -> None:
        self.log, self.gate, self.fail = log, gate, fail
        self.failed, self.paused, self.closed, self.problem = "", False, False, None

    def get_ready(self, problem: Problem, names: tuple[str, ...]) -> None:
        self.problem, self.failed = problem, ""
        self.log.append(("build", problem.name, names))

    def wait_ready(self, timeout_s: float) -> None:
        self.gate[self.problem.name].wait(timeout_s)
        if self.problem.name == self.fail:
            self.failed = "the baseline worker could not get ready: Inductor failed"
        self.log.append(("built", self.problem.name))

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False

    def discard(self) -> None:  # killed: a build under way ends at once
        self.closed = True
        for event in self.gate.values():
            event.set()

    def close(self) -> None:
        self.closed = True


def _wait_until(condition, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_coming_problems_build_side_by_side_and_each_builder_ends_with_nothing_left():
    log: list = []
    gate = {name: threading.Event() for name in "abc"}
    made: list[FakeBuilder] = []

    def make(number: int) -> FakeBuilder:
        made.append(FakeBuilder(log, gate, fail="c"))
        return made[-1]

    builds = BaselineBuilds(make, 2, ("compile",), timeout_s=30)
    for name in "abc":
        builds.request(_problem(name))
    builds.request(_problem("a"))  # once
    _wait_until(lambda: len([e for e in log if e[0] == "build"]) == 2)
    assert [e[1] for e in log if e[0] == "build"] == ["a", "b"]  # two at once, in the suite's order
    assert (builds.state(_digest("a")), builds.state(_digest("c")), builds.state(_digest("z"))) == ("building", "queued", "")
    assert "still running" in builds.missing(_digest("a")) and "had not begun" in builds.missing(_digest("c"))
    assert not builds.done(_digest("a")) and builds.done(_digest("z"))  # never requested: nothing to wait for
    gate["a"].set()
    _wait_until(lambda: builds.state(_digest("c")) == "building")  # the first free builder takes the third
    for name in "bc":
        gate[name].set()
    _wait_until(lambda: all(builder.closed for builder in made))
    assert len(made) == 2 and ("build", "a", ("compile",)) in log
    assert builds.state(_digest("b")) == "built" and builds.seconds(_digest("b")) is not None
    assert builds.state(_digest("c")) == "failed" and "Inductor failed" in builds.missing(_digest("c"))
    builds.close()


def test_builders_are_stopped_while_a_candidate_is_timed_and_the_current_problem_goes_first():
    log: list = []
    gate = {name: threading.Event() for name in "abcd"}
    made: list[FakeBuilder] = []

    def make(number: int) -> FakeBuilder:
        made.append(FakeBuilder(log, gate))
        return made[-1]

    builds = BaselineBuilds(make, 1, ("compile",), timeout_s=30)
    with builds.paused():
        for name in "abcd":
            builds.request(_problem(name))
        _wait_until(lambda: made and made[0].problem is not None)
        assert made[0].paused  # started while stopped: stopped too
    assert not made[0].paused
    builds.hurry(_digest("d"))  # its problem is the current one: it goes before b and c
    gate["a"].set()
    _wait_until(lambda: builds.state(_digest("d")) == "building")
    assert builds.state(_digest("b")) == "queued"
    builds.close()  # what was still under way is not waited for
    assert made[0].closed


class FakeBaselineWorker:
    """The baseline worker as the window uses it: what it was asked to build, and blocks timed at 2 ms a run."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, ...]] = []
        self.prepared_for = ""

    def get_ready(self, problem: Problem, names: tuple[str, ...]) -> None:
        self.prepared_for = problem.digest
        self.asked.append(names)

    def wait_ready(self, timeout_s: float) -> None:
        pass

    def take_calls(self) -> list:
        return []

    def time_block(self, name, block, timeout_s, timers=()):
        from .test_timing import FakeWorkers

        return FakeWorkers({name: 2.0}).baseline(name, block)


def test_a_build_under_way_does_not_hold_the_candidates_timing_and_the_verdict_says_why(tmp_path):
    from kforge_core.devices.cpu import CpuDevice
    from kforge_core.harness.host.baseline_cache import BaselineCache
    from kforge_core.harness.host.deadline import StageTimeouts

    from .test_timing import FakeWorkers

    gate = {"a": threading.Event()}
    builds = BaselineBuilds(lambda number: FakeBuilder([], gate), 1, ("compile",), timeout_s=30)
    settings = HarnessSettings(baseline_cache="off")
    worker = FakeBaselineWorker()
    window = BaselinesWindow(settings, CpuDevice, worker, FakeBaselineWorker(), BaselineCache(tmp_path), lambda: None,
                             builds)
    problem = _problem("a")
    builds.request(problem)
    _wait_until(lambda: builds.state(_digest("a")) == "building")
    timeouts = StageTimeouts.derive(settings, 0.01)
    workers = FakeWorkers({"candidate": 1.0})
    window.get_ready(problem)
    measured = window.measure(problem, timeouts, Phases(), workers.candidate, runs=8)
    assert worker.asked[0] == ("eager",)  # the builder builds compile; the baseline worker only eager
    assert [name for name, _ in measured.baselines.samples_ms] == ["eager"]
    errors = dict(measured.baselines.errors)
    assert errors["compile"].startswith("compile baseline not measured: its build was still running")
    gate["a"].set()
    _wait_until(lambda: builds.state(_digest("a")) == "built")
    measured = window.measure(problem, timeouts, Phases(), workers.candidate, runs=8)
    assert worker.asked[-1] == ("eager", "compile")  # built: the baseline worker builds it from Inductor's cache
    assert [name for name, _ in measured.baselines.samples_ms] == ["eager", "compile"]
    assert not measured.baselines.errors
    builds.close()
