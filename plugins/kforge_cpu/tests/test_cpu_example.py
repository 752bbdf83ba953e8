"""The single-shot example the lowering ships: a valid problem, and a Numba solution that is correct, parallel and
vectorised."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from cpu_testing import EXAMPLE_PROBLEM, EXAMPLE_SOLUTION

from kforge_core.problem import import_problem_module, load_problem
from kforge_core.records import Candidate
from kforge_core.tolerances import DEFAULT_TOLERANCES
from kforge_cpu import CpuOptions
from kforge_cpu.vectorization import supported


@pytest.fixture(scope="module")
def solution():
    """The example solution's module, imported once for the module: Numba compiles its kernel on the first call."""
    spec = importlib.util.spec_from_file_location("cpu_example_solution", EXAMPLE_SOLUTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_problem_is_a_valid_fp32_problem():
    problem = load_problem(EXAMPLE_PROBLEM)
    assert [s.describe() for s in problem.outputs] == ["tensor[4096, 2048] float32"]
    assert problem.parameter_count == 2048


@pytest.mark.parametrize("seed", [1, 2])
def test_the_example_solution_matches_the_reference(solution, seed):
    problem = import_problem_module(EXAMPLE_PROBLEM)
    torch.manual_seed(seed)
    reference = problem.Model(*problem.get_init_inputs())
    candidate = solution.ModelNew(*problem.get_init_inputs())
    candidate.load_state_dict(reference.state_dict())
    inputs = problem.get_inputs()
    before = [x.clone() for x in inputs]
    with torch.no_grad():
        expected, got = reference(*inputs), candidate(*inputs)
    assert all(torch.equal(x, y) for x, y in zip(inputs, before))  # inputs untouched
    assert got.shape == expected.shape and got.dtype == expected.dtype == torch.float32
    atol, rtol = DEFAULT_TOLERANCES["float32"]
    torch.testing.assert_close(got, expected, atol=atol, rtol=rtol)


def test_the_example_solution_needs_the_reference_weights(solution):
    problem = import_problem_module(EXAMPLE_PROBLEM)
    torch.manual_seed(3)
    reference = problem.Model(*problem.get_init_inputs())
    candidate = solution.ModelNew(*problem.get_init_inputs())  # weights left at ones
    inputs = problem.get_inputs()
    with torch.no_grad():
        assert not torch.allclose(candidate(*inputs), reference(*inputs), atol=1e-3)


def test_the_example_kernel_is_parallel_and_vectorised(stages):
    problem = load_problem(EXAMPLE_PROBLEM)
    [done] = stages([(Candidate.from_path(EXAMPLE_SOLUTION), problem, ("compile", "profile"),
                      CpuOptions(profile_repetitions=3, thread_scaling=False))])
    kernel = next(k for k in done["profile"].kernels if k.name == "add_rmsnorm_kernel")
    m = dict(kernel.metrics)
    assert m["parallel"] == "yes" and m["parallel_loops"] == 1 and m["calls_per_forward"] == 1
    if supported():
        assert m["vectorization"] == "vectorised" and m["f32_f64_conversions"] == 0


def test_the_hooks_import_the_problem_privately_and_restore_the_generator():
    """The harness keeps kforge_problem_<name> for its reference and seeds torch for its trials: the plugin's
    worker-side hooks must change neither."""
    import sys

    from kforge_cpu.problem_instance import private_rng, problem_module

    problem = load_problem(EXAMPLE_PROBLEM)
    harness_module = import_problem_module(problem.path)
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    with private_rng():
        ours = problem_module(problem)
        ours.get_inputs()
    assert ours is not harness_module and sys.modules[harness_module.__name__] is harness_module
    assert torch.equal(torch.rand(3), expected_next)
