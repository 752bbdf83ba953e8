"""Every fault a candidate can commit becomes a classified verdict, and evaluation carries on afterwards.

Real worker processes, real crashes: each candidate in ``candidates/`` commits one fault.
"""

from __future__ import annotations

import pytest

from kforge_core.commands.eval import read_candidate
from kforge_core.harness import Harness
from kforge_core.records import Failure

from .helpers import CANDIDATES, SELECTION, TORCH_CPU, candidate, problem, settings_for

LIMIT_S = 3  # each stage's limit in the harness of small limits
LIMIT_MB = 3072  # its memory limit: an honest candidate fits

FAULTS = [
    # (candidate, failure class, a fragment of the message the agent gets)
    ("syntax_error", Failure.SYNTAX, "syntax_error.py:5: SyntaxError"),
    ("import_error", Failure.IMPORT, "No module named 'kforge_no_such_module_anywhere'"),
    ("no_model_new", Failure.NO_MODEL_NEW, "defines no class ModelNew"),
    ("init_raises", Failure.RUNTIME, "bad configuration for scale 2.0"),
    ("forward_raises", Failure.RUNTIME, 'forward_raises.py", line 11, in forward'),
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
]


@pytest.mark.parametrize("name, failure, fragment", FAULTS, ids=[f[0] for f in FAULTS])
def test_each_fault_is_classified_and_the_worker_replaced(relu_harness, name, failure, fragment):
    verdict = relu_harness.evaluate(candidate(name))
    assert verdict.failure is failure, verdict.message
    assert not verdict.correct
    assert fragment in verdict.message
    assert verdict.runtime is None and verdict.speedups == ()
    # a worker that saw a fault is never used again; a source that does not parse is answered without one
    assert verdict.worker_replaced or failure is Failure.SYNTAX
    if name == "segfault":  # a crash message shows the candidate's line: Python's fault handler, from stderr
        assert "segfault.py\", line 13 in forward" in verdict.message


def test_a_source_that_does_not_parse_is_answered_before_any_worker_starts(make_harness):
    harness = make_harness(baselines=("eager",))
    verdict = harness.evaluate(candidate("syntax_error"))
    assert verdict.failure is Failure.SYNTAX and "syntax_error.py:5: SyntaxError" in verdict.compile.log
    assert harness.workers_started == 0 and verdict.message.startswith("syntax_error: syntax_error.py:5")


def test_evaluation_carries_on_after_faults(relu_harness):
    for name in ("segfault", "os_exit", "nan_output"):
        assert not relu_harness.evaluate(candidate(name)).correct
    verdict = relu_harness.evaluate(candidate("relu_scale_numpy"), measure=False)
    assert verdict.correct, verdict.message


@pytest.fixture(scope="module")
def limited_harness(cache_dir):
    """One harness with small limits serves the hangs and the memory test: each stage's limit, and the worker's
    address space; an honest candidate passes within them."""
    settings = settings_for(cache_dir, spare_workers=0, baselines=(), compile_timeout_s=LIMIT_S,
                            verify_timeout_s=LIMIT_S, timing_timeout_s=LIMIT_S, memory_limit_mb=LIMIT_MB)
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings, plugins=SELECTION) as harness:
        yield harness


@pytest.mark.parametrize("name, stage", [
    ("hang_at_import", "compile"),
    ("hang", "verify"),
    ("hang_while_timed", "timing"),
])
def test_a_hang_in_any_stage_times_out(limited_harness, name, stage):
    verdict = limited_harness.evaluate(candidate(name))
    assert verdict.failure is Failure.TIMEOUT, verdict.message
    assert f"{stage} did not finish within {LIMIT_S} s" in verdict.message
    assert verdict.worker_replaced
    assert limited_harness.evaluate(candidate("relu_scale_numpy")).correct  # a fresh worker serves the next one


def test_a_build_error_at_import_is_a_compile_error_with_the_toolchains_log(relu_harness):
    verdict = relu_harness.evaluate(read_candidate(CANDIDATES / "build_error", "model_new.py"))
    assert verdict.failure is Failure.COMPILE, verdict.message
    assert "undeclared_identifier" in verdict.compile.log
    assert verdict.verify is None


def test_out_of_memory_under_the_memory_limit(limited_harness):
    verdict = limited_harness.evaluate(candidate("out_of_memory"))
    assert verdict.failure is Failure.OUT_OF_MEMORY, verdict.message
    assert "Unable to allocate" in verdict.message
    assert limited_harness.evaluate(candidate("relu_scale_numpy")).correct


def test_output_flooding_is_captured_and_truncated(relu_harness):
    verdict = relu_harness.evaluate(candidate("flood"))
    assert verdict.correct, verdict.message
    limit = relu_harness.settings.harness.output_limit_kb * 1024
    for text in (verdict.stdout, verdict.stderr):
        assert len(text.encode()) <= limit + 200
        assert "bytes cut: output over the 64 KiB limit" in text
    assert verdict.stdout.startswith("FLOOD-START")  # the head is kept ...
    assert verdict.stdout.rstrip().endswith("FLOOD-END")  # ... and the tail
    assert verdict.stderr.startswith("import-time noise")


@pytest.mark.parametrize("words", ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB",
                                   "MemoryError: Unable to allocate 8.00 GiB", "RuntimeError: std::bad_alloc"])
def test_running_out_of_memory_is_told_in_each_runtimes_words(words):
    # std::bad_alloc: PyTorch's extension initialising in a worker under its memory limit (harness.memory_limit_mb)
    from kforge_core.harness.worker.faults import classify_text

    assert classify_text(words) is Failure.OUT_OF_MEMORY
    assert classify_text("RuntimeError: shapes cannot be multiplied") is None


def test_a_trial_judged_while_the_next_one_ran_still_gives_the_first_failure(relu_harness):
    # each trial after the first is judged while the next one runs: the third call's exception is seen before the
    # second call's mismatch comes back, and the verdict is still the second call's, as one trial at a time gives it
    verdict = relu_harness.evaluate(candidate("wrong_then_raises"))
    assert verdict.failure is Failure.MISMATCH, verdict.message
    assert verdict.message.startswith(f"trial seed {relu_harness.settings.harness.seed + 1}: "), verdict.message
    assert [t.passed for t in verdict.verify.trials] == [True, False]
