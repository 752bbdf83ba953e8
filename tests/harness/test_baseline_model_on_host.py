"""The baselines' model built on the host as a candidate's evaluation begins: its constructor's seconds overlap the
reference's and the candidate's, and the model the baselines time is the one the seed makes, moved to the device
only when the first baseline is built."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from kforge_core.harness.host.baseline_worker import BaselineWorker
from kforge_core.harness.protocol import BuildOnHost, MeasureBaselines, Prepare
from kforge_core.harness.worker import baselines
from kforge_core.harness.worker.reference import forget_problems, reference_data

from .helpers import QUICK, problem
from .test_harness_memory import CountingDevice


@pytest.fixture(autouse=True)
def nothing_kept_after():
    """What these tests build stays in this process's module state (the baselines built, the problems' data): it
    goes with each test, so a later test of the same process finds none of it."""
    yield
    baselines._built.clear()
    baselines._built_for.clear()
    forget_problems()


def test_the_model_built_on_the_host_is_the_one_the_eager_baseline_times_with_the_seeded_weights():
    data = reference_data(problem("linear_relu"), CountingDevice(), QUICK)
    assert baselines.build_on_host(data) == "the model was built on the host"
    on_host = baselines._built[baselines._HOST_MODEL]
    assert baselines.build_on_host(data) == "the model was built already"  # asked twice: built once
    eager = baselines._baseline("eager", data)
    assert eager is on_host and baselines._HOST_MODEL not in baselines._built  # moved, not built again
    again = data.model()  # what the baseline worker built before: the constructor under the run's seed
    assert torch.equal(eager.linear.weight, again.linear.weight) and torch.equal(eager.linear.bias, again.linear.bias)


def test_a_constructor_that_fails_on_the_host_fails_the_baselines_build_and_is_said_there():
    def broken(*_):
        raise RuntimeError("no such layer")

    data = reference_data(problem("relu_scale"), CountingDevice(), QUICK)
    data = dataclasses.replace(data, module=SimpleNamespace(Model=broken))
    said = baselines.build_on_host(data)
    assert said.startswith("the model was not built on the host") and "no such layer" in said
    results = baselines.measure_baselines(("eager",), data, CountingDevice(), QUICK, runs=(0, 0))
    assert results.errors == (("eager", "eager baseline failed: RuntimeError: no such layer"),)


class SentTo:
    """A started worker that records what it is sent."""

    def __init__(self) -> None:
        self.sent: list = []
        self.alive = True

    def send(self, request) -> None:  # noqa: ANN001
        self.sent.append(request)


def test_the_baseline_worker_is_told_the_problem_and_the_host_build_once_and_get_ready_builds_the_rest(tmp_path):
    started: list[SentTo] = []

    def start(init, home: Path) -> SentTo:  # noqa: ANN001
        started.append(SentTo())
        return started[-1]

    worker = BaselineWorker(lambda: None, tmp_path, start=start)
    relu = problem("relu_scale")
    worker.build_on_host(relu)
    worker.build_on_host(relu)  # the next candidate of the same problem: nothing more to build
    worker.get_ready(relu, ("eager", "compile"))
    assert [type(request) for request in started[0].sent] == [Prepare, BuildOnHost, MeasureBaselines]
    assert started[0].sent[2].names == ("eager", "compile") and worker.prepared_for == relu.digest

    ahead = BaselineWorker(lambda: None, tmp_path, start=start, name="ahead")
    ahead.get_ready(relu, ("eager",))  # got ready for the problem while the last one was evaluated
    ahead.build_on_host(relu)
    assert [type(request) for request in started[1].sent] == [Prepare, MeasureBaselines]
