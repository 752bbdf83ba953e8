"""The harness's CPU fault and cheat candidates (``tests/harness/candidates``), evaluated through the cpu backend.

On this backend the compile stage already runs the first forward (to force Numba's JIT), so faults that the
generic backend meets in verification surface here during compile; each must still get its class, and each cheat
must still be caught.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kforge_core.harness import Harness
from kforge_core.harness import flags as F
from kforge_core.plugins import PluginSelection
from kforge_core.problem import load_problem
from kforge_core.records import Candidate, Failure
from kforge_core.settings import HarnessSettings, Settings

HARNESS_TESTS = Path(__file__).resolve().parents[3] / "tests" / "harness"
SELECTION = PluginSelection(only=("cpu",))
QUICK = HarnessSettings(trials=3, warmup=1, repetitions=4, timing_checks=2, baselines=(), spare_workers=1,
                        compile_timeout_s=120, verify_timeout_s=60, timing_timeout_s=60, profile_timeout_s=120,
                        startup_timeout_s=180)

FAULTS = [
    # (candidate, failure class, a fragment of the message the agent gets)
    ("syntax_error", Failure.SYNTAX, "syntax_error.py:5: SyntaxError"),
    ("import_error", Failure.IMPORT, "No module named 'kforge_no_such_module_anywhere'"),
    ("no_model_new", Failure.NO_MODEL_NEW, "defines no class ModelNew"),
    ("init_raises", Failure.RUNTIME, "bad configuration for scale 2.0"),
    ("forward_raises", Failure.RUNTIME, "the first forward raised at forward_raises.py:11"),
    ("wrong_shape", Failure.SHAPE, "has shape [256, 128], expected [256, 256]"),
    ("wrong_dtype", Failure.DTYPE, "has dtype float64, expected float32"),
    ("mismatch", Failure.MISMATCH, "elements outside atol=0.0001"),
    ("nan_output", Failure.NAN_INF, "NaN and 0 Inf values where the reference is finite"),
    ("non_tensor_output", Failure.OUTPUT_TYPE, "is a ndarray, expected a torch.Tensor"),
    ("segfault", Failure.CRASH, "SIGSEGV"),
    ("abort", Failure.CRASH, "SIGABRT"),
    ("os_exit", Failure.EXIT, "exited with status 3"),
    ("sys_exit", Failure.EXIT, "sys.exit('giving up')"),
    ("exit_at_import", Failure.EXIT, "exited with status 0"),
    ("out_of_memory", Failure.OUT_OF_MEMORY, "the first forward raised at out_of_memory.py"),
]

CHEATS = [
    # (candidate, problem, failure class (None: any), the flag that must be raised and block, harness changes)
    ("stale_output", "relu_scale", None, F.STALE_OUTPUT, {}),
    ("thread_output", "relu_scale", Failure.CHEAT, F.ASYNC_OUTPUT, {}),
    ("cached_by_shape", "relu_scale", None, F.CACHED_OUTPUT, {}),
    ("cached_after_calls", "relu_scale", Failure.CHEAT, F.CACHED_OUTPUT, {}),
    ("constant_zeros", "tiny_output", Failure.CHEAT, F.CONSTANT_OUTPUT, {}),
    ("relu_scale_torch", "relu_scale", Failure.CHEAT, F.REFERENCE_CALL, {}),
    ("reference_model", "relu_scale", Failure.CHEAT, F.REFERENCE_CALL, {}),
    ("patch_timer", "relu_scale", Failure.CHEAT, F.TAMPERING, {}),
    ("patch_torch", "relu_scale", Failure.CHEAT, F.TAMPERING, {}),
    ("patch_harness", "relu_scale", Failure.CHEAT, F.TAMPERING, {}),
    ("lazy_subclass", "relu_scale", Failure.OUTPUT_TYPE, F.TENSOR_SUBCLASS, {}),
    # a tolerance loose enough for float16 to pass the trials: the precision check must still see it
    ("precision_fp16", "linear_relu", Failure.CHEAT, F.PRECISION_DOWNGRADE, {"tolerances": {"float32": (5e-2, 5e-2)}}),
    ("precision_switch", "relu_scale", Failure.CHEAT, F.PRECISION_DOWNGRADE, {}),
    ("input_mutation", "relu_scale", Failure.CHEAT, None, {}),
]


def harness_candidate(name: str) -> Candidate:
    return Candidate.from_path(HARNESS_TESTS / "candidates" / f"{name}.py")


@pytest.fixture(scope="module")
def harnesses(peaks_cache):
    """One cpu-backend Harness per problem, created on first use and shared by the module's tests."""
    made: dict[str, Harness] = {}

    def get(problem: str, **changes) -> Harness:
        key = problem + repr(sorted(changes.items()))
        if key not in made:
            settings = Settings(harness=dataclasses.replace(QUICK, **changes), cache_dir=peaks_cache)
            made[key] = Harness(backend=_cpu_backend(), problem=load_problem(HARNESS_TESTS / "problems" /
                                                                                f"{problem}.py"),
                                settings=settings, plugins=SELECTION)
        return made[key]

    yield get
    for harness in made.values():
        harness.close()


def _cpu_backend():
    from kforge_core.plugins import build_plugin_manager
    from kforge_core.registry import BackendRegistry

    return BackendRegistry(build_plugin_manager(SELECTION)).get("cpu").backend


@pytest.mark.parametrize("name, failure, fragment", FAULTS, ids=[f[0] for f in FAULTS])
def test_each_fault_is_classified_through_the_cpu_backend(harnesses, name, failure, fragment):
    harness = harnesses("relu_scale", memory_limit_mb=4096) if name == "out_of_memory" else harnesses("relu_scale")
    verdict = harness.evaluate(harness_candidate(name))
    assert verdict.failure is failure, verdict.message
    assert fragment in verdict.message
    assert verdict.runtime is None and verdict.worker_replaced


def test_a_hang_in_the_first_forward_times_out_in_compile(harnesses):
    verdict = harnesses("relu_scale", compile_timeout_s=8).evaluate(harness_candidate("hang"))
    assert verdict.failure is Failure.TIMEOUT, verdict.message
    assert "compile did not finish within 8 s" in verdict.message


@pytest.mark.parametrize("name, problem, failure, flag, changes", CHEATS, ids=[c[0] for c in CHEATS])
def test_each_cheat_is_caught_through_the_cpu_backend(harnesses, name, problem, failure, flag, changes):
    verdict = harnesses(problem, **changes).evaluate(harness_candidate(name))
    assert not verdict.correct and verdict.runtime is None, verdict.message  # a cheat never counts as a speedup
    if failure is not None:
        assert verdict.failure is failure, verdict.message
    if flag is not None:
        assert {f.code: f.blocking for f in verdict.flags}.get(flag) is True, verdict.flags


def test_an_honest_numpy_candidate_passes_through_the_cpu_backend(harnesses):
    verdict = harnesses("relu_scale").evaluate(harness_candidate("relu_scale_numpy"))
    assert verdict.correct and verdict.flags == (), verdict.message
    assert verdict.runtime is not None
