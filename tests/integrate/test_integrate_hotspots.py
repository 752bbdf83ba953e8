"""kforge integrate --hotspots: a tiny Llama profiled by kforge hotspots, then the run's RMSNorm kernel swapped in;
the report projects the gain of each phase from model.json and prints it beside the measured one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.hotspots.model_file import read_model_file, write_model_file
from kforge_core.hotspots.projection import projection_lines
from kforge_core.hotspots.request import HotspotsRequest
from kforge_core.hotspots.worker.run import hotspots

from .conftest import REPO, RUN_ID

pytestmark = pytest.mark.slow
transformers = pytest.importorskip("transformers")


def test_projected_beside_measured_per_phase(runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=256)
    config.save_pretrained(tmp_path / "llama")
    profiled = hotspots(HotspotsRequest(
        model=str(tmp_path / "llama"), backend="cpu", programming_model="PyTorch", device="cpu", device_class="",
        batch=2, prompt_tokens=8, decode_tokens=2, profile_steps=1, warmup=1, repetitions=1,
        extract_dir=str(tmp_path / "problems"), min_share=0.0, workdir=str(REPO)))
    profiled["extracted"] = True
    write_model_file(tmp_path / "problems", profiled)
    document = read_model_file(tmp_path / "problems")
    result = CliRunner().invoke(cli, [
        "integrate", str(tmp_path / "llama"), "--kernels", RUN_ID, "--runs-dir", str(runs_dir), "--map",
        "LlamaRMSNorm=rmsnorm", "--backend", "cpu", "--warmup", "0", "--repetitions", "3",
        "--hotspots", str(tmp_path / "problems" / "model.json"), "--json"], obj=App())
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [layer["layer_class"] for layer in report["layers"]] == ["LlamaRMSNorm"]
    # model.json's batch and prompt were taken: 2 sequences of 8 tokens a prefill
    untouched = report["end_to_end"]["untouched"]
    assert untouched["prefill_tokens_per_s"] == pytest.approx(16 / (untouched["prefill_ms"] / 1e3))
    projection = report["projection"]
    assert set(projection) == {"prefill", "decode"}
    for phase, entry in projection.items():
        share = sum(g["share"] for g in document["groups"] if g["phase"] == phase and g["class"] == "LlamaRMSNorm")
        speedup = report["phases"][phase]["LlamaRMSNorm"]["alone"]["speedup"]
        assert entry["classes"]["LlamaRMSNorm"]["share"] == pytest.approx(share)
        assert entry["projected"] == pytest.approx(1 / (1 - share * (1 - 1 / speedup)))
        assert entry["by_kernel"]["rmsnorm"] == pytest.approx(entry["projected"])
        assert entry["measured"] == report["end_to_end"]["speedups"][phase]
        assert report["phases"][phase]["LlamaRMSNorm"]["in_model"]["speedup"] > 0
        beyond = abs(entry["gap"]) > max(entry["measured_spread"], 0.01)
        assert bool(entry["explained_by"]) == beyond
    lines = "\n".join(projection_lines(projection))
    assert "Projected from model.json (Amdahl over each phase's device time) against measured:" in lines
    assert "  prefill: projected " in lines and "LlamaRMSNorm <- rmsnorm: " in lines
