"""The projected gain (Amdahl over a phase's device time) and the causes named when the measured gain is apart
from it by more than the measurement's spread."""

from __future__ import annotations

import pytest

from kforge_core.hotspots.projection import project, projection_lines


def document(busy: float = 1.0) -> dict:
    return {"phases": {"prefill": {"weight": 0.2, "device_busy": busy}, "decode": {"weight": 0.8, "device_busy": busy}},
            "groups": [
                {"phase": "prefill", "class": "RMSNorm", "share": 0.2, "shapes": "x bfloat16[1, 512, 64]"},
                {"phase": "prefill", "class": "MLP", "share": 0.5, "shapes": "x bfloat16[1, 512, 64]"},
                {"phase": "decode", "class": "RMSNorm", "share": 0.1, "shapes": "x bfloat16[1, 1, 64]"},
                {"phase": "decode", "class": "Attention", "share": 0.6, "shapes": "x bfloat16[1, 1, 64]"}]}


def report(measured: dict, alone: dict, in_model: dict, spread: float = 0.005, accepted: float = 2.0) -> dict:
    return {"layers": [{"layer_class": "RMSNorm", "kernel": "rmsnorm"}, {"layer_class": "MLP", "kernel": "mlp"}],
            "kernels": {"rmsnorm": {"accepted_speedup": accepted}, "mlp": {"accepted_speedup": None}},
            "end_to_end": {"speedups": {"forward": 1.0, **measured},
                           "untouched": {"prefill_spread": spread, "decode_spread": spread},
                           "with_kernels": {"prefill_spread": 0.0, "decode_spread": 0.0}},
            "phases": {phase: {name: {"alone": {"speedup": alone[phase][name]},
                                      "in_model": {"speedup": in_model[phase][name]}}
                               for name in alone[phase]} for phase in alone}}


def test_amdahl_over_the_swapped_classes_shares() -> None:
    alone = {"prefill": {"RMSNorm": 2.0, "MLP": 1.25}, "decode": {"RMSNorm": 2.0}}
    projection = project(document(), report({"prefill": 1.255, "decode": 1.0526}, alone, alone))
    prefill = projection["prefill"]
    assert prefill["projected"] == pytest.approx(1 / (1 - 0.2 * 0.5 - 0.5 * 0.2))  # 1.25x
    assert prefill["by_kernel"] == pytest.approx({"rmsnorm": 1 / 0.9, "mlp": 1 / 0.9})
    assert projection["decode"]["projected"] == pytest.approx(1 / 0.95)
    assert prefill["explained_by"] == []  # 0.4% from the projection: within the 1% floor
    assert set(projection) == {"prefill", "decode"}
    assert any("projected 1.250x" in line for line in projection_lines(projection))


def test_a_gap_is_explained_by_what_was_measured() -> None:
    alone = {"prefill": {"RMSNorm": 2.0, "MLP": 1.25}, "decode": {"RMSNorm": 1.2}}
    inside = {"prefill": {"RMSNorm": 1.1, "MLP": 1.25}, "decode": {"RMSNorm": 1.2}}
    projection = project(document(busy=0.5), report({"prefill": 1.05, "decode": 1.0}, alone, inside))
    reasons = "\n".join(projection["prefill"]["explained_by"])
    assert "launch gaps: the kernels kept the device busy 50% of the measured prefill step" in reasons
    assert "rmsnorm is slower inside the model: 2.00x alone at the prefill shape, 1.10x" in reasons
    decode = "\n".join(projection["decode"]["explained_by"])
    assert "rmsnorm at a shape it was not tuned for: 2.00x on its problem when accepted, 1.20x at the decode shape" \
        in decode


def test_no_cause_found_is_said_and_no_gap_within_the_spread() -> None:
    alone = {"prefill": {"RMSNorm": 2.0, "MLP": 1.25}, "decode": {"RMSNorm": 2.0}}
    projection = project(document(), report({"prefill": 1.10, "decode": 1.0526}, alone, alone, accepted=1.0))
    assert projection["prefill"]["explained_by"] == [
        "none of the causes measured here (launch gaps, a kernel slower inside the model, a shape it was not tuned "
        "for) accounts for it"]
    wide = project(document(), report({"prefill": 1.10, "decode": 1.0526}, alone, alone, spread=0.5))
    assert wide["prefill"]["explained_by"] == []


def test_a_gain_above_the_projection_on_a_host_bound_model_names_host_time() -> None:
    alone = {"prefill": {"RMSNorm": 2.0, "MLP": 1.25}, "decode": {"RMSNorm": 2.0}}
    projection = project(document(busy=0.3), report({"prefill": 1.4, "decode": 1.2}, alone, alone))
    assert projection["decode"]["explained_by"][0].startswith(
        "host time: the kernels kept the device busy 30% of the measured decode step")
