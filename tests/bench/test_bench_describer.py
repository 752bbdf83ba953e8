"""Problems described ahead in a child process (a bench on an accelerator): the same description the KForge
process would make, a bad problem's own error, a describer that died replaced by describing here, and a slot that
prepares for the next problem only once it is described."""

from __future__ import annotations

from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool

import pytest
from harness.helpers import PROBLEMS

from kforge_core.bench.describer import Describer
from kforge_core.bench.slot import ProblemLoader
from kforge_core.problem import ProblemError, load_problem


def test_a_problem_described_in_the_child_is_the_one_described_here(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n\ndef get_inputs():\n    return []\n")
    loader = ProblemLoader(Describer())
    try:
        loader.ahead([PROBLEMS / "relu_scale.py", bad])
        described = loader.load(PROBLEMS / "relu_scale.py")
        assert loader.ready(PROBLEMS / "relu_scale.py")
        with pytest.raises(ProblemError, match="get_init_inputs"):
            loader.load(bad)
    finally:
        loader.close()
    here = load_problem(PROBLEMS / "relu_scale.py")
    assert described == here


class _Dead(Describer):
    """A describer whose process died: every description it hands back is a broken pool."""

    def submit(self, path):
        future: Future = Future()
        future.set_exception(BrokenProcessPool("the describing process died"))
        return future


def test_a_describer_that_died_leaves_the_problem_to_be_described_here():
    loader = ProblemLoader(_Dead())
    assert loader.load(PROBLEMS / "relu_scale.py").name == "relu_scale"


class _Never(Describer):
    """A describer still busy with every problem it was handed."""

    def submit(self, path):
        return Future()


def test_only_a_described_problem_is_ready_and_without_a_describer_every_one_is():
    busy = ProblemLoader(_Never())
    busy.ahead([PROBLEMS / "relu_scale.py"])
    assert not busy.ready(PROBLEMS / "relu_scale.py")
    assert ProblemLoader().ready(PROBLEMS / "relu_scale.py")


def test_the_child_keeps_off_every_nodes_timing_cpus(tmp_path):
    from kforge_core.harness.cpu_placement import outside_timing_pools

    nodes = [set(range(16)), set(range(16, 32))]  # no SMT siblings under tmp_path
    assert outside_timing_pools(set(range(32)), nodes, tmp_path) == set(range(14)) | set(range(16, 30))
    assert outside_timing_pools({0, 1}, [{0, 1}], tmp_path) == {0, 1}  # a node too small for a pool keeps every CPU


class _Refusing(Describer):
    """A describer that records what it was handed and answers each with an error, never with a description."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list = []

    def submit(self, path):
        self.handed.append(path)
        future: Future = Future()
        future.set_exception(RuntimeError(f"{path.name} was handed to the describer"))
        return future


def test_the_first_problem_is_described_here_and_the_rest_are_handed_to_the_describer():
    # the slot waiting for it has nothing else to do, and the child would start an interpreter first
    describer = _Refusing()
    loader = ProblemLoader(describer)
    first, second = PROBLEMS / "relu_scale.py", PROBLEMS / "wide_relu.py"
    loader.ahead([first, second], here=1)
    assert describer.handed == [second]
    assert not loader.ready(first)  # not described yet: a slot preparing for it ahead does not describe it here
    assert loader.load(first).name == "relu_scale"
    assert loader.ready(first) and describer.handed == [second]
    with pytest.raises(RuntimeError, match="wide_relu.py was handed to the describer"):
        loader.load(second)
