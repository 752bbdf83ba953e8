"""KernelBench-format problems and solutions that we wrote (``kernelbench/``), each standing for what published
problems pass and published solutions do, evaluated through the real harness on the CPU.

The solutions are plain PyTorch, as many published ones are, so the harness runs with ``cheat_policy = "report"``
(KernelBench's eval does not ask who computed the answer); everything else is the default. One Harness per
problem, shared by the module's tests.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.harness import Harness
from kforge_core.problem import load_problem
from kforge_core.records import Candidate, Failure
from kforge_core.settings import Settings

from harness.helpers import QUICK, SELECTION, TORCH_CPU

CORPUS = Path(__file__).resolve().parent / "kernelbench"

SOLUTIONS = [
    # (problem, solution, failure class or None when correct, a fragment of the verdict's notes or message)
    ("conv_scale_bn_bias", "scale_folded", None, "parameters: seeded construction"),
    ("conv_scale_bn_bias", "bn_fused", None, "parameters: seeded construction"),
    ("conv_scale_bn_bias", "model_named", None, "defines no ModelNew: its class Model was evaluated"),
    ("conv_scale_bn_bias", "wrong", Failure.MISMATCH, "elements outside atol=0.0001"),
    ("conv_scale_bn_bias", "own_weights", Failure.MISMATCH, "failed with copied from reference by name"),
    ("nested_io", "pretransposed", None, "parameters: seeded construction"),
    ("nested_io", "reordered", None, "parameters: matched by shape order"),
    ("nested_io", "extra_draw", None, "parameters: copied from reference by name"),
    ("nested_io", "flat_output", Failure.OUTPUT_TYPE,
     "forward returned (tensor, tensor, tensor), the reference (tensor, (tensor, tensor))"),
]


@pytest.fixture(scope="module")
def harnesses(tmp_path_factory, host_peaks):
    """One Harness per corpus problem, made on first use; their cache holds the host CPU's peaks, measured once for
    the session."""
    cache = tmp_path_factory.mktemp("kforge-cache")
    shutil.copytree(host_peaks, cache / "peaks")
    settings = Settings(harness=dataclasses.replace(QUICK, cheat_policy="report", baselines=()), cache_dir=cache)
    made: dict[str, Harness] = {}

    def get(name: str) -> Harness:
        if name not in made:
            made[name] = Harness(backend=TORCH_CPU, problem=load_problem(CORPUS / "problems" / f"{name}.py"),
                                 settings=settings, plugins=SELECTION)
        return made[name]

    yield get
    for harness in made.values():
        harness.close()


def solution(problem: str, name: str) -> Candidate:
    return Candidate.from_path(CORPUS / "solutions" / problem / f"{name}.py")


@pytest.mark.parametrize("problem, name, failure, fragment", SOLUTIONS, ids=[f"{p}-{s}" for p, s, *_ in SOLUTIONS])
def test_each_solution_gets_the_verdict_it_deserves(harnesses, problem, name, failure, fragment):
    verdict = harnesses(problem).evaluate(solution(problem, name))
    notes = "\n".join(verdict.verify.notes) if verdict.verify else ""
    assert verdict.failure is failure, verdict.message
    assert fragment in notes + "\n" + verdict.message
    if failure is None:
        assert verdict.runtime is not None and not [f for f in verdict.flags if f.blocking], verdict.flags


def test_a_tensor_nested_in_the_inputs_is_checked_for_mutation(harnesses):
    verdict = harnesses("nested_io").evaluate(solution("nested_io", "mutates_nested_input"), measure=False)
    flags = {f.code: f for f in verdict.flags}
    assert "forward changed input(s) [1][1][0] in place" in flags["input_mutation"].message
    assert verdict.correct and not flags["input_mutation"].blocking  # the report policy only flags it


@pytest.mark.parametrize("problem, init_inputs, inputs, outputs", [
    ("conv_scale_bn_bias",
     ["int 3", "int 8", "tuple(int 3, int 3)", "tuple(int 2, int 2)", "list(int 1, int 1)", "float 0.5",
      "tuple(int 8, int 1, int 1)", "torch.float32", "None"],
     ["tensor[4, 3, 16, 16] float32"], ["tensor[4, 8, 8, 8] float32"]),
    ("nested_io", ["tuple(int 32, int 16)", "str 'tanh'", "torch.float32", "None"],
     ["tensor[64, 32] float32", "tuple(tensor[64, 32] float32, list(tensor[64, 4] float32))",
      "dict(gain: tensor[16] float32)"],
     ["tensor[64, 16] float32", "list(tensor[64] float32, tensor[64, 4] float32)"]),
])
def test_kforge_check_describes_every_kind_of_value(problem, init_inputs, inputs, outputs):
    result = CliRunner().invoke(cli, ["check", str(CORPUS / "problems" / f"{problem}.py"), "--json"], obj=App())
    assert result.exit_code == 0, result.output
    described = json.loads(result.output)
    assert (described["init_inputs"], described["inputs"], described["outputs"]) == (init_inputs, inputs, outputs)
