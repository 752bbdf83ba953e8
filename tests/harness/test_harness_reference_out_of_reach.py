"""The reference out of reach: cheats that read or change the harness's memory find no answer in the candidate's
process, checked and timed calls cannot be told apart, the operator trace is not seen, and a candidate cannot
change the verdict of the next one."""

from __future__ import annotations

from kforge_core.harness import flags as F
from kforge_core.records import Failure

from .helpers import candidate


def codes(verdict) -> dict[str, bool]:
    return {flag.code: flag.blocking for flag in verdict.flags}


def test_walking_the_frames_up_to_the_trial_loop_finds_no_reference_output(relu_harness):
    verdict = relu_harness.evaluate(candidate("frame_walk"))
    assert not verdict.correct, verdict.message
    assert "stolen" not in verdict.stdout
    assert verdict.failure is Failure.SHAPE  # nothing found: it returned its empty fallback


def test_the_garbage_collectors_objects_hold_no_reference_output(relu_harness):
    verdict = relu_harness.evaluate(candidate("gc_reference"))
    assert not verdict.correct, verdict.message
    assert "stolen" not in verdict.stdout
    assert verdict.failure is Failure.SHAPE


def test_answering_only_the_calls_that_look_checked_is_caught_by_a_randomly_chosen_timed_run(relu_harness):
    verdict = relu_harness.evaluate(candidate("checked_only"))
    assert verdict.verify is not None and verdict.verify.correct  # every trial is answered ...
    assert verdict.failure is Failure.CHEAT, verdict.message  # ... but a timed run it did not expect to be checked
    assert codes(verdict)[F.CACHED_OUTPUT] is True
    assert "timed run" in verdict.message
    assert "is the answer for the inputs of" not in verdict.message  # a made-up output answers no other call


def test_pytorch_used_only_while_the_trace_is_not_seen_is_flagged(relu_harness):
    verdict = relu_harness.evaluate(candidate("trace_detect"))
    assert verdict.failure is Failure.CHEAT, verdict.message
    flag = next(f for f in verdict.flags if f.code == F.REFERENCE_CALL)
    assert "aten::relu x1" in flag.message and not flag.message.startswith("source:")


def test_a_candidate_cannot_poison_the_reference_for_the_next_one(relu_harness):
    harness = relu_harness  # warm workers, and one referee for both
    poisoner = harness.evaluate(candidate("poison_reference"))
    assert poisoner.failure is Failure.MISMATCH, poisoner.message  # its answer + 1.0 is wrong: nothing to poison
    honest = harness.evaluate(candidate("relu_scale_numpy"))
    assert honest.correct, honest.message


def test_a_persistent_output_buffer_passes_with_a_flag_that_says_what_it_is(relu_harness):
    verdict = relu_harness.evaluate(candidate("persistent_buffer"))
    assert verdict.correct, verdict.message  # each output is judged as it was when its call returned
    assert codes(verdict) == {F.PERSISTENT_OUTPUT: False}
    assert "aliases state the candidate keeps, and the next call overwrites it" in verdict.message
