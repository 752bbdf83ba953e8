"""The groups device time goes to: the outermost module of a kind a kernel replaces, by class name."""

from __future__ import annotations

import torch.nn as nn

from kforge_core.hotspots.worker.kinds import group_modules, kind_of


def _named(name: str, base: type = nn.Module) -> type:
    return type(name, (base,), {})


def test_moe_blocks_are_moe_but_the_moe_models_other_classes_are_not() -> None:
    for name in ("Qwen3MoeSparseMoeBlock", "MixtralSparseMoeBlock", "DeepseekV3MoE", "Qwen3MoeExperts",
                 "GptOssTopKRouter"):
        assert kind_of(_named(name)()) == "moe", name
    for name, kind in (("Qwen3MoeModel", ""), ("Qwen3MoeDecoderLayer", ""), ("Qwen3MoeAttention", "attention"),
                       ("Qwen3MoeRMSNorm", "norm"), ("Qwen3MoeMLP", "mlp"), ("LlamaRotaryEmbedding", "rotary")):
        assert kind_of(_named(name)()) == kind, name
    mlp = _named("GptOssMLP")()
    mlp.router, mlp.experts = _named("GptOssTopKRouter")(), _named("GptOssExperts")()
    assert kind_of(mlp) == "moe"  # gpt-oss calls its MoE block an MLP: its experts say what it is


def test_the_outermost_module_of_a_kind_is_the_group() -> None:
    layer = _named("DecoderLayer")()
    layer.mlp = _named("LlamaMLP")()
    layer.mlp.up, layer.mlp.act = nn.Linear(2, 4), nn.SiLU()
    layer.norm = nn.LayerNorm(2)
    model = nn.Sequential(layer, nn.Linear(2, 3))
    groups = [(g.path, g.kind) for g in group_modules(model)]
    assert groups == [("0.mlp", "mlp"), ("0.norm", "norm"), ("1", "linear")]
    assert [(g.path, g.kind) for g in group_modules(model, frozenset({"DecoderLayer"}))] == [("0", "user"),
                                                                                            ("1", "linear")]
