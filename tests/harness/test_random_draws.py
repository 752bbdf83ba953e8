"""A problem whose forward draws random numbers (dropout in training mode, KernelBench's
``66_Matmul_Dropout_Softmax``): its own code as the candidate draws what the reference draws for the same inputs, in
verification and in every timed call, and is judged correct."""

from __future__ import annotations

from kforge_core.harness import flags as F

from .helpers import candidate


def test_the_reference_drawing_random_numbers_is_correct_as_its_own_candidate_in_every_timed_call(make_harness):
    # a timed call's inputs are a clone of a set made earlier: the generator was not where the referee's was when it
    # made the same set and called the reference on it, and dropout drew another mask (a cached_output cheat)
    harness = make_harness("dropout_scale", cheat_policy="report", repetitions=8)
    verdict = harness.evaluate(candidate("dropout_scale_same"))
    codes = [flag.code for flag in verdict.flags]
    assert verdict.correct and verdict.runtime is not None, verdict.message
    assert F.CACHED_OUTPUT not in codes, verdict.message


def test_the_generators_put_back_draw_again_what_they_drew_after_the_set_was_made():
    import torch

    from kforge_core.harness.worker.random_state import GeneratorStates

    torch.manual_seed(7)
    states = GeneratorStates.now(torch.device("cpu"))
    first = torch.rand(4)
    torch.rand(100)  # the generator moves on, as it does between a set's making and a run's clone of it
    states.restore()
    assert torch.equal(torch.rand(4), first)
