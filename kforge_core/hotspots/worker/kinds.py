"""Which modules of a model a kernel replaces: the groups device time is attributed to.

A module belongs to a kind by its class (its name, or the torch class it derives from); the group of a device
kernel is the OUTERMOST module of a kind among the modules that launched it, so that a Llama MLP is one group
(what a fused MLP kernel replaces), not its three projections, and a MoE block is one group with its router and
experts. A Linear counts alone only outside every other kind (``lm_head``). Device time outside every group is
the rest, shown by the ATen operator that launched it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

KINDS = ("moe", "attention", "norm", "mlp", "rotary", "embedding", "activation", "conv", "linear")
"""The kinds, in the order a class is tested against them (a MoE block called ``...MLP`` is a MoE block)."""

_NAMES = (
    # a MoE block or its parts, not every class of a MoE model (Qwen3MoeModel, Qwen3MoeDecoderLayer)
    ("moe", re.compile(r"sparse\w*(block|moe)|moe(block|layer)?$|mixtureofexperts|experts?$|router$", re.I)),
    ("attention", re.compile(r"attention|attn", re.I)),
    ("norm", re.compile(r"norm", re.I)),
    ("mlp", re.compile(r"mlp|ffn|feedforward|feed_forward", re.I)),
    ("rotary", re.compile(r"rotary|rope", re.I)),
    ("embedding", re.compile(r"embedding", re.I)),
    ("activation", re.compile(r"gelu|silu|swish|relu|activation|glu$|softmax", re.I)),
)


@dataclass(frozen=True)
class GroupModule:
    """A module device time is attributed to: its path in the model, its class and kind."""

    path: str
    module: Any
    kind: str

    @property
    def class_name(self) -> str:
        return type(self.module).__name__


def kind_of(module: Any, extra_classes: frozenset[str] = frozenset()) -> str:
    """The kind of ``module`` ("" for none): ``user`` for a class named in ``extra_classes``."""
    import torch.nn as nn

    name = type(module).__name__
    if name in extra_classes:
        return "user"
    if _has_experts(module):
        return "moe"
    for kind, pattern in _NAMES:
        if pattern.search(name):
            return kind
    if isinstance(module, nn.Embedding):
        return "embedding"
    if isinstance(module, nn.Linear):
        return "linear"
    if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        return "conv"
    if type(module).__module__ == "torch.nn.modules.activation":
        return "activation"
    return ""


def _has_experts(module: Any) -> bool:
    """A block holding experts (a child named or classed ``experts``): gpt-oss calls its MoE block ``...MLP``."""
    return any("expert" in child_name.lower() or "expert" in type(child).__name__.lower()
               for child_name, child in module.named_children())


def group_modules(model: Any, extra_classes: frozenset[str] = frozenset()) -> list[GroupModule]:
    """The outermost module of a kind on every branch of ``model`` (the model itself excluded), in the order
    ``named_modules`` lists them."""
    groups: list[GroupModule] = []
    inside: list[str] = []  # the paths of groups found so far, whose descendants are not groups
    for path, module in model.named_modules():
        if module is model or any(path.startswith(f"{outer}.") for outer in inside):
            continue
        kind = kind_of(module, extra_classes)
        if kind:
            groups.append(GroupModule(path, module, kind))
            inside.append(path)
    return groups
