"""kforge integrate: layers matched by behaviour or by mapping, the report of what did not match, and the command
end to end (export, then integrate in its worker process, --json)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.export import prepare, write_package
from kforge_core.integrate.host import kernel_packages
from kforge_core.integrate.report import report_lines
from kforge_core.integrate.request import IntegrateRequest, Mapping
from kforge_core.integrate.worker.run import integrate

from .conftest import REPO, RUN_ID, accepted, device_of

pytest.importorskip("kernels")
MODEL = "tests.integrate.small_model:build_model"  # imported from the repository root, the worker's cwd
FAST = ("--warmup", "0", "--repetitions", "1")


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory, runs_dir: Path) -> tuple:
    """An exported package (LayerNorm, GELU, softmax) and the run's kernel (RMSNorm) taken as it is."""
    home = tmp_path_factory.mktemp("integrate")
    exported, refused = prepare([accepted("norm/1_layernorm"), accepted("elementwise/2_gelu"),
                                 accepted("reduction/5_softmax")], device_of)
    write_package(home / "pkg", "kforge-parts", exported, refused)
    return kernel_packages([str(home / "pkg"), RUN_ID], runs_dir, home, device_of)


def request(packages: tuple, mappings: tuple[Mapping, ...] = ()) -> IntegrateRequest:
    return IntegrateRequest(
        model=MODEL, packages=packages, mappings=mappings, backend="cpu",
        programming_model="PyTorch", device="cpu", device_class="", precision="fp32",
        tolerances=(("float32", 1e-4, 1e-4),), warmup=0, repetitions=1, workdir=str(REPO))


def test_kernels_go_where_they_compute_what_the_layer_computes(packages: tuple) -> None:
    report = integrate(request(packages))
    changed = {layer["layer_class"]: layer["kernel"] for layer in report["layers"]}
    assert changed == {"LayerNorm": "layernorm", "GELU": "gelu", "RowSoftmax": "softmax", "RMSNorm": "rmsnorm"}
    assert {layer["kernel"]: layer["modules"] for layer in report["layers"]}["softmax"] == ["attention.softmax"]
    assert report["kernels"]["layernorm"]["loaded_with"] == "kernels.get_local_kernel"
    assert report["outputs"]["within_contract"] is True and report["not_matched"] == []
    assert set(report["end_to_end"]["speedups"]) == {"forward"}


def test_mapping_misses_are_reported_with_their_reason(packages: tuple) -> None:
    report = integrate(request(packages, (
        Mapping("RowSoftmax", "gelu"), Mapping("GELU", "rmsnorm"), Mapping("Nope", "gelu"),
        Mapping("GELU", "missing"), Mapping("LayerNorm", "layernorm"))))
    assert [layer["layer_class"] for layer in report["layers"]] == ["LayerNorm"]
    why = {(m["layer"], m["kernel"]): m["why"] for m in report["not_matched"]}
    assert why[("RowSoftmax", "gelu")].startswith("outputs differ: output 0:")
    assert "GELU has no attribute for ModelNew's weight (parameter)" in why[("GELU", "rmsnorm")]
    assert why[("Nope", "gelu")] == "no module of class Nope ran in the model's forward"
    assert why[("GELU", "missing")].startswith("no kernel 'missing'")


def test_export_then_integrate_json(runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    out = tmp_path / "pkg"
    exported = CliRunner().invoke(cli, ["export", str(runs_dir / RUN_ID), "--out", str(out), "--json"], obj=App())
    assert exported.exit_code == 0, exported.output
    summary = json.loads(exported.output)
    assert summary["variant"] == "torch-universal" and summary["package"] == "kforge_2_rmsnorm"
    assert summary["kernels"][0]["best_speedup"] == 1.25
    result = CliRunner().invoke(cli, ["integrate", MODEL, "--kernels", str(out), "--map",
                                      "RMSNorm=rmsnorm", "--backend", "cpu", *FAST, "--json"], obj=App())
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["layers"][0]["modules"] == ["norm2"] and report["outputs"]["within_contract"] is True
    assert report["timing_method"]["repetitions"] == 1
    assert report["outputs"]["rule"] == "tolerances" and report["outputs"]["reference"] is None  # a float32 model


def test_a_hugging_face_causal_lm_from_its_config(packages: tuple, tmp_path: Path) -> None:
    """A Llama built from a config with random weights: LlamaRMSNorm takes the RMSNorm kernel (its epsilon is
    variance_epsilon), and prefill and decode are timed."""
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=1, vocab_size=64)
    config.save_pretrained(tmp_path)
    spec = IntegrateRequest(**{**request(packages).__dict__, "model": str(tmp_path), "prompt_tokens": 8,
                               "decode_tokens": 2})
    report = integrate(spec)
    changed = {layer["layer_class"]: layer["kernel"] for layer in report["layers"]}
    assert changed["LlamaRMSNorm"] == "rmsnorm" and report["outputs"]["within_contract"] is True
    assert set(report["end_to_end"]["speedups"]) == {"forward", "prefill", "decode"}
    assert "random weights" in report["model"]


def test_a_bfloat16_model_is_weighed_against_a_float32_run_of_the_untouched_model(packages: tuple) -> None:
    """The report carries both models' distance from a float32 run; the untouched one's is that of the model
    the factory builds, cast to bfloat16, from the same model in float32 (the copy is made before the swap)."""
    from tests.integrate.small_model import build_model

    spec = IntegrateRequest(**{**request(packages).__dict__, "dtype": "bfloat16", "precision": "bf16",
                               "tolerances": (("bfloat16", 2e-2, 2e-2),)})
    report = integrate(spec)
    outputs = report["outputs"]
    assert outputs["reference"] == "float32 run of the untouched model" and outputs["rule"] == "tolerances"
    assert outputs["within_contract"] is True and len(outputs["swapped_error"]) == 1
    model, (x,) = build_model()
    model, x = model.to(torch.bfloat16), x.to(torch.bfloat16)
    with torch.no_grad():
        untouched, exact = model(x), copy.deepcopy(model).float()(x.float())
    relative = float((untouched.double() - exact.double()).norm() / exact.double().norm())
    assert outputs["untouched_error"][0]["relative_rms"] == pytest.approx(relative, rel=1e-12)
    assert outputs["swapped_error"][0]["relative_rms"] > 0
    lines = report_lines(report)
    verdict = next(i for i, line in enumerate(lines) if line.startswith("Whole model outputs: within the bf16"))
    assert lines[verdict + 1].startswith("  decided by: tolerances; distance from the float32 run of the untouched")
    assert lines[verdict + 2].startswith(f"    output 0: relative RMS error {relative:.3g} -> ")
