"""The harness's CPU fault and cheat candidates (``tests/harness/candidates``), evaluated through the cpu backend.

On this backend the compile stage already runs the first forward (to force Numba's JIT), so faults that the
generic backend meets in verification surface here during compile; each must still get its class, and each cheat
must still be caught.

Only the cases whose path the cpu plugin changes are run here: its compile hook imports the candidate, constructs
``ModelNew`` and runs the first forward (the generic compile stage only imports), and its clock is bound before any
candidate is imported. A fault or cheat that shows only in the outputs or the process state that verification and
timing check takes the same generic path on every backend; those are in ``tests/harness/test_harness_faults.py``
and ``tests/harness/test_harness_cheats.py`` alone (named below).
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from kforge_core.harness import Harness
from kforge_core.harness import flags as F
from kforge_core.harness.host.deadline import CALL_FLOOR_S
from kforge_core.plugins import PluginSelection
from kforge_core.problem import load_problem
from kforge_core.records import Candidate, Failure
from kforge_core.settings import HarnessSettings, Settings

HARNESS_TESTS = Path(__file__).resolve().parents[3] / "tests" / "harness"
SELECTION = PluginSelection(only=("cpu",))
QUICK = HarnessSettings(trials=3, warmup=1, repetitions=4, baselines=(), spare_workers=0,
                        compile_timeout_s=120, verify_timeout_s=60, timing_timeout_s=60, profile_timeout_s=120,
                        startup_timeout_s=180)

# Each fault here happens while importing, constructing or first calling the candidate: in this plugin's compile
# hook. Faults in the output (wrong_shape, wrong_dtype, mismatch, nan_output, non_tensor_output) are found by the
# generic verification after it, as on any backend: tests/harness/test_harness_faults.py.
FAULTS = [
    # (candidate, failure class, a fragment of the message the agent gets)
    ("syntax_error", Failure.SYNTAX, "syntax_error.py:5: SyntaxError"),
    ("import_error", Failure.IMPORT, "No module named 'kforge_no_such_module_anywhere'"),
    ("no_model_new", Failure.NO_MODEL_NEW, "defines no class ModelNew"),
    ("init_raises", Failure.RUNTIME, "bad configuration for scale 2.0"),
    ("forward_raises", Failure.RUNTIME, "the first forward raised at forward_raises.py:11"),
    ("segfault", Failure.CRASH, "SIGSEGV"),
    ("abort", Failure.CRASH, "SIGABRT"),
    ("os_exit", Failure.EXIT, "exited with status 3"),
    ("sys_exit", Failure.EXIT, "sys.exit('giving up')"),
    ("exit_at_import", Failure.EXIT, "exited with status 0"),
    ("out_of_memory", Failure.OUT_OF_MEMORY, "the first forward raised at out_of_memory.py"),
]

# Each cheat here keeps state from one call to the next or acts while constructed or timed, so the first forward in
# this plugin's compile hook (an extra call, on other inputs) or its own clock could change the outcome. Cheats
# judged from one output or from the process state after import (stale_output, constant_zeros, relu_scale_torch,
# patch_torch, patch_harness, lazy_subclass, precision_fp16, precision_switch, input_mutation) take the generic
# verification and timing path on every backend: tests/harness/test_harness_cheats.py.
CHEATS = [
    # (candidate, failure class (None: any), the flag that must be raised and block), on relu_scale
    ("thread_output", Failure.CHEAT, F.ASYNC_OUTPUT),
    ("cached_by_shape", None, F.CACHED_OUTPUT),
    ("cached_after_calls", Failure.CHEAT, F.CACHED_OUTPUT),
    ("reference_model", Failure.CHEAT, F.REFERENCE_CALL),
    ("patch_timer", Failure.CHEAT, F.TAMPERING),
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
    # a worker that saw a fault is never used again; a source that does not parse is answered without one
    assert verdict.runtime is None and (verdict.worker_replaced or failure is Failure.SYNTAX)


@pytest.mark.slow
def test_a_forward_that_never_returns_is_a_timeout_well_within_a_minute(harnesses):
    """The compile stage runs the first forward; its build limit (minutes) must not hold a hang up: the call has
    its own limit, from the reference's time (the floor, on this millisecond problem)."""
    harness = harnesses("relu_scale")
    assert harness.timeouts.call_s == CALL_FLOOR_S and harness.timeouts.compile_s == 120
    start = time.monotonic()
    verdict = harness.evaluate(harness_candidate("hang"))
    seconds = time.monotonic() - start
    assert verdict.failure is Failure.TIMEOUT, verdict.message
    assert f"the first forward (Numba compiles its kernels) did not return within {CALL_FLOOR_S:g} s" \
        in verdict.message
    assert seconds < 60, f"classified after {seconds:.1f} s"


@pytest.mark.parametrize("name, failure, flag", CHEATS, ids=[c[0] for c in CHEATS])
def test_each_cheat_is_caught_through_the_cpu_backend(harnesses, name, failure, flag):
    verdict = harnesses("relu_scale").evaluate(harness_candidate(name))
    assert not verdict.correct and verdict.runtime is None, verdict.message  # a cheat never counts as a speedup
    if failure is not None:
        assert verdict.failure is failure, verdict.message
    assert {f.code: f.blocking for f in verdict.flags}.get(flag) is True, verdict.flags


def test_an_honest_numpy_candidate_passes_through_the_cpu_backend(harnesses):
    verdict = harnesses("relu_scale").evaluate(harness_candidate("relu_scale_numpy"))
    assert verdict.correct and verdict.flags == (), verdict.message
    assert verdict.runtime is not None


def test_a_thread_bomb_in_the_first_forward_reaches_the_process_limit(harnesses):
    """The cpu backend's compile hook runs the first forward: a limit reached there is the worker's
    (``resource_limit``, named), not the candidate's runtime error (tests/harness/test_harness_limits.py has the
    other limits)."""
    from kforge_core.harness.host.cgroups import cgroup_support
    from kforge_core.harness.host.limits import process_limit_probe
    from kforge_core.harness.host.namespaces import sandbox_status

    if os.geteuid() == 0 and "pids" not in cgroup_support().controllers and not (
            sandbox_status().available and process_limit_probe().pid_max):
        pytest.skip("nothing bounds a worker's processes here (root, no pid_max of its own, no pids cgroup)")
    verdict = harnesses("relu_scale", max_processes=300).evaluate(harness_candidate("thread_bomb"))
    assert verdict.failure is Failure.RESOURCE_LIMIT, verdict.message
    assert "limit on processes and threads (harness.max_processes = 300)" in verdict.message
    assert verdict.worker_replaced
