"""kforge hotspots end to end on the CPU: a tiny Llama from a transformers config, profiled phase by phase, its hot
groups extracted as problems that pass kforge check and compute what the modules computed on the inputs captured
from the model's forward; a model of the user's own classes, whose unextractable modules each get one line why;
and the failures that stop the command, each a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.problem import import_problem_module, load_problem

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow
transformers = pytest.importorskip("transformers")
FAST = ("--backend", "cpu", "--profile-steps", "1", "--warmup", "1", "--repetitions", "1")


def hotspots(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["hotspots", *args], obj=App())
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """The report and the extraction folder of a 2-layer Llama (hidden 64), prompt 8, batch 2, 2 decode steps."""
    home = tmp_path_factory.mktemp("hotspots")
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=256)
    config.save_pretrained(home / "llama")
    code, output = hotspots(str(home / "llama"), *FAST, "--prompt-tokens", "8", "--batch", "2", "--decode-tokens",
                            "2", "--min-share", "0", "--extract", str(home / "problems"), "--save-inputs", "--json")
    assert code == 0, output
    return json.loads(output), home / "problems"


def test_the_table_ranks_groups_by_phase_with_shares_and_ceilings(tiny_llama: tuple[dict, Path]) -> None:
    report, _ = tiny_llama
    assert list(report["phases"]) == ["prefill", "decode"]
    for figures in report["phases"].values():  # the step profiled alone, and in the attribution's session
        assert figures["profiled_step_ms"] > 0 and figures["attributed_step_ms"] > 0
        assert figures["profiler_vs_measured"] == figures["profiled_step_ms"] / figures["measured_step_ms"]
    for phase in ("prefill", "decode"):
        rows = [r for r in report["rows"] if r["phase"] == phase]
        groups = {r["group"]: r for r in rows if r["kind"] != "aten"}
        assert {"LlamaRMSNorm", "LlamaMLP", "LlamaAttention", "Linear", "Embedding"} <= set(groups)
        assert groups["LlamaRMSNorm"]["calls_per_step"] == 5  # two a layer and the final norm
        assert groups["LlamaMLP"]["modules"] == ["model.layers.0.mlp", "model.layers.1.mlp"]
        assert groups["Linear"]["modules"] == ["lm_head"]  # the projections inside attention and MLP are theirs
        assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
        assert sorted((r["share"] for r in rows), reverse=True) == [r["share"] for r in rows]
        assert sum(r["share"] for r in rows) == pytest.approx(1.0)
        for row in rows:
            assert row["ceiling"] == pytest.approx(1 / (1 - row["share"]))
    prefill = next(r for r in report["rows"] if r["phase"] == "prefill" and r["group"] == "LlamaMLP")
    assert prefill["shapes"] == "x float32[2, 8, 64]"
    decode = next(r for r in report["rows"] if r["phase"] == "decode" and r["group"] == "LlamaAttention")
    assert "past_key_values: a cache of 8 past positions" in decode["shapes"] or \
        "cache: a cache of 8 past positions" in decode["shapes"]


def test_extracted_problems_pass_check_and_reproduce_the_modules(tiny_llama: tuple[dict, Path]) -> None:
    """Each problem's Model, with the module's weights, computes on the captured inputs what the module computed
    in the model's forward (both saved by --save-inputs from the real run)."""
    report, folder = tiny_llama
    document = json.loads((folder / "model.json").read_text())
    names = set(document["problems"])
    assert {"prefill_llama_mlp_2x8x64", "decode_llama_mlp_2x1x64", "prefill_llama_attention_2x8x64",
            "decode_llama_attention_2x1x64", "prefill_llama_rms_norm_2x8x64"} <= names
    assert document["problems"]["decode_llama_attention_2x1x64"]["modules"] == [
        "model.layers.0.self_attn", "model.layers.1.self_attn"]
    weights = {phase: figures["weight"] for phase, figures in document["phases"].items()}
    assert sum(weights.values()) == pytest.approx(1.0)
    for name, entry in document["problems"].items():
        assert entry["weight"] == pytest.approx(entry["share"] * weights[entry["phase"]])
        path = folder / entry["file"]
        load_problem(path)  # what kforge check loads; raises on any mistake
        problem = import_problem_module(path, f"test_hotspots_{name}")
        saved = torch.load(folder / "captured" / f"{name}.pt")
        model = problem.Model(*problem.get_init_inputs())
        model.load_state_dict(saved["state"])
        with torch.no_grad():
            out = model(*saved["inputs"])
        out = [out] if isinstance(out, torch.Tensor) else list(out)
        assert len(out) == len(saved["outputs"]), name
        for got, want in zip(out, saved["outputs"]):
            torch.testing.assert_close(got, want, msg=name)
        served = problem.get_inputs()  # the problem's own inputs have the served shapes and dtypes
        assert [_shapes(v) for v in served] == [_shapes(v) for v in saved["inputs"]], name


