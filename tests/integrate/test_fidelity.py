"""The whole-model check of a reduced-precision model: when the tolerances fail, the swapped model is within the
contract if it is as close to a float32 run of the untouched model as the untouched model itself."""

from __future__ import annotations

import torch

from kforge_core.integrate.worker.compare import Comparison
from kforge_core.integrate.worker.fidelity import FIDELITY_FACTOR, Reference, distance, judge, reference_run

FAILED = Comparison(False, "output 0: 900 of 1000 values outside atol=0.02, rtol=0.02 (max abs error 0.07)", 0.07)
PASSED = Comparison(True, "max abs error 0.01", 0.01)


def _runs(swapped_scale: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A float32 answer, an untouched output off it by noise of size 0.01, and a swapped output off it by
    independent noise ``swapped_scale`` times that size."""
    generator = torch.Generator().manual_seed(0)
    exact = torch.randn(1000, generator=generator)
    untouched = exact + 0.01 * torch.randn(1000, generator=generator)
    swapped = exact + swapped_scale * 0.01 * torch.randn(1000, generator=generator)
    return exact, untouched, swapped


def test_a_swapped_model_as_far_from_float32_as_the_untouched_one_is_within() -> None:
    exact, untouched, swapped = _runs(1.0)
    outputs = judge(FAILED, [swapped], [untouched], Reference("float32", [exact]))
    assert outputs["within_contract"] is True
    assert outputs["rule"] == "fidelity to the float32 run"
    assert outputs["reference"] == "float32 run of the untouched model"
    assert outputs["message"].startswith("as close to the float32 run as the untouched model")
    assert FAILED.message in outputs["message"] and outputs["max_abs_error"] == 0.07
    assert abs(outputs["untouched_error"][0]["relative_rms"] - 0.01) < 0.002
    assert outputs["swapped_error"][0]["output"] == 0


def test_a_swapped_model_ten_times_farther_is_not_within() -> None:
    exact, untouched, swapped = _runs(10.0)
    outputs = judge(FAILED, [swapped], [untouched], Reference("float32", [exact]))
    assert outputs["within_contract"] is False and outputs["rule"] == "fidelity to the float32 run"
    assert outputs["message"].startswith("output 0 is ")
    assert f"x as far from the float32 run as the untouched model's, more than the {FIDELITY_FACTOR:g}x" in outputs["message"]
    assert outputs["swapped_error"][0]["relative_rms"] > 5 * outputs["untouched_error"][0]["relative_rms"]


def test_one_wrong_value_is_caught_by_the_max_abs_error() -> None:
    """A kernel wrong in one place barely moves the relative RMS error; the max abs error shows it."""
    exact, untouched, _ = _runs(1.0)
    swapped = untouched.clone()
    swapped[123] += 0.2
    outputs = judge(FAILED, [swapped], [untouched], Reference("float32", [exact]))
    assert outputs["within_contract"] is False
    assert outputs["swapped_error"][0]["relative_rms"] < FIDELITY_FACTOR * outputs["untouched_error"][0]["relative_rms"]


def test_passing_tolerances_decide_and_the_distances_are_still_reported() -> None:
    exact, untouched, swapped = _runs(10.0)
    outputs = judge(PASSED, [swapped], [untouched], Reference("float32", [exact]))
    assert outputs["within_contract"] is True and outputs["rule"] == "tolerances"
    assert outputs["message"] == PASSED.message and len(outputs["swapped_error"]) == 1


def test_non_finite_where_float32_is_finite_is_not_within() -> None:
    exact, untouched, swapped = _runs(1.0)
    swapped[0] = float("nan")
    assert distance(swapped, exact).relative_rms == float("inf")
    outputs = judge(FAILED, [swapped], [untouched], Reference("float32", [exact]))
    assert outputs["within_contract"] is False and outputs["swapped_error"][0]["relative_rms"] is None

    outputs = judge(FAILED, [untouched], [swapped], Reference("float32", [exact]))  # the untouched one overflowed
    assert outputs["within_contract"] is False
    assert "output 0 of the untouched model is not finite where the float32 run is" in outputs["message"]


class _Bfloat16Only(torch.nn.Module):
    """Multiplies by a bfloat16 matrix it makes in forward: it does not run once cast to float32."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ torch.ones(4, 4, dtype=torch.bfloat16)


def test_a_model_that_does_not_run_in_float32_falls_back_to_the_tolerances() -> None:
    reference = reference_run(_Bfloat16Only(), (torch.ones(2, 4, dtype=torch.bfloat16),), "bfloat16")
    assert reference is not None and reference.outputs is None and "RuntimeError" in reference.why_not
    outputs = judge(FAILED, [torch.ones(2, 4)], [torch.ones(2, 4)], reference)
    assert outputs["within_contract"] is False and outputs["rule"] == "tolerances"
    assert outputs["message"].startswith(FAILED.message)
    assert "no float32 reference to weigh it against (RuntimeError" in outputs["message"]


def test_float32_models_keep_the_tolerances_alone() -> None:
    model = torch.nn.Linear(4, 4)
    assert reference_run(model, (torch.ones(2, 4),), "float32") is None
    outputs = judge(PASSED, [torch.ones(2)], [torch.ones(2)], None)
    assert outputs["reference"] is None and outputs["rule"] == "tolerances" and outputs["untouched_error"] == []


class _Recorder(torch.nn.Linear):
    """A linear layer that notes the float32 matmul precision it ran under."""

    seen: list[str] = []  # on the class: the float32 copy runs, not this module

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen.append(torch.get_float32_matmul_precision())
        return super().forward(x)


def test_the_reference_runs_in_full_float32_whatever_a_kernel_package_set() -> None:
    model = _Recorder(4, 4).to(torch.bfloat16)
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium")  # as a package's import may have
    try:
        reference = reference_run(model, (torch.ones(2, 4, dtype=torch.bfloat16),), "bfloat16")
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        torch.set_float32_matmul_precision(before)
    assert _Recorder.seen == ["highest"] and reference is not None
    assert reference.outputs[0].dtype == torch.float32 and model.weight.dtype == torch.bfloat16


class _SwigluMlp(torch.nn.Module):
    def __init__(self, hidden: int, inner: int) -> None:
        super().__init__()
        self.gate = torch.nn.Linear(hidden, inner, bias=False)
        self.up = torch.nn.Linear(hidden, inner, bias=False)
        self.down = torch.nn.Linear(inner, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


def test_a_layer_that_rounds_once_where_the_module_rounds_at_each_step_matches_it() -> None:
    """A fused bfloat16 MLP (float32 inside, one rounding of its product) misses atol/rtol 0.02 on a few outputs of
    the module's own bfloat16 run; it is as close to the module's float32 run as the module, so it matches. The same
    kernel without the SiLU does not."""
    from kforge_core.integrate.worker.compare import compare
    from kforge_core.integrate.worker.swap import Captured, layer_agreement

    torch.manual_seed(0)
    module = _SwigluMlp(1024, 4096).to(torch.bfloat16)
    x = torch.randn(4, 1024, dtype=torch.bfloat16) * 4
    with torch.no_grad():
        expected = module(x)
        gate, up = (x.float() @ layer.weight.float().T for layer in (module.gate, module.up))
        down = module.down.weight.float().T
        fused = ((torch.nn.functional.silu(gate) * up).bfloat16().float() @ down).bfloat16()
        wrong = ((gate * up).bfloat16().float() @ down).bfloat16()
    tolerances = {"bfloat16": (0.02, 0.02)}
    assert not compare(fused, expected, tolerances).matches  # the tolerances alone would turn it away
    captured = Captured("mlp", module, (x,), {})
    assert layer_agreement(captured, fused, expected, tolerances) == ""
    why = layer_agreement(captured, wrong, expected, tolerances)
    assert why.startswith("outputs differ: output 0 is ") and "as far from the float32 run" in why


def test_the_float32_run_of_a_layer_casts_its_keyword_arguments_inside_tuples() -> None:
    class Rotate(torch.nn.Module):
        def forward(self, x: torch.Tensor, position_embeddings: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
            cos, sin = position_embeddings
            return x * cos + x * sin

    x = torch.randn(3, 4, dtype=torch.bfloat16)
    embeddings = (torch.rand(3, 4, dtype=torch.bfloat16), torch.rand(3, 4, dtype=torch.bfloat16))
    reference = reference_run(Rotate(), (x,), "bfloat16", {"position_embeddings": embeddings})
    assert reference is not None and reference.outputs is not None, reference
    assert reference.outputs[0].dtype == torch.float32
    assert torch.allclose(reference.outputs[0], x.float() * embeddings[0].float() + x.float() * embeddings[1].float())
