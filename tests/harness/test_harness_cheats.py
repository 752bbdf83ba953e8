"""Each cheat the CPU can show, planted in a candidate and caught; legitimate candidates are not flagged.

The GPU-only cheats (side streams, persisting L2, stale device memory) are in ``test_harness_gpu.py``.
"""

from __future__ import annotations

import pytest

from kforge_core.harness import flags as F
from kforge_core.records import Failure

from .helpers import candidate


def codes(verdict) -> dict[str, bool]:
    """flag code -> blocking"""
    return {flag.code: flag.blocking for flag in verdict.flags}


def test_an_honest_candidate_raises_no_flag(relu_harness):
    verdict = relu_harness.evaluate(candidate("relu_scale_numpy"))
    assert verdict.correct, verdict.message
    assert verdict.flags == ()
    assert verdict.speedup("eager") is not None


def test_1_output_left_in_a_recycled_buffer_is_caught(relu_harness):
    verdict = relu_harness.evaluate(candidate("stale_output"))
    assert not verdict.correct
    assert codes(verdict)[F.STALE_OUTPUT] is True
    assert "poison the harness wrote into freed memory" in verdict.message


def test_2_work_finished_by_a_thread_after_return_is_caught(relu_harness):
    verdict = relu_harness.evaluate(candidate("thread_output"))
    assert verdict.failure is Failure.CHEAT, verdict.message
    assert codes(verdict)[F.ASYNC_OUTPUT] is True
    assert verdict.runtime is None and verdict.speedups == ()  # a cheat never counts as a speedup


def test_threads_the_first_call_leaves_waiting_are_not_mistaken_for_work_after_return(relu_harness):
    """A pool kept by the candidate (a compiler's) and a monitor asleep are neither a hang nor a cheat."""
    verdict = relu_harness.evaluate(candidate("pool_left_waiting"))
    assert verdict.correct, verdict.message
    assert codes(verdict) == {F.ASYNC_OUTPUT: False}  # from the source alone (it starts threads), which never blocks


def test_3_output_cached_by_shape_is_caught_in_verification(relu_harness):
    verdict = relu_harness.evaluate(candidate("cached_by_shape"))
    assert not verdict.correct
    assert codes(verdict)[F.CACHED_OUTPUT] is True


def test_3_output_cached_after_the_verifiers_calls_is_caught_while_timing(relu_harness):
    verdict = relu_harness.evaluate(candidate("cached_after_calls"))
    assert verdict.verify is not None and verdict.verify.correct  # it fooled verification ...
    assert verdict.failure is Failure.CHEAT  # ... but not the check of outputs produced while timing
    assert codes(verdict)[F.CACHED_OUTPUT] is True
    assert "timed run" in verdict.message
    # its last honest call was the operator trace, on the first trial's inputs: the answer it keeps returning
    assert "timed run 0's output is the answer for the inputs of trial seed 42" in verdict.message


def test_timed_outputs_outside_the_tolerance_on_a_few_elements_are_a_mismatch_not_a_cache(relu_harness):
    verdict = relu_harness.evaluate(candidate("drifts_while_timed"))
    assert verdict.verify is not None and verdict.verify.correct  # right in verification ...
    assert verdict.failure is Failure.MISMATCH, verdict.message  # ... off on a few elements of the timed calls
    assert F.CACHED_OUTPUT not in codes(verdict)
    assert "outside the tolerance on a few elements" in verdict.message and "timed run" in verdict.message
    assert verdict.runtime is None and verdict.speedups == ()


def test_4_a_constant_output_passing_a_loose_tolerance_is_caught(make_harness):
    harness = make_harness("tiny_output")
    verdict = harness.evaluate(candidate("constant_zeros"))
    assert all(t.passed for t in verdict.verify.trials)  # zeros are within tolerance of x * 1e-6 ...
    assert verdict.failure is Failure.CHEAT  # ... yet they do not depend on the input
    assert codes(verdict)[F.CONSTANT_OUTPUT] is True
    assert codes(verdict)[F.INSENSITIVE_PROBLEM] is False
    assert codes(verdict)[F.PRECISION_DOWNGRADE] is True  # zeros agree with x * 1e-6 to no bit at all
    honest = harness.evaluate(candidate("tiny_output_numpy"))
    assert honest.correct, honest.message  # the problem is flagged, an honest candidate is not
    assert codes(honest) == {F.INSENSITIVE_PROBLEM: False}