def test_an_extracted_problem_carries_its_other_served_shapes_and_their_weights(
        tiny_llama: tuple[dict, Path]) -> None:
    """The prefill MLP's problem declares the decode step's shape as a variant, each with its share of the model's
    time; the attention of a decode step (it takes a cache) and of a prefill (it does not) stay apart."""
    _, folder = tiny_llama
    document = json.loads((folder / "model.json").read_text())["problems"]
    prefill = load_problem(folder / "prefill_llama_mlp_2x8x64.py").shapes
    assert prefill.source == "declared" and [v.name for v in prefill.variants] == ["decode"]
    assert [s.shape for s in prefill.variants[0].inputs] == [(2, 1, 64)]
    assert prefill.own_weight == pytest.approx(document["prefill_llama_mlp_2x8x64"]["weight"], rel=1e-4)
    assert prefill.variant("decode").weight == pytest.approx(document["decode_llama_mlp_2x1x64"]["weight"], rel=1e-4)
    decode = load_problem(folder / "decode_llama_mlp_2x1x64.py").shapes
    assert [(v.name, v.inputs[0].shape) for v in decode.variants] == [("prefill", (2, 8, 64))]
    attention = load_problem(folder / "decode_llama_attention_2x1x64.py").shapes
    assert "prefill" not in [v.name for v in attention.variants]


def test_check_command_accepts_an_extracted_problem(tiny_llama: tuple[dict, Path]) -> None:
    _, folder = tiny_llama
    result = CliRunner().invoke(cli, ["check", str(folder / "decode_llama_attention_2x1x64.py")], obj=App())
    assert result.exit_code == 0, result.output
    assert "problem OK" in result.output


def _shapes(value: object) -> object:
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), value.dtype)
    if isinstance(value, (tuple, list)):
        return tuple(_shapes(v) for v in value)
    return value


def test_modules_that_cannot_be_extracted_say_why_and_the_rest_are(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, output = hotspots("tests.hotspots.awkward_model:build_model", *FAST, "--min-share", "0", "--group",
                            "Scaler", "--group", "Counter", "--group", "Gate", "--extract", str(tmp_path), "--json")
    assert code == 0, output
    report = json.loads(output)
    assert list(report["phases"]) == ["forward"]
    rows = {r["group"]: r for r in report["rows"] if r["kind"] != "aten"}
    assert rows["LayerNorm"]["problem"] == "forward_layer_norm_4x16"
    assert rows["MLP"]["problem"] == "forward_mlp_4x16"
    assert rows["Scaler"]["why_not"] == "its argument tag is a Tagged, which a problem's inputs cannot hold"
    assert rows["Counter"]["why_not"].startswith("its problem does not reproduce it: output 0 differs from the "
                                                 "module's by up to")
    assert rows["Gate"]["why_not"].startswith("its constructor's argument act is a builtin_function_or_method")
    mlp = (tmp_path / "forward_mlp_4x16.py").read_text()
    assert "def _squash(x):" in mlp and "class MLP(nn.Module):" in mlp  # the user's source, carried
    assert "from torch.nn.modules.normalization import LayerNorm" in (tmp_path / "forward_layer_norm_4x16.py") \
        .read_text()
    for name in ("forward_mlp_4x16", "forward_layer_norm_4x16"):
        load_problem(tmp_path / f"{name}.py")
    assert set(json.loads((tmp_path / "model.json").read_text())["problems"]) == {
        "forward_layer_norm_4x16", "forward_mlp_4x16"}


def test_a_model_that_does_not_load_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, output = hotspots("tests.hotspots.awkward_model:broken_model", *FAST)
    assert code != 0
    assert "Error: hotspots failed in its worker: the model tests.hotspots.awkward_model:broken_model did not " \
           "load: RuntimeError: no weights here" in output
    assert "Traceback" not in output


def test_a_backend_that_cannot_run_it_is_one_line() -> None:
    code, output = hotspots("tests.hotspots.awkward_model:build_model", "--backend", "no-such-backend")
    assert code != 0 and "Traceback" not in output and "no-such-backend" in output
