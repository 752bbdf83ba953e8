"""Acceptance on a Hopper or Blackwell GPU with the CuTe DSL, through KForge's harness:
``pytest -m gpu plugins/kforge_cute``.

The single-shot example compiles, verifies and beats eager PyTorch; the same source again in the warm worker is
found in the process's compile cache, and in a new worker loaded from the disk cache; the worker stays warm after
it; a candidate MLIR rejects is a compile error naming its line, a wrong one a numerical mismatch; Nsight
Compute's profile of the example is summarised.
"""

from __future__ import annotations

import pytest

from kforge_core.harness import Harness
from kforge_core.plugins import PluginSelection
from kforge_core.problem import load_problem
from kforge_core.records import Candidate, Failure
from kforge_core.settings import HarnessSettings, Settings
from kforge_cute import CUTE

from cute_testing import CANDIDATES, EXAMPLES, needs_dsl

pytestmark = [pytest.mark.gpu, needs_dsl]
PLUGINS = PluginSelection(only=("cute",))


def _example(label: str = "example") -> Candidate:
    return Candidate.from_source((EXAMPLES / "cute_solution.py").read_text(), label=label)


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    harness = HarnessSettings(trials=3, repetitions=30, baselines=("eager",))
    return Settings(cache_dir=tmp_path_factory.mktemp("kforge-cache"), harness=harness)


@pytest.fixture(scope="module")
def harness(settings):
    with Harness(backend=CUTE, problem=load_problem(EXAMPLES / "cute_problem.py"), settings=settings,
                 plugins=PLUGINS) as harness:
        yield harness


@pytest.fixture(scope="module")
def first_and_again(harness):
    return harness.evaluate(_example()), harness.evaluate(_example("same source again"))


def test_example_compiles_verifies_and_is_timed_against_eager(first_and_again):
    verdict, again = first_and_again
    assert verdict.compile.ok and verdict.correct, verdict.message
    assert "cute.compile add_layernorm: compiled in" in verdict.compile.log and not verdict.compile.cached
    assert verdict.speedup("eager") > 0, verdict.to_json()  # how fast: benchmarks/, not a test
    assert not verdict.worker_replaced  # the worker stays warm, and with it the process's compile cache
    assert again.correct and again.compile.cached, again.compile.log
    assert "found in this process's cache" in again.compile.log
    print(f"cute: compile stage {verdict.compile.seconds:.2f} s, again {again.compile.seconds:.3f} s; "
          f"{verdict.runtime.median:.4f} ms vs eager {dict(verdict.baselines)['eager'].median:.4f} ms "
          f"= {verdict.speedup('eager'):.2f}x")


def test_a_new_worker_loads_the_compiled_kernel_from_disk(first_and_again, settings):
    with Harness(backend=CUTE, problem=load_problem(EXAMPLES / "cute_problem.py"), settings=settings,
                 plugins=PLUGINS) as fresh:
        verdict = fresh.evaluate(_example("in a new worker"), measure=False)
    assert verdict.correct and verdict.compile.cached, verdict.compile.log
    assert "loaded from the disk cache" in verdict.compile.log
    print(f"cute: compile stage in a new worker {verdict.compile.seconds:.2f} s: {verdict.compile.log}")


def test_an_mlir_error_is_a_compile_error_with_the_candidates_lines(harness):
    candidate = Candidate.from_source((CANDIDATES / "cute_dsl_error.py").read_text(), label="dsl-error")
    verdict = harness.evaluate(candidate)
    assert verdict.failure is Failure.COMPILE, verdict.to_json()
    log = verdict.compile.log
    assert log.startswith("MLIR verification failed: 'cute.copy' op expects same size"), log
    assert "at model_new.py:" in log and "cute.copy(" in log and "memref" not in log
    print(log)


def test_a_wrong_result_is_a_numerical_mismatch(harness):
    candidate = Candidate.from_source((CANDIDATES / "cute_wrong_result.py").read_text(), label="wrong")
    verdict = harness.evaluate(candidate)
    assert verdict.compile.ok and verdict.failure is Failure.MISMATCH, verdict.to_json()


def test_ncu_profile_is_summarised(harness, first_and_again):
    verdict = harness.evaluate(_example("profiled"), profile=True, measure=False)
    assert verdict.correct and verdict.profile is not None and verdict.profile.tool == "ncu", verdict.message
    summary = harness.summarize(verdict.profile)
    assert "Nsight Compute on" in summary.text and "add_layernorm" in summary.text
    assert verdict.profile.kernels and verdict.profile.kernels[0].duration_us > 0
    print(summary.text)
