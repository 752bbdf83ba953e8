"""Shape variants through the whole harness: a candidate written for its problem's one shape is shape_specific
(not correct under harness.shapes = strict, correct with the flag under report), a variant the reference itself
cannot run at is dropped and never blamed on the candidate, a problem's declared variants are the ones run, and
--time-shapes gives the speedup at each shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge_core.harness import Harness
from kforge_core.harness.host.shape_timing import time_at_shapes
from kforge_core.problem import load_problem
from kforge_core.records import Failure

from .helpers import SELECTION, TORCH_CPU, candidate, problem, settings_for

SHAPE_PROBLEMS = Path(__file__).resolve().parents[1] / "core" / "shape_problems"


@pytest.fixture
def strict_harness(relu_harness):
    """The shared relu_scale harness: harness.shapes = strict, as by default."""
    assert relu_harness.settings.harness.shapes == "strict"
    return relu_harness


@pytest.fixture(scope="module")
def report_harness(cache_dir):
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), plugins=SELECTION,
                 settings=settings_for(cache_dir, spare_workers=0, shapes="report")) as harness:
        yield harness


def test_a_candidate_hard_coding_its_batch_is_not_correct_under_strict(strict_harness):
    verdict = strict_harness.evaluate(candidate("hard_coded_batch"), measure=False)
    assert verdict.failure is Failure.SHAPE
    assert verdict.message.startswith("shape_specific: wrong at shape variant half (tensor[128, 128] float32) "
                                      "(and wrong at 2 more variant(s)): output 0 has shape [256, 64]")
    [flag] = verdict.flags
    assert flag.code == "shape_specific" and flag.blocking
    assert "wrong at prime (tensor[251, 251] float32): forward raised" in flag.message
    assert [(o.variant, o.status) for o in verdict.verify.shapes.outcomes] == [
        ("half", "failed"), ("prime", "failed"), ("double", "failed")]
    assert all(t.passed for t in verdict.verify.trials)  # right at its own shape


def test_a_candidate_written_for_any_shape_holds_at_every_variant(strict_harness):
    verdict = strict_harness.evaluate(candidate("relu_scale_numpy"), measure=False)
    assert verdict.correct and not verdict.flags
    assert verdict.verify.message == "all 3 trials passed, held at 3 of 3 shape variants"
    assert {o.status for o in verdict.verify.shapes.outcomes} == {"held"}


def test_under_report_it_stays_correct_with_the_flag_naming_the_variant(report_harness):
    verdict = report_harness.evaluate(candidate("hard_coded_batch"), measure=False)
    assert verdict.correct
    [flag] = verdict.flags
    assert flag.code == "shape_specific" and not flag.blocking
    assert "wrong at half (tensor[128, 128] float32): output 0 has shape [256, 64], expected [128, 128]" in flag.message
    assert "shape_specific" in verdict.message  # what the agent hears names it too


def test_a_variant_the_reference_cannot_run_at_is_dropped_not_blamed(report_harness):
    report_harness.use_problem(load_problem(SHAPE_PROBLEMS / "gather.py"))
    verdict = report_harness.evaluate(candidate("gather_numpy"), measure=False)
    assert verdict.correct and not verdict.flags  # the candidate raises at half too, as the reference does
    outcomes = {o.variant: o for o in verdict.verify.shapes.outcomes}
    assert outcomes["half"].status == "dropped"
    assert outcomes["half"].message.startswith("the reference itself fails there (IndexError")
    assert outcomes["double"].status == "held"


def test_declared_variants_are_the_ones_run_and_time_shapes_gives_a_speedup_at_each(report_harness, tmp_path):
    report_harness.use_problem(load_problem(SHAPE_PROBLEMS / "declared.py"))
    tanh = candidate("tanh_plus_one_numpy")
    verdict = report_harness.evaluate(tanh)
    assert verdict.correct
    assert [(o.variant, o.status) for o in verdict.verify.shapes.outcomes] == [("decode", "held"), ("long", "held")]
    rows = time_at_shapes(report_harness, tanh, verdict, tmp_path)
    assert [(r.shape, r.inputs, r.weight) for r in rows] == [
        ("own", "tensor[4, 64] float32", 0.25), ("decode", "tensor[1, 64] float32", 0.75),
        ("long", "tensor[33, 64] float32", 0.0)]
    assert all(r.speedup is not None and r.runtime_ms and dict(r.baselines_ms)["eager"] > 0 for r in rows), rows
    assert report_harness.problem.name == "declared"  # back at the problem it was given
