"""A problem's shape variants: declared ones used as declared, derived ones for the sizes the reference leaves free
(and the sizes left fixed, each with why), their inputs made alike in every process from a seed, and what people
and the generation agent read of them. Nothing here starts a worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from kforge_core.agents import GenerationAgent, GenerationRequest, PrecisionTerms
from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.harness.shape_findings import merged_check, shape_findings
from kforge_core.harness.verdict import ShapeTiming, weighted_speedup
from kforge_core.harness.worker.reference import seeded_inputs
from kforge_core.precision_contract import CONTRACTS
from kforge_core.problem import ProblemError, import_problem_module, load_problem
from kforge_core.prompts import PromptTemplates
from kforge_core.records import Candidate, Example, Failure, Flag, Lowering, ShapeCheck, SourceFile, VariantOutcome
from kforge_core.settings import HarnessSettings
from kforge_core.shapes.problem_file import variant_problem_file
from kforge_core.store.attempts import Outcome

HERE = Path(__file__).resolve().parent / "shape_problems"
CPU = torch.device("cpu")


def problem(name: str):
    return load_problem(HERE / f"{name}.py")


def shapes_of(plan) -> dict[str, tuple[int, ...]]:
    return {v.name: v.inputs[0].shape for v in plan.variants}


def test_every_size_of_an_elementwise_problem_is_free_and_varied():
    plan = problem("elementwise").shapes
    assert plan.source == "derived" and not plan.fixed
    assert shapes_of(plan) == {"half": (8, 512), "prime": (13, 1021), "double": (32, 2048)}
    assert all(v.outputs[0].shape == v.inputs[0].shape for v in plan.variants)  # checked by running the reference
    assert "16 -> 8 (x dim 0), 1024 -> 512 (x dim 1)" in plan.variant("half").why
    assert "checked by running the reference at it on meta tensors" in plan.notes[-1]


def test_a_linear_layer_pins_the_last_size_which_stays_fixed_with_the_reason():
    plan = problem("linear").shapes
    assert shapes_of(plan) == {"half": (16, 96), "prime": (31, 96), "double": (64, 96)}
    [fixed] = plan.fixed
    assert fixed.size == 96 and fixed.where == ("x dim 1",)
    for said in ("the reference fails when it changes", "__init__ argument 0 is 96", "linear.weight [48, 96]"):
        assert said in fixed.reason


def test_a_size_the_output_does_not_follow_stays_fixed():
    plan = problem("constant_batch").shapes
    [fixed] = plan.fixed
    assert fixed.size == 8 and "does not follow" in fixed.reason
    assert all(v.inputs[0].shape[0] == 8 for v in plan.variants) and len(plan.variants) == 3


def test_equal_sizes_change_together_and_a_doubled_variant_past_the_problems_memory_is_dropped(tmp_path):
    path = tmp_path / "square_add.py"
    path.write_text("import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                    "    def forward(self, a, b):\n        return a @ b\n\n"
                    "def get_inputs():\n    return [torch.randn(4096, 4096), torch.randn(4096, 4096)]\n\n"
                    "def get_init_inputs():\n    return []\n")
    plan = load_problem(path).shapes
    assert [(v.name, [s.shape for s in v.inputs]) for v in plan.variants] == [
        ("half", [(2048, 2048), (2048, 2048)]), ("prime", [(4093, 4093), (4093, 4093)])]
    assert any("no double variant" in n and "more than the problem's own 192.0 MiB" in n for n in plan.notes)


def test_declared_variants_are_used_as_declared_with_their_weights():
    plan = problem("declared").shapes
    assert plan.source == "declared" and not plan.fixed
    assert shapes_of(plan) == {"decode": (1, 64), "long": (33, 64)}
    assert plan.variant("decode").weight == 0.75 and plan.variant("long").weight == 0 and plan.own_weight == 0.25
    assert plan.variant("long").outputs[0].shape == (33, 64)


def test_a_declared_variant_the_reference_cannot_run_at_is_the_problems_mistake(tmp_path):
    path = tmp_path / "bad_variant.py"
    path.write_text((HERE / "linear.py").read_text() + "\n\ndef get_input_variants():\n"
                    "    return [[torch.randn(8, 95)]]\n")
    with pytest.raises(ProblemError, match=r"raised RuntimeError.*at get_input_variants\(\) variant 'declared 0'"):
        load_problem(path)


def test_declaring_no_variant_leaves_the_problem_at_its_own_shape(tmp_path):
    path = tmp_path / "fixed_size.py"
    path.write_text((HERE / "elementwise.py").read_text() + "\n\ndef get_input_variants():\n    return []\n")
    plan = load_problem(path).shapes
    assert plan.source == "declared" and plan.variants == () and plan.fixed == ()


def test_variant_inputs_are_cut_or_grown_from_seeded_draws_of_get_inputs():
    plan = problem("elementwise").shapes
    module = import_problem_module(HERE / "elementwise.py")
    own = seeded_inputs(module, 7, CPU)[0]
    assert torch.equal(seeded_inputs(module, 7, CPU, plan.variant("half"))[0], own[:8, :512])
    big = seeded_inputs(module, 7, CPU, plan.variant("double"))[0]
    assert big.shape == (32, 2048) and torch.equal(big[:16, :1024], own)
    assert not torch.equal(big[16:, :1024], own)  # a block of its own draw, not a repeat
    assert torch.equal(seeded_inputs(module, 7, CPU, plan.variant("double"))[0], big)  # the seed decides it all


def test_a_variant_written_as_a_problem_file_is_that_problem_at_that_shape(tmp_path):
    original = problem("elementwise")
    at = load_problem(variant_problem_file(original, original.shapes.variant("prime"), tmp_path))
    assert [s.shape for s in at.inputs] == [(13, 1021)] and at.shapes.variants == ()
    assert at.digest != original.digest and at.name == "elementwise@prime"


def test_kforge_check_says_which_variants_were_derived_and_why():
    runner = CliRunner()
    shown = runner.invoke(cli, ["check", str(HERE / "linear.py")], obj=App())
    assert shown.exit_code == 0, shown.output
    for said in ("shape variants: derived by KForge", "half (tensor[16, 96] float32): every free size halved: "
                 "32 -> 16 (x dim 0)", "left fixed: 96 (x dim 1): the reference fails when it changes"):
        assert said in shown.output
    document = json.loads(runner.invoke(cli, ["check", "--json", str(HERE / "linear.py")], obj=App()).output)
    assert [v["name"] for v in document["shapes"]["variants"]] == ["half", "prime", "double"]
    assert document["shapes"]["fixed"][0]["where"] == ["x dim 1"]


LOWERING = Lowering(backend="cpu", programming_model="Numba", hardware="2 cores",
                    example=Example(problem="EXAMPLE", solution="SOLUTION"))
FP32 = PrecisionTerms(CONTRACTS["fp32"], (("float32", 1e-4, 1e-4),))


def test_the_generation_prompt_names_the_shapes_the_kernel_must_hold_at():
    request = GenerationRequest("functional", 0, 1)
    user = GenerationAgent(PromptTemplates(), problem("linear"), LOWERING, precision=FP32).prompt(request).user
    assert "checked at these inputs too: half (tensor[16, 96] float32); prime (tensor[31, 96] float32); double " \
           "(tensor[64, 96] float32)" in user
    assert "never hard-code them" in user and "Sizes the model fixes (they do not change): 96 (x dim 1)" in user
    off = GenerationAgent(PromptTemplates(), problem("linear"), LOWERING, precision=FP32, check_shapes=False)
    assert "checked at these inputs too" not in off.prompt(request).user


def _check(policy: str) -> ShapeCheck:
    plan = problem("linear").shapes
    return ShapeCheck(policy, plan, (
        VariantOutcome("half", "held"),
        VariantOutcome("prime", "failed", Failure.MISMATCH, "output 0: 31 of 1488 elements outside tolerance"),
        VariantOutcome("double", "dropped", message="the reference itself fails there (RuntimeError: ...)")))


def test_a_wrong_variant_fails_the_candidate_under_strict_and_only_flags_it_under_report():
    flag, failure, message = shape_findings(_check("strict"), HarnessSettings(shapes="strict"))
    assert flag.code == "shape_specific" and flag.blocking and failure is Failure.MISMATCH
    assert message.startswith("shape_specific: wrong at shape variant prime (tensor[31, 96] float32): output 0: 31")
    assert "double" not in flag.message  # dropped: never the candidate's failure
    flag, failure, message = shape_findings(_check("report"), HarnessSettings(shapes="report"))
    assert not flag.blocking and failure is None and message == ""


def test_the_worker_can_make_a_variant_worse_never_better():
    referee = ShapeCheck("strict", problem("linear").shapes, (
        VariantOutcome("half", "held"), VariantOutcome("prime", "not_run"), VariantOutcome("double", "dropped")))
    worker = ShapeCheck("strict", referee.plan, (
        VariantOutcome("half", "failed", Failure.RUNTIME, "forward raised"),  # the referee judged it: held stands
        VariantOutcome("prime", "failed", Failure.RUNTIME, "forward raised: IndexError"),
        VariantOutcome("double", "failed", Failure.RUNTIME, "forward raised")))  # dropped stays dropped
    assert [(o.variant, o.status) for o in merged_check(referee, worker).outcomes] == [
        ("half", "held"), ("prime", "failed"), ("double", "dropped")]


def test_a_shape_failure_is_fed_back_like_any_other_naming_the_variant():
    message = ("shape_specific: wrong at shape variant half (tensor[16, 96] float32): output 0 has shape [32, 48], "
               "expected [16, 48]")
    outcome = Outcome("f2", "0" * 16, True, False, "shape_mismatch", message,
                      flags=(Flag("shape_specific", "correct at the problem's own shape, wrong at half ...", True),))
    feedback = outcome.feedback(Candidate((SourceFile("model_new.py", "class ModelNew: pass"),)))
    assert feedback.headline == "It compiled but failed verification (shape_mismatch)."
    assert "shape variant half (tensor[16, 96] float32)" in feedback.message


def test_the_weighted_speedup_weighs_the_time_each_shape_takes():
    timings = [ShapeTiming("own", "", 1, 1.0, speedup=2.0, weight=0.25),
               ShapeTiming("decode", "", 1, 1.0, speedup=0.5, weight=0.75), ShapeTiming("long", "", 1, 1.0, 3.0)]
    assert weighted_speedup(timings) == pytest.approx(1.0 / (0.25 / 2.0 + 0.75 / 0.5))
    assert weighted_speedup(timings[2:]) is None


def test_kforge_eval_prints_the_speedup_per_shape():
    from dataclasses import replace

    from rich.console import Console

    from kforge_core.commands.eval import print_verdict
    from kforge_core.harness.host.verdict_parts import unparsed_verdict
    from kforge_core.records import Backend

    verdict = unparsed_verdict(Candidate((SourceFile("model_new.py", "x ="),)), "SyntaxError",
                               backend=Backend("cpu", "Numba", "cpu"), problem="declared", contract="fp32")
    verdict = replace(verdict, shape_timings=(
        ShapeTiming("own", "tensor[4, 64] float32", 256, 0.02, (("eager", 0.04),), 2.0, 0.25),
        ShapeTiming("decode", "tensor[1, 64] float32", 64, 0.02, (("eager", 0.01),), 0.5, 0.75)))
    console = Console(record=True, width=160)
    print_verdict(console, verdict, None)
    text = console.export_text()
    assert "speedup per shape (wall time, against the faster baseline there)" in text
    assert "decode" in text and "0.50x" in text and "2.00x" in text
    assert "weighted by the passes served at each shape: 0.62x" in text


def test_the_verdict_document_keeps_the_shape_check_and_the_timings_exactly():
    from dataclasses import replace

    from kforge_core.harness import Verdict
    from kforge_core.harness.host.verdict_parts import unparsed_verdict
    from kforge_core.records import Backend, VerifyResult

    verdict = replace(unparsed_verdict(Candidate((SourceFile("model_new.py", "x ="),)), "SyntaxError",
                                       backend=Backend("cpu", "Numba", "cpu"), problem="linear", contract="fp32"),
                      verify=VerifyResult(correct=True, shapes=_check("report")),
                      shape_timings=(ShapeTiming("own", "tensor[32, 96] float32", 3072, 0.5, (("eager", 1.0),), 2.0),))
    document = json.loads(json.dumps(verdict.to_json()))
    assert document["shapes"]["plan"]["variants"][0]["name"] == "half"
    assert document["shapes"]["outcomes"][2] == {"variant": "double", "status": "dropped", "failure": None,
                                                 "message": "the reference itself fails there (RuntimeError: ...)"}
    assert Verdict.from_json(document) == verdict


def test_a_transposed_convolution_pins_its_input_channels_though_meta_tensors_let_them_change():
    """On meta tensors a transposed convolution takes any channel count; the probe checks what a device would, so
    the channels stay fixed, named with the weight, and only batch and image sizes vary."""
    plan = problem("conv_transpose").shapes
    [fixed] = plan.fixed
    assert fixed.size == 8 and fixed.where == ("x dim 1",)
    assert "the reference fails when it changes" in fixed.reason and "to have 8 channels" in fixed.reason
    assert shapes_of(plan) == {"half": (2, 8, 8, 8), "prime": (3, 8, 13, 13), "double": (8, 8, 32, 32)}
    assert all(v.outputs[0].shape[1] == 6 for v in plan.variants)