def test_5_the_reference_operators_doing_the_work_are_flagged_with_the_ops(relu_harness):
    verdict = relu_harness.evaluate(candidate("relu_scale_torch"))
    assert verdict.failure is Failure.CHEAT
    flag = next(f for f in verdict.flags if f.code == F.REFERENCE_CALL)
    assert flag.blocking
    assert "aten::relu x1" in flag.message and "aten::mul x1" in flag.message
    assert "source: relu_scale_torch.py: calls torch.relu (line 13)" in flag.message  # the static check


def test_5_calling_the_problems_model_is_flagged(relu_harness):
    verdict = relu_harness.evaluate(candidate("reference_model"))
    assert verdict.failure is Failure.CHEAT
    assert codes(verdict)[F.REFERENCE_CALL] is True
    assert "uses sys.modules" in next(f.message for f in verdict.flags if f.code == F.TAMPERING)


def test_5_report_policy_flags_without_rejecting(make_harness):
    harness = make_harness(cheat_policy="report")
    verdict = harness.evaluate(candidate("relu_scale_torch"))
    assert verdict.correct, verdict.message
    assert codes(verdict) == {F.REFERENCE_CALL: False}
    assert verdict.runtime is not None


@pytest.mark.parametrize("name, replaced", [
    ("patch_timer", "time.perf_counter"),
    ("patch_torch", "torch.allclose"),
    ("patch_harness", "kforge_core.harness.worker.compare.compare_outputs"),
])
def test_6_monkey_patching_timers_torch_or_the_harness_is_caught(relu_harness, name, replaced):
    verdict = relu_harness.evaluate(candidate(name))
    assert verdict.failure is Failure.CHEAT, verdict.message
    assert codes(verdict)[F.TAMPERING] is True
    assert verdict.message.startswith("rejected: tampering")
    assert replaced in verdict.message
    assert verdict.worker_replaced


def test_6_a_lazy_tensor_subclass_is_caught_before_it_can_run_code(relu_harness):
    verdict = relu_harness.evaluate(candidate("lazy_subclass"))
    assert verdict.failure is Failure.OUTPUT_TYPE
    assert codes(verdict)[F.TENSOR_SUBCLASS] is True


def test_7_a_float16_computation_of_a_float32_problem_is_caught(make_harness):
    # the tolerance is loose enough for float16 to pass the trials: the precision check still sees it
    harness = make_harness("linear_relu", tolerances={"float32": (5e-2, 5e-2)})
    verdict = harness.evaluate(candidate("precision_fp16"))
    assert all(t.passed for t in verdict.verify.trials)
    assert verdict.failure is Failure.CHEAT
    assert codes(verdict)[F.PRECISION_DOWNGRADE] is True
    honest = harness.evaluate(candidate("linear_relu_numpy"))
    assert honest.correct and honest.flags == ()
    assert any(note.startswith("precision: the output agrees with a float64 reference to 2")
               for note in honest.verify.notes)  # 20-something bits for float32 work


def test_7_precision_policy_report_only_flags(make_harness):
    harness = make_harness("linear_relu", tolerances={"float32": (5e-2, 5e-2)}, precision_policy="report")
    verdict = harness.evaluate(candidate("precision_fp16"))
    assert verdict.correct, verdict.message
    assert codes(verdict) == {F.PRECISION_DOWNGRADE: False}


def test_7_switching_tf32_on_is_caught(relu_harness):
    verdict = relu_harness.evaluate(candidate("precision_switch"))
    assert verdict.failure is Failure.CHEAT
    flag = next(f for f in verdict.flags if f.code == F.PRECISION_DOWNGRADE)
    assert "torch.backends.cuda.matmul.allow_tf32: False -> True" in flag.message


def test_a_candidate_that_mutates_its_input_is_flagged(relu_harness):
    verdict = relu_harness.evaluate(candidate("input_mutation"))
    assert verdict.failure is Failure.CHEAT
    assert "forward changed input(s) [0] in place" in verdict.message


def test_mutating_the_input_as_the_reference_does_is_not_flagged(make_harness):
    verdict = make_harness("square_inplace").evaluate(candidate("square_inplace_numpy"))
    assert verdict.correct, verdict.message
    assert verdict.flags == ()
