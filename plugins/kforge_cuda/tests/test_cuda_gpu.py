"""Acceptance on an NVIDIA GPU, through KForge's harness: ``pytest -m gpu plugins/kforge_cuda``.

Both single-shot examples compile, verify and beat eager PyTorch; a faulting candidate is classified and the next
candidate still evaluates (with its compute-sanitizer report when asked); a KernelBench load_inline candidate
evaluates and its second build is a cached load; candidates waiting their turn are built ahead while an earlier one
is timed, and are then cache hits (the process that builds ahead reads the arch from the driver and never imports
PyTorch); ncu's profile of a correct candidate is summarised.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.problem import load_problem
from kforge_core.records import Candidate, Failure
from kforge_core.registry import BackendRegistry
from kforge_core.settings import HarnessSettings, Settings
from kforge_cuda.options import CudaOptions

from cuda_testing import CANDIDATES, EXAMPLES, example_path

pytestmark = pytest.mark.gpu
PLUGINS = PluginSelection(only=("cuda", "triton"))


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    harness = HarnessSettings(trials=3, repetitions=30, baselines=("eager",))
    return Settings(cache_dir=tmp_path_factory.mktemp("kforge-cache"), harness=harness)


def _harness(backend_name: str, problem_file: Path, settings: Settings, **options):
    from kforge_core.harness import Harness

    backend = BackendRegistry(build_plugin_manager(PLUGINS)).get(backend_name).backend
    chosen = dataclasses.replace(backend.default_options(), **options) if options else None
    return Harness(backend=backend, problem=load_problem(problem_file), settings=settings,
                   plugins=PLUGINS, options=chosen)


def _example(backend: str, label: str = "example") -> Candidate:
    return Candidate.from_source(example_path(backend, "solution").read_text(), label=label)


@pytest.mark.parametrize("backend", ["cuda", "triton"])
def test_example_compiles_verifies_and_is_timed_against_eager(backend, settings):
    with _harness(backend, example_path(backend, "problem"), settings) as harness:
        verdict = harness.evaluate(_example(backend))
        again = harness.evaluate(_example(backend, label="same source again"))
    assert verdict.compile.ok and verdict.correct, verdict.message
    assert verdict.speedup("eager") > 0, verdict.to_json()  # how fast: benchmarks/, not a test
    assert again.correct and (again.compile.cached or backend == "triton")
    print(f"{backend}: build {verdict.compile.seconds:.2f} s, again {again.compile.seconds:.2f} s; "
          f"{verdict.runtime.median:.4f} ms vs eager {dict(verdict.baselines)['eager'].median:.4f} ms "
          f"= {verdict.speedup('eager'):.2f}x")


def test_later_candidates_are_built_ahead_while_the_first_is_evaluated(settings, tmp_path):
    fresh = dataclasses.replace(settings, cache_dir=tmp_path / "cache")
    source = (EXAMPLES / "cuda_solution.py").read_text()
    candidates = [Candidate.from_source(source.replace("#include <cuda_runtime.h>",
                                                       f"// variant {i}\n#include <cuda_runtime.h>", 1),
                                        label=f"variant-{i}") for i in range(3)]
    with _harness("cuda", EXAMPLES / "cuda_problem.py", fresh) as harness:
        verdicts = list(harness.evaluate_all(candidates))
        prebuilds = harness.prebuilds
    assert all(v.correct for v in verdicts), [v.message for v in verdicts]
    assert not verdicts[0].compile.cached and all(v.compile.cached for v in verdicts[1:])
    assert len(prebuilds) == 2 and all(p.result is not None and p.result.ok and not p.result.cached
                                       for p in prebuilds)
    print("built ahead: " + ", ".join(f"{p.seconds:.2f} s" for p in prebuilds) + "; compile stages: "
          + ", ".join(f"{v.compile.seconds:.3f} s" for v in verdicts))


def test_the_build_ahead_process_learns_the_arch_without_importing_pytorch(tmp_path):
    import subprocess
    import sys

    import torch

    code = ("import sys; from pathlib import Path; from kforge_cuda.build_config import build_config; "
            "from kforge_cuda.options import CudaOptions; "
            f"config = build_config(CudaOptions(), Path({str(tmp_path)!r})); "
            "print([f for f in config.flags if f.startswith('-gencode')][0], 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    major, minor = torch.cuda.get_device_capability()
    gencode = f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"
    assert done.stdout.split() == [gencode, "False"], done.stdout + done.stderr


def test_faulting_candidate_is_classified_and_the_next_still_evaluates(settings):
    faulty = Candidate.from_source((CANDIDATES / "cuda_out_of_bounds.py").read_text(), label="faulty")
    with _harness("cuda", EXAMPLES / "cuda_problem.py", settings) as harness:
        fault = harness.evaluate(faulty)
        after = harness.evaluate(_example("cuda"))
    assert fault.failure is Failure.DEVICE_FAULT, fault.to_json()
    assert fault.worker_replaced
    assert after.correct, after.message


@pytest.mark.parametrize("warmup", [False, True], ids=["fault-in-verify", "fault-in-compile-warmup"])
def test_sanitize_reports_the_bad_access_to_the_agent(settings, warmup):
    faulty = Candidate.from_source((CANDIDATES / "cuda_out_of_bounds.py").read_text(), label="faulty")
    with _harness("cuda", EXAMPLES / "cuda_problem.py", settings, sanitize=True, warmup_forward=warmup) as harness:
        fault = harness.evaluate(faulty)
    assert fault.failure is Failure.DEVICE_FAULT
    assert (fault.compile.ok if fault.compile else False) is not warmup
    assert "Invalid __global__ write" in fault.message and "broken_softmax.cu:6" in fault.message, fault.message


def test_kernelbench_load_inline_candidate_evaluates_and_is_cached(settings):
    source = (CANDIDATES / "kernelbench_softmax.py").read_text()
    renamed = source.replace('name="row_softmax"', 'name="row_softmax_renamed"')
    with _harness("cuda", EXAMPLES / "cuda_problem.py", settings) as harness:
        first = harness.evaluate(Candidate.from_source(source, label="kernelbench"), measure=False)
        second = harness.evaluate(Candidate.from_source(renamed, label="renamed"), measure=False)
    assert first.correct, first.message
    assert second.correct and second.compile.cached
    print(f"load_inline: first build {first.compile.seconds:.1f} s, same source renamed {second.compile.seconds:.2f} s")


@pytest.mark.parametrize("backend", ["cuda", "triton"])
def test_ncu_profile_is_summarised(backend, settings):
    with _harness(backend, example_path(backend, "problem"), settings) as harness:
        verdict = harness.evaluate(_example(backend), profile=True, measure=False)
        assert verdict.correct, verdict.message
        assert verdict.profile is not None and verdict.profile.tool == "ncu", verdict.stderr[-3000:]  # ncu's error
        summary = harness.summarize(verdict.profile)
    assert "Nsight Compute on" in summary.text
    assert any(bound in summary.text for bound in ("memory-bound", "compute-bound", "latency-bound"))
    assert verdict.profile.kernels and verdict.profile.kernels[0].duration_us > 0
    print(summary.text)
